//! Adaptive RED: Floyd, Gummadi and Shenker, "Adaptive RED: An Algorithm for Increasing
//! the Robustness of RED's Active Queue Management", 2001, Section 4 (the algorithm of its
//! Fig. 5) and Section 5 (automatic parameters). The MAY paper's RED.
//!
//! RED ([`crate::red`]) with three changes:
//! - **`max_p` adapts** every `interval` (0.5 s) to keep the average queue inside the
//!   target band `[min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)]`:
//!   above it `max_p += min(0.01, max_p / 4)` (up to 0.5), below it `max_p *= 0.9`
//!   (down to `min(0.01, 1/W)`, W the window of a 100 ms flow at this rate);
//! - **gentle**: between `max_th` and `2 max_th` the drop probability rises linearly from
//!   `max_p` to 1; only above `2 max_th` is every arrival dropped;
//! - **automatic parameters** for a link of `C` packets/s: `min_th = max(5, C *
//!   target_delay / 2)` packets with `target_delay = 5 ms`, `max_th = 3 min_th`,
//!   `w_q = 1 - exp(-1/C)`.
//!
//! The adaptation runs on the first arrival after each interval has passed (as ns-2 does),
//! so the discipline reads no clock of its own.

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::red::{spread, RedAverage, RedParams};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// Adaptive RED configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AredParams {
    /// RED's thresholds (bytes), `w_q`, the buffer and the initial `max_p`.
    pub red: RedParams,
    /// How often `max_p` adapts (0.5 s).
    pub interval: Nanos,
    /// The additive step's cap (0.01).
    pub alpha: f64,
    /// The multiplicative decrease (0.9).
    pub beta: f64,
    /// `max_p` never exceeds this (0.5).
    pub top: f64,
    /// `max_p` never falls below this (`min(0.01, 1/W)`).
    pub bottom: f64,
}

impl AredParams {
    /// Floyd, Gummadi and Shenker's automatic parameters for a link of `capacity_bps` with
    /// `buffer_bytes`, packets of `packet_bytes` and a target queueing delay of 5 ms.
    pub fn automatic(capacity_bps: f64, buffer_bytes: u32, packet_bytes: u32) -> Self {
        Self::with_target_delay(capacity_bps, buffer_bytes, packet_bytes, 0.005)
    }

    /// The automatic parameters for a chosen target queueing delay, seconds.
    pub fn with_target_delay(
        capacity_bps: f64,
        buffer_bytes: u32,
        packet_bytes: u32,
        target_delay_s: f64,
    ) -> Self {
        let pkt = packet_bytes as f64;
        let per_sec = capacity_bps / (8.0 * pkt);
        let min_th = (per_sec * target_delay_s / 2.0).max(5.0);
        AredParams {
            red: RedParams {
                buffer_bytes,
                min_th_bytes: min_th * pkt,
                max_th_bytes: 3.0 * min_th * pkt,
                w_q: 1.0 - (-1.0 / per_sec).exp(),
                max_p: 0.1,
                capacity_bps,
                mean_packet_bytes: packet_bytes,
            },
            interval: Nanos::from_millis(500),
            alpha: 0.01,
            beta: 0.9,
            top: 0.5,
            // 1/W for W = the window, in packets, of a 100 ms flow using the whole link.
            bottom: (1.0 / (0.1 * per_sec)).min(0.01),
        }
    }
}

/// Adaptive RED.
#[derive(Debug, Clone)]
pub struct Ared<K> {
    params: AredParams,
    fifo: ByteFifo<K>,
    avg: RedAverage,
    max_p: f64,
    count: i64,
    last_adapt: Nanos,
}

impl<K: Held> Ared<K> {
    /// An empty queue; `max_p` starts at `params.red.max_p`.
    pub fn new(params: AredParams) -> Self {
        Ared {
            fifo: ByteFifo::new(params.red.buffer_bytes),
            avg: RedAverage::new(&params.red),
            max_p: params.red.max_p,
            count: -1,
            last_adapt: Nanos::ZERO,
            params,
        }
    }

    /// The current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// The averaged queue, bytes.
    pub fn average_bytes(&self) -> f64 {
        self.avg.avg
    }

    /// Fig. 5 of the paper: one step of `max_p` towards the target band.
    fn adapt(&mut self, now: Nanos) {
        if now.saturating_sub(self.last_adapt) <= self.params.interval {
            return;
        }
        let r = &self.params.red;
        let part = 0.4 * (r.max_th_bytes - r.min_th_bytes);
        let avg = self.avg.avg;
        if avg < r.min_th_bytes + part && self.max_p > self.params.bottom {
            self.max_p *= self.params.beta;
            self.last_adapt = now;
        } else if avg > r.max_th_bytes - part && self.max_p < self.params.top {
            self.max_p += self.params.alpha.min(self.max_p / 4.0);
            self.last_adapt = now;
        }
    }

