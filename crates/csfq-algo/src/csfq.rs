//! Core-Stateless Fair Queueing: Stoica, Shenker and Zhang, SIGCOMM 1998.
//!
//! Edges ([`CsfqEdge`]) estimate each flow's rate with Eq. (3) and write it into the
//! packet as its label (`r / w` for a flow of weight `w`, Section 2.3). Cores
//! ([`CsfqCore`]) keep no per-flow state: they estimate the fair share `alpha` from the
//! aggregate arrival rate `A` and accepted rate `F` (Section 2.2, Fig. 2 of the paper's
//! pseudocode), drop each arrival with probability `max(0, 1 - alpha/label)` (Eq. 2) and
//! relabel the survivors with `min(label, alpha)` (Section 2.5). An edge router's own
//! output port runs the core algorithm too.
//!
//! The buffer amendments follow Section 2.2.2 and the original ns-2 code: every overflow
//! of the FIFO lowers `alpha` by 1%, at most [`CsfqParams::overflow_budget`] times between
//! two updates of `alpha` (the paper: "during consecutive updates alpha does not decrease
//! by more than 25%"); below [`CsfqParams::threshold_bytes`] (half the buffer) with
//! `alpha = 0` nothing is dropped.
//!
//! Two ways to estimate `alpha` ([`Estimator`]): the paper's, which scales `alpha` by
//! `C/F` once per window `K_c`, and the label histogram ([`crate::label_histogram`]),
//! which solves Eq. (1) for `alpha` from the labels of one window's arrivals. The paper's
//! moves `alpha` by at most the ratio `C/F` per window, which stays near 1 while the link
//! is full: with a thousand flows it takes seconds to reach the fair share. The histogram
//! reaches it in one window.

use rand::Rng;

use crate::label_histogram::LabelHistogram;
use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::rate_estimator::RateEstimator;
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// Per-flow rate estimation and labeling at an edge router (Section 2.4, Eq. 3).
#[derive(Debug, Clone)]
pub struct CsfqEdge {
    k: Nanos,
    /// Per-flow estimator and weight, indexed by `FlowId`; grows when a new flow appears.
    flows: Vec<EdgeFlow>,
}

#[derive(Debug, Clone, Copy)]
struct EdgeFlow {
    estimator: RateEstimator,
    weight: f64,
}

impl CsfqEdge {
    /// Per-flow records held: one per flow seen, up to the highest flow number.
    pub fn flow_slots(&self) -> usize {
        self.flows.len()
    }

    /// An edge with rate-averaging constant `k` (the paper's `K`, 100 ms by default).
    pub fn new(k: Nanos) -> Self {
        CsfqEdge {
            k,
            flows: Vec::new(),
        }
    }

    fn slot(&mut self, flow: FlowId) -> &mut EdgeFlow {
        let i = flow.index();
        if i >= self.flows.len() {
            let fresh = EdgeFlow {
                estimator: RateEstimator::new(self.k),
                weight: 1.0,
            };
            self.flows.resize(i + 1, fresh);
        }
        &mut self.flows[i]
    }

    /// Sets a flow's weight `w > 0` (Section 2.3: its label becomes `r / w`).
    pub fn set_weight(&mut self, flow: FlowId, weight: f64) {
        assert!(
            weight > 0.0 && weight.is_finite(),
            "weight must be positive"
        );
        self.slot(flow).weight = weight;
    }

    /// Estimates the packet's flow rate at `now` and overwrites its label with `r / w`.
    /// A label set before the packet entered the island is never trusted.
    #[inline]
    pub fn label<P: Packet>(&mut self, packet: &mut P, now: Nanos) {
        let size = packet.size_bytes();
        let slot = self.slot(packet.flow());
        let rate = slot.estimator.update(now, size);
        packet.set_label(rate / slot.weight);
    }

    /// The current rate estimate of a flow (bits/s), 0 if never seen.
    pub fn rate_bps(&self, flow: FlowId) -> f64 {
        self.flows
            .get(flow.index())
            .map_or(0.0, |f| f.estimator.rate_bps())
    }
}

