//! The layouts the programs share with user space: `#[repr(C)]` mirrors of
//! `bpf/csfq_shared.h` (and of the table entries in `edge.bpf.c` and `may.bpf.c`). A unit
//! test holds every mirror against the struct the compiled objects describe in their BTF,
//! member by member; the counters' indexes are generated from `counters.rs`.

pub use crate::counters::Counter;
pub use csfq_algo::may_fixed::FixedMayParams;
pub use csfq_algo::tuf_source::FixedPadhyeParams;

impl Counter {
    /// The drop reason a drop counter counts (`csfq_algo::DropReason`, whose codes the
    /// programs take from the header build.rs writes); `None` for the others.
    pub fn drop_reason(self) -> Option<csfq_algo::DropReason> {
        use csfq_algo::DropReason;
        match self {
            Counter::DropProbabilistic => Some(DropReason::CsfqProbabilistic),
            Counter::DropOverflow => Some(DropReason::BufferOverflow),
            Counter::DropPoliced => Some(DropReason::Policed),
            Counter::DropMayHistory => Some(DropReason::MayHistory),
            Counter::DropMaySample => Some(DropReason::MaySample),
            Counter::DropCsfneProb => Some(DropReason::CsfneProbabilistic),
            Counter::DropTufHighestTag => Some(DropReason::TufHighestTag),
            _ => None,
        }
    }
}

/// `struct csfq_count`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Count {
    /// Packets.
    pub packets: u64,
    /// Bytes (`skb->len`: the frame without its FCS).
    pub bytes: u64,
}

/// `struct fixed_rate`: Eq. (3) state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FixedRate {
    /// Estimate, bit/s.
    pub rate_bps: u64,
    /// Last update, ns.
    pub last_ns: u64,
    /// Bytes not yet counted.
    pub pending_bytes: u64,
}

