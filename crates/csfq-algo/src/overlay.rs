//! Edge-to-edge overlay loops (Harrison, Kalyanaraman and Ramakrishnan, "Overlay Bandwidth
//! Services: Basic Framework and an Edge-to-Edge Closed-Loop Building Block"; SPEC §5).
//!
//! Interior routers stay plain FIFO. Each ingress–egress pair runs a closed loop on its
//! aggregate:
//! - [`Ingress`]: a token bucket at rate `lambda` (burst one packet, [`TokenBucket`]), a
//!   [`Control`] message every `tau` carrying what it has sent, and the AIMD-ER controller
//!   (Eqs. 6 and 7): `lambda += alpha` while uncongested, `lambda = min(lambda, beta * mu)`
//!   during a congestion epoch, entered when the accumulation exceeds `H_thresh` and left
//!   when it falls below `L_thresh` (Section 6). Residual accumulation at the end of an
//!   epoch goes into `a_global` and is drained by the hold-down window `w_hold <= W_max`
//!   per interval (Section 6.1). Services (Section 7.4) change only the decrease.
//! - [`Egress`]: fixed measurement intervals `T` synchronized to the first control message;
//!   the output rate `mu(k)` over interval `k`, and the accumulation `a(k)` (Eq. 3), sent
//!   back as [`Feedback`].
//!
//! **The accumulation, exactly.** Eq. (3) sums `(lambda(k) - mu(k)) tau` from the
//! synchronization point: bytes sent by the ingress before control `k` minus bytes received
//! by the egress before the end of interval `k`. On a FIFO path a control message arrives
//! after every byte sent before it (or that byte was lost), so the bytes the egress has
//! received when control `k` arrives are exactly those sent before it, less losses.
//! [`Egress`] therefore computes `a(k) = R(control k arrives) - R(interval k ends)`: equal
//! to Eq. (3) when nothing is lost, and still the loop's backlog when packets are lost
//! inside the network (which the paper sets aside: losses would otherwise count as
//! accumulation forever). Lost bytes are reported from the count each control carries.
//!
//! **Choices the paper leaves open** (its pseudo-code was left out for space):
//! - Synchronization (the "test phase", Section 6.1): whenever `a(k)` is negative the
//!   egress resets it to zero and re-synchronizes its intervals to control `k`. A negative
//!   accumulation means control `k` saw less queueing than the reference, so the reference
//!   only moves toward the base propagation delay. The `a_temp` / `I - C` procedure for
//!   changes of the system delay is not built: routes and propagation delays do not change
//!   in our networks.
//! - The increase follows the measured input rate (the paper's answer to use-it-or-lose-it):
//!   `lambda = min(lambda, lambda_measured + alpha) + alpha`.
//! - `lambda` stays within `[min_rate, max_rate]` (one packet per `tau`; the first link's
//!   rate), and a quasi-leased line never goes below its rate `A`.
//! - A packet leaves the shaper when the bucket holds one packet's worth (`packet_bytes`)
//!   of tokens and takes its own size from it: the paper's equal-sized packets exactly.

use std::collections::VecDeque;

use crate::time::Nanos;

/// What a loop sells (Section 7.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Service {
    /// Best effort: decrease to `min(lambda, beta * mu)`.
    BestEffort,
    /// Assured rate `A`: decrease to `min(A + beta (mu - A), gamma mu, lambda)`,
    /// `beta < gamma < 1`. May be over-subscribed (it then becomes a relative priority).
    Assured {
        /// `A`, bits/s.
        rate_bps: f64,
        /// `gamma`.
        gamma: f64,
        /// Back off the ingress departure rate `lambda` instead of the egress rate `mu`:
        /// `min(A + beta (lambda - A), gamma lambda)`. Section 7.4's prose ("backing off
        /// the portion of the ingress departure rate that exceeds the assurance"); its
        /// formula has `mu`, the default.
        on_ingress_rate: bool,
    },
    /// Quasi-leased line: starts at `A` and decreases to `max(A, A + beta (mu - A))`.
    /// Needs admission control ([`admit_leased`]): over-subscribed it is unstable.
    QuasiLeased {
        /// `A`, bits/s.
        rate_bps: f64,
    },
}