/// How a core estimates the fair share `alpha`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimator {
    /// The paper's (Section 2.2, Fig. 2): `alpha <- alpha C / F` after each window of
    /// `K_c` that stayed congested, the largest label after one that did not.
    #[default]
    Paper,
    /// Solve `sum bytes * min(1, alpha/label) = C W` over each window of `K_c` from a
    /// fixed-size histogram of the labels that arrived ([`crate::label_histogram`]).
    Histogram,
}

/// `K_alpha` and `K_c` by the paper's rule (Section 3: "about twice the maximum queueing
/// delay"): twice the time `C` takes to drain the buffer, within 1 ms and 1 s. 102 ms for
/// the paper's 64 KB at 10 Mbit/s, 420 ms for its 256 KB (it used 100 and 400 ms).
pub fn scaled_window(capacity_bps: f64, buffer_bytes: u32) -> Nanos {
    let drain_s = buffer_bytes as f64 * 8.0 / capacity_bps;
    Nanos::from_secs_f64((2.0 * drain_s).clamp(1e-3, 1.0))
}

/// Configuration of a CSFQ core; build with [`CsfqParams::new`] then adjust fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CsfqParams {
    /// Output link capacity `C`, bits/s.
    pub capacity_bps: f64,
    /// FIFO size, bytes (64 KB in the paper).
    pub buffer_bytes: u32,
    /// `K_alpha`: averaging constant of the aggregate rates `A` and `F` (100 ms).
    pub k_alpha: Nanos,
    /// `K_c`: length of the window that must stay congested/uncongested (100 ms).
    pub k_c: Nanos,
    /// Queue length below which `alpha = 0` is kept/restored: half the buffer by default.
    pub threshold_bytes: u32,
    /// How many overflows between two updates of `alpha` may each lower it by 1% (29: at
    /// most about 25% between updates).
    pub overflow_budget: u32,
    /// How `alpha` is estimated.
    pub estimator: Estimator,
    /// Relabel accepted packets with `min(label, alpha)` (Section 2.5). On by default; off
    /// only to show what goes wrong without it.
    pub relabel: bool,
}

impl CsfqParams {
    /// The paper's defaults for a link of `capacity_bps` with a `buffer_bytes` FIFO:
    /// `K_alpha = K_c = 100 ms`, threshold half the buffer, budget 29, relabeling on, the
    /// paper's estimator.
    pub fn new(capacity_bps: f64, buffer_bytes: u32) -> Self {
        CsfqParams {
            capacity_bps,
            buffer_bytes,
            k_alpha: Nanos::from_millis(100),
            k_c: Nanos::from_millis(100),
            threshold_bytes: buffer_bytes / 2,
            overflow_budget: 29,
            estimator: Estimator::Paper,
            relabel: true,
        }
    }

    /// Defaults for any link: `K_alpha = K_c =` [`scaled_window`] and the label-histogram
    /// estimator; the rest as [`CsfqParams::new`].
    pub fn scaled(capacity_bps: f64, buffer_bytes: u32) -> Self {
        let k = scaled_window(capacity_bps, buffer_bytes);
        CsfqParams {
            k_alpha: k,
            k_c: k,
            estimator: Estimator::Histogram,
            ..Self::new(capacity_bps, buffer_bytes)
        }
    }
}

/// The aggregate state of a CSFQ core's fair-share estimation, without a queue.
///
/// Split from [`CsfqCore`] so the same estimator can sit in front of any FIFO (the
/// dataplane model drives it with the kernel qdisc's backlog).
#[derive(Debug, Clone)]
pub struct FairShareEstimator {
    params: CsfqParams,
    arrival: RateEstimator,
    accepted: RateEstimator,
    alpha: f64,
    congested: bool,
    start_time: Nanos,
    max_label: f64,
    overflow_left: u32,
    /// The window's labels, for [`Estimator::Histogram`]: made at the first arrival (4 KB
    /// a port; a port no packet reaches, one of thousands in a large topology, has none).
    histogram: Option<Box<LabelHistogram>>,
}

