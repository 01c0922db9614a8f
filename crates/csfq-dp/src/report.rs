//! What `csfq dp stats` and the exporter report of each attached program: plain data,
//! serialized as `csfq dp stats --json` prints it. Each program's descriptor fills its
//! part (`crate::program::Program::read`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::abi::Count;
use crate::role::Role;

/// A program's counters and state on one interface.
#[derive(Debug, Clone, Serialize)]
pub struct InterfaceStats {
    /// `host` or `netns-NAME`.
    pub scope: String,
    /// The interface.
    pub interface: String,
    /// Edge or core.
    pub role: Role,
    /// Attached nowhere: its interface or namespace was deleted without `csfq dp detach`
    /// (its counters and state are as they were then; `csfq dp detach --stale` removes it).
    pub stale: bool,
    /// Packets and bytes by what happened to them.
    pub counters: BTreeMap<&'static str, CountJson>,
    /// The edge's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<EdgeStats>,
    /// The core's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core: Option<CoreStats>,
    /// MAY's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may: Option<MayStats>,
    /// The CS-FNE core's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csfne: Option<CsfneStats>,
    /// The TUF core's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuf: Option<TufStats>,
    /// The TUF source tagger's settings and sockets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuf_source: Option<TufSourceStats>,
    /// The overlay loops at this edge, as their daemon last published them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<Vec<LoopStats>>,
}

impl InterfaceStats {
    /// `role` on `interface` in `scope`, with nothing read yet: no counters, no state.
    pub fn empty(scope: &str, interface: &str, role: Role) -> Self {
        Self {
            scope: scope.to_string(),
            interface: interface.to_string(),
            role,
            stale: false,
            counters: BTreeMap::new(),
            edge: None,
            core: None,
            may: None,
            csfne: None,
            tuf: None,
            tuf_source: None,
            loops: None,
        }
    }
}

/// MAY's state: `v`, the utilization and the table, as of its last packet.
#[derive(Debug, Clone, Serialize)]
pub struct MayStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `v`, the drop probability per unit of `delta`.
    pub v: f64,
    /// The last interval's utilization over `C`: what `utilization_counts` says.
    pub utilization: f64,
    /// `u0`.
    pub target_utilization: f64,
    /// What the utilization counts: `passed` (the bytes MAY passes on, Eq. 3's rate into
    /// the queue, the default) or `arrivals` (every byte, MAY's drops included).
    pub utilization_counts: &'static str,
    /// `v` is kept at or below the `v` that drops every packet of the flow with the
    /// largest `delta` (the default), not the paper's controller alone.
    pub ceiling: bool,
    /// `Delta`, ns.
    pub interval_ns: u64,
    /// Intervals ended since the attach.
    pub intervals: u64,
    /// Entries in the table, live or idle past `T0` (removed at their flow's next packet,
    /// or evicted by newer ones).
    pub table_entries: u64,
    /// Entries whose flow lost a packet within `T0` of the last interval's end.
    pub table_live: u64,
    /// The table's size.
    pub table_size: u32,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
}

/// The CS-FNE core's state, as of its last packet (the virtual queue and the ring's
/// queued packets as of the read).
#[derive(Debug, Clone, Serialize)]
pub struct CsfneStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `r_hit`: the rate of arrivals that matched the queued packet drawn for them, bit/s.
    pub hit_bps: u64,
    /// `r_miss`: the rate of those that did not, bit/s.
    pub miss_bps: u64,
    /// `N_act = (r_hit + r_miss) / r_hit`: the active flows as the queue shows them (1
    /// before any hit; for a FIFO, `n / (C_r^2 + 1)` of `n` flows whose rates vary by
    /// `C_r`: thesis Eq. 3-5).
    pub active_flows: f64,
    /// `CL = C / N_act`, bit/s: above the target, labels above it are dropped.
    pub cl_bps: u64,
    /// `K`, ns.
    pub k_ns: u64,
    /// The target queue, bytes.
    pub target_bytes: u64,
    /// The virtual queue now, bytes.
    pub queue_bytes: u64,
    /// The virtual queue's limit, bytes.
    pub limit_bytes: u64,
    /// Ring entries used.
    pub ring: u32,
    /// The ring's packets still in the virtual queue now.
    pub ring_queued: u64,
    /// Packets admitted since the attach.
    pub admitted: u64,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
    /// Its shaper, trust and unparsed frames, as for the CSFQ core.
    #[serde(flatten)]
    pub site: CoreSite,
}