/// A loop's parameters. Defaults are the paper's (Section 7): 1000-byte packets,
/// `beta = 0.95`, `alpha = 1` packet per `tau`, `H_thresh = 2`, `L_thresh = 1.5` and
/// `W_max = 0.2` packets, `T = tau`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopParams {
    /// `sigma`: the packet size thresholds are counted in, and the bucket's depth, bytes.
    pub packet_bytes: u32,
    /// `tau`: the ingress's control interval.
    pub tau: Nanos,
    /// `T`: the egress's measurement interval.
    pub interval: Nanos,
    /// `alpha`: the rate increase per update, bits/s.
    pub alpha_bps: f64,
    /// `beta`: the decrease factor, in (0, 1).
    pub beta: f64,
    /// `H_thresh`: an epoch begins above this accumulation, packets.
    pub h_thresh_pkts: f64,
    /// `L_thresh`: an epoch ends below this accumulation, packets.
    pub l_thresh_pkts: f64,
    /// `W_max`: the most residual accumulation drained per interval, packets.
    pub w_max_pkts: f64,
    /// The rate the loop starts at, bits/s (a quasi-leased line starts at its `A`).
    pub initial_rate_bps: f64,
    /// The lowest rate, bits/s.
    pub min_rate_bps: f64,
    /// The highest rate (the first link's), bits/s.
    pub max_rate_bps: f64,
    /// The service.
    pub service: Service,
}

impl LoopParams {
    /// The paper's defaults for a loop with control interval `tau` whose first link runs at
    /// `max_rate_bps`: `alpha` one packet per `tau`, starting at `alpha`.
    pub fn new(tau: Nanos, max_rate_bps: f64) -> Self {
        let packet_bytes = 1000;
        let per_tau = packet_bytes as f64 * 8.0 / tau.as_secs_f64().max(1e-9);
        LoopParams {
            packet_bytes,
            tau,
            interval: tau,
            alpha_bps: per_tau,
            beta: 0.95,
            h_thresh_pkts: 2.0,
            l_thresh_pkts: 1.5,
            w_max_pkts: 0.2,
            initial_rate_bps: per_tau.min(max_rate_bps),
            min_rate_bps: per_tau.min(max_rate_bps),
            max_rate_bps,
            service: Service::BestEffort,
        }
    }
}

/// Whether a quasi-leased line of `rate_bps` fits on a link of `capacity_bps` that already
/// carries lines of `leased_bps` in all: the sum must stay within the capacity.
pub fn admit_leased(capacity_bps: f64, leased_bps: f64, rate_bps: f64) -> bool {
    leased_bps + rate_bps <= capacity_bps
}

/// A token bucket of depth `burst_bytes` filling at `rate_bps`. Tokens may go negative
/// (a packet larger than the depth borrows), so the long-run rate is exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    rate_bps: f64,
    burst_bytes: f64,
    tokens: f64,
    last: Nanos,
}

impl TokenBucket {
    /// A full bucket at time `now`.
    pub fn new(rate_bps: f64, burst_bytes: u32, now: Nanos) -> Self {
        TokenBucket {
            rate_bps,
            burst_bytes: burst_bytes as f64,
            tokens: burst_bytes as f64,
            last: now,
        }
    }

    fn refill(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.last).as_secs_f64();
        self.tokens = (self.tokens + dt * self.rate_bps / 8.0).min(self.burst_bytes);
        self.last = self.last.max(now);
    }

    /// The fill rate, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Changes the fill rate from `now` on (tokens earned so far are kept).
    pub fn set_rate(&mut self, rate_bps: f64, now: Nanos) {
        self.refill(now);
        self.rate_bps = rate_bps;
    }

    /// When the bucket next holds a full packet (`burst_bytes`): now, or later.
    pub fn ready_at(&mut self, now: Nanos) -> Nanos {
        self.refill(now);
        let short = self.burst_bytes - self.tokens;
        if short <= 1e-9 {
            now
        } else {
            now + Nanos((short * 8e9 / self.rate_bps).ceil() as u64)
        }
    }

    /// A packet of `bytes` leaves at `now`.
    pub fn take(&mut self, bytes: u32, now: Nanos) {
        self.refill(now);
        self.tokens -= bytes as f64;
    }
}

