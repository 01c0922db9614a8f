//! Scenario files: TOML with every table `deny_unknown_fields`, so a typo is an error with
//! a line number rather than a silent default.
//!
//! Units are in the field names (`rate_mbps`, `delay_ms`, `buffer_bytes`, `duration_s`).
//! A scenario declares routers, duplex links between them, and flows between routers;
//! a flow may get private access links (`access = { rate_mbps, delay_ms }`), which put a
//! host of its own on each side. A flow's first router is its CSFQ edge.
//! See the README's "Scenario format" for an annotated example.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::overlay::{LoopSpec, OverlayConfig};

/// A queue discipline by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DisciplineKind {
    /// Drop-tail FIFO.
    Fifo,
    /// RED.
    Red,
    /// FRED-1 (Lin and Morris).
    Fred1,
    /// FRED-2 (FRED with `minq` guaranteed buffers).
    Fred2,
    /// Deficit Round Robin.
    Drr,
    /// CSFQ (edge labeling where a flow enters, core on every port).
    Csfq,
    /// TUF (tags at edges, or at TCP sources; drop-highest-tag queues).
    Tuf,
    /// CS-FNE (TSW labels; flow-number-estimating cores).
    Csfne,
    /// CHOKe.
    Choke,
    /// CSFQ in the dataplane's integer arithmetic, labels carried as 16-bit floats.
    #[serde(rename = "csfq-fixed")]
    CsfqFixed,
    /// MAY (one FIFO, drops in proportion to past drops; the `[may]` table).
    May,
    /// Least Attained Service (per-flow queues; serve the least-served flow).
    Las,
    /// Adaptive RED (Floyd, Gummadi and Shenker 2001; the `[ared]` table).
    Ared,
    /// FQ-CoDel (RFC 8290; the `[fq_codel]` table), as Linux's `fq_codel`.
    #[serde(rename = "fq_codel")]
    FqCodel,
}

impl DisciplineKind {
    /// Every discipline, in the papers' order.
    pub const ALL: [DisciplineKind; 14] = [
        DisciplineKind::Fifo,
        DisciplineKind::Red,
        DisciplineKind::Fred1,
        DisciplineKind::Fred2,
        DisciplineKind::Drr,
        DisciplineKind::Csfq,
        DisciplineKind::Tuf,
        DisciplineKind::Csfne,
        DisciplineKind::Choke,
        DisciplineKind::CsfqFixed,
        DisciplineKind::May,
        DisciplineKind::Las,
        DisciplineKind::Ared,
        DisciplineKind::FqCodel,
    ];

    /// The lowercase name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DisciplineKind::Fifo => "fifo",
            DisciplineKind::Red => "red",
            DisciplineKind::Fred1 => "fred1",
            DisciplineKind::Fred2 => "fred2",
            DisciplineKind::Drr => "drr",
            DisciplineKind::Csfq => "csfq",
            DisciplineKind::Tuf => "tuf",
            DisciplineKind::Csfne => "csfne",
            DisciplineKind::Choke => "choke",
            DisciplineKind::CsfqFixed => "csfq-fixed",
            DisciplineKind::May => "may",
            DisciplineKind::Las => "las",
            DisciplineKind::Ared => "ared",
            DisciplineKind::FqCodel => "fq_codel",
        }
    }

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

    /// The core's parameters for a link of `rate_bps` with `buffer_bytes`.
    pub fn core_params(&self, rate_bps: f64, buffer_bytes: u32) -> csfq_algo::csfq::CsfqParams {
        let scaled = csfq_algo::csfq::scaled_window(rate_bps, buffer_bytes);
        let ms = |v: Option<f64>| v.map_or(scaled, |v| csfq_algo::Nanos::from_secs_f64(v / 1e3));
        csfq_algo::csfq::CsfqParams {
            k_alpha: ms(self.k_alpha_ms),
            k_c: ms(self.k_c_ms),
            relabel: self.relabel,
            estimator: self.estimator.into(),
            ..csfq_algo::csfq::CsfqParams::new(rate_bps, buffer_bytes)
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

/// DRR's quantum.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrrConfig {
    /// Bytes per round, at least the largest packet.
    pub quantum_bytes: u32,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            quantum_bytes: 1000,
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

/// TCP NewReno settings shared by every TCP flow of a scenario.
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
        }
    }
}

