//! Why a packet was dropped: a closed set of reasons with stable numeric codes, shared by
//! the simulator's metrics and reports and the dataplane: `crates/csfq-dp/build.rs` writes
//! them as the C header the eBPF programs include (`enum csfq_drop_reason`), and the
//! dataplane's drop counters are named `drop_` and the reason's name.

/// The reason a queue discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DropReason {
    /// CSFQ core: dropped with probability `max(0, 1 - alpha/label)` (Eq. 2).
    CsfqProbabilistic = 1,
    /// The buffer was full (drop-tail, or CSFQ/RED/FRED's physical buffer).
    BufferOverflow = 2,
    /// RED/FRED: random early drop between the thresholds.
    RedEarly = 3,
    /// RED/FRED: the average queue was above the maximum threshold.
    RedForced = 4,
    /// FRED: the flow exceeded its per-flow buffer limit (`maxq`, `2*avgcq`, or strikes).
    FredFlowLimit = 5,
    /// DRR: the buffer was full and the packet came from the longest per-flow queue.
    DrrLongestQueue = 6,
    /// TUF: the buffer was full and the packet had the highest tag.
    TufHighestTag = 7,
    /// CS-FNE: dropped with probability `max(0, 1 - CL/label)` above the target queue.
    CsfneProbabilistic = 8,
    /// CHOKe: the arrival matched a randomly chosen queued packet of its flow (both go).
    ChokeMatch = 9,
    /// MAY: a tracked flow dropped with probability `v * delta(flow)` (Fig. 1, line 3).
    MayHistory = 10,
    /// MAY: an untracked flow's packet sampled (probability `1/S0`) while utilization
    /// exceeded `u0` (Fig. 1, line 13).
    MaySample = 11,
    /// LAS: the buffer was full and the packet belonged to the flow with the most service.
    LasMostServed = 12,
    /// FQ-CoDel: the buffer was full and the packet was at the head of the fattest bucket.
    FqCodelFattest = 13,
    /// CoDel: the packet's sojourn time stayed above target for an interval (dropped at
    /// dequeue, RFC 8289).
    CodelHead = 14,
    /// An edge's policer (`crate::policer`): a packet that cannot carry a label, over the
    /// rate the operator allows such packets (the dataplane's edge; the simulator's
    /// packets can always carry one).
    Policed = 15,
}

impl DropReason {
    /// Every reason, in code order.
    pub const ALL: [DropReason; 15] = [
        DropReason::CsfqProbabilistic,
        DropReason::BufferOverflow,
        DropReason::RedEarly,
        DropReason::RedForced,
        DropReason::FredFlowLimit,
        DropReason::DrrLongestQueue,
        DropReason::TufHighestTag,
        DropReason::CsfneProbabilistic,
        DropReason::ChokeMatch,
        DropReason::MayHistory,
        DropReason::MaySample,
        DropReason::LasMostServed,
        DropReason::FqCodelFattest,
        DropReason::CodelHead,
        DropReason::Policed,
    ];

    /// The stable numeric code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// A short snake_case name, used as a column or counter name.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::CsfqProbabilistic => "csfq_prob",
            DropReason::BufferOverflow => "overflow",
            DropReason::RedEarly => "red_early",
            DropReason::RedForced => "red_forced",
            DropReason::FredFlowLimit => "fred_flow",
            DropReason::DrrLongestQueue => "drr_longest",
            DropReason::TufHighestTag => "tuf_highest_tag",
            DropReason::CsfneProbabilistic => "csfne_prob",
            DropReason::ChokeMatch => "choke_match",
            DropReason::MayHistory => "may_history",
            DropReason::MaySample => "may_sample",
            DropReason::LasMostServed => "las_most_served",
            DropReason::FqCodelFattest => "fq_codel_fattest",
            DropReason::CodelHead => "codel",
            DropReason::Policed => "policed",
        }
    }
}

/// A packet a discipline refused or pushed out, handed back for accounting.
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped<P> {
    /// The dropped packet (not always the one that arrived: DRR pushes out another).
    pub packet: P,
    /// Why it was dropped.
    pub reason: DropReason,
}

impl<P> Dropped<P> {
    /// Builds a drop verdict.
    pub fn new(packet: P, reason: DropReason) -> Self {
        Dropped { packet, reason }
    }
}