/// Ingress to egress, every `tau`, in band: what the ingress has sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Control {
    /// Its number, from 0.
    pub k: u64,
    /// Bytes the ingress had sent into the network before this message.
    pub sent_bytes: u64,
    /// The ingress's measured input rate over the interval just ended, bits/s.
    pub lambda_bps: f64,
}

/// Egress to ingress: the measurement of interval `k`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// The control message (and interval) it answers.
    pub k: u64,
    /// `a(k)`, bytes (never negative: a negative one re-synchronizes to zero).
    pub accumulation_bytes: f64,
    /// `mu(k)`: bytes received over interval `k` / `T`, bits/s.
    pub mu_bps: f64,
}

/// What an ingress has done.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IngressStats {
    /// Congestion epochs entered.
    pub epochs: u64,
    /// Feedback messages applied.
    pub feedbacks: u64,
    /// Residual accumulation captured at the end of epochs, bytes.
    pub residual_bytes: f64,
}

/// The ingress: shaper rate, control messages and the AIMD-ER controller.
#[derive(Debug, Clone)]
pub struct Ingress {
    p: LoopParams,
    bucket: TokenBucket,
    k: u64,
    sent_bytes: u64,
    sent_at_tick: u64,
    last_tick: Nanos,
    measured_bps: f64,
    epoch: bool,
    a_global: f64,
    stats: IngressStats,
}

