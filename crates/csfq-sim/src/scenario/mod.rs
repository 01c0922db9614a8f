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

mod validate;

pub(crate) use validate::printable;

/// What the scenario's buffers could queue at worst: every buffer full of its smallest
/// packets.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueBound {
    /// Packets, over both directions of every link.
    pub packets: u64,
    /// Memory they would take in the simulator's queues, bytes.
    pub bytes: u64,
    /// The link with the largest share: its index, routers and buffer.
    pub link: (usize, String, String, u32),
    /// The smallest packet and what sends it.
    pub smallest: (u32, &'static str),
}

/// The scenario's buffers could hold more packets than the memory a run may use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the buffers could queue {packets} packets of {size} bytes ({what}), {gib:.1} GiB of      simulator state, more than the {budget_gib:.1} GiB available: link {link} ({a}-{b})      alone has a {buffer}-byte buffer in each direction; lower buffer_bytes or send larger      packets",
    packets = bound.packets,
    size = bound.smallest.0,
    what = bound.smallest.1,
    gib = bound.bytes as f64 / GIB,
    budget_gib = *budget as f64 / GIB,
    link = bound.link.0,
    a = bound.link.1,
    b = bound.link.2,
    buffer = bound.link.3
)]
pub struct TooLarge {
    /// The worst case.
    pub bound: QueueBound,
    /// The memory it was held against, bytes.
    pub budget: u64,
}

const GIB: f64 = (1u64 << 30) as f64;

/// The memory the kernel says is available for new allocations, bytes.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl ScenarioFile {
    /// The most packets the buffers could hold at once (each full of the smallest packet
    /// any flow or loop sends) and the memory the simulator would need for them.
    pub fn queue_bound(&self) -> QueueBound {
        let tcp = self
            .flows
            .iter()
            .any(|f| matches!(f.get_ref().kind, FlowKind::Tcp | FlowKind::Web));
        let mut smallest = (u32::MAX, "");
        let mut take = |b: u32, what: &'static str| {
            if b < smallest.0 {
                smallest = (b, what);
            }
        };
        if tcp {
            take(
                self.tcp.ack_bytes.min(self.tcp.segment_bytes),
                "[tcp] ack_bytes",
            );
        }
        for f in &self.flows {
            if !matches!(f.get_ref().kind, FlowKind::Tcp | FlowKind::Web) {
                take(f.get_ref().packet_bytes, "a flow's packet_bytes");
            }
        }
        if !self.loops.is_empty() {
            take(self.overlay.control_bytes, "[overlay] control_bytes");
        }
        let size = u64::from(smallest.0.max(1));
        let per_packet = std::mem::size_of::<crate::packet::SimPacket>() as u64;
        let mut packets = 0u64;
        let mut link = (0, String::new(), String::new(), 0);
        for (i, l) in self.links.iter().enumerate() {
            let l = l.get_ref();
            packets += 2 * (u64::from(l.buffer_bytes) / size);
            if l.buffer_bytes > link.3 {
                link = (
                    i,
                    l.between[0].clone(),
                    l.between[1].clone(),
                    l.buffer_bytes,
                );
            }
        }
        QueueBound {
            packets,
            bytes: packets.saturating_mul(per_packet),
            link,
            smallest,
        }
    }

    /// Refuses a scenario whose buffers could need more than `budget` bytes of queue
    /// state (the CLI passes the memory the machine has available).
    pub fn check_queue_memory(&self, budget: u64) -> Result<QueueBound, TooLarge> {
        let bound = self.queue_bound();
        if bound.bytes > budget {
            Err(TooLarge { bound, budget })
        } else {
            Ok(bound)
        }
    }

    /// [`Self::check_queue_memory`] against the memory this machine has available
    /// (`MemAvailable` in /proc/meminfo); passes where that cannot be read.
    pub fn check_fits_this_machine(&self) -> Result<(), TooLarge> {
        match available_memory() {
            Some(budget) => self.check_queue_memory(budget).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Each router's index in `routers`, by name: one hashed lookup per name, so loading
    /// stays linear in the routers, links and flows.
    pub fn router_index(&self) -> std::collections::HashMap<&str, usize> {
        self.routers
            .iter()
            .enumerate()
            .map(|(i, r)| (r.as_str(), i))
            .collect()
    }
}

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
    /// Count a tracked flow's buffer overflows in its `ND` as well as MAY's own drops (the
    /// prose's "the number of dropped packets from the flow"); the pseudocode's reading,
    /// false, is the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overflow_in_nd: bool,
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
    /// The retransmission timer: RFC 6298's, or ns-2's coarse one with
    /// `clock_granularity_ms` as its tick (`tcp_tick_`).
    pub timer: TcpTimer,
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
        }
    }
}

