//! CS-FNE: core-stateless fair queueing with flow-number estimation. Kim, master's thesis,
//! 2005, Chapter 3 (after Li and Leu, ICC 2002, for the estimator).
//!
//! CSFQ's architecture with other estimators:
//! - edge ([`TswMeter`]): a Time Sliding Window rate meter (Fig. 3-1):
//!   `bytes = avg_rate * win + l; avg_rate = bytes / (now - t_front + win); t_front = now`;
//!   the label is written only when `avg_rate` exceeds the flow's minimum guaranteed rate;
//! - core ([`CsfneCore`]): each arrival is compared with one packet drawn at random from the
//!   queue, a *hit* if both belong to the same flow. With `r_hit` and `r_miss` the (Eq. 3)
//!   rates of hit and miss bytes, `N_act = (r_hit + r_miss) / r_hit` (Eq. 3-4); for a FIFO
//!   it estimates `n / (C_r^2 + 1)` (Eq. 3-5). The threshold rate is `CL = C / N_act`;
//!   below a target queue length nothing is dropped, above it a packet is dropped with
//!   probability `max(0, 1 - CL / label)` (Section 3.2.3). Survivors are relabeled
//!   `min(label, CL)`, as in CSFQ.
//!
//! Design note: the thesis keeps a small per-flow record in a chained hash table at the
//! core (Section 3.2.1). This core keeps none: the comparison needs only the queue, and
//! the drop decision only the label, so the core stays stateless per flow.

use rand::Rng;

use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::rate_estimator::RateEstimator;
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

#[derive(Debug, Clone, Copy)]
struct TswFlow {
    avg_bps: f64,
    t_front: Nanos,
    min_bps: f64,
}

/// Time Sliding Window rate meter and labeler at a CS-FNE edge (thesis Fig. 3-1).
#[derive(Debug, Clone)]
pub struct TswMeter {
    win_ns: f64,
    flows: Vec<TswFlow>,
}

impl TswMeter {
    /// Per-flow records held: one per flow seen, up to the highest flow number.
    pub fn flow_slots(&self) -> usize {
        self.flows.len()
    }

    /// A meter with window `win` (the thesis leaves it open; 100 ms matches CSFQ's K).
    pub fn new(win: Nanos) -> Self {
        assert!(win.0 > 0, "window must be positive");
        TswMeter {
            win_ns: win.0 as f64,
            flows: Vec::new(),
        }
    }

    fn slot(&mut self, f: FlowId, now: Nanos) -> &mut TswFlow {
        let i = f.index();
        while self.flows.len() <= i {
            self.flows.push(TswFlow {
                avg_bps: 0.0,
                t_front: now,
                min_bps: 0.0,
            });
        }
        &mut self.flows[i]
    }

    /// Sets a flow's minimum guaranteed rate (bits/s): below it, packets are not labeled.
    pub fn set_min_rate(&mut self, f: FlowId, min_bps: f64) {
        let s = self.slot(f, Nanos::ZERO);
        s.min_bps = min_bps;
        s.avg_bps = s.avg_bps.max(min_bps);
    }

    /// Meters a packet at `now` and writes its label (`avg_rate`, or 0 at or below the
    /// minimum guaranteed rate).
    #[inline]
    pub fn label<P: Packet>(&mut self, p: &mut P, now: Nanos) {
        let win = self.win_ns;
        let bits = p.size_bytes() as f64 * 8.0;
        let s = self.slot(p.flow(), now);
        let in_window = s.avg_bps * win / 1e9 + bits;
        let span_ns = now.saturating_sub(s.t_front).0 as f64 + win;
        s.avg_bps = in_window / span_ns * 1e9;
        s.t_front = now;
        p.set_label(if s.avg_bps > s.min_bps {
            s.avg_bps
        } else {
            0.0
        });
    }

    /// A flow's current rate estimate, bits/s.
    pub fn rate_bps(&self, f: FlowId) -> f64 {
        self.flows.get(f.index()).map_or(0.0, |s| s.avg_bps)
    }
}

/// CS-FNE core configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CsfneParams {
    /// Link capacity `C`, bits/s.
    pub capacity_bps: f64,
    /// Buffer, bytes.
    pub buffer_bytes: u32,
    /// Queue length below which nothing is dropped, bytes (the thesis's "target"; it gives
    /// no value: 16 KB, RED's first threshold in the same simulations, by default).
    pub target_bytes: u32,
    /// Averaging constant of `r_hit` and `r_miss` (100 ms).
    pub k: Nanos,
}

impl CsfneParams {
    /// Defaults: target 16 KB, K = 100 ms.
    pub fn new(capacity_bps: f64, buffer_bytes: u32) -> Self {
        CsfneParams {
            capacity_bps,
            buffer_bytes,
            target_bytes: 16_000.min(buffer_bytes / 2),
            k: Nanos::from_millis(100),
        }
    }
}

/// The flow-number estimator of Li and Leu as used by CS-FNE (Eqs. 3-2 to 3-4).
#[derive(Debug, Clone)]
pub struct FlowNumberEstimator {
    hit: RateEstimator,
    miss: RateEstimator,
}

impl FlowNumberEstimator {
    /// An estimator with averaging constant `k`.
    pub fn new(k: Nanos) -> Self {
        FlowNumberEstimator {
            hit: RateEstimator::new(k),
            miss: RateEstimator::new(k),
        }
    }