impl Ingress {
    /// A loop whose ingress starts at `now` (a quasi-leased line at its rate `A`).
    pub fn new(p: LoopParams, now: Nanos) -> Self {
        let start = match p.service {
            Service::QuasiLeased { rate_bps } => rate_bps,
            _ => p.initial_rate_bps,
        };
        Ingress {
            bucket: TokenBucket::new(start, p.packet_bytes, now),
            p,
            k: 0,
            sent_bytes: 0,
            sent_at_tick: 0,
            last_tick: now,
            measured_bps: 0.0,
            epoch: false,
            a_global: 0.0,
            stats: IngressStats::default(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &LoopParams {
        &self.p
    }

    /// `lambda`: the shaper's rate, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.bucket.rate_bps()
    }

    /// Whether a congestion epoch is under way.
    pub fn in_epoch(&self) -> bool {
        self.epoch
    }

    /// Bytes sent into the network so far.
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes
    }

    /// What it has done.
    pub fn stats(&self) -> IngressStats {
        self.stats
    }

    /// When the shaper may next release a packet.
    pub fn ready_at(&mut self, now: Nanos) -> Nanos {
        self.bucket.ready_at(now)
    }

    /// The shaper releases a data packet of `bytes` at `now`.
    pub fn on_send(&mut self, bytes: u32, now: Nanos) {
        self.bucket.take(bytes, now);
        self.sent_bytes += bytes as u64;
    }

    /// Every `tau`: close the interval (measure the input rate) and emit its control
    /// message, to be sent in band right away.
    pub fn tick(&mut self, now: Nanos) -> Control {
        let dt = now.saturating_sub(self.last_tick).as_secs_f64();
        if dt > 0.0 {
            self.measured_bps = (self.sent_bytes - self.sent_at_tick) as f64 * 8.0 / dt;
        }
        self.last_tick = now;
        self.sent_at_tick = self.sent_bytes;
        let c = Control {
            k: self.k,
            sent_bytes: self.sent_bytes,
            lambda_bps: self.measured_bps,
        };
        self.k += 1;
        c
    }

    /// AIMD-ER on the egress's measurement of one interval; returns the new rate.
    pub fn on_feedback(&mut self, fb: &Feedback, now: Nanos) -> f64 {
        let p = &self.p;
        let pkt = p.packet_bytes as f64;
        let a = fb.accumulation_bytes;
        self.stats.feedbacks += 1;
        if self.epoch && a < p.l_thresh_pkts * pkt {
            // End of epoch: the residual is captured and drained by hold-down.
            self.epoch = false;
            self.a_global += a.max(0.0);
            self.stats.residual_bytes += a.max(0.0);
        } else if !self.epoch && a > p.h_thresh_pkts * pkt {
            self.epoch = true;
            self.stats.epochs += 1;
        }
        let lambda = self.bucket.rate_bps();
        let mu = fb.mu_bps;
        let mut r = if self.epoch {
            match p.service {
                Service::BestEffort => lambda.min(p.beta * mu),
                Service::Assured {
                    rate_bps,
                    gamma,
                    on_ingress_rate,
                } => {
                    let base = if on_ingress_rate { lambda } else { mu };
                    (rate_bps + p.beta * (base - rate_bps))
                        .min(gamma * base)
                        .min(lambda)
                }
                Service::QuasiLeased { rate_bps } => {
                    rate_bps.max(rate_bps + p.beta * (mu - rate_bps))
                }
            }
        } else {
            lambda.min(self.measured_bps + p.alpha_bps) + p.alpha_bps
        };
        if self.a_global > 0.0 {
            let w_hold = self.a_global.min(p.w_max_pkts * pkt);
            self.a_global -= w_hold;
            r -= w_hold * 8.0 / p.interval.as_secs_f64();
        }
        let floor = match p.service {
            Service::QuasiLeased { rate_bps } => rate_bps.max(p.min_rate_bps),
            _ => p.min_rate_bps,
        };
        let r = r.clamp(floor, p.max_rate_bps.max(floor));
        self.bucket.set_rate(r, now);
        r
    }
}

/// What an egress has measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EgressStats {
    /// Bytes received.
    pub received_bytes: u64,
    /// Bytes lost inside the network, learned from control messages.
    pub lost_bytes: u64,
    /// Control messages received.
    pub controls: u64,
    /// Re-synchronizations (negative accumulations reset to zero).
    pub resyncs: u64,
    /// The latest `a(k)`, bytes.
    pub accumulation_bytes: f64,
    /// The latest `mu(k)`, bits/s.
    pub mu_bps: f64,
}

/// At most this many interval ends or early controls are kept waiting for their partner.
const PENDING: usize = 4096;

/// The egress: fixed intervals, output rate and accumulation.
#[derive(Debug, Clone)]
pub struct Egress {
    interval: Nanos,
    /// (control number of the synchronization point, when interval 1 of it ends).
    sync: Option<(u64, Nanos)>,
    /// Intervals ended so far since the synchronization point.
    ended: u64,
    /// Bytes received at the synchronization point and at each interval end not yet used.
    at_end: VecDeque<(u64, u64)>,
    /// Controls that arrived before their interval ended: (interval, bytes received then).
    early: VecDeque<(u64, u64)>,
    received_at_sync: u64,
    stats: EgressStats,
}

impl Egress {
    /// An egress measuring over intervals of `interval`.
    pub fn new(interval: Nanos) -> Self {
        Egress {
            interval,
            sync: None,
            ended: 0,
            at_end: VecDeque::new(),
            early: VecDeque::new(),
            received_at_sync: 0,
            stats: EgressStats::default(),
        }
    }

    /// What it has measured.
    pub fn stats(&self) -> EgressStats {
        self.stats
    }

    /// When the current interval ends (none before the first control message).
    pub fn next_interval_end(&self) -> Option<Nanos> {
        self.sync
            .map(|(_, first)| first + Nanos(self.interval.0 * self.ended))
    }

    /// A data packet of the loop arrives.
    pub fn on_data(&mut self, bytes: u32) {
        self.stats.received_bytes += bytes as u64;
    }

    fn resync(&mut self, k: u64, now: Nanos) {
        self.sync = Some((k, now + self.interval));
        self.ended = 0;
        self.at_end.clear();
        self.early.clear();
        self.received_at_sync = self.stats.received_bytes;
    }

