//! Random Early Detection: Floyd and Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993, Section 4 (the algorithm of Fig. 2).
//!
//! The queue average is kept in bytes, so the thresholds are byte counts (16 KB and
//! 32 KB in the CSFQ paper's simulations). `gentle` mode is off: above `max_th` every
//! arrival is dropped, as in 1993 RED and the CSFQ paper's description.

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// RED configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    /// Physical buffer, bytes.
    pub buffer_bytes: u32,
    /// `min_th`, bytes (16 KB in the CSFQ paper).
    pub min_th_bytes: f64,
    /// `max_th`, bytes (32 KB).
    pub max_th_bytes: f64,
    /// Queue-averaging weight `w_q` (0.002, Floyd and Jacobson's recommendation).
    pub w_q: f64,
    /// `max_p`, the drop probability at `max_th` (0.1, ns-2's default).
    pub max_p: f64,
    /// Link capacity, bits/s: sizes the idle-time correction.
    pub capacity_bps: f64,
    /// The typical packet size, bytes, for the idle-time correction (1000).
    pub mean_packet_bytes: u32,
}

impl RedParams {
    /// The CSFQ paper's RED: thresholds 16 KB / 32 KB, `w_q = 0.002`, `max_p = 0.1`.
    pub fn new(capacity_bps: f64, buffer_bytes: u32) -> Self {
        RedParams {
            buffer_bytes,
            min_th_bytes: 16_000.0,
            max_th_bytes: 32_000.0,
            w_q: 0.002,
            max_p: 0.1,
            capacity_bps,
            mean_packet_bytes: 1000,
        }
    }
}

/// RED's averaged queue and drop decision, shared by RED and FRED.
#[derive(Debug, Clone)]
pub(crate) struct RedAverage {
    pub avg: f64,
    idle_since: Option<Nanos>,
    /// Transmission time of a typical packet, ns: one "slot" of idle time.
    slot_ns: f64,
    w_q: f64,
}

impl RedAverage {
    pub fn new(p: &RedParams) -> Self {
        RedAverage {
            avg: 0.0,
            idle_since: Some(Nanos::ZERO),
            slot_ns: p.mean_packet_bytes as f64 * 8e9 / p.capacity_bps,
            w_q: p.w_q,
        }
    }

    /// Updates `avg` with the current queue `q` (bytes) at `now`.
    #[inline]
    pub fn update(&mut self, q: u32, now: Nanos) {
        match self.idle_since.take() {
            // Idle correction: avg <- (1 - w_q)^m avg, m = idle time / packet time.
            Some(since) if q == 0 => {
                let m = now.saturating_sub(since).0 as f64 / self.slot_ns;
                self.avg *= (1.0 - self.w_q).powf(m);
            }
            _ => self.avg = (1.0 - self.w_q) * self.avg + self.w_q * q as f64,
        }
    }

    /// The queue became empty at `now`.
    pub fn mark_idle(&mut self, now: Nanos) {
        self.idle_since = Some(now);
    }
}

/// RED: FIFO with early random drop on the averaged queue length.
#[derive(Debug, Clone)]
pub struct Red<K> {
    params: RedParams,
    fifo: ByteFifo<K>,
    avg: RedAverage,
    count: i64,
}

impl<K: Held> Red<K> {
    /// A RED queue with the given parameters.
    pub fn new(params: RedParams) -> Self {
        Red {
            fifo: ByteFifo::new(params.buffer_bytes),
            avg: RedAverage::new(&params),
            params,
            count: -1,
        }
    }

    /// The averaged queue, bytes.
    pub fn average_bytes(&self) -> f64 {
        self.avg.avg
    }
}

/// `p_a` of Floyd and Jacobson Fig. 2: `p_b / (1 - count * p_b)`, spreading drops evenly.
#[inline]
pub(crate) fn red_probability(avg: f64, count: i64, p: &RedParams) -> f64 {
    let p_b = p.max_p * (avg - p.min_th_bytes) / (p.max_th_bytes - p.min_th_bytes);
    spread(p_b, count)
}

/// Fig. 2's `p_a = p_b / (1 - count * p_b)` (1 once the denominator reaches 0): after
/// `count` arrivals without a drop, the next drop becomes more likely.
#[inline]
pub(crate) fn spread(p_b: f64, count: i64) -> f64 {
    let denom = 1.0 - count as f64 * p_b;
    if denom <= 0.0 {
        1.0
    } else {
        p_b / denom
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for Red<K> {
    type Kept = K;

    fn admit<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, rng: &mut R) -> Result<P, Dropped<P>> {
        self.avg.update(self.fifo.bytes(), now);
        let avg = self.avg.avg;
        let prm = &self.params;
        if avg >= prm.max_th_bytes {
            self.count = 0;
            return Err(Dropped::new(p, DropReason::RedForced));
        }
        if avg >= prm.min_th_bytes {
            self.count += 1;
            if rng.random::<f64>() < red_probability(avg, self.count, prm) {
                self.count = 0;
                return Err(Dropped::new(p, DropReason::RedEarly));
            }
        } else {
            self.count = -1;
        }
        self.fifo
            .admit(p, now)
            .map_err(|p| Dropped::new(p, DropReason::BufferOverflow))
    }

    fn depart(&mut self, now: Nanos) -> Option<K> {
        let p = self.fifo.pop();
        if self.fifo.is_empty() {
            self.avg.mark_idle(now);
        }
        p
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
    use crate::queue::QueueDisc;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn probability_follows_fig_2() {
        let p = RedParams::new(10e6, 64_000);
        // Halfway between thresholds, count 0: p_b = max_p / 2.
        assert!((red_probability(24_000.0, 0, &p) - 0.05).abs() < 1e-12);
        // count = 10: p_a = 0.05 / (1 - 0.5) = 0.1.
        assert!((red_probability(24_000.0, 10, &p) - 0.1).abs() < 1e-12);
        assert_eq!(red_probability(24_000.0, 20, &p), 1.0);
    }

    #[test]
    fn standing_queue_above_max_th_drops_every_arrival() {
        let mut red: Red<TestPacket> = Red::new(RedParams::new(10e6, 64_000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Never dequeue: the queue fills, avg climbs past max_th, then every arrival drops.
        let mut forced = 0;
        for i in 0..20_000u64 {
            if let Some(d) = red.enqueue(TestPacket::new(0, 1000, 0.0), Nanos(i * 1000), &mut rng) {
                if d.reason == DropReason::RedForced {
                    forced += 1;
                }
            }
        }
        assert!(red.average_bytes() >= 32_000.0);
        assert!(forced > 10_000);
    }

    #[test]
    fn idle_time_decays_average() {
        let prm = RedParams::new(10e6, 64_000);
        let mut a = RedAverage::new(&prm);
        a.avg = 20_000.0;
        a.mark_idle(Nanos::ZERO);
        // 100 packet times idle: avg *= 0.998^100.
        a.update(0, Nanos::from_micros(80_000));
        assert!((a.avg - 20_000.0 * 0.998f64.powi(100)).abs() < 1e-6);
    }
}
