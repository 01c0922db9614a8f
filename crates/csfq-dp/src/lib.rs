//! CSFQ on Linux packets: the edge and core as eBPF tc programs, and their loader.
//!
//! - `bpf/edge.bpf.c` estimates each flow's rate with Eq. (3) and writes the label into the
//!   IPv4 Identification field (atomic datagrams, checksum fixed) or the IPv6 flow label.
//! - `bpf/core.bpf.c` keeps only aggregate state (`A`, `F`, `alpha`) and drops with
//!   probability `max(0, 1 - alpha/label)`, relabeling to `min(label, alpha)`.
//! - `bpf/may.bpf.c` is MAY at a bottleneck, with no edge and no labels: a bounded table
//!   of the flows that lost a packet, each dropped in proportion to its past drops.
//! - `bpf/csfne.bpf.c` is a CS-FNE core: the active flows estimated by comparing each
//!   arrival with a packet drawn from a ring of those its virtual queue holds, and drops
//!   above `C / N_act`; its edges are the edge program with the TSW meter.
//! - `bpf/tuf.bpf.c` is a TUF core: a filter that drops tags above the threshold at which
//!   a window's arrivals fill the link; its edges are the edge program writing TUF tags.
//! - `bpf/loop.bpf.c` is the packet half of the edge-to-edge overlay loops: at the ingress
//!   it puts each loop's packets into the loop's htb class, at the egress it counts them
//!   and stamps the control messages; [`loops`] runs the two daemons around it and
//!   [`htb`] drives the shaper over rtnetlink.
//!
//! Their arithmetic is [`csfq_algo::fixed`]'s, [`csfq_algo::may_fixed`]'s and
//! [`csfq_algo::csfne_fixed`]'s and [`csfq_algo::tuf_fixed`]'s, and the tables are generated from it at build time;
//! `testdata/csfq-fixed-vectors.csv`, `testdata/may-fixed-vectors.csv` and
//! `testdata/csfne-fixed-vectors.csv` and `testdata/tuf-fixed-vectors.csv` keep the two
//! equal (see the tests).
//!
//! [`attach_edge`], [`attach_core`], [`attach_may`], [`attach_csfne`], [`attach_tuf`], [`loops::run_ingress`],
//! [`loops::run_egress`], [`detach`] and [`stats`] are what `csfq dp` runs;
//! [`TestProgram`] runs a program on crafted packets with `BPF_PROG_TEST_RUN`.
//!
//! Errors come in two layers: what was refused ([`SysError`] by the system,
//! [`InvalidSetting`] by a settings check) and one type per operation holding only what it
//! can meet ([`AttachError`], [`DetachError`], [`bench::BenchError`]); stats and crafted
//! packets meet only the system.
//!
//! The layout, from the ground up: `sys` (privileges, interfaces, clocks, the change
//! lock) and `error`; `netns` (which namespace, so which scope) and `pins` (the BPF
//! filesystem, links, pinned maps); `program` (one descriptor per program: object,
//! function, configuration map, flow table, pins, stats reader, detach hooks) and
//! `loader` (objects into the kernel); `settings` (the shared ranges and prefixes);
//! `programs/` (edge, core, MAY, CS-FNE, TUF: each program's descriptor, settings, attach and stats)
//! and [`loops`] (the overlay's two programs and their daemons); then what walks every
//! descriptor: `detach`, `stats`; `report` holds the stats' data. [`shaper`] and
//! [`htb`] speak rtnetlink; [`bench`](mod@bench) and `test_run` measure and test; [`lab`] makes the
//! namespaces the demo, the namespace tests and the bench run in.

pub mod abi;
mod attach;
pub mod bench;
mod counters;
mod detach;
mod error;
pub mod flow_table;
pub mod htb;
pub mod lab;
mod loader;
pub mod loops;
mod netns;
mod pins;
mod program;
mod programs;
mod report;
mod role;
mod settings;
pub mod shaper;
mod stats;
mod sys;
mod test_run;
mod trust;
pub mod units;

pub use attach::AttachOutcome;
pub use csfq_algo::fixed::Meter;
pub use detach::{detach, detach_role, detach_stale};
pub use error::{AttachError, DetachError, InvalidSetting, SysError};
pub use netns::{adopt_current_netns, current_scope, enter_netns};
pub use pins::is_attached;
pub use programs::{
    attach_core, attach_csfne, attach_edge, attach_may, attach_tuf, attach_tuf_source,
    segments_per_packet, CoreSettings, CoreTrust, CsfneSettings, EdgeSettings, FlowKey,
    MaySettings, TufSettings, TufSourceSettings, Unlabelable, WeightClass,
};
pub use report::{
    CoreSite, CoreStats, CountJson, CsfneStats, EdgeStats, InterfaceStats, LoopStats, MayStats,
    ShaperNow, TufSourceSocket, TufSourceStats, TufStats,
};
pub use role::Role;
pub use settings::{Bound, Clock, Prefix, BYTES, DEFAULT_FLOWS, RATE, TABLE, WINDOW};
pub use shaper::{read_shaper, Shaper};
pub use stats::stats;
pub use sys::{ifindex, tick_ns, unavailable_reason, AVAILABLE};
pub use test_run::TestProgram;
pub use trust::{unguarded_trusted, Unguarded};
