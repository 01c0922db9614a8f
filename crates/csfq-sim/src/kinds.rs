//! The kinds every layer names: a queue discipline, what a flow sends, a TCP sender's
//! congestion control and retransmission timer. They sit below the scenario file
//! (`config`), which reads and writes them by these names, so that the network, the
//! disciplines, the hosts and the observers name them without reaching up into it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares [`DisciplineKind`] from one list: each discipline's variant, its name in files
/// and on the command line, its description, and whether an overlay loop's shaper queue
/// may run it (it needs no edge labels and keeps to the shaper's interface). `ALL`, `name`,
/// `shapes_loops` and the serde names follow from it.
macro_rules! disciplines {
    ($($(#[doc = $doc:literal])+ $variant:ident = $name:literal, loop_shaper: $shaper:literal;)+) => {
        /// A queue discipline by name.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Hash, PartialOrd, Ord,
        )]
        pub enum DisciplineKind {
            $($(#[doc = $doc])+ #[serde(rename = $name)] $variant,)+
        }

        impl DisciplineKind {
            /// Every discipline, in the papers' order.
            pub const ALL: [DisciplineKind; [$($name),+].len()] = [$(DisciplineKind::$variant),+];

            /// The name used in files and on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(DisciplineKind::$variant => $name,)+
                }
            }

            /// Whether an overlay loop's shaper queue may run it (`[[loop]] queue`).
            pub fn shapes_loops(self) -> bool {
                match self {
                    $(DisciplineKind::$variant => $shaper,)+
                }
            }
        }
    };
}

disciplines! {
    /// Drop-tail FIFO.
    Fifo = "fifo", loop_shaper: true;
    /// RED.
    Red = "red", loop_shaper: true;
    /// FRED-1 (Lin and Morris).
    Fred1 = "fred1", loop_shaper: true;
    /// FRED-2 (FRED with `minq` guaranteed buffers).
    Fred2 = "fred2", loop_shaper: true;
    /// Deficit Round Robin.
    Drr = "drr", loop_shaper: true;
    /// CSFQ (edge labeling where a flow enters, core on every port).
    Csfq = "csfq", loop_shaper: false;
    /// TUF (tags at edges, or at TCP sources; drop-highest-tag queues).
    Tuf = "tuf", loop_shaper: false;
    /// CS-FNE (TSW labels; flow-number-estimating cores).
    Csfne = "csfne", loop_shaper: false;
    /// CHOKe.
    Choke = "choke", loop_shaper: false;
    /// CSFQ in the dataplane's integer arithmetic, labels carried as 16-bit floats.
    CsfqFixed = "csfq-fixed", loop_shaper: false;
    /// CS-FNE as the dataplane computes it: integer TSW labels carried as 16-bit floats, a
    /// core that compares arrivals with a ring of the packets its virtual queue holds.
    CsfneFixed = "csfne-fixed", loop_shaper: false;
    /// TUF as the dataplane runs it: integer tags at the edges, every flow's (TCPs tagged as
    /// unresponsive, as an edge router must: only the source knows a TCP's round trip), a
    /// filter that drops tags above a threshold that fills the link, not a queue that
    /// pushes the highest tag out.
    TufFilter = "tuf-filter", loop_shaper: false;
    /// MAY (one FIFO, drops in proportion to past drops; the `[may]` table).
    May = "may", loop_shaper: false;
    /// Least Attained Service (per-flow queues; serve the least-served flow).
    Las = "las", loop_shaper: true;
    /// Adaptive RED (Floyd, Gummadi and Shenker 2001; the `[ared]` table).
    Ared = "ared", loop_shaper: true;
    /// FQ-CoDel (RFC 8290; the `[fq_codel]` table), as Linux's `fq_codel`.
    FqCodel = "fq_codel", loop_shaper: false;
}

impl DisciplineKind {
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for DisciplineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a flow sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    /// Constant bit rate with inter-arrivals uniform on [1-jitter, 1+jitter] x the mean.
    Udp,
    /// ON-OFF: exponential ON and OFF periods, sending like `udp` while ON.
    Onoff,
    /// A TCP NewReno transfer: unlimited, or `size_pkts` segments.
    Tcp,
    /// Short TCP transfers, as web traffic: `count` transfers whose starts are spaced by
    /// exponential gaps (`arrival_mean_ms`) and whose sizes are Pareto (`size_mean_pkts`,
    /// `size_shape`).
    Web,
    /// A receiver-driven layered multicast session (McCanne et al. 1996) with one receiver:
    /// `layers` cumulative layers, layer i at `layer_base_kbps * 2^(i-1)`.
    Rlm,
}

impl FlowKind {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Udp => "udp",
            FlowKind::Onoff => "onoff",
            FlowKind::Tcp => "tcp",
            FlowKind::Web => "web",
            FlowKind::Rlm => "rlm",
        }
    }

    /// Whether it sends regardless of loss (`udp`, `onoff`): judged against the per-hop
    /// allocation, not end-to-end max-min.
    pub fn is_open_loop(self) -> bool {
        matches!(self, FlowKind::Udp | FlowKind::Onoff)
    }
}

/// A TCP sender's congestion control.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// NewReno (RFC 5681, RFC 6582): `1/cwnd` per ACK, halving on a loss; the papers'.
    #[default]
    NewReno,
    /// CUBIC (RFC 9438), Linux's default: the window a cubic function of the time since
    /// the last loss, `0.7` of it kept on a loss.
    Cubic,
}

/// Which retransmission timer the TCP senders run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpTimer {
    /// RFC 6298 on every ACK's echoed timestamp: `RTO = SRTT + max(G, 4 RTTVAR)`, at least
    /// `min_rto_ms`.
    #[default]
    Rfc6298,
    /// ns-2's `TcpAgent` timer, the papers' (see `ns2_timer`): one timed segment per round
    /// trip, round trips counted in ticks of `clock_granularity_ms`, `RTO = SRTT + 4
    /// RTTVAR` ticks, at least `min_rto_ms` and two ticks.
    Ns2,
}