impl FairShareEstimator {
    /// A new estimator; `alpha` starts at 0 (not dropping).
    pub fn new(params: CsfqParams) -> Self {
        FairShareEstimator {
            params,
            arrival: RateEstimator::new(params.k_alpha),
            accepted: RateEstimator::new(params.k_alpha),
            alpha: 0.0,
            congested: false,
            start_time: Nanos::ZERO,
            max_label: 0.0,
            overflow_left: params.overflow_budget,
            histogram: None,
        }
    }

    /// The drop probability of a packet labeled `label` (Eq. 2): `max(0, 1 - alpha/label)`,
    /// 0 when `alpha = 0` (not dropping) or the packet is unlabeled.
    #[inline]
    pub fn drop_probability(&self, label: f64) -> f64 {
        if self.alpha == 0.0 || label <= 0.0 {
            0.0
        } else {
            (1.0 - self.alpha / label).max(0.0)
        }
    }

    /// `estimate_alpha` of the paper's Fig. 2, with the buffer amendments. Called for every
    /// arrival after the drop decision; `queue_bytes` is the FIFO's backlog at arrival.
    #[inline]
    pub fn on_arrival(
        &mut self,
        label: f64,
        size: u32,
        now: Nanos,
        dropped: bool,
        queue_bytes: u32,
    ) {
        let p = &self.params;
        let a = self.arrival.update(now, size);
        if !dropped {
            self.accepted.update(now, size);
        }
        if p.estimator == Estimator::Histogram {
            // One allocation in the port's life, at its first packet.
            let h = self.histogram.get_or_insert_with(Box::default);
            h.add(label as u64, size);
            self.max_label = self.max_label.max(label);
            if self.alpha == 0.0 && queue_bytes >= p.threshold_bytes {
                // Not dropping and the queue crossed the threshold: start with the
                // largest label seen (the paper's restart) until the window ends.
                self.alpha = self.max_label;
            }
            if now >= self.start_time + p.k_c {
                self.end_histogram_window(now, queue_bytes);
            }
            return;
        }
        if self.alpha == 0.0 {
            if queue_bytes < p.threshold_bytes {
                self.max_label = self.max_label.max(label);
                return;
            }
            self.alpha = if self.max_label > 0.0 {
                self.max_label
            } else {
                p.capacity_bps / 2.0
            };
            self.max_label = 0.0;
            // A fresh window: the last one may have ended long ago.
            self.start_time = now;
        }
        if a >= p.capacity_bps {
            // Congested.
            if !self.congested {
                self.congested = true;
                self.start_time = now;
                self.overflow_left = p.overflow_budget;
            } else if now > self.start_time + p.k_c {
                let f = self.accepted.rate_bps();
                // alpha <- alpha * C / F: scale so the accepted rate matches the link.
                self.alpha = if f > 0.0 {
                    (self.alpha * p.capacity_bps / f).min(p.capacity_bps)
                } else {
                    p.capacity_bps
                };
                self.start_time = now;
                self.overflow_left = p.overflow_budget;
            }
        } else if self.congested {
            self.congested = false;
            self.start_time = now;
            self.max_label = 0.0;
        } else if now < self.start_time + p.k_c {
            self.max_label = self.max_label.max(label);
        } else {
            // A whole uncongested window: alpha is the largest label seen in it.
            self.alpha = self.max_label;
            self.start_time = now;
            self.overflow_left = p.overflow_budget;
            if queue_bytes < p.threshold_bytes {
                self.alpha = 0.0; // buffer almost empty: stop dropping
            } else {
                self.max_label = 0.0;
            }
        }
    }

    /// The end of a window of [`Estimator::Histogram`]: `alpha` solves Eq. (1) over the
    /// window's labels if its arrivals exceeded `C W`; otherwise, as in the paper, the
    /// largest label seen, or 0 (not dropping) with the queue below the threshold. A
    /// window more than twice `K_c` long had an idle gap and counts as uncongested.
    fn end_histogram_window(&mut self, now: Nanos, queue_bytes: u32) {
        let p = &self.params;
        let h = self.histogram.as_deref_mut().expect("histogram estimator");
        let w = now.saturating_sub(self.start_time).0;
        let solved = h.end_window(p.capacity_bps as u64, w, p.k_c.0);
        self.congested = solved.is_some();
        self.alpha = match solved {
            Some(a) => (a as f64).min(p.capacity_bps),
            None if queue_bytes >= p.threshold_bytes => self.max_label,
            None => 0.0,
        };
        self.max_label = 0.0;
        self.start_time = now;
        self.overflow_left = p.overflow_budget;
    }