    /// The drop probability before spreading: RED's line below `max_th`, gentle above.
    fn p_b(&self, avg: f64) -> f64 {
        let r = &self.params.red;
        if avg < r.max_th_bytes {
            self.max_p * (avg - r.min_th_bytes) / (r.max_th_bytes - r.min_th_bytes)
        } else {
            self.max_p + (1.0 - self.max_p) * (avg - r.max_th_bytes) / r.max_th_bytes
        }
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for Ared<K> {
    type Kept = K;

    fn admit<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, rng: &mut R) -> Result<P, Dropped<P>> {
        self.avg.update(self.fifo.bytes(), now);
        self.adapt(now);
        let avg = self.avg.avg;
        let r = self.params.red;
        if avg >= 2.0 * r.max_th_bytes {
            self.count = 0;
            return Err(Dropped::new(p, DropReason::RedForced));
        }
        if avg >= r.min_th_bytes {
            self.count += 1;
            if rng.random::<f64>() < spread(self.p_b(avg), self.count) {
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
    use crate::queue::ConstRng;
    use crate::queue::QueueDisc;

    /// Section 5's numbers for a 40 Mbit/s link of 1000-byte packets: C = 5000 packets/s,
    /// min_th = 5000 * 0.005 / 2 = 12.5 packets, max_th = 37.5, w_q = 1 - e^(-1/5000),
    /// bottom = min(0.01, 1/500) = 0.002. A 1 Mbit/s link gets the 5-packet floor.
    #[test]
    fn automatic_parameters() {
        let p = AredParams::automatic(40e6, 100_000, 1000);
        assert!((p.red.min_th_bytes - 12_500.0).abs() < 1e-6);
        assert!((p.red.max_th_bytes - 37_500.0).abs() < 1e-6);
        assert!((p.red.w_q - (1.0 - (-1.0f64 / 5000.0).exp())).abs() < 1e-15);
        assert!((p.bottom - 0.002).abs() < 1e-12);
        let slow = AredParams::automatic(1e6, 100_000, 1000);
        assert_eq!(slow.red.min_th_bytes, 5000.0);
        assert_eq!(slow.red.max_th_bytes, 15_000.0);
    }

    /// Hand-computed gentle region: avg = 1.5 max_th gives max_p + (1 - max_p) / 2.
    #[test]
    fn gentle_probability_between_max_th_and_twice_it() {
        let q: Ared<TestPacket> = Ared::new(AredParams::automatic(40e6, 100_000, 1000));
        assert!((q.p_b(37_500.0 * 1.5) - 0.55).abs() < 1e-12);
        assert!((q.p_b(37_500.0) - 0.1).abs() < 1e-12);
        assert!((q.p_b(25_000.0) - 0.05).abs() < 1e-12);
    }

    /// A standing queue above the band raises `max_p` by min(0.01, max_p/4) per interval,
    /// no more than once per interval; one below it lowers `max_p` by 0.9 per interval.
    #[test]
    fn max_p_adapts_once_per_interval_towards_the_band() {
        let prm = AredParams::automatic(40e6, 100_000, 1000);
        let mut q: Ared<TestPacket> = Ared::new(prm);
        // Never drops (the draw is 1 - 2^-53), so the queue builds; hold avg at 30 000
        // bytes, above the band's top (12 500 + 0.6 * 25 000 = 27 500).
        let mut rng = ConstRng(u64::MAX);
        q.avg.avg = 30_000.0;
        let pk = TestPacket::new(0, 1000, 0.0);
        for _ in 0..30 {
            q.fifo.push(pk).unwrap();
        }
        q.enqueue(pk, Nanos::from_millis(400), &mut rng);
        assert_eq!(q.max_p(), 0.1, "no step before the interval has passed");
        q.avg.avg = 30_000.0;
        q.enqueue(pk, Nanos::from_millis(501), &mut rng);
        assert!((q.max_p() - 0.11).abs() < 1e-12);
        q.avg.avg = 30_000.0;
        q.enqueue(pk, Nanos::from_millis(900), &mut rng);
        assert!((q.max_p() - 0.11).abs() < 1e-12);
        // Below the band (12 500 + 0.4 * 25 000 = 22 500): times 0.9.
        q.avg.avg = 15_000.0;
        q.enqueue(pk, Nanos::from_millis(1002), &mut rng);
        assert!((q.max_p() - 0.099).abs() < 1e-12);
    }
}
