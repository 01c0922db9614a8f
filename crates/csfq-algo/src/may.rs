//! Markov Active Yield: "drop proportionally to the amount of past drops". The MAY paper
//! (`papers/may-markov-active-yield.txt`), Section II and the pseudocode of its Fig. 1.
//!
//! One drop-tail FIFO and a table `H` holding `(flow, delta, TS, ND)` only for flows that
//! have already lost a packet (or were sampled):
//!
//! - an arrival of a flow in `H` is dropped with probability `v * delta(flow)`; a drop adds
//!   one to `ND(flow)` and stamps `TS(flow) = now` (lines 2-7);
//! - an arrival of any other flow is sampled with probability `q0 = 1/S0`: the flow enters
//!   `H` with `ND = 1`, and the packet is dropped if the utilization exceeds `u0`
//!   (lines 8-15);
//! - every `Delta` (lines 18-29): `v += kappa * (utilization - u0)` (kept at or above 0),
//!   entries idle for more than `T0` leave `H`, and the others fold their interval's drops
//!   into `delta = (1 - q_w) delta + q_w ND`, then `ND = 0`.
//!
//! In steady state a flow's drop frequency settles only where its rate times `v` is 1
//! (Eq. 2): flows above `1/v` see `delta` grow and back off, flows below see it decay,
//! and `v` settles where the link runs at `u0`. A flow shorter than `S0` packets is rarely
//! sampled at all, so it almost never loses a packet.
//!
//! Choices the paper leaves open, made here:
//! - **Utilization** is the paper's congestion indicator. Eq. (3) regulates
//!   `sum_i U_i (1 - delta_i v) = u0 C`, the rate of the flows' packets after MAY's own
//!   drops, so by default ([`MayUtilization::Passed`]) it is the rate into the queue:
//!   every byte MAY does not drop over the last update interval, including bytes the
//!   buffer then overflows, divided by what the link could send in it
//!   (`8 bytes / (C * elapsed)`). It exceeds 1 while the buffer overflows, which is what
//!   lets `v` grow on a link that drop-tail alone keeps below `u0` (departed bytes cannot
//!   exceed about 1). [`MayUtilization::Arrivals`] also counts the bytes MAY drops (an
//!   earlier reading of Section V's "arrival rate at the queue"): it diverges whenever an
//!   unresponsive flow alone offers more than `u0 C`, since shutting that flow off never
//!   lowers it, `v` grows without bound and every flow in `H` is dropped. Arrivals use the
//!   last completed interval's value.
//! - **Updates** run on the first arrival at least `Delta` after the last one (the
//!   pseudocode's `now - LastUpdate > Delta`), over the time actually elapsed.
//! - **A full table** (`table_capacity` entries; the paper sizes 16K entries per Mbit of
//!   SRAM) refuses the insert: the sampled packet is treated as in line 13 (dropped if the
//!   utilization exceeds `u0`) but its flow stays untracked, and the refusal is counted.
//! - **`v`'s ceiling** (an addition to the paper's controller, on by default:
//!   [`MayCeiling::Heaviest`]): at each update `v` is kept at or below `1 / delta_max`,
//!   where `delta_max` is the largest `delta` among the arrivals of the interval that ends.
//!   MAY drops each flow in proportion to its `delta`, so at `v = 1/delta_max` the flow
//!   with the most past drops loses every packet; a larger `v` adds no drop to it and only
//!   drops flows with fewer past drops, the opposite of MAY's rule. The paper's integral
//!   controller (`v += kappa (utilization - u0)`) winds up past that point whenever an
//!   unresponsive flow offers several times the link: its first intervals, before its
//!   `delta` has grown, measure a utilization near its rate over `C`, `v` climbs by
//!   `kappa` times that per interval (to about 0.8 in two intervals at 5x), and once the
//!   flow is shut off `v` comes down by `kappa (u0 - utilization)` per interval, some
//!   fifteen intervals in which every responsive flow in `H` is dropped with probability
//!   `v delta` (measured in the simulator, `csfq-sim/tests/may_ceiling.rs`: 4 TCPs and a
//!   UDP at 5x a 20 Mbit/s link leave it 16-48% used over seconds 10-18; with the
//!   ceiling, full).
//!   [`MayCeiling::None`] is the paper's controller, which the reproductions run.
//! - **Buffer overflow** drops the arrival (drop-tail) and, like the pseudocode, does not
//!   count as a MAY drop by default; with `overflow_in_nd` an overflow of a flow in `H`
//!   adds to its `ND` and stamps `TS` as a MAY drop does, the prose's reading ("the number
//!   of dropped packets from the flow").

use std::collections::hash_map::{DefaultHasher, Entry as MapEntry};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use rand::Rng;

use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// The paper's entry size: 10 bytes (three 10-bit counters, a 30-bit fingerprint and a
/// 20-bit pointer, Section II-A).
pub const ENTRY_BYTES: usize = 10;