/// A duplex link between two routers; both directions get the same parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two routers it joins.
    #[serde(deserialize_with = "two_routers")]
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

/// Exactly two router names (serde alone would take the first two of a longer list).
fn two_routers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[String; 2], D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    <[String; 2]>::try_from(names).map_err(|names| {
        serde::de::Error::invalid_length(names.len(), &"two router names, one for each end")
    })
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
/// The most samples of one time series a run may take.
pub const MAX_SAMPLES: f64 = 1e6;
/// The most time-series values a run may keep in all (flows and links, every sample):
/// 160 MB as `f64`, several times that in `summary.json`.
pub const MAX_SAMPLE_POINTS: f64 = 2e7;
/// The slowest link, flow or access rate, Mbit/s (1 kbit/s).
pub const MIN_RATE_MBPS: f64 = 1e-3;
/// The fastest link, flow or access rate, Mbit/s (1 Tbit/s).
pub const MAX_RATE_MBPS: f64 = 1e6;
/// The longest propagation delay, ms.
pub const MAX_DELAY_MS: f64 = 1e6;
/// The shortest time constant, interval, timer or mean ON/OFF period of any table, ms
/// (1 us; time is kept in whole ns), and the shortest run (`duration_s`), in ms.
pub const MIN_TIME_MS: f64 = 1e-3;
/// The smallest flow weight.
pub const MIN_WEIGHT: f64 = 1e-3;
/// The largest flow weight.
pub const MAX_WEIGHT: f64 = 1e3;
/// The longest scenario, router or loop name, bytes.
pub const MAX_NAME_BYTES: usize = 100;
/// The largest scenario file, bytes.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// RLM sessions' layers when a flow does not say (the CSFQ paper's seven).
pub const RLM_DEFAULT_LAYERS: u8 = 7;
/// The first RLM layer's rate when a flow does not say, kbit/s.
pub const RLM_DEFAULT_BASE_KBPS: f64 = 32.0;
const RATE_RANGE: &str = "must be 0.001..=1000000 Mbit/s (1 kbit/s to 1 Tbit/s)";
const DELAY_RANGE: &str = "must be 0..=1000000 ms";
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
    /// Interval of the throughput and queue time series, ms; if absent, 100 ms or the
    /// smallest multiple of 100 ms that keeps the run within [`MAX_SAMPLES`] and
    /// [`MAX_SAMPLE_POINTS`] (see [`ScenarioFile::sample_interval_ms`]).
    #[serde(
        default,
        rename = "sample_interval_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_interval: Option<f64>,
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
/// The sample interval used when a scenario gives none, ms.
pub const DEFAULT_SAMPLE_MS: f64 = 100.0;

/// A scenario that failed to load: where, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    /// The file (or a name standing for the text).
    pub file: PathBuf,
    /// 1-based line; 0 when the error is about the whole file (it cannot be read).
    pub line: usize,
    /// 1-based column; 0 with line 0.
    pub column: usize,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.file.display())?;
        if self.line > 0 {
            write!(f, "{}:{}:", self.line, self.column)?;
        }
        if let Some(field) = &self.field {
            write!(f, " field `{field}`:")?;
        }
        write!(f, " {}", self.message)
    }
}

