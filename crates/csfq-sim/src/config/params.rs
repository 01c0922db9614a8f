//! The per-discipline tables (`[csfq]`, `[red]`, `[fred]`, `[drr]`, `[fq_codel]`, `[tuf]`,
//! `[csfne]`, `[may]`, `[ared]`) and `[tcp]`: each discipline's parameters with the
//! defaults its paper gives.

use serde::{Deserialize, Serialize};

use crate::kinds::{CongestionControl, TcpTimer};

/// How CSFQ cores estimate the fair share `alpha` (`[csfq] estimator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EstimatorKind {
    /// The paper's: `alpha <- alpha C / F` once per congested window (Section 2.2).
    Paper,
    /// Solved from a histogram of one window's labels (`csfq_algo::label_histogram`).
    #[default]
    Histogram,
}

impl From<EstimatorKind> for csfq_algo::csfq::Estimator {
    fn from(k: EstimatorKind) -> Self {
        match k {
            EstimatorKind::Paper => Self::Paper,
            EstimatorKind::Histogram => Self::Histogram,
        }
    }
}

/// CSFQ constants. The paper (Section 3) uses 100 ms for all three; by default `K_alpha`
/// and `K_c` follow its rule instead, twice the link's buffer drain time within 1 ms and
/// 1 s (`csfq_algo::csfq::scaled_window`), so they scale with the link.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsfqConfig {
    /// `K`: the edge's flow-rate averaging constant, ms (default 100).
    pub k_ms: f64,
    /// `K_alpha`: the core's aggregate-rate averaging constant, ms (default: per link,
    /// twice its buffer's drain time, within 1 ms and 1 s).
    pub k_alpha_ms: Option<f64>,
    /// `K_c`: the window of the fair-share estimate, ms (default as `k_alpha_ms`).
    pub k_c_ms: Option<f64>,
    /// The fair-share estimator (default `histogram`; `paper` for the paper's).
    pub estimator: EstimatorKind,
    /// Relabel packets to `min(label, alpha)` at cores (Section 2.5).
    pub relabel: bool,
}

impl Default for CsfqConfig {
    fn default() -> Self {
        CsfqConfig {
            k_ms: 100.0,
            k_alpha_ms: None,
            k_c_ms: None,
            estimator: EstimatorKind::Histogram,
            relabel: true,
        }
    }
}

impl CsfqConfig {
    /// The constants and estimator of the paper's simulations (Section 3): 100 ms unless
    /// the scenario states others, and the paper's estimator.
    pub fn paper(self) -> Self {
        CsfqConfig {
            k_alpha_ms: self.k_alpha_ms.or(Some(100.0)),
            k_c_ms: self.k_c_ms.or(Some(100.0)),
            estimator: EstimatorKind::Paper,
            ..self
        }
    }
}

/// RED and FRED thresholds (16 KB / 32 KB in the CSFQ paper).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// `min_th`, bytes.
    pub min_th_bytes: u32,
    /// `max_th`, bytes.
    pub max_th_bytes: u32,
    /// Averaging weight `w_q`.
    pub w_q: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th_bytes: 16_000,
            max_th_bytes: 32_000,
            w_q: 0.002,
            max_p: 0.1,
        }
    }
}

/// FRED's extra parameter.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FredConfig {
    /// `minq`, packets.
    pub min_q_packets: u32,
}

impl Default for FredConfig {
    fn default() -> Self {
        FredConfig { min_q_packets: 2 }
    }
}

/// DRR's quantum and queues.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrrConfig {
    /// Bytes per round, at least the largest packet.
    pub quantum_bytes: u32,
    /// Hash buckets, as ns-2's DRR `buckets_` (0, the default: a queue per flow). Each
    /// flow has its own sending host here; hosts are numbered in flow order (ns-2 numbers
    /// nodes as a script creates them) and hashed as ns-2 hashes a source address
    /// (`csfq_algo::drr::ns2_bucket`). Flows in one bucket share its queue.
    pub buckets: u32,
    /// Which end of the longest queue a full buffer drops from: `head` (the default, as
    /// ns-2's `queue/drr.cc`: the arrival is queued, then the longest queue's head goes)
    /// or `tail` (the longest queue's tail is pushed out, the arrival dropped if its own
    /// queue is the longest).
    #[serde(skip_serializing_if = "DrrDropFrom::is_default")]
    pub drop_from: DrrDropFrom,
}

/// Which end of the longest queue DRR drops from (`[drr] drop_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DrrDropFrom {
    /// ns-2's: the head.
    #[default]
    Head,
    /// The tail, the arrival's own queue excepted.
    Tail,
}