/// MAY configuration (Table I of the paper; defaults from Section IV).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MayParams {
    /// Link capacity, bits/s: the utilization's denominator.
    pub capacity_bps: f64,
    /// The FIFO's buffer, bytes.
    pub buffer_bytes: u32,
    /// `Delta`, the update interval (1 s).
    pub update_interval: Nanos,
    /// `u0`, the desired utilization (0.98).
    pub target_utilization: f64,
    /// `kappa`, the controller's gain on `v` (0.1).
    pub gain: f64,
    /// `q_w`, the weight of the EWMA on `delta` (0.05).
    pub q_w: f64,
    /// `T0`, after which an entry with no drops leaves the table (64 s).
    pub timeout: Nanos,
    /// `S0`: new flows are sampled with probability `q0 = 1/S0` per packet (1000).
    pub s0: f64,
    /// Most entries the table holds (131 072: the paper's 8 Mbit of SRAM).
    pub table_capacity: usize,
    /// The packet size the paper assumes (1000 bytes), for the fair-share estimate only.
    pub packet_bytes: u32,
    /// Whether a buffer overflow of a flow in `H` counts in its `ND` (the prose's
    /// reading); the pseudocode's, off, is the default.
    pub overflow_in_nd: bool,
    /// What the utilization counts (Eq. 3's rate into the queue by default).
    pub utilization: MayUtilization,
    /// Whether `v` is kept at or below `1 / delta_max` (see the module's notes).
    pub ceiling: MayCeiling,
}

/// Whether MAY's `v` has a ceiling (see the module's notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MayCeiling {
    /// `v <= 1 / delta_max`, `delta_max` the largest `delta` of the interval's arrivals:
    /// no `v` above the one that drops every packet of the flow with the most past drops.
    #[default]
    Heaviest,
    /// The paper's controller: `v` only kept at or above 0.
    None,
}

/// What MAY's congestion indicator, the utilization, counts over an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MayUtilization {
    /// Every byte MAY does not drop, overflowed by the buffer or not: the rate into the
    /// queue that Eq. (3) regulates (`sum_i U_i (1 - delta_i v) = u0 C`).
    #[default]
    Passed,
    /// Every arriving byte, MAY's own drops included. Diverges under an unresponsive flow
    /// that alone offers more than `u0 C` (see the module's notes).
    Arrivals,
}

impl MayParams {
    /// The paper's parameters for a link of `capacity_bps` with `buffer_bytes`, and `v`'s
    /// ceiling (ours: [`MayCeiling::None`] is the paper's controller).
    pub fn new(capacity_bps: f64, buffer_bytes: u32) -> Self {
        MayParams {
            capacity_bps,
            buffer_bytes,
            update_interval: Nanos::from_millis(1000),
            target_utilization: 0.98,
            gain: 0.1,
            q_w: 0.05,
            timeout: Nanos::from_millis(64_000),
            s0: 1000.0,
            table_capacity: 1 << 17,
            packet_bytes: 1000,
            overflow_in_nd: false,
            utilization: MayUtilization::Passed,
            ceiling: MayCeiling::Heaviest,
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), MayParamError> {
        let bad =
            |field: &'static str, expected: &'static str| Err(MayParamError { field, expected });
        if !(self.capacity_bps.is_finite() && self.capacity_bps > 0.0) {
            return bad("capacity_bps", "a positive rate");
        }
        if self.update_interval == Nanos::ZERO {
            return bad("update_interval", "a positive interval");
        }
        if !(self.target_utilization > 0.0 && self.target_utilization <= 1.0) {
            return bad("target_utilization", "in (0, 1]");
        }
        if !(self.gain.is_finite() && self.gain > 0.0) {
            return bad("gain", "positive");
        }
        if !(self.q_w > 0.0 && self.q_w <= 1.0) {
            return bad("q_w", "in (0, 1]");
        }
        if self.timeout == Nanos::ZERO {
            return bad("timeout", "a positive interval");
        }
        if !(self.s0.is_finite() && self.s0 >= 1.0) {
            return bad("s0", "at least 1");
        }
        if self.table_capacity == 0 {
            return bad("table_capacity", "at least 1 entry");
        }
        Ok(())
    }
}

/// A MAY parameter out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MAY parameter `{field}` must be {expected}")]
pub struct MayParamError {
    /// The field.
    pub field: &'static str,
    /// What it must be.
    pub expected: &'static str,
}

/// One entry of `H`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MayEntry {
    /// `delta`: the flow's averaged drops per update interval.
    pub delta: f64,
    /// `TS`: when the flow last lost a packet (or entered the table).
    pub ts: Nanos,
    /// `ND`: drops in the current interval.
    pub nd: u32,
}

/// What the table has done over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MayStats {
    /// Flows entered into the table.
    pub inserts: u64,
    /// Inserts refused because the table was full.
    pub refused_full: u64,
    /// Entries removed after `T0` without a drop.
    pub expired: u64,
    /// The most entries held at once.
    pub peak_entries: usize,
}

/// A deterministic hasher, so runs do not depend on a per-process random seed.
type FixedState = BuildHasherDefault<DefaultHasher>;

/// The MAY queue: one FIFO, the table `H`, the controller on `v`.
#[derive(Debug, Clone)]
pub struct May<K> {
    params: MayParams,
    q0: f64,
    fifo: ByteFifo<K>,
    table: HashMap<FlowId, MayEntry, FixedState>,
    v: f64,
    last_update: Nanos,
    /// Bytes arrived at the queue since `last_update`, dropped ones included.
    arrived_bytes: u64,
    utilization: f64,
    /// The largest `delta` an arrival of the current interval found in its entry.
    delta_max: f64,
    stats: MayStats,
}

