//! Exponential averaging of a rate from packet arrivals: Eq. (3) of Stoica, Shenker and
//! Zhang, "Core-Stateless Fair Queueing", SIGCOMM 1998, Section 2.4.
//!
//! `r_new = (1 - e^(-T/K)) * l/T + e^(-T/K) * r_old`, with `T` the time since the previous
//! arrival. Unlike a fixed-weight EWMA this estimator is insensitive to the packet-length
//! distribution and converges to the true rate of a constant stream whatever its packet
//! spacing. Arrivals at the same instant (`T = 0`) are summed into the next update rather
//! than dividing by zero, as the original ns-2 code does.

use crate::time::Nanos;

/// Estimates below this many bits/s are flushed to zero.
pub const MIN_RATE_BPS: f64 = 1e-9;

/// Eq. (3) rate estimator, in bits per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateEstimator {
    /// `1 / K` in 1/ns.
    inv_k_ns: f64,
    rate_bps: f64,
    last: Option<Nanos>,
    /// Bytes that arrived at the instant `last` and are not yet counted.
    pending_bytes: u64,
}

impl RateEstimator {
    /// A new estimator with averaging constant `k` (must be > 0).
    pub fn new(k: Nanos) -> Self {
        assert!(k.0 > 0, "averaging constant K must be positive");
        RateEstimator {
            inv_k_ns: 1.0 / k.0 as f64,
            rate_bps: 0.0,
            last: None,
            pending_bytes: 0,
        }
    }

    /// Accounts for a packet of `bytes` arriving at `now`; returns the new estimate (bits/s).
    /// `now` must not go backwards.
    #[inline]
    pub fn update(&mut self, now: Nanos, bytes: u32) -> f64 {
        let Some(last) = self.last else {
            // First packet: nothing to divide by yet; it counts in the next interval.
            self.last = Some(now);
            self.pending_bytes = bytes as u64;
            return self.rate_bps;
        };
        let t_ns = now.saturating_sub(last).0;
        if t_ns == 0 {
            self.pending_bytes += bytes as u64;
            return self.rate_bps;
        }
        let t = t_ns as f64;
        let decay = (-t * self.inv_k_ns).exp(); // e^(-T/K)
        let bits = ((bytes as u64 + self.pending_bytes) * 8) as f64;
        // Eq. (3); l/T in bits per ns, scaled to bits/s.
        self.rate_bps = (1.0 - decay) * (bits / t * 1e9) + decay * self.rate_bps;
        if self.rate_bps < MIN_RATE_BPS {
            // A rate decayed this far is zero; left alone it would sink into subnormal
            // floats, whose arithmetic costs tens of nanoseconds per operation.
            self.rate_bps = 0.0;
        }
        self.last = Some(now);
        self.pending_bytes = 0;
        self.rate_bps
    }

    /// The current estimate, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// Feeds a stream of mean rate `rate_bps` for `secs` and returns the final estimate.
    fn feed(rate_bps: f64, secs: f64, random_sizes: bool, jitter: bool, seed: u64) -> f64 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut est = RateEstimator::new(Nanos::from_millis(100));
        let mut now = 0.0f64;
        let mut last = 0.0;
        while now < secs {
            let size: u32 = if random_sizes {
                rng.random_range(40..=1500)
            } else {
                1000
            };
            // Constant byte rate: a packet arrives once its own bytes have come in at
            // `rate` since the previous one, optionally with the gap uniform on
            // [0.5, 1.5] x that.
            let gap = size as f64 * 8.0 / rate_bps;
            now += if jitter {
                gap * rng.random_range(0.5..1.5)
            } else {
                gap
            };
            est.update(Nanos::from_secs_f64(now), size);
            last = est.rate_bps();
        }
        last
    }

    #[test]
    fn converges_to_constant_rate_with_fixed_sizes() {
        for rate in [64e3, 1e6, 10e6, 1e9] {
            let est = feed(rate, 2.0, false, false, 1);
            assert!(
                (est / rate - 1.0).abs() < 0.01,
                "rate {rate}: estimate {est}"
            );
        }
    }

    #[test]
    fn converges_to_constant_rate_with_random_sizes() {
        // Sizes uniform on 40..1500 bytes but the byte rate held constant: Eq. (3) is exact
        // for any spacing of a constant-rate stream, unlike a fixed-weight EWMA.
        for rate in [1e6, 10e6] {
            let est = feed(rate, 2.0, true, false, 2);
            assert!(
                (est / rate - 1.0).abs() < 0.01,
                "rate {rate}: estimate {est}"
            );
        }
    }

    #[test]
    fn jittered_stream_averages_near_rate() {
        // Uniform [0.5, 1.5] inter-arrivals: the estimate fluctuates around the rate.
        let mut total = 0.0;
        for seed in 0..20 {
            total += feed(1e6, 1.0, false, true, seed);
        }
        let mean = total / 20.0;
        assert!((mean / 1e6 - 1.0).abs() < 0.05, "mean estimate {mean}");
    }

    #[test]
    fn decayed_rate_flushes_to_zero_not_subnormal() {
        let mut est = RateEstimator::new(Nanos::from_millis(100));
        est.update(Nanos(0), 1000);
        est.update(Nanos::from_millis(1), 1000);
        // Zero-byte updates for 1000 s: e^-10000 underflows; the estimate must be exactly 0.
        for i in 2..100_000u64 {
            est.update(Nanos::from_millis(i * 10), 0);
        }
        assert_eq!(est.rate_bps(), 0.0);
    }

    #[test]
    fn same_instant_arrivals_are_coalesced() {
        let mut est = RateEstimator::new(Nanos::from_millis(100));
        est.update(Nanos(0), 1000);
        // Two packets at 1 ms and one at 2 ms; the burst counts once T > 0.
        est.update(Nanos::from_millis(1), 1000);
        let r = est.update(Nanos::from_millis(1), 1000);
        assert!(r.is_finite());
        let before = est.rate_bps();
        let after = est.update(Nanos::from_millis(2), 1000);
        // l/T = 2000 bytes in 1 ms = 16 Mbps enters with weight 1 - e^-0.01.
        let d = (-0.01f64).exp();
        let expected = (1.0 - d) * 16e6 + d * before;
        assert!((after - expected).abs() < 1e-6 * expected);
    }
}
