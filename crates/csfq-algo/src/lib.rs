//! Core-stateless fair bandwidth allocation: the algorithms, as sans-IO state machines.
//!
//! Every discipline is a plain struct built from validated parameters; per-packet methods
//! take the current time and, where they draw, a random generator, and return a verdict.
//! Nothing here reads a clock, prints, or allocates per packet (per-flow tables grow only
//! when a new flow appears). The simulator (`csfq-sim`) and the Linux dataplane drive these
//! same definitions.
//!
//! | module | algorithm | source |
//! |---|---|---|
//! | [`rate_estimator`] | Eq. (3) exponential rate estimator | Stoica et al. 1998 §2.4 |
//! | [`csfq`] | CSFQ edge labeling and core drop/relabel | Stoica et al. 1998 §2 |
//! | [`fixed`] | CSFQ as the dataplane computes it: fixed-point Eq. (3), Q0.32 drops, integer labels | Stoica et al. 1998 §2 |
//! | [`fifo`] | drop-tail FIFO | |
//! | [`red`] | RED | Floyd & Jacobson 1993 |
//! | [`fred`] | FRED-1, FRED-2 | Lin & Morris 1997 |
//! | [`drr`] | Deficit Round Robin (weighted) | Shreedhar & Varghese 1995 |
//! | [`fq_codel`] | FQ-CoDel: hashed flow queues, DRR, CoDel per queue | RFC 8290, RFC 8289 |
//! | [`label_codec`] | 8/16/20-bit float labels | Stoica et al. 1998 §2.7 |
//! | [`label_histogram`] | CSFQ fair share solved from a histogram of labels | Eq. (1) of Stoica et al. 1998 over one window |
//! | [`maxmin`] | max-min water-filling, the per-hop allocation, Jain's index | Bertsekas & Gallager §6.5.2 |
//! | [`theorem1`] | CSFQ's excess-service bound | Stoica et al. 1998 §2.6 |
//! | [`tuf`] | TUF tagging and drop-highest-tag queue | Clerget & Dabbous 1999 |
//! | [`tuf_fixed`] | TUF as the dataplane computes it: tags by a threshold table, the edge's tagger, a bufferless filter | Clerget & Dabbous 1999, Fig. 4's filter model |
//! | [`tuf_source`] | TUF's TCP tagger at the source as the dataplane computes it: Padhye's throughput from the kernel's round trip, in integers | Clerget & Dabbous 1999 §3.4.1; Padhye et al. 1998, Eq. 31 |
//! | [`csfne`] | CS-FNE: TSW edge meter, flow-number-estimating core | Kim 2005 |
//! | [`csfne_fixed`] | CS-FNE as the dataplane computes it: integer TSW, a ring of the virtual queue's fingerprints | Kim 2005, Eqs. 3-2 to 3-4 |
//! | [`choke`] | CHOKe | Pan, Prabhakar & Psounis 2000 |
//! | [`may`] | MAY: drop in proportion to past drops | the MAY paper, Fig. 1 |
//! | [`may_fixed`] | MAY as the dataplane computes it: the table folded lazily, Q16/Q32 | the MAY paper, Fig. 1 |
//! | [`las`] | Least Attained Service | Rai, Urvoy-Keller & Biersack 2003 |
//! | [`ared`] | Adaptive RED | Floyd, Gummadi & Shenker 2001 |
//! | [`overlay`] | edge-to-edge loops: AIMD-ER on accumulation, assured rate, quasi-leased line | Harrison, Kalyanaraman & Ramakrishnan, §3–7 |
//! | [`policer`] | token bucket for traffic that cannot carry a label (the dataplane edge's option) | |
//! | [`alpha_fair`] | proportional fair, minimum potential delay (alpha-fair) allocations | Mo & Walrand 2000 |

pub mod alpha_fair;
pub mod ared;
pub mod choke;
pub mod csfne;
pub mod csfne_fixed;
pub mod csfq;
pub mod drr;
pub mod fifo;
pub mod fixed;
pub mod fq_codel;
pub mod fred;
pub mod label_codec;
pub mod label_histogram;
pub mod las;
pub mod maxmin;
pub mod may;
pub mod may_fixed;
pub mod overlay;
pub mod packet;
pub mod packet_lists;
pub mod policer;
pub mod queue;
pub mod rate_estimator;
pub mod red;
pub mod theorem1;
pub mod time;
pub mod tuf;
pub mod tuf_fixed;
pub mod tuf_source;
pub mod verdict;

pub use packet::{FlowId, Packet};
pub use queue::{InOrder, QueueDisc, Queued};
pub use time::Nanos;
pub use verdict::{DropReason, Dropped};
