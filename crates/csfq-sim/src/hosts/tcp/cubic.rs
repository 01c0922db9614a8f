//! CUBIC's congestion avoidance (RFC 9438), Linux's default: what a TCP sender that
//! selects it runs in place of NewReno's `1/cwnd` per ACK and halving. Slow start, fast
//! retransmit, recovery (NewReno's or SACK's) and the timer are the sender's own.
//!
//! Windows in segments, time in seconds, as the RFC writes them:
//! - `W_cubic(t) = C (t - K)^3 + W_max` (Eq. 1), `K = cbrt((W_max - cwnd_epoch) / C)`
//!   (Eq. 2), `t` from the start of the congestion-avoidance epoch;
//! - each ACK moves `cwnd` by `(target - cwnd) / cwnd` per segment it acknowledges, the
//!   target `W_cubic(t + RTT)` clamped to `[cwnd, 1.5 cwnd]` (Section 4.2);
//! - while `W_cubic(t)` is below the Reno-friendly estimate `W_est`, grown by
//!   `alpha_cubic` segments per window (Eq. 4, `alpha_cubic = 3 (1 - beta) / (1 + beta)`, 1
//!   once `W_est` reaches the window before the reduction), `cwnd = W_est` (Section 4.3);
//! - a congestion event sets `ssthresh = flight_size * beta_cubic` (Section 4.6) and
//!   `W_max` to the window at the event, or with fast convergence (Section 4.7) to
//!   `cwnd (1 + beta) / 2` when the window is below the last `W_max`;
//! - after a timeout the first epoch starts with `K = 0` and `W_max` the window at its
//!   start (Section 4.8).
//!
//! Left out: HyStart++ (slow start is RFC 5681's) and the byte counting of a window not
//! fully used (the senders always have data).

use csfq_algo::Nanos;

/// `C`, segments/s^3 (Section 4.1).
pub const C: f64 = 0.4;
/// `beta_cubic`, the multiplicative decrease (Section 4.6).
pub const BETA: f64 = 0.7;
/// `alpha_cubic` of the Reno-friendly region (Eq. 4): NewReno's average rate for the same
/// loss rate with `beta_cubic` as the decrease.
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// CUBIC's state beside the sender's `cwnd` and `ssthresh`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cubic {
    /// `W_max`: the window at the last congestion event (after fast convergence).
    w_max: f64,
    /// The window just before the last reduction (`cwnd_prior`).
    w_prior: f64,
    /// Start of the current congestion-avoidance epoch; none until its first ACK.
    epoch: Option<Nanos>,
    /// `K`, seconds.
    k_s: f64,
    /// The Reno-friendly estimate `W_est`.
    w_est: f64,
}

impl Cubic {
    /// `W_cubic(t)`, Eq. 1, `t` seconds into the epoch.
    pub fn w_cubic(&self, t_s: f64) -> f64 {
        C * (t_s - self.k_s).powi(3) + self.w_max
    }

    /// `K` of the current epoch, seconds.
    pub fn k_s(&self) -> f64 {
        self.k_s
    }

    /// `W_max`.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// A congestion event (fast retransmit) with window `cwnd` and `flight` segments
    /// outstanding: the new `ssthresh` (at least 2).
    pub fn on_congestion(&mut self, cwnd: f64, flight: f64) -> f64 {
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.w_prior = cwnd;
        self.epoch = None;
        (flight * BETA).max(2.0)
    }

    /// A retransmission timeout with `flight` segments outstanding: the new `ssthresh`.
    /// The next epoch starts from the window it has then (Section 4.8).
    pub fn on_timeout(&mut self, cwnd: f64, flight: f64) -> f64 {
        let ssthresh = self.on_congestion(cwnd, flight);
        self.w_max = 0.0;
        ssthresh
    }