/// A duplex link between two routers; both directions get the same parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two routers it joins.
    pub between: [String; 2],
    /// Capacity, Mbit/s.
    pub rate_mbps: f64,
    /// Propagation delay, ms.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: f64,
    /// Buffer per direction, bytes.
    #[serde(default = "default_buffer_bytes")]
    pub buffer_bytes: u32,
    /// Queue discipline of both directions; the scenario's `discipline` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<DisciplineKind>,
}

fn default_delay_ms() -> f64 {
    1.0
}
fn default_buffer_bytes() -> u32 {
    64_000
}

/// Private access links for a flow: a host of its own on each side.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// Capacity, Mbit/s.
    pub rate_mbps: f64,
    /// Propagation delay, ms.
    pub delay_ms: f64,
    /// Added to the delay of each successive flow of the table: flow `j`'s access links
    /// have `delay_ms + j * delay_step_ms` (many round-trip times from one table).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_step_ms: f64,
}

/// How a web table spaces its transfers' starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps of mean `arrival_mean_ms` (a Poisson process).
    #[default]
    Exponential,
    /// Every `arrival_mean_ms` exactly.
    Periodic,
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

/// One `[[flow]]` table: `count` flows alike but for their rates.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// udp, onoff or tcp.
    pub kind: FlowKind,
    /// Source router.
    pub from: String,
    /// Destination router.
    pub to: String,
    /// How many flows this table makes.
    #[serde(default = "one")]
    pub count: u32,
    /// Sending rate (udp; onoff while ON), Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Added to the rate of each successive flow of the table: flow `j` sends
    /// `rate_mbps + j * rate_step_mbps`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_step_mbps: f64,
    /// Packet size, bytes (udp, onoff; tcp uses `[tcp] segment_bytes`).
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// Inter-arrival jitter: gaps uniform on [1 - jitter, 1 + jitter] x mean (0.5).
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Mean ON period, ms (onoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_ms: Option<f64>,
    /// Mean OFF period, ms (onoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_ms: Option<f64>,
    /// Start time, s.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_s: f64,
    /// Stop time, s (the scenario's end if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// CSFQ weight: the edge labels `rate / weight` (Section 2.3).
    #[serde(default = "one_f")]
    pub weight: f64,
    /// tcp: a finite transfer of this many segments (unlimited if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_pkts: Option<u32>,
    /// web: mean gap between transfer starts, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_mean_ms: Option<f64>,
    /// web: `exponential` gaps (default) or `periodic` ones.
    #[serde(default, skip_serializing_if = "is_default")]
    pub arrivals: Arrivals,
    /// web: mean transfer size, segments (Pareto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mean_pkts: Option<f64>,
    /// web: Pareto shape parameter, above 1 (1.06 in the CSFQ paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_shape: Option<f64>,
    /// web: uniform sizes instead of Pareto, from `size_min_pkts` to `size_max_pkts`
    /// segments inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_min_pkts: Option<u32>,
    /// web: the largest uniform size, segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_max_pkts: Option<u32>,
    /// rlm: number of layers (default 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u8>,
    /// rlm: rate of layer 1, Kbit/s; layer i sends twice layer i-1 (default 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_base_kbps: Option<f64>,
    /// Private access links on both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessSpec>,
    /// The edge-to-edge overlay loop (a `[[loop]]` name) that carries these flows.
    #[serde(rename = "loop", default, skip_serializing_if = "Option::is_none")]
    pub overlay_loop: Option<String>,
}

fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn default_packet_bytes() -> u32 {
    1000
}
fn default_jitter() -> f64 {
    0.5
}
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// The longest run, simulated seconds.
pub const MAX_DURATION_S: f64 = 1e6;
/// The most time-series samples a run may take.
pub const MAX_SAMPLES: f64 = 1e6;
/// The most flows a scenario may have.
pub const MAX_FLOWS: u64 = 1 << 20;
/// The largest TCP window, segments.
pub const MAX_WINDOW: u32 = 1 << 20;

/// A scenario file as written.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Short name.
    pub name: String,
    /// One sentence on what it shows.
    #[serde(default)]
    pub description: String,
    /// Simulated time, s.
    pub duration_s: f64,
    /// Seed of every random stream.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Default discipline of every link.
    pub discipline: DisciplineKind,
    /// Interval of the throughput and queue time series, ms.
    #[serde(default = "default_sample_ms")]
    pub sample_interval_ms: f64,
    /// Routers.
    pub routers: Vec<String>,
    /// CSFQ constants.
    #[serde(default)]
    pub csfq: CsfqConfig,
    /// RED/FRED thresholds.
    #[serde(default)]
    pub red: RedConfig,
    /// FRED.
    #[serde(default)]
    pub fred: FredConfig,
    /// DRR.
    #[serde(default)]
    pub drr: DrrConfig,
    /// TCP.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// TUF.
    #[serde(default)]
    pub tuf: TufConfig,
    /// CS-FNE.
    #[serde(default)]
    pub csfne: CsfneConfig,
    /// MAY.
    #[serde(default)]
    pub may: MayConfig,
    /// Adaptive RED.
    #[serde(default)]
    pub ared: AredConfig,
    /// FQ-CoDel.
    #[serde(default)]
    pub fq_codel: FqCodelConfig,
    /// Edge-to-edge overlay loops' parameters.
    #[serde(default)]
    pub overlay: OverlayConfig,
    /// Links.
    #[serde(rename = "link")]
    pub links: Vec<Spanned<LinkSpec>>,
    /// Flows.
    #[serde(rename = "flow")]
    pub flows: Vec<Spanned<FlowSpec>>,
    /// Edge-to-edge overlay loops.
    #[serde(rename = "loop", default, skip_serializing_if = "Vec::is_empty")]
    pub loops: Vec<Spanned<LoopSpec>>,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_ms() -> f64 {
    100.0
}