impl<K: Held> May<K> {
    /// An empty MAY queue; `v` starts at 0 (no drops until the link runs above `u0`).
    pub fn new(params: MayParams) -> Result<Self, MayParamError> {
        params.validate()?;
        Ok(May {
            q0: 1.0 / params.s0,
            fifo: ByteFifo::new(params.buffer_bytes),
            table: HashMap::default(),
            v: 0.0,
            last_update: Nanos::ZERO,
            arrived_bytes: 0,
            utilization: 0.0,
            delta_max: 0.0,
            stats: MayStats::default(),
            params,
        })
    }

    /// The control variable `v`.
    pub fn v(&self) -> f64 {
        self.v
    }

    /// The utilization measured over the last completed interval.
    pub fn utilization(&self) -> f64 {
        self.utilization
    }

    /// Entries in `H` now.
    pub fn entries(&self) -> usize {
        self.table.len()
    }

    /// A flow's entry, if it is in `H`.
    pub fn entry(&self, flow: FlowId) -> Option<&MayEntry> {
        self.table.get(&flow)
    }

    /// The table's counters.
    pub fn stats(&self) -> MayStats {
        self.stats
    }

    /// The fair-share estimate `1/v` packets per interval of Section V, in bits/s, or
    /// `None` while `v` is 0.
    pub fn fair_share_bps(&self) -> Option<f64> {
        let secs = self.params.update_interval.as_secs_f64();
        let bits = self.params.packet_bytes as f64 * 8.0;
        (self.v > 0.0).then(|| (bits / (self.v * secs)).min(self.params.capacity_bps))
    }

    /// The drop decision of lines 2-15: the reason to drop the arrival, if it is dropped.
    fn decide<R: Rng + ?Sized>(
        &mut self,
        flow: FlowId,
        now: Nanos,
        rng: &mut R,
    ) -> Option<DropReason> {
        let above_target = self.utilization > self.params.target_utilization;
        let len = self.table.len();
        match self.table.entry(flow) {
            MapEntry::Occupied(mut e) => {
                let e = e.get_mut();
                self.delta_max = self.delta_max.max(e.delta);
                let p = self.v * e.delta;
                if p > 0.0 && (p >= 1.0 || rng.random::<f64>() < p) {
                    e.nd += 1;
                    e.ts = now;
                    return Some(DropReason::MayHistory);
                }
                None
            }
            MapEntry::Vacant(slot) => {
                if rng.random::<f64>() >= self.q0 {
                    return None;
                }
                if len < self.params.table_capacity {
                    slot.insert(MayEntry {
                        delta: 0.0,
                        ts: now,
                        nd: 1,
                    });
                    self.stats.inserts += 1;
                    self.stats.peak_entries = self.stats.peak_entries.max(len + 1);
                } else {
                    self.stats.refused_full += 1;
                }
                above_target.then_some(DropReason::MaySample)
            }
        }
    }

    /// Lines 18-29: the controller on `v`, expiry, and the EWMA on `delta`.
    fn update(&mut self, now: Nanos) {
        let elapsed = now.saturating_sub(self.last_update);
        if elapsed < self.params.update_interval {
            return;
        }
        let sendable_bits = self.params.capacity_bps * elapsed.as_secs_f64();
        self.utilization = self.arrived_bytes as f64 * 8.0 / sendable_bits;
        let p = self.params;
        self.v = (self.v + p.gain * (self.utilization - p.target_utilization)).max(0.0);
        if p.ceiling == MayCeiling::Heaviest && self.delta_max > 0.0 {
            self.v = self.v.min(1.0 / self.delta_max);
        }
        self.delta_max = 0.0;
        let before = self.table.len();
        self.table.retain(|_, e| {
            if now.saturating_sub(e.ts) > p.timeout {
                return false;
            }
            e.delta = (1.0 - p.q_w) * e.delta + p.q_w * e.nd as f64;
            e.nd = 0;
            true
        });
        self.stats.expired += (before - self.table.len()) as u64;
        self.arrived_bytes = 0;
        self.last_update = now;
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for May<K> {
    type Kept = K;

    fn admit<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, rng: &mut R) -> Result<P, Dropped<P>> {
        let flow = p.flow_hash_key();
        let verdict = self.decide(flow, now, rng);
        self.update(now);
        if verdict.is_none() || self.params.utilization == MayUtilization::Arrivals {
            self.arrived_bytes += u64::from(p.size_bytes());
        }
        if let Some(reason) = verdict {
            return Err(Dropped::new(p, reason));
        }
        match self.fifo.admit(p, now) {
            Ok(p) => Ok(p),
            Err(p) => {
                if self.params.overflow_in_nd {
                    if let Some(e) = self.table.get_mut(&flow) {
                        e.nd += 1;
                        e.ts = now;
                    }
                }
                Err(Dropped::new(p, DropReason::BufferOverflow))
            }
        }
    }

    fn depart(&mut self, _now: Nanos) -> Option<K> {
        self.fifo.pop()
    }
    fn len_bytes(&self) -> u32 {
        self.fifo.bytes()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.reserved_slots()
    }
    fn flow_slots(&self) -> usize {
        self.table.len()
    }
}

/// Section III-D's model of the table: flows of Pareto-distributed sizes (shape `k > 1`,
/// mean `mean` packets, so scale `x_m = mean (k - 1) / k`) each enter `H` unless none of
/// their packets is sampled, which happens with probability `(1 - 1/S0)^size`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SamplingModel {
    /// Pareto shape `k`.
    pub shape: f64,
    /// Mean flow size, packets.
    pub mean_pkts: f64,
    /// `S0`.
    pub s0: f64,
    /// Count sizes in whole packets (`ceil` of the Pareto draw, as a simulation sends
    /// them) rather than the paper's continuous sizes.
    pub whole_packets: bool,
}