/// `struct csfq_flow_entry`: an entry of the edge's flow table (all zeros: empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FlowEntryRaw {
    /// The flow's key.
    pub key: FlowKeyRaw,
    /// Its weight, thousandths.
    pub weight_milli: u32,
    /// The entry's lock (`struct bpf_spin_lock`; reads as 0).
    pub lock: u32,
    /// Its Eq. (3) state.
    pub rate: FixedRate,
    /// TUF: the flow's counter (from its offset `D_F`).
    pub tuf_n: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct csfq_weight_key`: an LPM key over IPv6 (IPv4 as `::ffff:a.b.c.d`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct WeightKey {
    /// Prefix length in bits, over the 128-bit form.
    pub prefixlen: u32,
    /// The address.
    pub addr: [u8; 16],
}

/// `struct csfq_edge_config`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct EdgeConfigRaw {
    /// `K`, ns.
    pub k_ns: u64,
    /// Weight of unclassified flows, thousandths.
    pub default_weight_milli: u32,
    /// Nonzero: the clock is `test_now_ns`.
    pub test_mode: u32,
    /// The clock in test mode, ns.
    pub test_now_ns: u64,
    /// [`UNLABELABLE_POLICE`]: the rate, bit/s.
    pub police_rate_bps: u64,
    /// [`UNLABELABLE_POLICE`]: the bucket's depth, bytes (at most 2^30).
    pub police_burst_bytes: u32,
    /// What the edge does with IPv4 that cannot carry a label: [`UNLABELABLE_PASS`],
    /// [`UNLABELABLE_POLICE`] or [`UNLABELABLE_DROP`].
    pub unlabelable: u32,
    /// What makes a flow: [`KEY_FIVE_TUPLE`], [`KEY_HOST_PAIR`] or [`KEY_SOURCE`].
    pub flow_key: u32,
    /// Which clock: [`CLOCK_FINE`] or [`CLOCK_COARSE`].
    pub clock: u32,
    /// [`CLOCK_COARSE`]: the kernel's tick, ns.
    pub tick_ns: u64,
    /// Nonzero: IP whose source is in no prefix of the `sources` map is dropped.
    pub source_filter: u32,
    /// How a flow's rate is measured: [`METER_EQ3`] or [`METER_TSW`].
    pub meter: u32,
    /// Nonzero: write TUF tags (`csfq_algo::tuf_fixed`), not labels.
    pub tuf: u32,
    /// Nonzero (with `tuf`): TCP packets that arrive with a TUF tag keep it.
    pub keep_source_tags: u32,
}

/// `CSFQ_METER_EQ3`: CSFQ's Eq. (3) (`csfq_algo::fixed::Meter::Eq3`).
pub const METER_EQ3: u32 = 0;
/// `CSFQ_METER_TSW`: CS-FNE's Time Sliding Window (`csfq_algo::fixed::Meter::Tsw`).
pub const METER_TSW: u32 = 1;

/// `CSFQ_CLOCK_FINE`: `bpf_ktime_get_ns`.
pub const CLOCK_FINE: u32 = 0;
/// `CSFQ_CLOCK_COARSE`: the kernel's tick counter (jiffies), one tick's resolution, on the
/// fine clock's scale.
pub const CLOCK_COARSE: u32 = 1;

/// `CSFQ_FLOW_WAYS`: entries in each set of the edge's flow table
/// ([`crate::flow_table`]; were the two to differ, `edge_flow_table_is_its_model` would
/// fail).
pub const FLOW_WAYS: u32 = 4;

/// `CSFQ_KEY_FIVE_TUPLE`: protocol, addresses and ports (the paper's flows).
pub const KEY_FIVE_TUPLE: u32 = 0;
/// `CSFQ_KEY_HOST_PAIR`: source and destination addresses.
pub const KEY_HOST_PAIR: u32 = 1;
/// `CSFQ_KEY_SOURCE`: the source address.
pub const KEY_SOURCE: u32 = 2;

/// `CSFQ_UNLABELABLE_PASS`: pass it; the cores judge it as one unlabeled flow.
pub const UNLABELABLE_PASS: u32 = 0;
/// `CSFQ_UNLABELABLE_POLICE`: police all of it to one rate (`csfq_algo::policer`).
pub const UNLABELABLE_POLICE: u32 = 1;
/// `CSFQ_UNLABELABLE_DROP`: drop it.
pub const UNLABELABLE_DROP: u32 = 2;

/// `struct csfq_core_config`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CoreConfigRaw {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `K_alpha`, ns.
    pub k_alpha_ns: u64,
    /// `K_c`, ns.
    pub k_c_ns: u64,
    /// Queue threshold below which `alpha = 0` is kept, bytes.
    pub threshold_bytes: u32,
    /// Virtual queue size, bytes.
    pub limit_bytes: u32,
    /// Overflow decreases between two updates of `alpha`.
    pub overflow_budget: u32,
    /// Nonzero: clock, draw and queue come from the `test_` fields.
    pub test_mode: u32,
    /// The clock in test mode, ns.
    pub test_now_ns: u64,
    /// The 32-bit random draw in test mode.
    pub test_draw: u32,
    /// The queue in test mode, bytes.
    pub test_queue_bytes: u32,
    /// [`EST_PAPER`] or [`EST_HISTOGRAM`].
    pub estimator: u32,
    /// [`TRUST_ANY`] or [`TRUST_LISTED`].
    pub trust: u32,
    /// [`TRUST_LISTED`]: the interfaces (ifindexes) whose packets' labels count; 0 ends
    /// the list.
    pub trusted: [u32; MAX_TRUSTED],
    /// Which clock: [`CLOCK_FINE`] or [`CLOCK_COARSE`].
    pub clock: u32,
    /// Nonzero: drop what the core cannot parse (non-IP but ARP, truncated); else judge
    /// it as unlabeled traffic.
    pub drop_unparsed: u32,
    /// [`CLOCK_COARSE`]: the kernel's tick, ns.
    pub tick_ns: u64,
}

/// `CSFQ_TRUST_ANY`: labels count from every interface.
pub const TRUST_ANY: u32 = 0;
/// `CSFQ_TRUST_LISTED`: labels count only from the interfaces in `trusted`.
pub const TRUST_LISTED: u32 = 1;
/// `CSFQ_MAX_TRUSTED`.
pub const MAX_TRUSTED: usize = 16;

/// `CSFQ_EST_PAPER`: the paper's estimator.
pub const EST_PAPER: u32 = 0;
/// `CSFQ_EST_HISTOGRAM`: the label-histogram estimator.
pub const EST_HISTOGRAM: u32 = 1;
/// `HIST_BINS`.
pub const HIST_BINS: usize = csfq_algo::label_histogram::BINS;

/// `struct csfq_hist_bin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct HistBin {
    /// Bytes.
    pub bytes: u64,
    /// Bytes over label, Q24.
    pub inv: u64,
}