    /// A packet the estimator accepted overflowed the buffer: `alpha *= 0.99`, at most
    /// `overflow_budget` times between two updates of `alpha` (Section 2.2.2).
    #[inline]
    pub fn on_overflow(&mut self) {
        if self.overflow_left > 0 {
            self.overflow_left -= 1;
            self.alpha *= 0.99;
        }
    }

    /// The fair-share estimate `alpha`, bits/s (0: not dropping).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// The aggregate arrival-rate estimate `A`, bits/s.
    pub fn arrival_rate(&self) -> f64 {
        self.arrival.rate_bps()
    }
    /// The accepted-rate estimate `F`, bits/s.
    pub fn accepted_rate(&self) -> f64 {
        self.accepted.rate_bps()
    }
    /// Whether the link is in a congested window.
    pub fn congested(&self) -> bool {
        self.congested
    }
    /// The parameters.
    pub fn params(&self) -> &CsfqParams {
        &self.params
    }
}

pub use crate::label_histogram::target_bytes;

/// A CSFQ core output port: probabilistic drop, relabeling, FIFO.
#[derive(Debug, Clone)]
pub struct CsfqCore<K> {
    estimator: FairShareEstimator,
    fifo: ByteFifo<K>,
}

impl<K: Held> CsfqCore<K> {
    /// A core port with the given parameters.
    pub fn new(params: CsfqParams) -> Self {
        CsfqCore {
            estimator: FairShareEstimator::new(params),
            fifo: ByteFifo::new(params.buffer_bytes),
        }
    }