/// The TUF core's state, as of its last window.
#[derive(Debug, Clone, Serialize)]
pub struct TufStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// The highest tag that passes (2047: every tag).
    pub threshold: u64,
    /// The least rate of that tag, bit/s: packets whose `R (1 - X)` reaches the next tag's
    /// least rate are dropped.
    pub threshold_bps: f64,
    /// The window, ns.
    pub window_ns: u64,
    /// Windows ended since the attach.
    pub windows: u64,
    /// The untagged traffic's rate, bit/s.
    pub untagged_bps: u64,
    /// The virtual queue now, bytes.
    pub queue_bytes: u64,
    /// The virtual queue's limit, bytes.
    pub limit_bytes: u64,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
    /// Its shaper, trust (of tags) and unparsed frames, as for the CSFQ core.
    #[serde(flatten)]
    pub site: CoreSite,
}

/// The TUF source tagger's settings, and the sockets it has tagged.
#[derive(Debug, Clone, Serialize)]
pub struct TufSourceStats {
    /// Padhye's `b`.
    pub per_ack: u32,
    /// Padhye's `W_max`, segments (`None`: no cap).
    pub max_window: Option<u32>,
    /// `rto_min`, us (`t0 = RTT + rto_min`).
    pub rto_min_us: u32,
    /// The flows' weight.
    pub weight: f64,
    /// Sockets it holds (up to `csfq_algo::tuf_source::SOCKETS`).
    pub sockets_total: usize,
    /// The sockets with the most packets tagged, 64 at most.
    pub sockets: Vec<TufSourceSocket>,
}

/// A socket the source tagger has tagged, as of its last packet.
#[derive(Debug, Clone, Serialize)]
pub struct TufSourceSocket {
    /// The socket's cookie (`ss -e` prints it in hex after `sk:`).
    pub cookie: u64,
    /// Its counter.
    pub n: u32,
    /// The kernel's `srtt_us` then, times 8, as the program read it.
    pub srtt8_us: u32,
    /// The smoothed round trip then, us.
    pub srtt_us: f64,
    /// Its MSS then.
    pub mss: u32,
    /// The tag its last packet carried.
    pub tag: u32,
    /// That tag's least rate, bit/s.
    pub tag_bps: f64,
    /// Packets tagged.
    pub packets: u64,
}

/// A counter.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct CountJson {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

impl From<Count> for CountJson {
    fn from(c: Count) -> Self {
        CountJson {
            packets: c.packets,
            bytes: c.bytes,
        }
    }
}

/// The edge's state.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeStats {
    /// Flows in the table.
    pub flows: u64,
    /// `K`, ns.
    pub k_ns: u64,
    /// What the edge does with IPv4 that cannot carry a label: `pass`, `police` or
    /// `drop`.
    pub unlabelable: &'static str,
    /// `police`: the rate, bit/s (0 otherwise).
    pub police_rate_bps: u64,
    /// `police`: the bucket, bytes (0 otherwise).
    pub police_burst_bytes: u32,
    /// What makes a flow: `5-tuple`, `host-pair` or `source`.
    pub flow_key: &'static str,
    /// The clock Eq. (3) reads: `fine` or `coarse`.
    pub clock: &'static str,
    /// IP from sources outside the accepted prefixes is dropped (`--allow-source`).
    pub source_filter: bool,
    /// How a flow's rate is measured: `eq3` (CSFQ's Eq. 3) or `tsw` (CS-FNE's Time
    /// Sliding Window).
    pub meter: &'static str,
    /// It writes TUF tags, not labels.
    pub tuf: bool,
    /// TCP packets tagged by their source keep their tags (`--keep-source-tags`).
    pub keep_source_tags: bool,
}