impl DrrDropFrom {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<DrrDropFrom> for csfq_algo::drr::DrrDropEnd {
    fn from(d: DrrDropFrom) -> Self {
        match d {
            DrrDropFrom::Head => Self::Head,
            DrrDropFrom::Tail => Self::Tail,
        }
    }
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            quantum_bytes: 1000,
            buckets: 0,
            drop_from: DrrDropFrom::Head,
        }
    }
}

/// FQ-CoDel settings (RFC 8290, RFC 8289); the defaults are Linux's `fq_codel`. The
/// buffer is the link's `buffer_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelConfig {
    /// Hash buckets (default 1024); flows that collide share a queue.
    pub flows: u32,
    /// Bytes per round (default 1514).
    pub quantum_bytes: u32,
    /// CoDel's target sojourn time, ms (default 5).
    pub target_ms: f64,
    /// CoDel's interval, ms (default 100).
    pub interval_ms: f64,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum_bytes: 1514,
            target_ms: 5.0,
            interval_ms: 100.0,
        }
    }
}

/// TUF settings (Clerget and Dabbous 1999).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TufConfig {
    /// The edge tagger's rate-averaging constant (Eq. 3), ms.
    pub k_ms: f64,
    /// Buffer of the untagged queue, as a share of the link's buffer.
    pub untagged_buffer_share: f64,
    /// Weighted round robin: tagged packets served per round.
    pub tagged_weight: u32,
    /// Untagged packets served per round.
    pub untagged_weight: u32,
}

impl Default for TufConfig {
    fn default() -> Self {
        TufConfig {
            k_ms: 100.0,
            untagged_buffer_share: 0.25,
            tagged_weight: 3,
            untagged_weight: 1,
        }
    }
}

/// CS-FNE settings (Kim 2005; the thesis gives no window or target, these are ours).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CsfneConfig {
    /// The edge's Time Sliding Window, ms.
    pub win_ms: f64,
    /// Queue below which the core drops nothing, bytes.
    pub target_bytes: u32,
    /// Averaging constant of the hit and miss rates, ms.
    pub k_ms: f64,
}

impl Default for CsfneConfig {
    fn default() -> Self {
        CsfneConfig {
            win_ms: 100.0,
            target_bytes: 16_000,
            k_ms: 100.0,
        }
    }
}

/// MAY settings (the MAY paper, Table I; defaults from its Section IV).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MayConfig {
    /// `Delta`: how often `v`, `delta` and expiry are updated, ms.
    pub update_interval_ms: f64,
    /// `u0`: the utilization the controller on `v` aims for, in (0, 1].
    pub target_utilization: f64,
    /// `kappa`: the controller's gain.
    pub gain: f64,
    /// `q_w`: the weight of the EWMA on each flow's drops, in (0, 1].
    pub q_w: f64,
    /// `T0`: an entry with no drop for this long leaves the table, s.
    pub timeout_s: f64,
    /// `S0`: packets of an untracked flow are sampled with probability `1/S0`.
    pub s0: f64,
    /// Most entries the table holds; a full table refuses new flows (they stay
    /// untracked). 131 072 by default: the paper's 8 Mbit of SRAM at 10 bytes per entry.
    pub table_capacity: u32,
    /// Count a tracked flow's buffer overflows in its `ND` as well as MAY's own drops (the
    /// prose's "the number of dropped packets from the flow"); the pseudocode's reading,
    /// false, is the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overflow_in_nd: bool,
    /// What the utilization counts: `passed` (the default), the bytes MAY passes on to the
    /// queue, Eq. (3)'s rate after MAY's own drops; `arrivals`, every arriving byte.
    #[serde(skip_serializing_if = "MayUtilizationKind::is_default")]
    pub utilization: MayUtilizationKind,
    /// `v`'s ceiling: `heaviest` (the default), `v` kept at or below the `v` that drops
    /// every packet of the flow with the largest `delta` the interval's arrivals found;
    /// `none`, the paper's controller alone (`csfq_algo::may`, "v's ceiling"). The
    /// reproductions run `none` ([`MayConfig::paper`]).
    #[serde(skip_serializing_if = "MayCeilingKind::is_default")]
    pub ceiling: MayCeilingKind,
}

impl MayConfig {
    /// The paper's MAY: its controller without `v`'s ceiling.
    pub fn paper(self) -> Self {
        MayConfig {
            ceiling: MayCeilingKind::None,
            ..self
        }
    }
}

/// Whether MAY's `v` has a ceiling (`[may] ceiling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MayCeilingKind {
    /// At most the `v` that drops every packet of the interval's heaviest flow.
    #[default]
    Heaviest,
    /// The paper's controller.
    None,
}

impl MayCeilingKind {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<MayCeilingKind> for csfq_algo::may::MayCeiling {
    fn from(k: MayCeilingKind) -> Self {
        match k {
            MayCeilingKind::Heaviest => Self::Heaviest,
            MayCeilingKind::None => Self::None,
        }
    }
}

/// What MAY's utilization counts (`[may] utilization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MayUtilizationKind {
    /// The bytes MAY passes on to the queue, overflowed or not (Eq. 3).
    #[default]
    Passed,
    /// Every arriving byte, MAY's own drops included.
    Arrivals,
}