/// A scenario that failed to load: where, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{line}:{column}: {}{message}", file.display(), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
pub struct ScenarioError {
    /// The file (or a name standing for the text).
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Line and column (1-based) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// The key assigned on the line at `offset` (`key = value`), if any.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

impl ScenarioFile {
    /// Parses scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Self, ScenarioError> {
        let parsed: ScenarioFile = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let (line, column) = line_col(text, offset);
            ScenarioError {
                file: file.to_path_buf(),
                line,
                column,
                field: key_at(text, offset),
                message: e.message().to_string(),
            }
        })?;
        parsed.validate(text, file)?;
        Ok(parsed)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text, path)
    }

    /// Serializes back to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serializes")
    }

    fn validate(&self, text: &str, file: &Path) -> Result<(), ScenarioError> {
        let err = |span: std::ops::Range<usize>, field: &str, message: String| {
            // Point at the field's own line inside the table when it is written there.
            // (A table's span covers its header; its keys run to the next header.)
            let mut at = span.start;
            let mut pos = span.start;
            for (i, l) in text[span.start..].split_inclusive('\n').enumerate() {
                if i > 0 && l.trim_start().starts_with('[') {
                    break;
                }
                let key = l.split('=').next().unwrap_or("").trim();
                if key == field {
                    at = pos + (l.len() - l.trim_start().len());
                    break;
                }
                pos += l.len();
            }
            let (line, column) = line_col(text, at);
            ScenarioError {
                file: file.to_path_buf(),
                line,
                column,
                field: Some(field.to_string()),
                message,
            }
        };
        let top = 0..0;
        let top_key = |key: &str| {
            let off = text
                .lines()
                .scan(0usize, |pos, l| {
                    let here = *pos;
                    *pos += l.len() + 1;
                    Some((here, l))
                })
                .find(|(_, l)| l.trim_start().starts_with(key))
                .map_or(0, |(p, _)| p);
            off..off
        };
        // The line of `key` inside the `[table]` section, else the section's header.
        let table_key = |table: &str, key: &str| {
            let header = format!("[{table}]");
            let mut pos = 0usize;
            let mut inside = false;
            let mut found = None;
            for l in text.split_inclusive('\n') {
                let t = l.trim_start();
                if t.starts_with('[') {
                    inside = t.trim_end().starts_with(&header);
                    if inside && found.is_none() {
                        found = Some(pos);
                    }
                } else if inside && t.split('=').next().unwrap_or("").trim() == key {
                    found = Some(pos + (l.len() - t.len()));
                    break;
                }
                pos += l.len();
            }
            let at = found.unwrap_or(0);
            at..at
        };
        if !(self.duration_s.is_finite()
            && self.duration_s > 0.0
            && self.duration_s <= MAX_DURATION_S)
        {
            return Err(err(
                top_key("duration_s"),
                "duration_s",
                format!("must be a positive number of seconds, at most {MAX_DURATION_S}"),
            ));
        }
        if !(self.sample_interval_ms.is_finite()
            && self.sample_interval_ms > 0.0
            && self.duration_s * 1e3 / self.sample_interval_ms <= MAX_SAMPLES)
        {
            return Err(err(
                top_key("sample_interval_ms"),
                "sample_interval_ms",
                format!("must be positive and give at most {MAX_SAMPLES} samples over the run"),
            ));
        }
        if self.routers.is_empty() {
            return Err(err(
                top_key("routers"),
                "routers",
                "at least one router is needed".into(),
            ));
        }
        for (i, r) in self.routers.iter().enumerate() {
            if self.routers[..i].contains(r) {
                return Err(err(
                    top_key("routers"),
                    "routers",
                    format!("router `{r}` is listed twice"),
                ));
            }
        }
        let c = &self.csfq;
        for (v, name) in [
            (Some(c.k_ms), "csfq.k_ms"),
            (c.k_alpha_ms, "csfq.k_alpha_ms"),
            (c.k_c_ms, "csfq.k_c_ms"),
        ] {
            if v.is_some_and(|v| !(v.is_finite() && v > 0.0 && v <= 1000.0)) {
                return Err(err(
                    top_key(name.trim_start_matches("csfq.")),
                    name,
                    "must be a number of ms in (0, 1000]".into(),
                ));
            }
        }
        let r = &self.red;
        if r.min_th_bytes == 0 || r.min_th_bytes >= r.max_th_bytes {
            return Err(err(
                top_key("min_th_bytes"),
                "red.min_th_bytes",
                "must be positive and below max_th_bytes".into(),
            ));
        }
        if !(r.w_q > 0.0 && r.w_q <= 1.0 && r.max_p > 0.0 && r.max_p <= 1.0) {
            return Err(err(
                top_key("w_q"),
                "red.w_q / red.max_p",
                "must be in (0, 1]".into(),
            ));
        }
        if self.drr.quantum_bytes == 0 || self.drr.quantum_bytes > 1 << 24 {
            return Err(err(
                top_key("quantum_bytes"),
                "drr.quantum_bytes",
                "must be 1..=16777216".into(),
            ));
        }
        if !(1..=65_535).contains(&self.fred.min_q_packets) {
            return Err(err(
                top_key("min_q_packets"),
                "fred.min_q_packets",
                "must be 1..=65535".into(),
            ));
        }
        let u = &self.tuf;
        if !(u.k_ms.is_finite() && u.k_ms > 0.0 && (0.0..=1.0).contains(&u.untagged_buffer_share))
            || u.tagged_weight == 0
            || u.untagged_weight == 0
        {
            return Err(err(
                top_key("untagged_buffer_share"),
                "tuf",
                "k_ms must be positive, untagged_buffer_share in [0, 1], weights at least 1".into(),
            ));
        }
        let c = &self.csfne;
        if !(c.win_ms.is_finite() && c.win_ms > 0.0 && c.k_ms.is_finite() && c.k_ms > 0.0) {
            return Err(err(
                top_key("win_ms"),
                "csfne.win_ms",
                "win_ms and k_ms must be positive".into(),
            ));
        }
        let t = &self.tcp;
        if t.segment_bytes < 64 || t.segment_bytes > 65_535 || t.ack_bytes == 0 {
            return Err(err(
                top_key("segment_bytes"),
                "tcp.segment_bytes",
                "must be 64..=65535 bytes (and ack_bytes > 0)".into(),
            ));
        }
        if !(1..=MAX_WINDOW).contains(&t.max_window_segments)
            || !(1..=t.max_window_segments).contains(&t.initial_window_segments)
        {
            return Err(err(
                top_key("max_window_segments"),
                "tcp.max_window_segments",
                format!("windows must be 1..={MAX_WINDOW} segments, the initial one at most the maximum"),
            ));
        }
        let timer_ok = |ms: f64| ms.is_finite() && ms > 0.0 && ms <= MAX_DURATION_S * 1e3;
        if !(timer_ok(t.min_rto_ms)
            && timer_ok(t.initial_rto_ms)
            && timer_ok(t.delayed_ack_ms)
            && (t.clock_granularity_ms == 0.0 || timer_ok(t.clock_granularity_ms)))
        {
            return Err(err(
                top_key("min_rto_ms"),
                "tcp.min_rto_ms",
                "timers must be positive".into(),
            ));
        }
        let m = &self.may;
        let may_checks = [
            (
                m.update_interval_ms.is_finite() && m.update_interval_ms > 0.0,
                "update_interval_ms",
                "must be a positive number of ms",
            ),
            (
                m.target_utilization > 0.0 && m.target_utilization <= 1.0,
                "target_utilization",
                "must be in (0, 1]",
            ),
            (
                m.gain.is_finite() && m.gain > 0.0,
                "gain",
                "must be positive",
            ),
            (m.q_w > 0.0 && m.q_w <= 1.0, "q_w", "must be in (0, 1]"),
            (
                m.timeout_s.is_finite() && m.timeout_s > 0.0 && m.timeout_s <= MAX_DURATION_S,
                "timeout_s",
                "must be a positive number of seconds",
            ),
            (
                m.s0.is_finite() && m.s0 >= 1.0,
                "s0",
                "must be at least 1 (packets)",
            ),
            (
                m.table_capacity >= 1,
                "table_capacity",
                "must be at least 1 entry",
            ),
        ];
        for (ok, name, what) in may_checks {
            if !ok {
                return Err(err(
                    table_key("may", name),
                    &format!("may.{name}"),
                    what.into(),
                ));
            }
        }
        let a = &self.ared;
        if !(a.target_delay_ms.is_finite() && a.target_delay_ms > 0.0 && a.target_delay_ms < 1e6) {
            return Err(err(
                table_key("ared", "target_delay_ms"),
                "ared.target_delay_ms",
                "must be a positive number of ms".into(),
            ));
        }
        let q = &self.fq_codel;
        let fq_checks = [
            (
                (1..=65_536).contains(&q.flows),
                "flows",
                "must be 1..=65536 buckets",
            ),
            (
                (1..=1 << 24).contains(&q.quantum_bytes),
                "quantum_bytes",
                "must be 1..=16777216",
            ),
            (
                q.target_ms.is_finite() && q.target_ms > 0.0 && q.target_ms <= 1e6,
                "target_ms",
                "must be a positive number of ms, at most 1e6",
            ),
            (
                q.interval_ms.is_finite() && q.interval_ms > 0.0 && q.interval_ms <= 1e6,
                "interval_ms",
                "must be a positive number of ms, at most 1e6",
            ),
        ];
        for (ok, name, what) in fq_checks {
            if !ok {
                return Err(err(
                    table_key("fq_codel", name),
                    &format!("fq_codel.{name}"),
                    what.into(),
                ));
            }
        }
        let total: u64 = self.flows.iter().map(|f| f.get_ref().count as u64).sum();
        if total > MAX_FLOWS {
            let s = self.flows[0].span();
            return Err(err(
                s,
                "count",
                format!("{total} flows in all; at most {MAX_FLOWS}"),
            ));
        }
        let known = |n: &str| self.routers.iter().any(|r| r == n);
        for l in &self.links {
            let s = l.span();
            let spec = l.get_ref();
            for end in &spec.between {
                if !known(end) {
                    return Err(err(
                        s,
                        "between",
                        format!(
                            "unknown router `{end}` (routers: {})",
                            self.routers.join(", ")
                        ),
                    ));
                }
            }
            if spec.between[0] == spec.between[1] {
                return Err(err(
                    s,
                    "between",
                    "a link joins two different routers".into(),
                ));
            }
            if !(spec.rate_mbps.is_finite() && spec.rate_mbps > 0.0) {
                return Err(err(s, "rate_mbps", "must be positive".into()));
            }
            if !(spec.delay_ms.is_finite() && spec.delay_ms >= 0.0) {
                return Err(err(s, "delay_ms", "must be zero or positive".into()));
            }
            if spec.buffer_bytes < 1500 {
                return Err(err(
                    s,
                    "buffer_bytes",
                    "must hold at least one 1500-byte packet".into(),
                ));
            }
        }
        if self.flows.is_empty() {
            return Err(err(top, "flow", "at least one [[flow]] is needed".into()));
        }
        for f in &self.flows {
            let s = f.span();
            let spec = f.get_ref();
            for (end, name) in [(&spec.from, "from"), (&spec.to, "to")] {
                if !known(end) {
                    return Err(err(s.clone(), name, format!("unknown router `{end}`")));
                }
            }
            if spec.count == 0 {
                return Err(err(s, "count", "must be at least 1".into()));
            }
            if spec.from == spec.to && spec.access.is_none() {
                return Err(err(
                    s,
                    "to",
                    "a flow between a router and itself needs `access` links".into(),
                ));
            }
            match spec.kind {
                FlowKind::Udp | FlowKind::Onoff => {
                    let Some(rate) = spec.rate_mbps else {
                        return Err(err(
                            s,
                            "rate_mbps",
                            format!("a {} flow needs a rate", spec.kind.name()),
                        ));
                    };
                    let last = rate + spec.rate_step_mbps * (spec.count - 1) as f64;
                    if !(rate.is_finite() && rate > 0.0 && last > 0.0) {
                        return Err(err(
                            s,
                            "rate_mbps",
                            "every flow's rate must be positive".into(),
                        ));
                    }
                    if spec.packet_bytes < 20 || spec.packet_bytes > 65_535 {
                        return Err(err(s, "packet_bytes", "must be 20..=65535".into()));
                    }
                    if !(0.0..1.0).contains(&spec.jitter) {
                        return Err(err(s, "jitter", "must be in [0, 1)".into()));
                    }
                }
                FlowKind::Tcp | FlowKind::Web | FlowKind::Rlm => {
                    if spec.rate_mbps.is_some() {
                        return Err(err(
                            s,
                            "rate_mbps",
                            format!(
                                "a {} flow has no sending rate; its window sets it",
                                spec.kind.name()
                            ),
                        ));
                    }
                }
            }
            if spec.kind != FlowKind::Rlm
                && (spec.layers.is_some() || spec.layer_base_kbps.is_some())
            {
                return Err(err(s, "layers", "only rlm flows have layers".into()));
            }
            if spec.layers.is_some_and(|l| !(1..=16).contains(&l)) {
                return Err(err(s, "layers", "must be 1..=16".into()));
            }
            if spec
                .layer_base_kbps
                .is_some_and(|b| !(b.is_finite() && b > 0.0 && b < 1e9))
            {
                return Err(err(s, "layer_base_kbps", "must be positive".into()));
            }
            if spec.size_pkts.is_some() && spec.kind != FlowKind::Tcp {
                return Err(err(
                    s,
                    "size_pkts",
                    "only tcp flows have a transfer size".into(),
                ));
            }
            if spec.size_pkts == Some(0) {
                return Err(err(s, "size_pkts", "must be at least 1 segment".into()));
            }
            let uniform = spec.size_min_pkts.is_some() || spec.size_max_pkts.is_some();
            let web_fields = [
                (spec.arrival_mean_ms, "arrival_mean_ms", 0.0, true),
                (spec.size_mean_pkts, "size_mean_pkts", 1.0, !uniform),
                (spec.size_shape, "size_shape", 1.0, !uniform),
            ];
            for (v, name, above, needed) in web_fields {
                match (spec.kind, v, needed) {
                    (FlowKind::Web, Some(_), false) => {
                        return Err(err(
                            s,
                            name,
                            "a web table has Pareto sizes (size_mean_pkts, size_shape) or uniform ones (size_min_pkts, size_max_pkts), not both".into(),
                        ));
                    }
                    (FlowKind::Web, Some(v), true) if v.is_finite() && v > above && v < 1e9 => {}
                    (FlowKind::Web, None, false) => {}
                    (FlowKind::Web, _, _) => {
                        return Err(err(
                            s,
                            name,
                            format!("a web flow needs {name} above {above}"),
                        ));
                    }
                    (_, Some(_), _) => {
                        return Err(err(s, name, format!("only web flows have {name}")));
                    }
                    (_, None, _) => {}
                }
            }
            if uniform {
                if spec.kind != FlowKind::Web {
                    return Err(err(
                        s,
                        "size_min_pkts",
                        "only web flows have size_min_pkts and size_max_pkts".into(),
                    ));
                }
                match (spec.size_min_pkts, spec.size_max_pkts) {
                    (Some(lo), Some(hi)) if lo >= 1 && lo <= hi && hi <= 10_000_000 => {}
                    _ => {
                        return Err(err(
                            s,
                            "size_min_pkts",
                            "uniform sizes need 1 <= size_min_pkts <= size_max_pkts <= 10000000"
                                .into(),
                        ))
                    }
                }
            }
            if spec.kind != FlowKind::Web && spec.arrivals != Arrivals::default() {
                return Err(err(s, "arrivals", "only web flows have arrivals".into()));
            }
            if spec.kind == FlowKind::Onoff {
                for (v, name) in [(spec.on_ms, "on_ms"), (spec.off_ms, "off_ms")] {
                    match v {
                        Some(v) if v.is_finite() && v > 0.0 => {}
                        _ => {
                            return Err(err(
                                s,
                                name,
                                "an onoff flow needs a positive mean period".into(),
                            ))
                        }
                    }
                }
            } else if spec.on_ms.is_some() || spec.off_ms.is_some() {
                return Err(err(
                    s,
                    "on_ms",
                    "only onoff flows have ON/OFF periods".into(),
                ));
            }
            if !(spec.weight.is_finite() && spec.weight > 0.0) {
                return Err(err(s, "weight", "must be positive".into()));
            }
            let stop = spec.stop_s.unwrap_or(self.duration_s);
            if !(spec.start_s >= 0.0 && stop > spec.start_s) {
                return Err(err(s, "start_s", "need 0 <= start_s < stop_s".into()));
            }
            if let Some(a) = spec.access {
                let last = a.delay_ms + a.delay_step_ms * (spec.count - 1) as f64;
                if !(a.rate_mbps.is_finite()
                    && a.rate_mbps > 0.0
                    && a.delay_ms.is_finite()
                    && a.delay_ms >= 0.0
                    && a.delay_step_ms.is_finite()
                    && last >= 0.0)
                {
                    return Err(err(
                        s,
                        "access",
                        "needs rate_mbps > 0, and delay_ms (plus delay_step_ms per flow) >= 0"
                            .into(),
                    ));
                }
            }
        }
        crate::overlay::validate(self).map_err(|(span, field, message)| {
            let short = field.trim_start_matches("overlay.").to_string();
            let span = span.unwrap_or_else(|| table_key("overlay", &short));
            let key = if field.starts_with("overlay.") {
                short
            } else {
                field.clone()
            };
            let mut e = err(span, &key, message);
            e.field = Some(field);
            e
        })
    }

    /// The same scenario with every link's discipline set to `d`.
    pub fn with_discipline(&self, d: DisciplineKind) -> Self {
        let mut s = self.clone();
        s.discipline = d;
        for l in &mut s.links {
            l.get_mut().discipline = None;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
duration_s = 1.0
discipline = "csfq"
routers = ["a", "b"]

[[link]]
between = ["a", "b"]
rate_mbps = 10

[[flow]]
kind = "udp"
from = "a"
to = "b"
rate_mbps = 1
"#;

    fn parse(s: &str) -> Result<ScenarioFile, ScenarioError> {
        ScenarioFile::parse(s, Path::new("t.toml"))
    }

    #[test]
    fn parses_with_defaults() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.links[0].get_ref().buffer_bytes, 64_000);
        assert_eq!(s.flows[0].get_ref().jitter, 0.5);
        assert_eq!(s.csfq.k_ms, 100.0);
    }

    #[test]
    fn unknown_field_names_file_line_and_field() {
        let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = 10\nrate_mpbs = 3");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 10);
        assert_eq!(e.field.as_deref(), Some("rate_mpbs"));
        let shown = e.to_string();
        assert!(
            shown.starts_with("t.toml:10:1: field `rate_mpbs`"),
            "{shown}"
        );
        assert!(shown.contains("unknown field"), "{shown}");
    }

    #[test]
    fn wrong_type_names_the_field() {
        let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = \"ten\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (9, Some("rate_mbps")));
    }

    #[test]
    fn semantic_errors_point_at_the_table() {
        let bad = GOOD.replace("to = \"b\"", "to = \"c\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (14, Some("to")));
        assert!(e.message.contains("unknown router `c`"));
        let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = -1");
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (9, Some("rate_mbps")));
    }

    #[test]
    fn limits_keep_runs_finite() {
        for (from, to, field) in [
            ("duration_s = 1.0", "duration_s = 1e9", "duration_s"),
            (
                "duration_s = 1.0",
                "duration_s = 1.0\nsample_interval_ms = 1e-6",
                "sample_interval_ms",
            ),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\ncount = 2000000\n",
                "count",
            ),
            (
                "routers = [\"a\", \"b\"]",
                "routers = [\"a\", \"b\"]\n[tcp]\nmax_window_segments = 4000000000",
                "tcp.max_window_segments",
            ),
            (
                "routers = [\"a\", \"b\"]",
                "routers = [\"a\", \"b\"]\n[drr]\nquantum_bytes = 4000000000",
                "drr.quantum_bytes",
            ),
            (
                "routers = [\"a\", \"b\"]",
                "routers = [\"a\", \"b\"]\n[fq_codel]\nflows = 0",
                "fq_codel.flows",
            ),
            (
                "routers = [\"a\", \"b\"]",
                "routers = [\"a\", \"b\"]\n[fq_codel]\ntarget_ms = -5",
                "fq_codel.target_ms",
            ),
        ] {
            let bad = GOOD.replace(from, to);
            assert_ne!(bad, GOOD, "{field}: replacement did not apply");
            let e = parse(&bad).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
        }
    }

    #[test]
    fn round_trips_through_toml() {
        let s = parse(GOOD).unwrap();
        let again = parse(&s.to_toml()).unwrap();
        assert_eq!(s.flows[0].get_ref(), again.flows[0].get_ref());
        assert_eq!(s.links[0].get_ref(), again.links[0].get_ref());
    }
}