    /// Feedback for interval `j` from the bytes received when its control arrived.
    fn measure(&mut self, j: u64, at_control: u64, now: Nanos) -> Option<Feedback> {
        let (k0, _) = self.sync?;
        // Interval j's end and the end before it (the synchronization point for j = 1).
        while self.at_end.front().is_some_and(|&(i, _)| i + 1 < j) {
            self.at_end.pop_front();
        }
        let end = self.at_end.iter().find(|&&(i, _)| i == j)?.1;
        let before = if j == 1 {
            self.received_at_sync
        } else {
            self.at_end.iter().find(|&&(i, _)| i + 1 == j)?.1
        };
        let mu = (end - before) as f64 * 8.0 / self.interval.as_secs_f64();
        let a = at_control as f64 - end as f64;
        self.stats.mu_bps = mu;
        let k = k0 + j;
        if a < 0.0 {
            self.stats.resyncs += 1;
            self.resync(k, now);
            self.stats.accumulation_bytes = 0.0;
        } else {
            self.stats.accumulation_bytes = a;
        }
        Some(Feedback {
            k,
            accumulation_bytes: self.stats.accumulation_bytes,
            mu_bps: mu,
        })
    }

    /// A control message arrives; returns feedback if its interval has already ended.
    pub fn on_control(&mut self, c: &Control, now: Nanos) -> Option<Feedback> {
        self.stats.controls += 1;
        let r = self.stats.received_bytes;
        // Everything sent before `c` has arrived or is lost (FIFO path).
        let lost = c.sent_bytes.saturating_sub(r + self.stats.lost_bytes);
        self.stats.lost_bytes += lost;
        let Some((k0, _)) = self.sync else {
            self.resync(c.k, now);
            return None;
        };
        if c.k <= k0 {
            return None; // older than the synchronization point
        }
        let j = c.k - k0;
        if j <= self.ended {
            return self.measure(j, r, now);
        }
        if self.early.len() == PENDING {
            self.early.pop_front();
        }
        self.early.push_back((j, r));
        None
    }