/// Line and column (1-based) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Line and column (1-based) of a byte offset in bytes that may not be text.
fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
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
            let message = e.message().to_string();
            // serde names a missing field in its message and points at the table that
            // lacks it (the whole file for a top-level field), not at a key.
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next())
                .map(str::to_string);
            let (field, message) = match missing {
                Some(name) => {
                    let in_table = text[offset.min(text.len())..].trim_start().starts_with('[');
                    let place = if in_table {
                        "from the table that starts here"
                    } else {
                        "from the top level of the file"
                    };
                    (Some(name), format!("required, and missing {place}"))
                }
                None => (key_at(text, offset), message),
            };
            ScenarioError {
                file: file.to_path_buf(),
                line,
                column,
                field,
                message,
            }
        })?;
        parsed.validate(text, file)?;
        Ok(parsed)
    }

    /// Reads and parses a scenario file of at most [`MAX_FILE_BYTES`] (read no further, so
    /// `/dev/zero` or a runaway pipe is an error, not an exhausted memory).
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        Self::parse(&Self::read_text(path)?, path)
    }

    /// The text of a scenario file, read as [`ScenarioFile::load`] reads it: at most
    /// [`MAX_FILE_BYTES`], UTF-8, errors with the file (and the line of a bad byte).
    pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
        use std::io::Read as _;
        let whole = |message: String| ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: None,
            message,
        };
        let file = std::fs::File::open(path).map_err(|e| whole(format!("cannot read: {e}")))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| whole(format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(whole(format!(
                "larger than {} MiB: not a scenario file",
                MAX_FILE_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|e| {
            let (line, column) = line_col_bytes(e.as_bytes(), e.utf8_error().valid_up_to());
            ScenarioError {
                file: path.to_path_buf(),
                line,
                column,
                field: None,
                message: "not UTF-8 text: a scenario is a TOML file".into(),
            }
        })
    }

    /// The interval of the time series, ms: the file's, else [`DEFAULT_SAMPLE_MS`] or the
    /// smallest multiple of it that keeps the run's series within bounds.
    pub fn sample_interval_ms(&self) -> f64 {
        self.sample_interval.unwrap_or_else(|| {
            let least = self.least_sample_interval_ms();
            (least / DEFAULT_SAMPLE_MS).ceil().max(1.0) * DEFAULT_SAMPLE_MS
        })
    }

    /// The smallest sample interval that keeps every series within [`MAX_SAMPLES`] and all
    /// of them within [`MAX_SAMPLE_POINTS`], ms.
    pub fn least_sample_interval_ms(&self) -> f64 {
        // One throughput series per flow; queue, fair-share and table series per link
        // direction; four series per overlay loop.
        let series = self.flow_count() as f64
            + 6.0 * self.links.len() as f64
            + 4.0 * self.loops.len() as f64;
        let ms = self.duration_s * 1e3;
        (ms / MAX_SAMPLES).max(ms * series / MAX_SAMPLE_POINTS)
    }

    /// The number of flows, every table's `count` added up.
    pub fn flow_count(&self) -> u64 {
        self.flows.iter().map(|f| f.get_ref().count as u64).sum()
    }

    /// Serializes back to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serializes")
    }

    /// The scenario with a run's overrides: another seed, every link on one discipline.
    pub fn with_run_options(self, seed: Option<u64>, d: Option<DisciplineKind>) -> Self {
        let mut s = match d {
            Some(d) => self.with_discipline(d),
            None => self,
        };
        if let Some(seed) = seed {
            s.seed = seed;
        }
        s
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
        // The routers that do exist, so the typo is easy to see.
        assert!(e.message.contains("(routers: a, b)"), "{}", e.message);
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

    /// A chain of 20 000 routers loads (names are looked up by hash and components found
    /// by union-find: 100 000 routers took 24.5 s when both were linear scans), a flow
    /// across all of it has a route, and one missing link in the middle is found.
    #[test]
    fn long_chains_load_and_their_gaps_are_found() {
        let n = 20_000;
        let chain = |skip: usize| {
            let mut t = format!(
                "name = \"t\"\nduration_s = 1\ndiscipline = \"fifo\"\nrouters = [{}]\n",
                (0..n)
                    .map(|i| format!("\"r{i}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for i in (0..n - 1).filter(|&i| i != skip) {
                t += &format!(
                    "[[link]]\nbetween = [\"r{i}\", \"r{}\"]\nrate_mbps = 10\n",
                    i + 1
                );
            }
            t + &format!(
                "[[flow]]\nkind = \"udp\"\nfrom = \"r0\"\nto = \"r{}\"\nrate_mbps = 1\n",
                n - 1
            )
        };
        assert!(parse(&chain(usize::MAX)).is_ok());
        let e = parse(&chain(n / 2)).unwrap_err();
        assert!(e.to_string().contains("no route"), "{e}");
    }

    /// RLM layers double from the base: 16 layers from 1e8 kbit/s would send 65535 times
    /// the 1 Tbit/s bound on every other source (a run of ~86 000 years); refused, like a
    /// top layer too fast for its packets, while the paper's seven from 32 kbit/s pass.
    #[test]
    fn rlm_layers_are_bounded_like_any_source() {
        let rlm = |extra: &str| {
            GOOD.replace("kind = \"udp\"", "kind = \"rlm\"")
                .replace("rate_mbps = 1\n", extra)
        };
        assert!(parse(&rlm("")).is_ok());
        assert!(parse(&rlm("layers = 16\nlayer_base_kbps = 1000\n")).is_ok());
        for bad in [
            "layers = 16\nlayer_base_kbps = 1e8\n",
            "layers = 1\nlayer_base_kbps = 9e8\npacket_bytes = 20\n",
        ] {
            let e = parse(&rlm(bad)).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("layer_base_kbps"), "{bad}: {e}");
        }
    }

    /// The worst case the buffers could queue, by hand: two 64 000-byte directions of
    /// 20-byte packets are 6400 packets; a 4 GB buffer of them is refused against a budget
    /// it exceeds (it used to grow to 8.5 GB and abort), naming the link and the packet.
    #[test]
    fn buffers_that_cannot_fit_are_refused() {
        let small = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 1\npacket_bytes = 20\n");
        let b = parse(&small).unwrap().queue_bound();
        assert_eq!(b.packets, 6400);
        assert_eq!(b.smallest, (20, "a flow's packet_bytes"));
        let huge = small.replace(
            "rate_mbps = 10\n",
            "rate_mbps = 10\nbuffer_bytes = 4294967295\n",
        );
        let s = parse(&huge).unwrap();
        let b = s.queue_bound();
        assert_eq!(b.packets, 2 * (4_294_967_295 / 20));
        let e = s.check_queue_memory(1 << 30).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("link 0 (a-b)") && text.contains("20 bytes"),
            "{text}"
        );
        assert!(s.check_queue_memory(u64::MAX).is_ok());
        // TCP's ACKs are its smallest packets.
        let tcp = GOOD
            .replace("kind = \"udp\"", "kind = \"tcp\"")
            .replace("rate_mbps = 1\n", "");
        assert_eq!(
            parse(&tcp).unwrap().queue_bound().smallest,
            (40, "[tcp] ack_bytes")
        );
    }

    /// Names are printed and written to files: control characters and Unicode's direction
    /// overrides are refused in router and loop names, naming the character.
    #[test]
    fn names_with_unprintable_characters_are_refused() {
        for bad in ["a\\n", "a\\u202Eb", "a\\u001b[31m"] {
            let text = GOOD.replace("\"b\"", &format!("\"{bad}\""));
            let e = parse(&text).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("routers"), "{bad}: {e}");
        }
        assert!(parse(&GOOD.replace("\"b\"", "\"b,\\\"c\\\" é\"")).is_ok());
    }

    /// A packet larger than a link's buffer could never be queued and its flow would get
    /// nothing: refused at load, naming the buffer and the flow that sends it; ACKs are
    /// bounded like segments.
    #[test]
    fn packets_larger_than_a_buffer_are_refused() {
        let jumbo = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 1\npacket_bytes = 9000\n");
        let small = jumbo.replace("rate_mbps = 10\n", "rate_mbps = 10\nbuffer_bytes = 4000\n");
        assert!(parse(&jumbo).is_ok(), "9000 bytes fit the default 64 KB");
        let e = parse(&small).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("buffer_bytes"), "{e}");
        assert!(
            e.to_string()
                .contains("flow table 1 sends 9000-byte packets"),
            "{e}"
        );
        let tcp = GOOD
            .replace("kind = \"udp\"", "kind = \"tcp\"")
            .replace("rate_mbps = 1\n", "");
        let big = format!("{tcp}\n[tcp]\nsegment_bytes = 65000\n");
        let e = parse(&big).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("buffer_bytes"), "{e}");
        assert!(e.to_string().contains("segment_bytes"), "{e}");
        let ack = format!("{tcp}\n[tcp]\nack_bytes = 4294967295\n");
        let e = parse(&ack).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("tcp.ack_bytes"), "{e}");
        assert!(parse(&format!("{tcp}\n[tcp]\nack_bytes = 1500\n")).is_ok());
    }

    /// ns-2's timer needs a tick: `clock_granularity_ms = 0` (allowed for RFC 6298, where
    /// G = 0 is meaningful) is refused with it, naming the field; an unknown timer names the
    /// choices.
    #[test]
    fn ns2_timer_needs_a_tick() {
        let ok = format!("{GOOD}\n[tcp]\ntimer = \"ns2\"\n");
        assert_eq!(parse(&ok).unwrap().tcp.timer, TcpTimer::Ns2);
        let zero = format!("{GOOD}\n[tcp]\ntimer = \"ns2\"\nclock_granularity_ms = 0\n");
        let e = parse(&zero).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("tcp.clock_granularity_ms"), "{e}");
        let rfc = format!("{GOOD}\n[tcp]\nclock_granularity_ms = 0\n");
        assert_eq!(parse(&rfc).unwrap().tcp.timer, TcpTimer::Rfc6298);
        let bad = format!("{GOOD}\n[tcp]\ntimer = \"bsd\"\n");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(e.contains("rfc6298") && e.contains("ns2"), "{e}");
    }

    /// Values that overflowed the simulator's integer time, divided by zero or wrapped,
    /// each now an error naming its field and line.
    #[test]
    fn values_beyond_exact_ranges_are_errors() {
        let onoff = GOOD.replace(
            "kind = \"udp\"",
            "kind = \"onoff\"\non_ms = 4e-7\noff_ms = 4e-7",
        );
        assert_eq!(parse(&onoff).unwrap_err().field.as_deref(), Some("on_ms"));
        for (from, to, field, line) in [
            ("rate_mbps = 10", "rate_mbps = 1e-300", "rate_mbps", 9),
            ("rate_mbps = 10", "rate_mbps = 1e300", "rate_mbps", 9),
            (
                "rate_mbps = 10",
                "rate_mbps = 10\ndelay_ms = 1e300",
                "delay_ms",
                10,
            ),
            ("rate_mbps = 1\n", "rate_mbps = 1e30\n", "rate_mbps", 15),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\njitter = 1e-300\n",
                "jitter",
                16,
            ),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\nstart_s = 1e300\n",
                "start_s",
                16,
            ),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\nstop_s = 1e300\n",
                "stop_s",
                16,
            ),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\nweight = 1e300\n",
                "weight",
                16,
            ),
            (
                "rate_mbps = 1\n",
                "rate_mbps = 1\naccess = { rate_mbps = 10, delay_ms = 1e300 }\n",
                "access",
                16,
            ),
        ] {
            let bad = GOOD.replace(from, to);
            assert_ne!(bad, GOOD, "{field}: replacement did not apply");
            let e = parse(&bad).unwrap_err();
            assert_eq!((e.field.as_deref(), e.line), (Some(field), line), "{e}");
        }
        // At 20-byte packets, 200 Gbit/s would be packets 0.8 ns apart.
        let tight = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 200000\npacket_bytes = 20\n");
        let e = parse(&tight).unwrap_err();
        assert!(e.message.contains("less than 1 ns apart"), "{e}");
        assert!(parse(&GOOD.replace("rate_mbps = 1\n", "rate_mbps = 100000\n")).is_ok());
    }

    /// The name becomes `out/NAME`: it must not escape `out/` or be empty.
    #[test]
    fn names_that_are_not_one_path_component_are_errors() {
        for name in ["", "/tmp/x", "../../escaped", "..", ".hidden", "a/b", "a b"] {
            let bad = GOOD.replace("name = \"t\"", &format!("name = {name:?}"));
            let e = parse(&bad).unwrap_err();
            assert_eq!(
                (e.field.as_deref(), e.line),
                (Some("name"), 2),
                "{name:?}: {e}"
            );
        }
        assert!(parse(&GOOD.replace("name = \"t\"", "name = \"csfq-fig3a_v2.1\"")).is_ok());
    }

    #[test]
    fn a_link_joins_exactly_two_routers() {
        for between in ["[\"a\", \"b\", \"a\"]", "[\"a\"]", "[]"] {
            let bad = GOOD.replace("between = [\"a\", \"b\"]", &format!("between = {between}"));
            let e = parse(&bad).unwrap_err();
            assert_eq!((e.field.as_deref(), e.line), (Some("between"), 8), "{e}");
            assert!(e.message.contains("two router names"), "{e}");
        }
    }

    #[test]
    fn a_missing_field_is_named_not_the_first_key() {
        let e = parse(&GOOD.replace("discipline = \"csfq\"\n", "")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("discipline"), "{e}");
        assert!(e.message.contains("top level"), "{e}");
        let e = parse(&GOOD.replace("from = \"a\"\n", "")).unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("from"), 11), "{e}");
        assert!(e.message.contains("table that starts here"), "{e}");
    }

    #[test]
    fn a_flow_without_a_route_is_an_error_at_its_table() {
        let bad = GOOD
            .replace(
                "routers = [\"a\", \"b\"]",
                "routers = [\"a\", \"b\", \"c\"]",
            )
            .replace("to = \"b\"", "to = \"c\"");
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("to"), 14), "{e}");
        assert!(e.message.contains("no route from `a` to `c`"), "{e}");
    }

    /// The default sample interval grows with the run so that every allowed duration is
    /// accepted; an explicit one that is too fine names the smallest allowed.
    #[test]
    fn the_default_sample_interval_fits_any_allowed_run() {
        let long = parse(&GOOD.replace("duration_s = 1.0", "duration_s = 1e6")).unwrap();
        let ms = long.sample_interval_ms();
        assert!(ms >= 1000.0 && ms % 100.0 == 0.0, "{ms}");
        assert!(1e9 / ms <= MAX_SAMPLES);
        assert_eq!(parse(GOOD).unwrap().sample_interval_ms(), 100.0);
        // 1000 flows for 1000 s at 1 ms would be 10^9 values.
        let many = GOOD
            .replace(
                "duration_s = 1.0",
                "duration_s = 1000.0\nsample_interval_ms = 1",
            )
            .replace("rate_mbps = 1\n", "rate_mbps = 1\ncount = 1000\n");
        let e = parse(&many).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("sample_interval_ms"), 4),
            "{e}"
        );
        assert!(e.message.contains("at least 50.3 ms"), "{e}");
    }

    #[test]
    fn files_that_cannot_be_scenarios_are_errors_without_a_line() {
        let e = ScenarioFile::load(Path::new("/nonexistent/x.toml")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/x.toml: cannot read"),
            "{e}"
        );
        // Read no further than the limit: /dev/zero would otherwise fill memory.
        if Path::new("/dev/zero").exists() {
            let e = ScenarioFile::load(Path::new("/dev/zero")).unwrap_err();
            assert!(e.message.contains("larger than 16 MiB"), "{e}");
        }
        let dir = std::env::temp_dir().join(format!("csfq-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("binary.toml");
        std::fs::write(&p, b"name = \"t\"\n\xff\xfe").unwrap();
        let e = ScenarioFile::load(&p).unwrap_err();
        assert_eq!((e.line, e.column), (2, 1), "{e}");
        assert!(e.message.contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn round_trips_through_toml() {
        let s = parse(GOOD).unwrap();
        let again = parse(&s.to_toml()).unwrap();
        assert_eq!(s.flows[0].get_ref(), again.flows[0].get_ref());
        assert_eq!(s.links[0].get_ref(), again.links[0].get_ref());
    }
}