impl SamplingModel {
    /// `E[h(size)]`, by the substitution `u = (x_m / y)^k` (so `y = x_m u^(-1/k)` with `u`
    /// uniform on (0, 1)) and the midpoint rule on 400 000 points.
    fn expect(&self, h: impl Fn(f64) -> f64) -> f64 {
        const N: usize = 400_000;
        let x_m = self.mean_pkts * (self.shape - 1.0) / self.shape;
        (0..N)
            .map(|i| {
                let u = (i as f64 + 0.5) / N as f64;
                let y = x_m * u.powf(-1.0 / self.shape);
                h(if self.whole_packets {
                    y.ceil().max(1.0)
                } else {
                    y
                })
            })
            .sum::<f64>()
            / N as f64
    }

    /// `E(z(f))`: the probability that a flow enters the table.
    pub fn hashed_share(&self) -> f64 {
        let keep = 1.0 - 1.0 / self.s0;
        self.expect(|y| 1.0 - keep.powf(y))
    }

    /// The expected memory consumption of Fig. 2, bits per flow: `80 E(z(f))` at 10-byte
    /// entries.
    pub fn bits_per_flow(&self) -> f64 {
        (ENTRY_BYTES * 8) as f64 * self.hashed_share()
    }

    /// `L(k, mu, S0)` of Fig. 3: the share of short flows (fewer than `S0` packets) never
    /// sampled, so never dropped.
    pub fn lossless_short_share(&self) -> f64 {
        let keep = 1.0 - 1.0 / self.s0;
        let short = self.expect(|y| if y < self.s0 { 1.0 } else { 0.0 });
        self.expect(|y| if y < self.s0 { keep.powf(y) } else { 0.0 }) / short
    }
}

/// Section III's fluid model of MAY with long-lived AIMD flows on one bottleneck
/// (Eqs. 1-4), run deterministically one update interval `Delta` at a time:
///
/// - Eq. (1): flow `i` sends `U_i = a_i / sqrt(delta_i v)` packets in an interval, the
///   square-root formula at drop probability `delta_i v`; `a_i` is proportional to
///   `1 / RTT_i` (the constant in front is common to all flows and cancels in fairness);
/// - Eq. (3): `v` is whatever makes the flows fill the link at `u0`:
///   `sum_i U_i = u0 C Delta`, so `sqrt(v) = sum_i (a_i / sqrt(delta_i)) / (u0 C Delta)`;
/// - Eq. (2): the interval's drops of flow `i` are `U_i delta_i v = a_i sqrt(delta_i v)`;
/// - Eq. (4): `delta_i <- (1 - q_w) delta_i + q_w * drops_i`.
///
/// Its fixed point is `delta_i = a_i^2 v`, where every flow sends `1/v`: equal shares
/// whatever the round-trip times (Theorem 3.2). Every flow starts as a flow just sampled
/// into `H` does: one drop folded in once, `delta_i = q_w`.
#[derive(Debug, Clone, PartialEq)]
pub struct FluidModel {
    /// Each flow's `a_i`: packets per interval at drop probability 1.
    pub a: Vec<f64>,
    /// `u0 C Delta`: the packets the link carries in one interval at the target.
    pub target_pkts: f64,
    /// `q_w`.
    pub q_w: f64,
}

impl FluidModel {
    /// The model of flows with round-trip times `rtts_s` under MAY's parameters (its link's
    /// capacity and packet size among them): `a_i = (Delta / RTT_i) sqrt(3/2)`, the
    /// square-root formula's constant.
    pub fn from_rtts(rtts_s: &[f64], p: &MayParams) -> Self {
        let interval = p.update_interval.as_secs_f64();
        FluidModel {
            a: rtts_s
                .iter()
                .map(|rtt| interval / rtt * 1.5f64.sqrt())
                .collect(),
            target_pkts: p.target_utilization * p.capacity_bps * interval
                / (f64::from(p.packet_bytes) * 8.0),
            q_w: p.q_w,
        }
    }