    /// In congestion avoidance, an ACK at `now` acknowledges `acked` new segments; `rtt_s`
    /// is the smoothed round trip. The new window.
    pub fn on_ack(&mut self, cwnd: f64, acked: u32, now: Nanos, rtt_s: f64) -> f64 {
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // Eq. 2; a window already at or above W_max (after a timeout, or grown
                // past it in slow start) starts on the plateau.
                if cwnd < self.w_max {
                    self.k_s = ((self.w_max - cwnd) / C).cbrt();
                } else {
                    self.k_s = 0.0;
                    self.w_max = cwnd;
                }
                self.w_est = cwnd;
                self.epoch = Some(now);
                now
            }
        };
        let t = now.saturating_sub(epoch).as_secs_f64();
        let acked = f64::from(acked);
        let alpha = if self.w_est >= self.w_prior {
            1.0
        } else {
            ALPHA
        };
        self.w_est += alpha * acked / cwnd;
        if self.w_cubic(t) < self.w_est {
            return self.w_est;
        }
        let target = self.w_cubic(t + rtt_s).clamp(cwnd, 1.5 * cwnd);
        cwnd + (target - cwnd) / cwnd * acked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Nanos {
        Nanos::from_secs_f64(s)
    }

    /// Eq. 1 and 2 by hand: W_max = 100 and a reduction to 70 give
    /// K = cbrt(30 / 0.4) = cbrt(75) = 4.2172 s; W_cubic(0) = 70, W_cubic(K) = 100,
    /// W_cubic(K + 1) = 100.4, W_cubic(K + 2) = 103.2.
    #[test]
    fn the_window_function_is_the_rfcs() {
        let mut c = Cubic::default();
        let ssthresh = c.on_congestion(100.0, 100.0);
        assert_eq!(ssthresh, 70.0);
        // The epoch starts at the first ACK in congestion avoidance, from cwnd = ssthresh.
        c.on_ack(70.0, 1, at(10.0), 0.0);
        assert!((c.k_s() - 75f64.cbrt()).abs() < 1e-12);
        assert!((c.k_s() - 4.217_163).abs() < 1e-6);
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k_s()) - 100.0).abs() < 1e-12);
        assert!((c.w_cubic(c.k_s() + 1.0) - 100.4).abs() < 1e-9);
        assert!((c.w_cubic(c.k_s() + 2.0) - 103.2).abs() < 1e-9);
    }

    /// Section 4.2: each segment acknowledged moves cwnd by (target - cwnd) / cwnd, the
    /// target W_cubic(t + RTT) held within [cwnd, 1.5 cwnd]. Far from the epoch's start the
    /// target is capped at 1.5 cwnd: a window of ACKs then adds half a window.
    #[test]
    fn the_concave_and_convex_regions_follow_the_target() {
        let mut c = Cubic::default();
        c.on_congestion(100.0, 100.0);
        let rtt = 0.1;
        // t = 0: W_cubic(0) = 70 is below W_est = 70 + 0.5294 / 70: the Reno-friendly
        // region, cwnd = W_est.
        let w = c.on_ack(70.0, 1, at(0.0), rtt);
        assert!((w - (70.0 + ALPHA / 70.0)).abs() < 1e-12);
        // t = 1 s: W_cubic(1) = 0.4 (1 - 4.2172)^3 + 100 = 86.68, above W_est: the target
        // is W_cubic(1.1) = 0.4 (1.1 - 4.2172)^3 + 100 = 87.884.
        let target = 0.4 * (1.1 - 75f64.cbrt()).powi(3) + 100.0;
        assert!((target - 87.884).abs() < 1e-3);
        let w1 = c.on_ack(w, 1, at(1.0), rtt);
        assert!((w1 - (w + (target - w) / w)).abs() < 1e-12);
        // 20 s in: W_cubic = 0.4 (20.1 - K)^3 + 100, far above 1.5 cwnd.
        let w = c.on_ack(80.0, 2, at(20.0), rtt);
        assert!((w - (80.0 + (120.0 - 80.0) / 80.0 * 2.0)).abs() < 1e-12);
    }

    /// Section 4.3: W_est grows by alpha_cubic = 3 (1 - 0.7) / 1.7 = 0.5294 segments per
    /// window of ACKs, by one once it reaches the window before the reduction; where
    /// W_cubic is below it, cwnd is W_est. A small window on a short round trip: W_max =
    /// 10, cwnd 7, K = cbrt(7.5) = 1.9574 s, so W_cubic barely moves while W_est grows.
    #[test]
    fn the_reno_friendly_region_takes_over_where_cubic_is_slower() {
        assert!((ALPHA - 0.9 / 1.7).abs() < 1e-15);
        let mut c = Cubic::default();
        assert_eq!(c.on_congestion(10.0, 10.0), 7.0);
        // First ACK, t = 0: W_est = 7 + 0.5294 / 7 = 7.07563 > W_cubic(0) = 7.
        let w = c.on_ack(7.0, 1, at(0.0), 0.01);
        assert!((w - (7.0 + ALPHA / 7.0)).abs() < 1e-12);
        // Second, 10 ms on: W_cubic(0.01) = 0.4 (0.01 - 1.9574)^3 + 10 = 7.046.
        assert!(c.w_cubic(0.01) < 7.05);
        let w2 = c.on_ack(w, 1, at(0.01), 0.01);
        assert!((w2 - (w + ALPHA / w)).abs() < 1e-12);
        // On until W_est reaches cwnd_prior = 10; then alpha is 1.
        let (mut w, mut now) = (w2, 0.01);
        while w < 10.0 {
            now += 0.001;
            w = c.on_ack(w, 1, at(now), 0.01);
        }
        assert!(
            now < 0.1 && c.w_cubic(now) < 8.0,
            "still the Reno-friendly region"
        );
        let next = c.on_ack(w, 1, at(now + 0.001), 0.01);
        assert!((next - (w + 1.0 / w)).abs() < 1e-12);
    }

    /// Section 4.7: a second event below the last W_max remembers less (fast
    /// convergence): W_max = cwnd (1 + 0.7) / 2.
    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::default();
        c.on_congestion(100.0, 100.0);
        assert_eq!(c.w_max(), 100.0);
        c.on_congestion(80.0, 80.0);
        assert!((c.w_max() - 68.0).abs() < 1e-12);
        c.on_congestion(90.0, 90.0);
        assert_eq!(c.w_max(), 90.0);
    }

    /// Section 4.8: after a timeout the next epoch starts with K = 0 and W_max the window
    /// at its start, so the window grows from the plateau, not towards an old W_max.
    #[test]
    fn after_a_timeout_the_epoch_starts_on_the_plateau() {
        let mut c = Cubic::default();
        assert_eq!(c.on_timeout(50.0, 40.0), 28.0);
        c.on_ack(28.0, 1, at(3.0), 0.0);
        assert_eq!(c.k_s(), 0.0);
        assert_eq!(c.w_max(), 28.0);
        // One second later W_cubic = 0.4 + 28.
        assert!((c.w_cubic(1.0) - 28.4).abs() < 1e-12);
    }
}