/// `struct csfq_core_state`: the core's shared state (the histogram estimator's window
/// counts are per CPU, in `core_lanes`, which user space does not read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CoreStateRaw {
    /// `alpha`, bit/s.
    pub alpha_bps: u64,
    /// Window start, ns.
    pub start_ns: u64,
    /// The current window's number (histogram estimator).
    pub window: u64,
    /// Windows before this one have had their `alpha` published.
    pub published: u64,
    /// In a congested window.
    pub congested: u32,
    /// Overflow decreases left until the next update of `alpha`.
    pub overflow_left: u32,
    /// Largest label of the current uncongested window, bit/s (paper's estimator).
    pub max_label_bps: u64,
    /// Padding: the lock on another cache line than the words every packet reads.
    pub pad0: [u64; 8],
    /// `struct bpf_spin_lock` (reads as 0).
    pub lock: u32,
    /// Padding.
    pub pad1: u32,
    /// `A` (histogram estimator: the last window's average over all CPUs).
    pub arrival: FixedRate,
    /// `F` (likewise).
    pub accepted: FixedRate,
    /// Unlabeled traffic (label 0, or no label carrier) as one flow: its price.
    pub unlabeled: FixedRate,
    /// Padding.
    pub pad2: [u64; 8],
    /// When the virtual queue empties, ns (kernel monotonic clock).
    pub vq_finish_ns: u64,
    /// Padding.
    pub pad3: [u64; 7],
}

/// `struct csfq_flow_key`: a flow's 5-tuple as the programs key it (addresses in network
/// order; IPv4 in the first word).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct FlowKeyRaw {
    /// 4 or 6.
    pub family: u8,
    /// IP protocol.
    pub proto: u8,
    /// Source port, network order (0 for protocols other than TCP and UDP).
    pub sport: u16,
    /// Destination port, network order.
    pub dport: u16,
    /// Padding.
    pub pad: u16,
    /// Source address.
    pub saddr: [u32; 4],
    /// Destination address.
    pub daddr: [u32; 4],
}

/// `struct csfq_may_config`: MAY's parameters as the model has them
/// ([`FixedMayParams`], the programs' `struct csfq_may_params`), and the clock and the
/// test inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MayConfigRaw {
    /// The parameters, in the model's own type.
    pub params: FixedMayParams,
    /// Nonzero: the clock and the draw come from the `test_` fields.
    pub test_mode: u32,
    /// The 32-bit random draw in test mode.
    pub test_draw: u32,
    /// The clock in test mode, ns.
    pub test_now_ns: u64,
    /// [`CLOCK_FINE`] or [`CLOCK_COARSE`]: the clock MAY reads.
    pub clock: u32,
    /// Padding.
    pub pad: u32,
    /// The kernel's tick, ns (read by the coarse clock).
    pub tick_ns: u64,
}