/// The core's state: `A`, `F` and `alpha` as of the read (decayed over the time since the
/// virtual queue emptied: `programs::core::as_of_idle`).
#[derive(Debug, Clone, Serialize)]
pub struct CoreStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `A`: the arrival rate, bit/s.
    pub arrival_bps: u64,
    /// `F`: the accepted rate, bit/s.
    pub accepted_bps: u64,
    /// `alpha`: the fair share, bit/s (0: not congested, nothing dropped).
    pub alpha_bps: u64,
    /// Time since the virtual queue last emptied, ns (0 while it holds bytes, or before
    /// the first packet): no packet has arrived since, and the last one is at most one
    /// queue's drain time (`limit_bytes` at `C`) older.
    pub idle_ns: u64,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
    /// In a congested window.
    pub congested: bool,
    /// The virtual queue now, bytes.
    pub queue_bytes: u64,
    /// The virtual queue's limit, bytes: the shaper's, read at attach unless given.
    pub limit_bytes: u64,
    /// Its shaper, whose labels it trusts, and what it does with frames it cannot parse.
    #[serde(flatten)]
    pub site: CoreSite,
}

/// What each core (CSFQ's, CS-FNE's, TUF's) reports of its place: the shaper it sits in
/// front of, whose labels (or tags) it believes, and what it does with frames it cannot
/// parse. Flattened into each core's stats: its fields are theirs in JSON.
#[derive(Debug, Clone, Serialize)]
pub struct CoreSite {
    /// The shaper on the interface as it is now (read where this process runs in the
    /// core's namespace; `None` elsewhere): a rate or limit that differs from the core's
    /// means the shaper changed since the attach, or was overridden.
    pub shaper_now: Option<ShaperNow>,
    /// The interfaces (ifindexes, in the core's namespace) whose packets' labels count;
    /// `None`: every interface's.
    pub trusted_ifindexes: Option<Vec<u32>>,
    /// Each trusted ifindex's interface now, by name (read where this process runs in the
    /// core's namespace; empty elsewhere): `None` for an index no interface has any more
    /// (deleted; one made again under its name has another index, and its labels are not
    /// believed until the core is attached again).
    pub trusted_now: Vec<(u32, Option<String>)>,
    /// Frames it cannot parse are dropped (`--unparsed drop`), not priced as unlabeled.
    pub drop_unparsed: bool,
}

/// What the shaper in front of which a core runs says now.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShaperNow {
    /// The root qdisc, in words ([`crate::Shaper::what`]).
    pub what: String,
    /// Its rate, bit/s, if it has one.
    pub rate_bps: Option<u64>,
    /// Its queue's limit, bytes, if it has one.
    pub limit_bytes: Option<u64>,
}

/// One loop at one edge, for `csfq dp stats` and the exporter.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoopStats {
    /// Its index (the order of `--loop`).
    pub index: u32,
    /// Ingress: its shaper's rate `lambda`, bit/s (0 at the egress).
    pub lambda_bps: u64,
    /// The last `mu(k)`, bit/s.
    pub mu_bps: u64,
    /// The last `a(k)`, bytes.
    pub accumulation_bytes: u64,
    /// Ingress: congestion epochs entered; egress: re-synchronizations (an accumulation
    /// below zero moved the reference).
    pub epochs: u64,
    /// Ingress: in a congestion epoch now.
    pub in_epoch: bool,
    /// Ingress: feedback applied; egress: feedback sent.
    pub feedbacks: u64,
    /// Ingress: control messages sent; egress: received.
    pub controls: u64,
    /// Egress: bytes lost inside the network, learned from the controls.
    pub lost_bytes: u64,
    /// Packets and bytes of the loop counted at this edge (ingress: arrivals at its
    /// shaper; egress: received).
    pub packets: u64,
    /// See `packets`.
    pub bytes: u64,
    /// The daemon's process id, and whether it still runs.
    pub pid: u32,
    /// Whether the daemon published within the last second.
    pub daemon_running: bool,
}