    /// Accounts an arrival of `bytes` at `now` that did (or did not) match the queued
    /// packet drawn for it.
    #[inline]
    pub fn observe(&mut self, now: Nanos, bytes: u32, hit: bool) {
        // Both rates see every arrival (a zero-byte update keeps their time bases equal).
        if hit {
            self.hit.update(now, bytes);
            self.miss.update(now, 0);
        } else {
            self.miss.update(now, bytes);
            self.hit.update(now, 0);
        }
    }

    /// `N_act = (r_hit + r_miss) / r_hit`, at least 1; 1 before any hit.
    pub fn active_flows(&self) -> f64 {
        let (h, m) = (self.hit.rate_bps(), self.miss.rate_bps());
        if h <= 0.0 {
            1.0
        } else {
            ((h + m) / h).max(1.0)
        }
    }
}

/// A CS-FNE core port.
#[derive(Debug, Clone)]
pub struct CsfneCore<K> {
    params: CsfneParams,
    fne: FlowNumberEstimator,
    fifo: ByteFifo<K>,
}

impl<K: Held> CsfneCore<K> {
    /// A core port.
    pub fn new(params: CsfneParams) -> Self {
        CsfneCore {
            fne: FlowNumberEstimator::new(params.k),
            fifo: ByteFifo::new(params.buffer_bytes),
            params,
        }
    }

    /// The threshold rate `CL = C / N_act`, bits/s.
    pub fn threshold_rate(&self) -> f64 {
        self.params.capacity_bps / self.fne.active_flows()
    }

    /// The active-flow estimate.
    pub fn active_flows(&self) -> f64 {
        self.fne.active_flows()
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for CsfneCore<K> {
    type Kept = K;

    #[inline]
    fn admit<R: Rng + ?Sized>(
        &mut self,
        mut p: P,
        now: Nanos,
        rng: &mut R,
    ) -> Result<P, Dropped<P>> {
        let size = p.size_bytes();
        if !self.fifo.is_empty() {
            let i = rng.random_range(0..self.fifo.len());
            let hit = self.fifo.get(i).is_some_and(|q| q.held_flow() == p.flow());
            self.fne.observe(now, size, hit);
        }
        let label = p.label();
        if self.fifo.bytes() >= self.params.target_bytes && label > 0.0 {
            let cl = self.threshold_rate();
            let prob = (1.0 - cl / label).max(0.0);
            if prob > 0.0 {
                if rng.random::<f64>() < prob {
                    return Err(Dropped::new(p, DropReason::CsfneProbabilistic));
                }
                p.set_label(cl);
            }
        }
        self.fifo
            .admit(p, now)
            .map_err(|p| Dropped::new(p, DropReason::BufferOverflow))
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
    use crate::queue::test_packet::TestPacket;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn tsw_converges_to_a_constant_rate() {
        let mut m = TswMeter::new(Nanos::from_millis(100));
        let mut p = TestPacket::new(0, 1000, 0.0);
        for i in 1..=2000u64 {
            m.label(&mut p, Nanos(i * 4_000_000)); // 1000 B / 4 ms = 2 Mbps
        }
        assert!((p.label / 2e6 - 1.0).abs() < 0.01, "{}", p.label);
    }

    #[test]
    fn tsw_leaves_flows_below_their_guarantee_unlabeled() {
        let mut m = TswMeter::new(Nanos::from_millis(100));
        m.set_min_rate(FlowId(0), 5e6);
        let mut p = TestPacket::new(0, 1000, 7.0);
        for i in 1..=500u64 {
            m.label(&mut p, Nanos(i * 4_000_000));
        }
        assert_eq!(p.label, 0.0);
    }

    /// A FIFO fed by flows of known rates: `N_act` converges to `n / (C_r^2 + 1)` (Eq. 3-5).
    #[test]
    fn n_act_converges_to_n_over_cv_squared_plus_one() {
        for rates in [
            vec![1.0; 8],
            vec![1.0, 1.0, 2.0, 4.0],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        ] {
            let n = rates.len() as f64;
            let mean = rates.iter().sum::<f64>() / n;
            let var = rates.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>() / n;
            let expected = n / (var / (mean * mean) + 1.0);
            let total: f64 = rates.iter().sum();
            let mut rng = Pcg64Mcg::seed_from_u64(11);
            // A queue whose content has flow shares proportional to rates; arrivals likewise.
            let mut q: ByteFifo<TestPacket> = ByteFifo::new(1_000_000);
            let mut fne = FlowNumberEstimator::new(Nanos::from_millis(100));
            let pick = |rng: &mut Pcg64Mcg| {
                let mut u = rng.random::<f64>() * total;
                rates
                    .iter()
                    .position(|r| {
                        u -= r;
                        u < 0.0
                    })
                    .unwrap_or(rates.len() - 1) as u32
            };
            for _ in 0..200 {
                let f = pick(&mut rng);
                q.push(TestPacket::new(f, 1000, 0.0)).unwrap();
            }
            let mut est = Vec::new();
            for i in 0..200_000u64 {
                let f = pick(&mut rng);
                let j = rng.random_range(0..q.len());
                let hit = q.get(j).unwrap().flow.0 == f;
                fne.observe(Nanos(i * 100_000), 1000, hit);
                q.pop();
                q.push(TestPacket::new(f, 1000, 0.0)).unwrap();
                if i > 100_000 {
                    est.push(fne.active_flows());
                }
            }
            let got = est.iter().sum::<f64>() / est.len() as f64;
            assert!(
                (got / expected - 1.0).abs() < 0.1,
                "rates {rates:?}: {got} vs {expected}"
            );
        }
    }
}