/// `struct csfq_may_state`: `csfq_algo::may_fixed::FixedMayState` and its lock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MayStateRaw {
    /// `struct bpf_spin_lock` (reads as 0).
    pub lock: u32,
    /// Padding.
    pub pad: u32,
    /// `v`, Q32.
    pub v_q32: u64,
    /// The last interval's utilization, Q16.
    pub util_q16: u64,
    /// When the last interval ended, ns (kernel monotonic clock).
    pub last_update_ns: u64,
    /// Intervals ended.
    pub epoch: u64,
    /// The CPUs' arrival totals summed when the last interval ended (the interval's
    /// arrivals are the totals' sum less this: [`crate::TestProgram::may_arrived`]).
    pub counted_bytes: u64,
}

/// `struct csfq_may_entry`: `csfq_algo::may_fixed::FixedMayEntry`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MayEntryRaw {
    /// `delta`, Q16.
    pub delta_q16: u64,
    /// `TS`, ns.
    pub ts_ns: u64,
    /// The interval the entry is up to date in.
    pub epoch: u64,
    /// `ND`.
    pub nd: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct csfq_may_slot`: an entry of MAY's table `H` (all zeros: empty).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MaySlotRaw {
    /// The flow's key.
    pub key: FlowKeyRaw,
    /// The entry's lock (`struct bpf_spin_lock`; reads as 0).
    pub lock: u32,
    /// Padding.
    pub pad: u32,
    /// The flow's entry.
    pub entry: MayEntryRaw,
}

/// `CSFQ_LOOP_MAX`: loops one pair of edges can run.
pub const LOOP_MAX: usize = 16;

/// `struct csfq_loop_config`: what both halves of the overlay loops are told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LoopConfigRaw {
    /// The UDP port control messages go to, network order.
    pub control_port: u32,
    /// Loops configured.
    pub loops: u32,
    /// Each loop's htb class at the ingress (`major << 16 | minor`).
    pub classid: [u32; LOOP_MAX],
}

/// `struct csfq_loop_count`: a loop's packets and bytes at one edge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LoopCountRaw {
    /// Packets.
    pub packets: u64,
    /// Bytes (Ethernet frames).
    pub bytes: u64,
}

/// `struct csfq_loop_state`: what a loop's daemon publishes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct LoopStateRaw {
    /// Ingress: `lambda`, bit/s.
    pub lambda_bps: u64,
    /// The last `mu(k)`, bit/s.
    pub mu_bps: u64,
    /// The last `a(k)`, bytes.
    pub accumulation_bytes: u64,
    /// Ingress: congestion epochs entered.
    pub epochs: u64,
    /// Ingress: feedback applied; egress: feedback sent.
    pub feedbacks: u64,
    /// Ingress: controls sent; egress: controls received.
    pub controls: u64,
    /// Egress: bytes lost inside the network, learned from the controls.
    pub lost_bytes: u64,
    /// `CLOCK_MONOTONIC` of the last update, ns.
    pub updated_ns: u64,
    /// In a congestion epoch (ingress).
    pub in_epoch: u32,
    /// The daemon's process id.
    pub pid: u32,
}

// SAFETY: plain-old-data C layouts: integers only, no padding holes, any bit pattern valid.
unsafe impl aya::Pod for Count {}
unsafe impl aya::Pod for FlowEntryRaw {}
unsafe impl aya::Pod for WeightKey {}
unsafe impl aya::Pod for EdgeConfigRaw {}
unsafe impl aya::Pod for CoreConfigRaw {}
unsafe impl aya::Pod for CoreStateRaw {}
unsafe impl aya::Pod for HistBin {}
unsafe impl aya::Pod for FlowKeyRaw {}
unsafe impl aya::Pod for MayConfigRaw {}
unsafe impl aya::Pod for MayStateRaw {}
unsafe impl aya::Pod for MayEntryRaw {}
unsafe impl aya::Pod for MaySlotRaw {}
unsafe impl aya::Pod for LoopConfigRaw {}
unsafe impl aya::Pod for LoopCountRaw {}
unsafe impl aya::Pod for LoopStateRaw {}

mod cores;
pub use cores::*;

#[cfg(test)]
mod tests;