    /// The current interval ends (call at [`Egress::next_interval_end`]); returns feedback
    /// if its control message has already arrived.
    pub fn on_interval_end(&mut self, now: Nanos) -> Option<Feedback> {
        self.sync?;
        self.ended += 1;
        let j = self.ended;
        if self.at_end.len() == PENDING {
            self.at_end.pop_front();
        }
        self.at_end.push_back((j, self.stats.received_bytes));
        while self.early.front().is_some_and(|&(i, _)| i < j) {
            self.early.pop_front();
        }
        if let Some(&(i, r)) = self.early.front() {
            if i == j {
                self.early.pop_front();
                return self.measure(j, r, now);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: fn(u64) -> Nanos = Nanos::from_millis;

    fn params() -> LoopParams {
        // tau = 10 ms: alpha = 1000 B / 10 ms = 0.8 Mbps.
        LoopParams {
            max_rate_bps: 100e6,
            ..LoopParams::new(MS(10), 100e6)
        }
    }

    fn fb(a_pkts: f64, mu_bps: f64) -> Feedback {
        Feedback {
            k: 0,
            accumulation_bytes: a_pkts * 1000.0,
            mu_bps,
        }
    }

    /// Keeps the ingress's measured input rate at its shaper rate (a backlogged loop).
    fn backlogged(i: &mut Ingress, now: Nanos) {
        let bytes = (i.rate_bps() * 0.010 / 8.0) as u32;
        i.on_send(bytes, now);
        i.tick(now);
    }

    #[test]
    fn token_bucket_paces_at_its_rate_with_one_packet_of_burst() {
        let mut b = TokenBucket::new(8e6, 1000, Nanos::ZERO); // 1 ms per 1000 B
        assert_eq!(b.ready_at(Nanos::ZERO), Nanos::ZERO);
        b.take(1000, Nanos::ZERO);
        assert_eq!(b.ready_at(Nanos::ZERO), MS(1));
        // Idle for 10 ms: still only one packet of credit.
        b.take(1000, MS(1));
        assert_eq!(b.ready_at(MS(20)), MS(20));
        b.take(1000, MS(20));
        assert_eq!(b.ready_at(MS(20)), MS(21));
        // Halving the rate halfway through the wait: 0.5 ms earned, 0.5 KB at 4 Mbps = 1 ms.
        b.set_rate(4e6, Nanos(20_500_000));
        assert_eq!(b.ready_at(Nanos(20_500_000)), Nanos(21_500_000));
    }

    /// Eqs. (6) and (7) through one congestion epoch, by hand: increase by alpha, enter at
    /// a > 2 packets and cut to beta * mu, latch to the minimum, leave below 1.5 packets,
    /// and drain the residual 1 packet with hold-down at 0.2 packets per T.
    #[test]
    fn aimd_er_through_an_epoch_and_hold_down() {
        let p = LoopParams {
            initial_rate_bps: 10e6,
            ..params()
        };
        let mut i = Ingress::new(p, Nanos::ZERO);
        backlogged(&mut i, MS(10));
        // Uncongested: +alpha = 0.8 Mbps.
        assert!((i.on_feedback(&fb(0.0, 10e6), MS(10)) - 10.8e6).abs() < 1.0);
        backlogged(&mut i, MS(20));
        // 2 packets is not above H: still uncongested.
        assert!((i.on_feedback(&fb(2.0, 10e6), MS(20)) - 11.6e6).abs() < 1.0);
        assert!(!i.in_epoch());
        backlogged(&mut i, MS(30));
        // 2.5 packets: epoch; lambda = min(11.6, 0.95 * 10) = 9.5 Mbps.
        assert!((i.on_feedback(&fb(2.5, 10e6), MS(30)) - 9.5e6).abs() < 1.0);
        assert!(i.in_epoch());
        backlogged(&mut i, MS(40));
        // Still in the epoch (1.6 >= L): latches to the minimum: min(9.5, 0.95 * 12) = 9.5.
        assert!((i.on_feedback(&fb(1.6, 12e6), MS(40)) - 9.5e6).abs() < 1.0);
        backlogged(&mut i, MS(50));
        // 1.0 < L: the epoch ends with 1 packet of residual; increase by alpha, less
        // w_hold / T = 0.2 * 1000 B / 10 ms = 0.16 Mbps.
        let r = i.on_feedback(&fb(1.0, 9.5e6), MS(50));
        assert!(!i.in_epoch());
        assert!((r - (9.5e6 + 0.8e6 - 0.16e6)).abs() < 1.0, "{r}");
        // Four more intervals of hold-down drain the remaining 0.8 packets, then none.
        let mut last = r;
        for step in 0..5 {
            backlogged(&mut i, MS(60 + 10 * step));
            let r = i.on_feedback(&fb(0.0, 9.5e6), MS(60 + 10 * step));
            let hold = if step < 4 { 0.16e6 } else { 0.0 };
            assert!((r - (last + 0.8e6 - hold)).abs() < 10.0, "step {step}: {r}");
            last = r;
        }
        assert_eq!(i.stats().epochs, 1);
        assert!((i.stats().residual_bytes - 1000.0).abs() < 1e-9);
    }

    /// An idle loop's rate follows its measured input rate (use-it-or-lose-it).
    #[test]
    fn increase_follows_the_measured_input_rate() {
        let p = LoopParams {
            initial_rate_bps: 50e6,
            ..params()
        };
        let mut i = Ingress::new(p, Nanos::ZERO);
        i.on_send(2500, MS(5)); // 2 Mbps over the 10 ms interval
        i.tick(MS(10));
        let r = i.on_feedback(&fb(0.0, 2e6), MS(12));
        assert!((r - (2e6 + 0.8e6 + 0.8e6)).abs() < 1.0, "{r}");
    }

    /// Section 7.4 by hand: the assured and quasi-leased decreases.
    #[test]
    fn services_change_only_the_decrease() {
        let assured = LoopParams {
            initial_rate_bps: 8e6,
            service: Service::Assured {
                rate_bps: 4e6,
                gamma: 0.975,
                on_ingress_rate: false,
            },
            ..params()
        };
        let mut i = Ingress::new(assured, Nanos::ZERO);
        backlogged(&mut i, MS(10));
        // min(4 + 0.95 * (6 - 4), 0.975 * 6, 8) = min(5.9, 5.85, 8) = 5.85 Mbps.
        let r = i.on_feedback(&fb(3.0, 6e6), MS(10));
        assert!((r - 5.85e6).abs() < 1.0, "{r}");
        backlogged(&mut i, MS(20));
        // mu far above A: min(4 + 0.95 * 36, 0.975 * 40, 5.85) = 5.85 (latched).
        assert!((i.on_feedback(&fb(3.0, 40e6), MS(20)) - 5.85e6).abs() < 1.0);
        // The prose's reading backs off lambda (8 Mbps), whatever mu: min(4 + 0.95 * 4,
        // 0.975 * 8, 8) = min(7.8, 7.8, 8) = 7.8 Mbps.
        let mut i = Ingress::new(
            LoopParams {
                service: Service::Assured {
                    rate_bps: 4e6,
                    gamma: 0.975,
                    on_ingress_rate: true,
                },
                ..assured
            },
            Nanos::ZERO,
        );
        backlogged(&mut i, MS(10));
        let r = i.on_feedback(&fb(3.0, 6e6), MS(10));
        assert!((r - 7.8e6).abs() < 1.0, "{r}");
        let qll = LoopParams {
            service: Service::QuasiLeased { rate_bps: 50e6 },
            ..params()
        };
        let mut i = Ingress::new(qll, Nanos::ZERO);
        assert_eq!(i.rate_bps(), 50e6);
        backlogged(&mut i, MS(10));
        // max(50, 50 + 0.95 * (30 - 50)) = 50: never below A.
        assert!((i.on_feedback(&fb(5.0, 30e6), MS(10)) - 50e6).abs() < 1.0);
        backlogged(&mut i, MS(20));
        // mu = 70: 50 + 0.95 * 20 = 69 Mbps.
        assert!((i.on_feedback(&fb(5.0, 70e6), MS(20)) - 69e6).abs() < 1.0);
        assert!(admit_leased(100e6, 50e6, 50e6));
        assert!(!admit_leased(100e6, 50e6, 50.1e6));
    }

    /// One control per interval on a path of constant delay: the accumulation is zero; a
    /// queue building after synchronization shows as exactly its backlog.
    #[test]
    fn egress_measures_backlog_by_hand() {
        let mut e = Egress::new(MS(10));
        let c = |k: u64, sent: u64| Control {
            k,
            sent_bytes: sent,
            lambda_bps: 0.0,
        };
        // Control 0 arrives at 5 ms (the base delay): synchronize.
        assert_eq!(e.on_control(&c(0, 0), MS(5)), None);
        assert_eq!(e.next_interval_end(), Some(MS(15)));
        // 10 packets sent in [0, 10 ms) all arrive in [5, 15 ms).
        for _ in 0..10 {
            e.on_data(1000);
        }
        // Control 1 arrives at 15 ms, just before the interval ends.
        assert_eq!(e.on_control(&c(1, 10_000), MS(15)), None);
        let f = e.on_interval_end(MS(15)).expect("control 1 was early");
        assert_eq!((f.k, f.accumulation_bytes), (1, 0.0));
        assert!((f.mu_bps - 8e6).abs() < 1e-6);
        // Interval 2: 10 more sent, but only 7 arrive before it ends: 3 are queued.
        for _ in 0..7 {
            e.on_data(1000);
        }
        assert_eq!(e.on_interval_end(MS(25)), None);
        for _ in 0..3 {
            e.on_data(1000);
        }
        let f = e
            .on_control(&c(2, 20_000), MS(28))
            .expect("interval 2 ended");
        assert_eq!((f.k, f.accumulation_bytes), (2, 3000.0));
        assert!((f.mu_bps - 5.6e6).abs() < 1e-6);
        // Two packets are lost inside the network in interval 3; the control reveals them,
        // and they are not accumulation.
        for _ in 0..8 {
            e.on_data(1000);
        }
        let f = e.on_interval_end(MS(35));
        assert_eq!(f, None);
        let f = e.on_control(&c(3, 30_000), MS(35)).unwrap();
        assert_eq!(f.accumulation_bytes, 0.0);
        assert_eq!(e.stats().lost_bytes, 2000);
    }

    proptest! {
        /// The property behind Eq. (2): with every delay at least the delay control 0 saw,
        /// the accumulation reported for interval k is the loop's backlog: bytes sent before
        /// control k (and not lost) that had not reached the egress when interval k ended.
        /// Packets and controls cross one FIFO path (no overtaking) with random queueing
        /// and random losses; every lost byte is learned from the controls.
        #[test]
        fn accumulation_is_the_backlog_in_flight(
            pkts in proptest::collection::vec((1u64..4_000, 0u64..30_000, 0u8..20), 50..400),
        ) {
            let tau = 10_000u64;
            let base = 7_000u64;
            // Items in send order: (sent, arrival or None if lost, Some(k) for control k).
            let mut items: Vec<(u64, Option<u64>, Option<u64>)> = Vec::new();
            let mut t = 0u64;
            let mut next_ctrl = 0u64;
            let mut last = 0u64;
            // Data arrivals are odd, interval ends even: no data arrives exactly at an end.
            for &(gap, queueing, keep) in &pkts {
                let (gap, queueing) = (2 * gap, 2 * queueing + 1);
                t += gap;
                while next_ctrl * tau <= t {
                    let leave = next_ctrl * tau;
                    last = last.max(leave + base);
                    items.push((leave, Some(last), Some(next_ctrl)));
                    next_ctrl += 1;
                }
                last = last.max(t + base + queueing);
                items.push((t, (keep != 0).then_some(last), None));
            }
            let mut events: Vec<(u64, u8, usize)> = items
                .iter()
                .enumerate()
                .filter_map(|(i, it)| it.1.map(|a| (a, it.2.is_some() as u8, i)))
                .collect();
            // In arrival order; at equal times, in FIFO (send) order.
            events.sort_by_key(|&(at, _, i)| (at, i));
            let mut e = Egress::new(Nanos(tau));
            let mut reported = std::collections::BTreeMap::new();
            for (at, _, i) in events {
                while let Some(end) = e.next_interval_end() {
                    if end.0 > at {
                        break;
                    }
                    if let Some(f) = e.on_interval_end(end) {
                        reported.insert(f.k, f.accumulation_bytes);
                    }
                }
                let (sent, _, ctrl) = items[i];
                match ctrl {
                    None => e.on_data(1000),
                    Some(k) => {
                        let bytes = items.iter().filter(|x| x.2.is_none() && x.0 < sent).count() as u64 * 1000;
                        let c = Control { k, sent_bytes: bytes, lambda_bps: 0.0 };
                        if let Some(f) = e.on_control(&c, Nanos(at)) {
                            reported.insert(f.k, f.accumulation_bytes);
                        }
                    }
                }
            }
            prop_assert_eq!(e.stats().resyncs, 0);
            prop_assert!(!reported.is_empty());
            let e0 = base;
            for (&k, &a) in &reported {
                let end = e0 + k * tau;
                let backlog = items
                    .iter()
                    .filter(|x| x.2.is_none() && x.0 < k * tau)
                    .filter(|x| x.1.is_some_and(|a| a > end))
                    .count() as f64 * 1000.0;
                prop_assert_eq!(a, backlog, "k = {}", k);
            }
            let last_ctrl = (next_ctrl - 1) * tau;
            let lost = items
                .iter()
                .filter(|x| x.2.is_none() && x.0 < last_ctrl && x.1.is_none())
                .count() as u64 * 1000;
            prop_assert_eq!(e.stats().lost_bytes, lost);
        }
    }
}
