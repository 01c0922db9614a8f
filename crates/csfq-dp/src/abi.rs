//! The layouts the programs share with user space: `#[repr(C)]` mirrors of
//! `bpf/csfq_shared.h`. Keep the two in step; the program tests fail on any mismatch.

/// What happened to a packet: the index into the per-CPU `counters` map
/// (`enum csfq_counter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Counter {
    /// Edge: label written.
    Labeled = 0,
    /// Core: forwarded with its label.
    Forwarded,
    /// Core: forwarded with its label lowered to `alpha`.
    Relabeled,
    /// Core: dropped with probability `1 - alpha/label`.
    DropProbabilistic,
    /// Core: the virtual queue at rate `C` was full (the buffer-overflow amendment).
    DropOverflow,
    /// Core: forwarded with label 0 as it came (traffic that bypassed the edges, flows
    /// under 1 kbit/s), judged as part of the unlabeled aggregate.
    PassUnlabeled,
    /// Non-IP frame, or a bad IP version field.
    PassNotIp,
    /// IPv4 without DF, or a fragment: no room for a label (the core judges it as part
    /// of the unlabeled aggregate and forwards it as it came; the edge passes it).
    PassNotAtomic,
    /// Headers shorter than they claim.
    PassTruncated,
    /// The label could not be written.
    WriteFailed,
    /// Edge: a flow entered the table (packets only; bytes stay 0).
    NewFlow,
    /// Edge: IPv4 that cannot carry a label, over the rate the operator set for it (or
    /// all of it, when the operator chose to drop it).
    DropPoliced,
    /// Core: arrived on an interface not trusted to carry labels; its label was ignored
    /// (judged as unlabeled traffic) and overwritten. Also counted under what then
    /// happened to it.
    Untrusted,
}

impl Counter {
    /// Every counter, in index order.
    pub const ALL: [Counter; 13] = [
        Counter::Labeled,
        Counter::Forwarded,
        Counter::Relabeled,
        Counter::DropProbabilistic,
        Counter::DropOverflow,
        Counter::PassUnlabeled,
        Counter::PassNotIp,
        Counter::PassNotAtomic,
        Counter::PassTruncated,
        Counter::WriteFailed,
        Counter::NewFlow,
        Counter::DropPoliced,
        Counter::Untrusted,
    ];

    /// The drop reason a drop counter counts (`csfq_algo::DropReason`, whose codes the
    /// programs take from the header build.rs writes); `None` for the others.
    pub fn drop_reason(self) -> Option<csfq_algo::DropReason> {
        use csfq_algo::DropReason;
        match self {
            Counter::DropProbabilistic => Some(DropReason::CsfqProbabilistic),
            Counter::DropOverflow => Some(DropReason::BufferOverflow),
            Counter::DropPoliced => Some(DropReason::Policed),
            _ => None,
        }
    }

    /// The name used in `csfq dp stats` and its JSON: a drop counter's is `drop_` and its
    /// reason's name, as the simulator names drops.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Labeled => "labeled",
            Counter::Forwarded => "forwarded",
            Counter::Relabeled => "relabeled",
            Counter::DropProbabilistic => "drop_csfq_prob",
            Counter::DropOverflow => "drop_overflow",
            Counter::PassUnlabeled => "pass_unlabeled",
            Counter::PassNotIp => "pass_not_ip",
            Counter::PassNotAtomic => "pass_not_atomic",
            Counter::PassTruncated => "pass_truncated",
            Counter::WriteFailed => "write_failed",
            Counter::NewFlow => "new_flows",
            Counter::DropPoliced => "drop_policed",
            Counter::Untrusted => "untrusted",
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
    /// Padding.
    pub pad: u32,
}

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

/// `struct csfq_core_state`: the core's aggregate state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct CoreStateRaw {
    /// `struct bpf_spin_lock` (reads as 0).
    pub lock: u32,
    /// In a congested window.
    pub congested: u32,
    /// `alpha`, bit/s.
    pub alpha_bps: u64,
    /// Window start, ns.
    pub start_ns: u64,
    /// Largest label of the current uncongested window, bit/s.
    pub max_label_bps: u64,
    /// Overflow decreases left until the next update of `alpha`.
    pub overflow_left: u32,
    /// Padding.
    pub pad: u32,
    /// `A`.
    pub arrival: FixedRate,
    /// `F`.
    pub accepted: FixedRate,
    /// When the virtual queue empties, ns (kernel monotonic clock).
    pub vq_finish_ns: u64,
    /// Unlabeled traffic (label 0, or no label carrier) as one flow: its price.
    pub unlabeled: FixedRate,
    /// The window's label histogram.
    pub hist: [HistBin; HIST_BINS],
}

impl Default for CoreStateRaw {
    fn default() -> Self {
        CoreStateRaw {
            lock: 0,
            congested: 0,
            alpha_bps: 0,
            start_ns: 0,
            max_label_bps: 0,
            overflow_left: 0,
            pad: 0,
            arrival: FixedRate::default(),
            accepted: FixedRate::default(),
            vq_finish_ns: 0,
            unlabeled: FixedRate::default(),
            hist: [HistBin::default(); HIST_BINS],
        }
    }
}

// SAFETY: plain-old-data C layouts: integers only, no padding holes, any bit pattern valid.
unsafe impl aya::Pod for Count {}
unsafe impl aya::Pod for WeightKey {}
unsafe impl aya::Pod for EdgeConfigRaw {}
unsafe impl aya::Pod for CoreConfigRaw {}
unsafe impl aya::Pod for CoreStateRaw {}
unsafe impl aya::Pod for HistBin {}

#[cfg(test)]
mod tests {
    /// A drop counter is named by its reason, as the simulator's reports name drops: one
    /// vocabulary for both.
    #[test]
    fn drop_counters_are_named_by_their_reasons() {
        let drops: Vec<_> = super::Counter::ALL
            .iter()
            .filter_map(|c| c.drop_reason().map(|r| (c, r)))
            .collect();
        assert_eq!(drops.len(), 3);
        for (c, r) in drops {
            assert_eq!(c.name(), format!("drop_{}", r.name()));
        }
    }

    use super::*;

    /// Sizes as the C compiler lays the structs out (x86-64 and arm64 alike).
    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<Count>(), 16);
        assert_eq!(size_of::<WeightKey>(), 20);
        assert_eq!(size_of::<EdgeConfigRaw>(), 48);
        assert_eq!(size_of::<CoreConfigRaw>(), 128);
        assert_eq!(size_of::<CoreStateRaw>(), 120 + 16 * HIST_BINS);
    }
}