    /// The fair-share state, for monitoring.
    pub fn estimator(&self) -> &FairShareEstimator {
        &self.estimator
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for CsfqCore<K> {
    type Kept = K;

    #[inline]
    fn admit<R: Rng + ?Sized>(
        &mut self,
        mut packet: P,
        now: Nanos,
        rng: &mut R,
    ) -> Result<P, Dropped<P>> {
        let label = packet.label();
        let size = packet.size_bytes();
        let queue_bytes = self.fifo.bytes();
        let prob = self.estimator.drop_probability(label);
        if prob > 0.0 && prob > rng.random::<f64>() {
            self.estimator
                .on_arrival(label, size, now, true, queue_bytes);
            return Err(Dropped::new(packet, DropReason::CsfqProbabilistic));
        }
        // Accepted by CSFQ: counts toward F even if the buffer then overflows.
        self.estimator
            .on_arrival(label, size, now, false, queue_bytes);
        let alpha = self.estimator.alpha();
        if prob > 0.0 && self.estimator.params.relabel && alpha > 0.0 {
            packet.set_label(label.min(alpha)); // Section 2.5: L <- min(L, alpha)
        }
        self.fifo.admit(packet, now).map_err(|packet| {
            self.estimator.on_overflow();
            Dropped::new(packet, DropReason::BufferOverflow)
        })
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxmin::fair_share;
    use crate::queue::test_packet::TestPacket;
    use crate::queue::QueueDisc;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn drop_probability_is_eq_2() {
        let mut e = FairShareEstimator::new(CsfqParams::new(10e6, 64_000));
        assert_eq!(e.drop_probability(5e6), 0.0, "alpha = 0 drops nothing");
        e.alpha = 1e6;
        assert_eq!(e.drop_probability(0.0), 0.0, "unlabeled packets pass");
        assert_eq!(e.drop_probability(0.5e6), 0.0);
        assert!((e.drop_probability(4e6) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn edge_labels_with_weighted_rate() {
        let mut edge = CsfqEdge::new(Nanos::from_millis(100));
        edge.set_weight(FlowId(3), 2.0);
        let mut p = TestPacket::new(3, 1000, 123.0);
        // 1 Mbps for 2 s: label converges to 1 Mbps / 2.
        for i in 0..250 {
            edge.label(&mut p, Nanos::from_millis(8 * i));
        }
        assert!((p.label / 0.5e6 - 1.0).abs() < 0.01, "label {}", p.label);
        assert!((edge.rate_bps(FlowId(3)) / 1e6 - 1.0).abs() < 0.01);
    }

    /// Constant-rate flows through a core port drained at `C`: `alpha` settles near the
    /// water-filling fair share, and each flow's accepted rate near `min(r_i, alpha)`;
    /// within 15% with the paper's estimator, 5% with the histogram.
    #[test]
    fn core_settles_near_water_filling_alpha() {
        settles_near_water_filling(CsfqParams::new(10e6, 64_000), 0.15);
        settles_near_water_filling(CsfqParams::scaled(10e6, 64_000), 0.05);
    }

    fn settles_near_water_filling(params: CsfqParams, tol: f64) {
        let c = params.capacity_bps;
        let rates: Vec<f64> = (1..=8).map(|i| i as f64 * 0.5e6).collect(); // 18 Mbps total
        let alpha_star = fair_share(&rates, c);
        let mut core: CsfqCore<TestPacket> = CsfqCore::new(params);
        let mut edge = CsfqEdge::new(Nanos::from_millis(100));
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let tx = Nanos::transmission(1000, c);
        let mut next: Vec<Nanos> = vec![Nanos::ZERO; rates.len()];
        let mut link_free = Nanos::ZERO;
        let mut accepted = vec![0u64; rates.len()];
        let mut alphas = Vec::new();
        let end = Nanos::from_millis(6000);
        loop {
            let (i, &t) = next.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
            if t >= end {
                break;
            }
            // Drain the link up to t.
            while link_free <= t && core.dequeue(link_free).is_some() {
                link_free += tx;
            }
            if core.is_empty() && link_free < t {
                link_free = t;
            }
            let mut p = TestPacket::new(i as u32, 1000, 0.0);
            edge.label(&mut p, t);
            if core.enqueue(p, t, &mut rng).is_none() && t > Nanos::from_millis(2000) {
                accepted[i] += 8000;
            }
            if t > Nanos::from_millis(2000) {
                alphas.push(core.estimator().alpha());
            }
            next[i] = t + Nanos::from_secs_f64(8000.0 / rates[i]);
        }
        let mean_alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
        assert!(
            (mean_alpha / alpha_star - 1.0).abs() < tol,
            "{:?}: alpha {mean_alpha} vs water-filling {alpha_star}",
            params.estimator
        );
        for (i, r) in rates.iter().enumerate() {
            let got = accepted[i] as f64 / 4.0;
            let want = r.min(alpha_star);
            assert!(
                (got / want - 1.0).abs() < tol,
                "{:?}: flow {i}: {got} vs {want}",
                params.estimator
            );
        }
    }

    /// Feeds `n` packets of 1000 bytes labeled `label` at `rate` from `t0`; returns the time
    /// after the last. The queue is reported at `queue` bytes.
    fn feed(
        e: &mut FairShareEstimator,
        t0: Nanos,
        n: u32,
        rate: f64,
        label: f64,
        queue: u32,
    ) -> Nanos {
        let gap = Nanos::from_secs_f64(8000.0 / rate);
        let mut t = t0;
        for _ in 0..n {
            let dropped = e.drop_probability(label) > 0.5;
            e.on_arrival(label, 1000, t, dropped, queue);
            t += gap;
        }
        t
    }

    /// The overflow budget is refilled at every update of `alpha`, not only when
    /// congestion begins: the paper bounds the cut "during consecutive updates".
    #[test]
    fn overflow_budget_refills_at_every_alpha_update() {
        let mut e = FairShareEstimator::new(CsfqParams::new(10e6, 64_000));
        // 20 Mbit/s of 1 Mbit/s labels, queue above the threshold: congested from the start.
        let mut t = feed(&mut e, Nanos::from_millis(1), 400, 20e6, 1e6, 40_000);
        let mut updates = 0;
        while updates < 3 {
            let before = e.alpha();
            t = feed(&mut e, t, 1, 20e6, 1e6, 40_000);
            if e.alpha() != before {
                updates += 1;
                let updated = e.alpha();
                for _ in 0..100 {
                    e.on_overflow();
                }
                let cut = e.alpha() / updated;
                assert!(
                    (cut - 0.99f64.powi(29)).abs() < 1e-9,
                    "update {updates}: overflows cut alpha by {cut}"
                );
            }
        }
    }

    /// Dropping restarts with the largest label seen when the queue crosses the threshold,
    /// in a fresh window, also long after the last window ended (not in an expired one,
    /// which sent `alpha` to 0 and then to `C/2`).
    #[test]
    fn restart_long_after_the_last_window_keeps_the_seeded_alpha() {
        let mut e = FairShareEstimator::new(CsfqParams::new(10e6, 64_000));
        e.on_arrival(3e6, 1000, Nanos::from_millis(1), false, 0);
        assert_eq!(e.alpha(), 0.0);
        e.on_arrival(2e6, 1000, Nanos::from_millis(10_000), false, 40_000);
        assert_eq!(e.alpha(), 3e6, "seeded with the largest label");
        e.on_arrival(2e6, 1000, Nanos::from_millis(10_001), false, 40_000);
        assert_eq!(e.alpha(), 3e6, "and kept within the new window");
    }

    /// The histogram estimator reaches a new fair share in one window after a step: 100
    /// flows at 1 Mbit/s join 10 at 10 Mbit/s on a 10 Mbit/s link.
    #[test]
    fn histogram_follows_a_step_in_one_window() {
        let p = CsfqParams::scaled(10e6, 64_000);
        let mut e = FairShareEstimator::new(p);
        let mut t = Nanos::from_millis(1);
        // 10 flows of 10 Mbit/s (labels) interleaved: fair share 1 Mbit/s.
        for _ in 0..5000 {
            t = feed(&mut e, t, 1, 100e6, 10e6, 40_000);
        }
        assert!((e.alpha() / 1e6 - 1.0).abs() < 0.02, "alpha {}", e.alpha());
        // 100 more at 1 Mbit/s (labels 1 Mbit/s, 100 Mbit/s together): 110 Mbit/s of
        // arrivals... the fair share drops below 1 Mbit/s: 10 a + 100 min(1M, a) = 10M.
        let want = 10e6 / 110.0;
        let step = t;
        let gap = Nanos::from_secs_f64(8000.0 / 200e6);
        while t < step + p.k_c + p.k_c {
            for label in [10e6, 1e6] {
                let dropped = e.drop_probability(label) > 0.5;
                e.on_arrival(label, 1000, t, dropped, 40_000);
                t += gap;
            }
        }
        assert!(
            (e.alpha() / want - 1.0).abs() < 0.05,
            "alpha {} vs {want}",
            e.alpha()
        );
    }

    #[test]
    fn overflow_lowers_alpha_at_most_budget_times_between_updates() {
        let mut e = FairShareEstimator::new(CsfqParams::new(10e6, 64_000));
        e.alpha = 1e6;
        for _ in 0..100 {
            e.on_overflow();
        }
        let expected = 1e6 * 0.99f64.powi(29);
        assert!((e.alpha - expected).abs() < 1e-6);
        assert!(
            e.alpha > 0.74e6,
            "overflows lower alpha by at most about 25% between updates"
        );
    }

    #[test]
    fn relabels_to_alpha() {
        let mut core: CsfqCore<TestPacket> = CsfqCore::new(CsfqParams::new(10e6, 64_000));
        core.estimator.alpha = 1e6;
        core.estimator.congested = true;
        core.estimator.start_time = Nanos::ZERO;
        // A draw near 1 is above the 0.5 drop probability of a 2 Mbps label: accepted.
        struct High;
        impl rand::RngCore for High {
            fn next_u32(&mut self) -> u32 {
                u32::MAX
            }
            fn next_u64(&mut self) -> u64 {
                u64::MAX
            }
            fn fill_bytes(&mut self, dst: &mut [u8]) {
                dst.fill(0xff)
            }
        }
        let mut rng = High;
        let p = TestPacket::new(0, 1000, 2e6);
        assert!(core.enqueue(p, Nanos::from_millis(1), &mut rng).is_none());
        let out = core.dequeue(Nanos::from_millis(1)).unwrap();
        assert_eq!(out.label, core.estimator.alpha());
    }
}
