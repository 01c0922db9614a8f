//! CSFQ on Linux packets: the edge and core as eBPF tc programs, and their loader.
//!
//! - `bpf/edge.bpf.c` estimates each flow's rate with Eq. (3) and writes the label into the
//!   IPv4 Identification field (atomic datagrams, checksum fixed) or the IPv6 flow label.
//! - `bpf/core.bpf.c` keeps only aggregate state (`A`, `F`, `alpha`) and drops with
//!   probability `max(0, 1 - alpha/label)`, relabeling to `min(label, alpha)`.
//! - `bpf/may.bpf.c` is MAY at a bottleneck, with no edge and no labels: a bounded table
//!   of the flows that lost a packet, each dropped in proportion to its past drops.
//! - `bpf/loop.bpf.c` is the packet half of the edge-to-edge overlay loops: at the ingress
//!   it puts each loop's packets into the loop's htb class, at the egress it counts them
//!   and stamps the control messages; [`loops`] runs the two daemons around it and
//!   [`htb`] drives the shaper over rtnetlink.
//!
//! Their arithmetic is [`csfq_algo::fixed`]'s and [`csfq_algo::may_fixed`]'s, and the
//! tables are generated from it at build time; `testdata/csfq-fixed-vectors.csv` and
//! `testdata/may-fixed-vectors.csv` keep the two equal (see the tests).
//!
//! [`attach_edge`], [`attach_core`], [`attach_may`], [`loops::run_ingress`],
//! [`loops::run_egress`], [`detach`] and [`stats`] are what `csfq dp` runs;
//! [`TestProgram`] runs a program on crafted packets with `BPF_PROG_TEST_RUN`.

pub mod abi;
pub mod bench;
mod dataplane;
pub mod flow_table;
pub mod htb;
mod loader;
pub mod loops;
pub mod shaper;
pub mod units;

pub use dataplane::{
    adopt_current_netns, attach_core, attach_edge, attach_may, detach, detach_stale, enter_netns,
    stats, tick_ns, AttachOutcome, CoreSettings, CoreStats, CoreTrust, CountJson, EdgeSettings,
    EdgeStats, FlowKey, InterfaceStats, MaySettings, MayStats, Prefix, ShaperNow, Unlabelable,
    WeightClass, DEFAULT_FLOWS,
};
pub use loader::TestProgram;
pub use shaper::{read_shaper, Shaper};

use thiserror::Error;

/// Whether this build carries the eBPF programs (clang and libbpf's headers were found).
pub const AVAILABLE: bool = cfg!(csfq_bpf);

/// Why the dataplane cannot run here, if it cannot: no programs in this build, or not
/// root. Tests use it to report a skip.
pub fn unavailable_reason() -> Option<&'static str> {
    if !AVAILABLE {
        Some("this build has no eBPF programs (clang or libbpf-dev missing at build time)")
    } else if !is_root() {
        Some("needs root (CAP_BPF, CAP_NET_ADMIN)")
    } else {
        None
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Checks that `what` can run: the programs are built in and we are root.
fn require(what: &'static str) -> Result<(), DpError> {
    if !AVAILABLE {
        return Err(DpError::Unavailable);
    }
    if !is_root() {
        return Err(DpError::NotPermitted(what));
    }
    Ok(())
}

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Labels packets entering the island.
    Edge,
    /// Drops and relabels at a bottleneck.
    Core,
    /// MAY at a bottleneck: drops in proportion to each flow's past drops, no labels.
    May,
    /// An overlay loop's ingress edge: classifies into the loops' shapers.
    LoopIngress,
    /// An overlay loop's egress edge: counts each loop's bytes, stamps control messages.
    LoopEgress,
}

impl Role {
    /// Every role, in the order stats list them.
    pub const ALL: [Role; 5] = [
        Role::Edge,
        Role::Core,
        Role::May,
        Role::LoopIngress,
        Role::LoopEgress,
    ];
}

impl Role {
    /// `edge`, `core`, `may`, `loop-ingress` or `loop-egress`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Edge => "edge",
            Role::Core => "core",
            Role::May => "may",
            Role::LoopIngress => "loop-ingress",
            Role::LoopEgress => "loop-egress",
        }
    }

    fn program(self) -> &'static str {
        match self {
            Role::Edge => "csfq_edge",
            Role::Core => "csfq_core",
            Role::May => "csfq_may",
            Role::LoopIngress => "csfq_loop_in",
            Role::LoopEgress => "csfq_loop_out",
        }
    }
}

/// Why a dataplane operation failed.
#[derive(Debug, Error)]
pub enum DpError {
    /// The programs were not built into this binary.
    #[error(
        "this csfq was built without the eBPF dataplane (clang or libbpf's headers were \
         missing); on Debian: apt-get install clang libbpf-dev, then rebuild"
    )]
    Unavailable,
    /// Not root (or without CAP_BPF and CAP_NET_ADMIN).
    #[error("{0} needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")]
    NotPermitted(&'static str),
    /// No such interface in this network namespace.
    #[error("no interface `{0}` in this network namespace (see `ip link`)")]
    NoSuchInterface(String),
    /// No such named network namespace.
    #[error("no network namespace `{name}` (see `ip netns list`)")]
    NoSuchNetns {
        /// The name given.
        name: String,
        /// What opening or entering it said.
        source: std::io::Error,
    },
    /// This process runs in a network namespace with a private mount of /sys (as under
    /// `ip netns exec`), and cannot reach the BPF filesystem that outlives it.
    #[error(
        "pins made here would vanish when this command exits (`ip netns exec` gives it a \
         private /sys), and the programs with them; run `csfq dp --netns {netns} ...` instead"
    )]
    PrivateMounts {
        /// The namespace's name.
        netns: String,
        /// Why the shared mount namespace could not be entered.
        source: std::io::Error,
    },
    /// Nothing of csfq's is attached there.
    #[error("csfq has nothing attached to `{0}`")]
    NotAttached(String),
    /// A setting out of range.
    #[error("invalid {field}: {why}")]
    Invalid {
        /// The setting.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The kernel refused to load, attach or pin something.
    #[error("{what}")]
    Kernel {
        /// What was being done.
        what: String,
        /// The loader's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A filesystem operation on the BPF filesystem failed.
    #[error("{what} {}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl DpError {
    fn kernel(what: impl Into<String>, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        DpError::Kernel {
            what: what.into(),
            source: Box::new(e),
        }
    }
}