    /// Each flow's packets per interval over `intervals` updates, the first from the
    /// starting state: one row per interval.
    pub fn run(&self, intervals: usize) -> Vec<Vec<f64>> {
        let mut delta = vec![self.q_w; self.a.len()];
        let mut out = Vec::with_capacity(intervals);
        for _ in 0..intervals {
            let sqrt_v = self
                .a
                .iter()
                .zip(&delta)
                .map(|(a, d)| a / d.sqrt())
                .sum::<f64>()
                / self.target_pkts;
            let v = sqrt_v * sqrt_v;
            out.push(
                self.a
                    .iter()
                    .zip(&delta)
                    .map(|(a, d)| a / (d * v).sqrt())
                    .collect(),
            );
            for (d, a) in delta.iter_mut().zip(&self.a) {
                *d = (1.0 - self.q_w) * *d + self.q_w * a * (*d * v).sqrt();
            }
        }
        out
    }
}

/// The growth law in the proof of Theorem 3.2 (Section III-B): at a steady `v*`, a CBR
/// flow sending `x` packets per interval has its drop frequency grow as
/// `delta(t + 1) = delta(t) ((1 - q_w) + q_w x v*)`, exponentially when `x > 1/v*`, until
/// `delta v* >= 1`, from when every packet of it is dropped.
///
/// Returns the time, s, from the CBR's first sampled drop (`delta = q_w`, one drop folded
/// in once) to that shut-off with `1/v*` = `share_bps`, counting intervals continuously;
/// `None` at or below the share, where the law gives lossless service instead.
pub fn cbr_shutoff_s(p: &MayParams, share_bps: f64, cbr_bps: f64) -> Option<f64> {
    let interval = p.update_interval.as_secs_f64();
    let v = f64::from(p.packet_bytes) * 8.0 / (share_bps * interval);
    let growth = 1.0 - p.q_w + p.q_w * cbr_bps / share_bps;
    if growth <= 1.0 {
        return None;
    }
    let needed = 1.0 / (p.q_w * v);
    Some(interval * needed.ln().max(0.0) / growth.ln())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packet::TestPacket;
    use crate::queue::ConstRng;
    use crate::queue::QueueDisc;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    fn pkt(flow: u32) -> TestPacket {
        TestPacket::new(flow, 1000, 0.0)
    }

    /// 10 Mbit/s, so 1250 packets of 1000 bytes fill one 1 s interval.
    fn params() -> MayParams {
        MayParams {
            s0: 4.0,
            ..MayParams::new(10e6, 1_000_000)
        }
    }

    /// An rng whose `random::<f64>()` is always `x` (the top 53 bits of the word).
    fn always(x: f64) -> ConstRng {
        ConstRng::f64(x)
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (p, field) in [
            (
                MayParams {
                    target_utilization: 1.5,
                    ..params()
                },
                "target_utilization",
            ),
            (
                MayParams {
                    q_w: 0.0,
                    ..params()
                },
                "q_w",
            ),
            (
                MayParams {
                    s0: 0.5,
                    ..params()
                },
                "s0",
            ),
            (
                MayParams {
                    table_capacity: 0,
                    ..params()
                },
                "table_capacity",
            ),
            (
                MayParams {
                    update_interval: Nanos::ZERO,
                    ..params()
                },
                "update_interval",
            ),
        ] {
            assert_eq!(May::<TestPacket>::new(p).unwrap_err().field, field);
        }
    }

    /// Sampling at `q0 = 1/S0`: a draw below 0.25 inserts the flow with `ND = 1` and keeps
    /// the packet while utilization is below `u0`; a draw above leaves the flow out.
    #[test]
    fn a_sampled_flow_enters_the_table_without_loss_below_target() {
        let mut m: May<TestPacket> = May::new(params()).unwrap();
        assert!(m.enqueue(pkt(1), Nanos(1), &mut always(0.5)).is_none());
        assert_eq!(m.entries(), 0);
        assert!(m.enqueue(pkt(1), Nanos(2), &mut always(0.1)).is_none());
        assert_eq!(
            m.entry(FlowId(1)),
            Some(&MayEntry {
                delta: 0.0,
                ts: Nanos(2),
                nd: 1
            })
        );
        assert_eq!(m.stats().inserts, 1);
    }

    /// `v`'s ceiling by hand: flow 3 is in `H` with `delta = 4` and `v = 0.24` (drop
    /// probability 0.96; the draws, 0.97, pass every packet), and over 1 s it sends 1250
    /// packets and flow 4 (never sampled: `q0 = 1/4`, below the draws) 2500, so the
    /// utilization is 3750 * 8000 / 10e6 = 3.0 and the controller's `v` is
    /// 0.24 + 0.1 * (3 - 0.98) = 0.442. With the ceiling it is held at 1/4, the `v` at which flow 3, the heaviest
    /// the interval's arrivals found, loses every packet; the paper's controller keeps
    /// 0.442.
    #[test]
    fn ceiling_holds_v_at_one_over_the_largest_delta() {
        for (ceiling, v) in [(MayCeiling::Heaviest, 0.25), (MayCeiling::None, 0.442)] {
            let mut m: May<TestPacket> = May::new(MayParams {
                ceiling,
                buffer_bytes: u32::MAX,
                ..params()
            })
            .unwrap();
            m.v = 0.24;
            m.table.insert(
                pkt(3).flow_hash_key(),
                MayEntry {
                    delta: 4.0,
                    ts: Nanos::ZERO,
                    nd: 0,
                },
            );
            for i in 0..1250u64 {
                let t = Nanos(i * 800_000);
                assert!(m.enqueue(pkt(3), t, &mut always(0.97)).is_none());
                assert!(m.enqueue(pkt(4), t, &mut always(0.97)).is_none());
                assert!(m.enqueue(pkt(4), t, &mut always(0.97)).is_none());
            }
            m.enqueue(pkt(5), Nanos::from_millis(1000), &mut always(0.97));
            assert!((m.utilization() - 3.0).abs() < 1e-12, "{}", m.utilization());
            assert!((m.v() - v).abs() < 1e-12, "{ceiling:?}: v {}", m.v());
        }
    }

    /// Hand-computed run of the controller and the EWMA:
    /// - interval 1 (0..1 s): 1250 packets accepted -> utilization 1.0,
    ///   `v = 0.1 * (1.0 - 0.98) = 0.002`; flow 1 (inserted, `ND = 1`) gets
    ///   `delta = 0.05 * 1 = 0.05`;
    /// - its drop probability is then `v * delta = 1e-4`.
    #[test]
    fn update_moves_v_towards_target_and_averages_drops() {
        let mut m: May<TestPacket> = May::new(params()).unwrap();
        m.enqueue(pkt(1), Nanos(0), &mut always(0.1));
        for i in 1..1250u64 {
            m.enqueue(pkt(2), Nanos(i * 800_000), &mut always(0.9));
            m.dequeue(Nanos(i * 800_000));
        }
        // The first arrival at or after 1 s runs the update.
        m.enqueue(pkt(2), Nanos::from_millis(1000), &mut always(0.9));
        assert!((m.utilization() - 1.0).abs() < 1e-12, "{}", m.utilization());
        assert!((m.v() - 0.002).abs() < 1e-12);
        let e = *m.entry(FlowId(1)).unwrap();
        assert!((e.delta - 0.05).abs() < 1e-12);
        assert_eq!(e.nd, 0);
        // p = 1e-4: a draw of 0.5e-4 drops, 2e-4 does not; a drop counts and stamps TS.
        let t = Nanos::from_millis(1100);
        assert!(m.enqueue(pkt(1), t, &mut always(2e-4)).is_none());
        let d = m.enqueue(pkt(1), t, &mut always(0.5e-4)).unwrap();
        assert_eq!(d.reason, DropReason::MayHistory);
        assert_eq!(m.entry(FlowId(1)).unwrap().nd, 1);
        assert_eq!(m.entry(FlowId(1)).unwrap().ts, t);
    }

    /// An overflow counts in `ND` only with `overflow_in_nd`, and only for a flow in `H`.
    #[test]
    fn overflows_count_in_nd_only_when_asked() {
        for on in [false, true] {
            let p = MayParams {
                buffer_bytes: 1000,
                overflow_in_nd: on,
                ..params()
            };
            let mut m: May<TestPacket> = May::new(p).unwrap();
            // Flow 1 is sampled into H (ND = 1) and fills the one-packet buffer.
            assert!(m.enqueue(pkt(1), Nanos(0), &mut always(0.1)).is_none());
            let t = Nanos(5);
            let d = m.enqueue(pkt(1), t, &mut always(0.9)).unwrap();
            assert_eq!(d.reason, DropReason::BufferOverflow);
            // Flow 2 is not in H: its overflow is counted nowhere.
            let d = m.enqueue(pkt(2), t, &mut always(0.9)).unwrap();
            assert_eq!(d.reason, DropReason::BufferOverflow);
            assert!(m.entry(FlowId(2)).is_none());
            let e = m.entry(FlowId(1)).unwrap();
            assert_eq!(
                (e.nd, e.ts),
                if on { (2, t) } else { (1, Nanos(0)) },
                "on = {on}"
            );
        }
    }

    /// The fluid model, by hand for two flows with RTTs 1 s and 2 s on a link carrying 30
    /// packets per interval at the target (a = sqrt(1.5), sqrt(1.5)/2; q_w = 0.05):
    /// at the start both deltas are 0.05, so the shares follow a: U = 20 and 10 (they fill
    /// the 30 packets, Eq. 3). Over the intervals the ratio falls towards 1 without ever
    /// crossing it, and the flows always fill the link (Theorem 3.2: equal shares at the
    /// fixed point delta_i = a_i^2 v).
    #[test]
    fn fluid_model_starts_in_rtt_proportion_and_converges_to_equal_shares() {
        let m = FluidModel {
            a: vec![1.5f64.sqrt(), 1.5f64.sqrt() / 2.0],
            target_pkts: 30.0,
            q_w: 0.05,
        };
        let rows = m.run(2000);
        assert!((rows[0][0] - 20.0).abs() < 1e-9 && (rows[0][1] - 10.0).abs() < 1e-9);
        let mut last = f64::INFINITY;
        for r in &rows {
            assert!((r[0] + r[1] - 30.0).abs() < 1e-9, "{r:?}");
            let ratio = r[0] / r[1];
            assert!(
                (1.0..=last + 1e-12).contains(&ratio),
                "{ratio} after {last}"
            );
            last = ratio;
        }
        assert!((last - 1.0).abs() < 1e-3, "{last}");
        // from_rtts: a follows 1/RTT, and the target is u0 C Delta in packets.
        let p = MayParams::new(80e6, 100_000);
        let f = FluidModel::from_rtts(&[0.04, 0.44], &p);
        assert!((f.a[0] / f.a[1] - 11.0).abs() < 1e-9);
        assert!((f.target_pkts - 0.98 * 10_000.0).abs() < 1e-6);
    }

    /// Eq. (3)'s utilization leaves out what MAY itself drops; the arrivals reading counts
    /// it. By hand: a flow in `H` with `delta = 1` under `v = 1` loses every packet (line
    /// 4: probability `v delta = 1`); 1250 packets of 1000 bytes in one second on a
    /// 10 Mbit/s link are 10 Mbit/s offered. Passed: utilization 0, and `v` falls by
    /// `kappa u0 = 0.098`. Arrivals: utilization 1, and `v` rises by `kappa (1 - u0)`.
    #[test]
    fn utilization_leaves_out_mays_own_drops_unless_arrivals_are_asked_for() {
        for (reading, util, v) in [
            (MayUtilization::Passed, 0.0, 1.0 - 0.098),
            (MayUtilization::Arrivals, 1.0, 1.0 + 0.1 * 0.02),
        ] {
            let mut m: May<TestPacket> = May::new(MayParams {
                utilization: reading,
                // The paper's controller: no ceiling (at delta 1 it would hold v at 1).
                ceiling: MayCeiling::None,
                ..params()
            })
            .unwrap();
            m.v = 1.0;
            m.table.insert(
                pkt(3).flow_hash_key(),
                MayEntry {
                    delta: 1.0,
                    ts: Nanos::ZERO,
                    nd: 0,
                },
            );
            for i in 0..1250u64 {
                let d = m.enqueue(pkt(3), Nanos(i * 800_000), &mut always(0.5));
                assert_eq!(d.map(|d| d.reason), Some(DropReason::MayHistory));
            }
            m.enqueue(pkt(4), Nanos::from_millis(1000), &mut always(0.9));
            assert!((m.utilization() - util).abs() < 1e-12, "{reading:?}");
            assert!((m.v() - v).abs() < 1e-12, "{reading:?}: {}", m.v());
        }
    }

    /// The rate into the queue counts the bytes the buffer then drops (MAY passed them).
    /// 2500 packets of 1000 bytes arrive in 1 s at a 10 Mbit/s link with a 10-packet
    /// buffer that sends 1250: utilization = 2500 * 8000 / 10e6 = 2.0 and
    /// `v = 0.1 * (2.0 - 0.98) = 0.102`. Counting accepted bytes would give about
    /// 1260 * 8000 / 10e6 = 1.008 and `v` = 0.0028: drop-tail would hide the overload.
    #[test]
    fn utilization_is_the_arrival_rate_drops_included() {
        let p = MayParams {
            buffer_bytes: 10_000,
            ..params()
        };
        let mut m: May<TestPacket> = May::new(p).unwrap();
        let mut overflows = 0;
        for i in 0..2500u64 {
            let t = Nanos(i * 400_000);
            if let Some(d) = m.enqueue(pkt(2), t, &mut always(0.9)) {
                assert_eq!(d.reason, DropReason::BufferOverflow);
                overflows += 1;
            }
            if i % 2 == 0 {
                m.dequeue(t);
            }
        }
        assert!(overflows > 1200, "{overflows}");
        m.enqueue(pkt(2), Nanos::from_millis(1000), &mut always(0.9));
        assert!((m.utilization() - 2.0).abs() < 1e-12, "{}", m.utilization());
        assert!((m.v() - 0.102).abs() < 1e-12, "{}", m.v());
    }

    /// Above `u0`, a sampled packet is dropped (line 13); `v` falls when the link runs
    /// below target and never goes negative.
    #[test]
    fn sampling_drops_above_target_and_v_stays_non_negative() {
        let mut m: May<TestPacket> = May::new(params()).unwrap();
        for i in 0..1250u64 {
            m.enqueue(pkt(2), Nanos(i * 800_000), &mut always(0.9));
            m.dequeue(Nanos(i * 800_000));
        }
        m.enqueue(pkt(2), Nanos::from_millis(1000), &mut always(0.9));
        assert!(m.utilization() > 0.98);
        let d = m
            .enqueue(pkt(3), Nanos::from_millis(1001), &mut always(0.1))
            .unwrap();
        assert_eq!(d.reason, DropReason::MaySample);
        assert!(m.entry(FlowId(3)).is_some());
        // An idle second: utilization ~0, v = max(0, 0.002 + 0.1 * (0 - 0.98)) = 0.
        m.enqueue(pkt(2), Nanos::from_millis(2500), &mut always(0.9));
        assert!(m.utilization() < 0.01);
        assert_eq!(m.v(), 0.0);
    }

    /// An entry with no drop for more than `T0` leaves at the next update.
    #[test]
    fn idle_entries_expire_after_t0() {
        let p = MayParams {
            timeout: Nanos::from_millis(3000),
            ..params()
        };
        let mut m: May<TestPacket> = May::new(p).unwrap();
        m.enqueue(pkt(1), Nanos(0), &mut always(0.1));
        for s in 1..=3u64 {
            m.enqueue(pkt(2), Nanos::from_millis(1000 * s), &mut always(0.9));
            assert_eq!(m.entries(), 1, "at {s} s");
        }
        m.enqueue(pkt(2), Nanos::from_millis(4000), &mut always(0.9));
        assert_eq!(m.entries(), 0);
        assert_eq!(m.stats().expired, 1);
    }

    /// A full table refuses the insert: the flow stays untracked, the refusal is counted.
    #[test]
    fn a_full_table_refuses_inserts() {
        let p = MayParams {
            table_capacity: 2,
            ..params()
        };
        let mut m: May<TestPacket> = May::new(p).unwrap();
        for f in 1..=3 {
            m.enqueue(pkt(f), Nanos(f as u64), &mut always(0.1));
        }
        assert_eq!(m.entries(), 2);
        assert!(m.entry(FlowId(3)).is_none());
        assert_eq!(m.stats().refused_full, 1);
        assert_eq!(m.stats().peak_entries, 2);
    }

    /// The sampling model against closed forms: for shape 2 and mean 10 (`x_m = 5`), the
    /// share of flows shorter than `S0 = 1000` is `1 - (5/1000)^2`; and with `S0` large,
    /// `1 - (1 - 1/S0)^y ~ y/S0`, so the table holds about `mean / S0` entries per flow.
    #[test]
    fn sampling_model_matches_closed_forms() {
        let m = SamplingModel {
            shape: 2.0,
            mean_pkts: 10.0,
            s0: 1e7,
            whole_packets: false,
        };
        let short = m.expect(|y| if y < 1000.0 { 1.0 } else { 0.0 });
        assert!((short - (1.0 - 25e-6)).abs() < 1e-5, "{short}");
        // mean / S0 = 1e-6 entries per flow; Pareto(2) has infinite variance, so the
        // quadrature's tail is checked to 2%.
        let h = m.hashed_share();
        assert!((h / 1e-6 - 1.0).abs() < 0.02, "{h}");
        // L is at least (1 - 1/S0)^(S0) ~ 1/e for any flow below S0, and 1 at S0 = inf.
        let l = SamplingModel { s0: 1000.0, ..m }.lossless_short_share();
        assert!(l > 1.0 / std::f64::consts::E && l < 1.0);
    }

    /// Theorem 3.2 on the algorithm itself: with `v` held at 1/200, a CBR flow's `delta`
    /// grows by `(1 - q_w) + q_w x v` per interval, so at `x = 600` packets per interval
    /// (factor 1.1) it is shut off, and at `x = 100` (factor 0.975) it is spared.
    #[test]
    fn cbr_above_one_over_v_is_shut_off_and_below_is_spared() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        for (per_interval, shut_off) in [(600u64, true), (100, false)] {
            let mut m: May<TestPacket> = May::new(params()).unwrap();
            m.v = 1.0 / 200.0;
            m.table.insert(
                FlowId(1),
                MayEntry {
                    delta: 1.0,
                    ts: Nanos::ZERO,
                    nd: 0,
                },
            );
            let mut delivered = 0;
            for s in 0..80u64 {
                for k in 0..per_interval {
                    let t =
                        Nanos::from_millis(1000 * s) + Nanos(k * (1_000_000_000 / per_interval));
                    if m.enqueue(pkt(1), t, &mut rng).is_none() {
                        m.dequeue(t);
                        if s >= 70 {
                            delivered += 1;
                        }
                    }
                }
                // Hold the utilization at exactly u0, so v does not move.
                m.arrived_bytes = 1_225_000;
            }
            let share = delivered as f64 / (10 * per_interval) as f64;
            if shut_off {
                assert!(share < 0.01, "{per_interval}/interval kept {share}");
            } else {
                assert!(share > 0.99, "{per_interval}/interval kept {share}");
            }
        }
    }

    /// The growth law with the paper's parameters on Fig. 8's link (fair share 2 Mbps,
    /// `q_w` 0.05, `Delta` 1 s, 1000-byte packets): `v* = 1/250` packets, `delta` must grow
    /// 5000-fold, by `1 + 0.05 (x/2 - 1)` per second: 686, 345 and 175 s at 2.5, 3 and 4
    /// Mbps; none at or below the share.
    #[test]
    fn cbr_shutoff_follows_the_growth_law() {
        let p = MayParams::new(40e6, 100_000);
        for (rate, secs) in [(2.5e6, 686.0), (3e6, 345.0), (4e6, 175.0)] {
            let t = cbr_shutoff_s(&p, 2e6, rate).unwrap();
            assert!((t - secs).abs() < 1.0, "{rate}: {t}");
        }
        let by_hand = 5000f64.ln() / 1.15f64.ln();
        assert!((cbr_shutoff_s(&p, 2e6, 8e6).unwrap() - by_hand).abs() < 1e-9);
        assert_eq!(cbr_shutoff_s(&p, 2e6, 2e6), None);
        assert_eq!(cbr_shutoff_s(&p, 2e6, 1.5e6), None);
    }
}