impl MayUtilizationKind {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl From<MayUtilizationKind> for csfq_algo::may::MayUtilization {
    fn from(k: MayUtilizationKind) -> Self {
        match k {
            MayUtilizationKind::Passed => Self::Passed,
            MayUtilizationKind::Arrivals => Self::Arrivals,
        }
    }
}

impl Default for MayConfig {
    fn default() -> Self {
        MayConfig {
            update_interval_ms: 1000.0,
            target_utilization: 0.98,
            gain: 0.1,
            q_w: 0.05,
            timeout_s: 64.0,
            s0: 1000.0,
            table_capacity: 1 << 17,
            overflow_in_nd: false,
            utilization: MayUtilizationKind::Passed,
            ceiling: MayCeilingKind::Heaviest,
        }
    }
}

/// Adaptive RED settings (Floyd, Gummadi and Shenker 2001): thresholds and `w_q` follow
/// from the link's rate and the target delay.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AredConfig {
    /// Target queueing delay, ms: `min_th = max(5, C * target / 2)` packets.
    pub target_delay_ms: f64,
}

impl Default for AredConfig {
    fn default() -> Self {
        AredConfig {
            target_delay_ms: 5.0,
        }
    }
}

/// TCP settings shared by every TCP flow of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Segment size on the wire, bytes (1000 in the papers).
    pub segment_bytes: u32,
    /// ACK size on the wire, bytes.
    pub ack_bytes: u32,
    /// Largest window, segments (the receiver's window).
    pub max_window_segments: u32,
    /// Initial congestion window, segments.
    pub initial_window_segments: u32,
    /// Minimum retransmission timeout, ms (RFC 6298 says 1000; Linux and ns-2 use 200).
    pub min_rto_ms: f64,
    /// Initial retransmission timeout, ms (RFC 6298: 1000).
    pub initial_rto_ms: f64,
    /// Clock granularity `G` of RFC 6298, ms: `RTO = SRTT + max(G, 4 RTTVAR)`. A floor on
    /// the variance term, not on the whole timeout. 100 ms by default: ns-2's TCP timer tick
    /// in the papers' era (`tcpTick_ 0.1`); Linux behaves as if G were 200 ms. Without it,
    /// long-delay paths with deep queues see spurious timeouts (csfq-table3).
    pub clock_granularity_ms: f64,
    /// Delayed ACKs: acknowledge every second segment or after `delayed_ack_ms`.
    pub delayed_ack: bool,
    /// Delayed-ACK timeout, ms.
    pub delayed_ack_ms: f64,
    /// Selective acknowledgments (RFC 2018) with RFC 6675-style loss recovery.
    pub sack: bool,
    /// The retransmission timer: RFC 6298's, or ns-2's coarse one with
    /// `clock_granularity_ms` as its tick (`tcp_tick_`).
    pub timer: TcpTimer,
    /// Every TCP flow's congestion control unless its `[[flow]]` table names one:
    /// `newreno` (the default, the papers') or `cubic`.
    pub congestion_control: CongestionControl,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            segment_bytes: 1000,
            ack_bytes: 40,
            max_window_segments: 64,
            initial_window_segments: 1,
            min_rto_ms: 200.0,
            initial_rto_ms: 1000.0,
            clock_granularity_ms: 100.0,
            delayed_ack: false,
            delayed_ack_ms: 100.0,
            sack: false,
            timer: TcpTimer::Rfc6298,
            congestion_control: CongestionControl::NewReno,
        }
    }
}

/// What the queue disciplines read of a scenario, and nothing else: their tables, the TCP
/// segment size (MAY and adaptive RED count in it) and the seed (FQ-CoDel's hash).
#[derive(Debug, Clone, Copy)]
pub struct DisciplineTables<'a> {
    /// `[csfq]`.
    pub csfq: &'a CsfqConfig,
    /// `[red]` (also FRED's and CHOKe's thresholds).
    pub red: &'a RedConfig,
    /// `[fred]`.
    pub fred: &'a FredConfig,
    /// `[drr]`.
    pub drr: &'a DrrConfig,
    /// `[tuf]`.
    pub tuf: &'a TufConfig,
    /// `[csfne]`.
    pub csfne: &'a CsfneConfig,
    /// `[may]`.
    pub may: &'a MayConfig,
    /// `[ared]`.
    pub ared: &'a AredConfig,
    /// `[fq_codel]`.
    pub fq_codel: &'a FqCodelConfig,
    /// `[tcp] segment_bytes`.
    pub segment_bytes: u32,
    /// The scenario's seed.
    pub seed: u64,
}
