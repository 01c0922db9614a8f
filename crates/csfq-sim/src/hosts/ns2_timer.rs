//! ns-2's TCP retransmission timer, the one the papers' simulations ran: `rtt_update`,
//! `rtt_timeout` and `rtt_backoff` of `TcpAgent` in ns-2's `tcp.cc` (Jacobson's 1988
//! estimator in fixed point, on a coarse clock).
//!
//! What differs from RFC 6298 (the simulator's default timer):
//! - round trips are counted in ticks of `tcp_tick_` (100 ms in the 1990s' ns-2): a sample
//!   is the number of tick boundaries between sending the timed segment and its ACK, at
//!   least 1, with the sender's clock started at a random phase `boot_time_` in
//!   `[0, tick)`;
//! - one segment per round trip is timed (no timestamps) and none that was retransmitted
//!   (Karn); a timeout or a fast retransmit stops the timing;
//! - `SRTT` and `RTTVAR` are integers with 3 and 2 fraction bits, and
//!   `RTO = (SRTT + 4 RTTVAR)` ticks, truncated;
//! - the back-off multiplies that value (up to 64 times) and is cleared only by the next
//!   timed ACK; past 8 times, `SRTT` is folded into `RTTVAR` and measured afresh;
//! - the timeout is at least `minrto_` and at least two ticks;
//! - as in ns-2 before its `timerfix_` (2001), an ACK restarts the timer with the timeout
//!   in force before that ACK's round trip is sampled (the sender applies this).
//!
//! With RTTs under one tick, the first sample gives `SRTT = 1`, `RTTVAR = 1/2` tick, and an
//! RTO of 3 ticks (300 ms), where RFC 6298 with `G = 100 ms` and a 200 ms minimum gives
//! 200 ms.

use csfq_algo::Nanos;

/// Fraction bits of the smoothed RTT (`T_SRTT_BITS`).
const SRTT_BITS: u32 = 3;
/// Fraction bits of the RTT deviation (`T_RTTVAR_BITS`).
const RTTVAR_BITS: u32 = 2;
/// `rttvar_exp_`: the RTO is `SRTT + 2^2 RTTVAR`.
const RTTVAR_EXP: u32 = 2;
/// The largest back-off multiplier.
const MAX_BACKOFF: u64 = 64;

/// ns-2's retransmission timer state for one sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ns2Timer {
    tick_ns: u64,
    /// `boot_time_`: the sender clock's phase, in `[0, tick)`.
    boot_ns: u64,
    /// `t_srtt_`: smoothed RTT in ticks, times 8; 0 until the first sample.
    srtt: i64,
    /// `t_rttvar_`: RTT deviation in ticks, times 4.
    rttvar: i64,
    /// `t_rtxcur_`: the current timeout before back-off, ns.
    rtxcur_ns: u64,
    /// `t_backoff_`.
    backoff: u64,
    min_rto_ns: u64,
    max_rto_ns: u64,
    /// The segment being timed and when it was sent.
    timed: Option<(u32, Nanos)>,
}

impl Ns2Timer {
    /// A timer with clock tick `tick` (> 0), phase `boot` (taken modulo the tick), first
    /// timeout `initial` (`rtxcur_init_`), and bounds `min_rto` and `max_rto`.
    pub fn new(tick: Nanos, boot: Nanos, initial: Nanos, min_rto: Nanos, max_rto: Nanos) -> Self {
        assert!(tick.0 > 0, "the timer tick must be positive");
        Ns2Timer {
            tick_ns: tick.0,
            boot_ns: boot.0 % tick.0,
            srtt: 0,
            rttvar: 0,
            rtxcur_ns: initial.0,
            backoff: 1,
            min_rto_ns: min_rto.0,
            max_rto_ns: max_rto.0,
            timed: None,
        }
    }

    /// Sets the clock's phase (`boot_time_`), taken modulo the tick.
    pub fn set_phase(&mut self, boot: Nanos) {
        self.boot_ns = boot.0 % self.tick_ns;
    }

    /// Segment `seq` is sent at `now` for the first time: it is timed if none is.
    pub fn on_new_segment(&mut self, seq: u32, now: Nanos) {
        if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
    }

    /// An ACK whose next expected segment is `next` arrives at `now`: if it covers the
    /// timed segment, the round trip is sampled and the back-off cleared.
    pub fn on_new_ack(&mut self, next: u32, now: Nanos) {
        if let Some((seq, sent)) = self.timed {
            if next > seq {
                self.timed = None;
                self.backoff = 1;
                self.update(sent, now);
            }
        }
    }

    /// A retransmission (fast retransmit or timeout): the timing is abandoned (Karn).
    pub fn stop_timing(&mut self) {
        self.timed = None;
    }

    /// The retransmission timer expired: back off (`rtt_backoff`).
    pub fn back_off(&mut self) {
        if self.backoff < MAX_BACKOFF {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            // Backed off this far, the smoothed RTT is folded into the deviation and the
            // next sample starts the estimate again.
            self.rttvar += self.srtt >> SRTT_BITS;
            self.srtt = 0;
        }
    }

    /// The timeout to arm now (`rtt_timeout`).
    pub fn timeout(&self) -> Nanos {
        let t = self
            .rtxcur_ns
            .saturating_mul(self.backoff)
            .max(self.min_rto_ns)
            .min(self.max_rto_ns)
            .max(2 * self.tick_ns);
        Nanos(t)
    }

    /// `rtt_update`: a round trip from a segment sent at `sent`, acknowledged at `now`.
    fn update(&mut self, sent: Nanos, now: Nanos) {
        let tao = now.saturating_sub(sent).0;
        // Ticks of the sender's clock between the send and now.
        let tickoff = (sent.0 + self.boot_ns) % self.tick_ns;
        let rtt = (((tao + tickoff) / self.tick_ns) as i64).max(1);
        if self.srtt != 0 {
            let mut delta = rtt - (self.srtt >> SRTT_BITS);
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            delta = delta.abs() - (self.rttvar >> RTTVAR_BITS);
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            self.srtt = rtt << SRTT_BITS;
            self.rttvar = rtt << (RTTVAR_BITS - 1);
        }
        let ticks =
            ((self.rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.srtt) >> SRTT_BITS;
        self.rtxcur_ns = (ticks as u64).saturating_mul(self.tick_ns);
    }

    /// The smoothed RTT, once measured (whole ticks, as ns-2 keeps it).
    pub fn srtt(&self) -> Option<Nanos> {
        (self.srtt != 0)
            .then(|| Nanos(((self.srtt as u128 * u128::from(self.tick_ns)) >> SRTT_BITS) as u64))
    }

    /// The smoothed RTT in ticks, once measured.
    pub fn srtt_ticks(&self) -> Option<f64> {
        (self.srtt != 0).then(|| self.srtt as f64 / f64::from(1u32 << SRTT_BITS))
    }

    /// The back-off multiplier.
    pub fn backoff(&self) -> u64 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn timer(boot_ms: u64) -> Ns2Timer {
        Ns2Timer::new(ms(100), ms(boot_ms), ms(3000), Nanos::ZERO, ms(60_000))
    }

    /// Times segment `seq` sent at `sent_ms` and ACKed at `ack_ms`.
    fn sample(t: &mut Ns2Timer, seq: u32, sent_ms: u64, ack_ms: u64) {
        t.on_new_segment(seq, ms(sent_ms));
        t.on_new_ack(seq + 1, ms(ack_ms));
    }

    /// A 30 ms round trip is one tick: SRTT 8/8, RTTVAR 2/4 tick, RTO (8 + 2*8) >> 3 = 3
    /// ticks; RTTVAR's integer decay stops at 2/4 (2 >> 2 = 0), so it stays 300 ms.
    #[test]
    fn sub_tick_round_trips_give_three_ticks() {
        let mut t = timer(0);
        assert_eq!(t.timeout(), ms(3000), "rtxcur_init_ before any sample");
        sample(&mut t, 0, 0, 30);
        assert_eq!(t.srtt_ticks(), Some(1.0));
        assert_eq!(t.timeout(), ms(300));
        for i in 1..50 {
            sample(&mut t, i, 1000 * u64::from(i), 1000 * u64::from(i) + 30);
        }
        assert_eq!(t.timeout(), ms(300));
    }

    /// A sample counts the tick boundaries crossed on the sender's clock, whose phase is
    /// `boot_time_`: 10 ms across a boundary is one tick, 240 ms from 50 ms two (boundaries
    /// at 100 and 200), and with a 20 ms phase three (the sender's clock reads 70 .. 310).
    #[test]
    fn samples_count_tick_boundaries() {
        let mut t = timer(0);
        sample(&mut t, 0, 95, 105);
        assert_eq!(t.srtt_ticks(), Some(1.0));
        let mut t = timer(0);
        sample(&mut t, 0, 50, 290);
        assert_eq!(t.srtt_ticks(), Some(2.0));
        // srtt 16, rttvar 4: (4*8 + 16) >> 3 = 6 ticks.
        assert_eq!(t.timeout(), ms(600));
        let mut t = timer(20);
        sample(&mut t, 0, 50, 290);
        assert_eq!(t.srtt_ticks(), Some(3.0));
    }

    /// Jacobson's update in fixed point, by hand: samples of 2 then 4 ticks. First: srtt 16,
    /// rttvar 4. Second: delta 4 - 2 = 2, srtt 18; |delta| - (4 >> 2) = 1, rttvar 5;
    /// RTO (5*8 + 18) >> 3 = 7 ticks.
    #[test]
    fn fixed_point_update() {
        let mut t = timer(0);
        sample(&mut t, 0, 0, 200);
        sample(&mut t, 1, 1000, 1400);
        assert_eq!(t.srtt_ticks(), Some(18.0 / 8.0));
        assert_eq!(t.timeout(), ms(700));
    }

    /// One segment at a time is timed; a later one does not replace it, and after Karn's
    /// rule stops the timing its ACK gives no sample.
    #[test]
    fn one_timed_segment_and_karn() {
        let mut t = timer(0);
        t.on_new_segment(0, ms(0));
        t.on_new_segment(1, ms(50));
        t.on_new_ack(1, ms(250)); // covers 0, sent at 0: two ticks
        assert_eq!(t.srtt_ticks(), Some(2.0));
        let before = t.timeout();
        t.on_new_segment(2, ms(300));
        t.stop_timing();
        t.on_new_ack(3, ms(2000));
        assert_eq!(
            t.timeout(),
            before,
            "no sample from a retransmitted segment"
        );
    }

    /// The back-off doubles the timeout up to 64 times; past 8 the smoothed RTT is folded
    /// into the deviation and the next sample starts afresh; the timed ACK clears it.
    #[test]
    fn backoff_doubles_folds_and_clears() {
        let mut t = timer(0);
        sample(&mut t, 0, 0, 30); // 300 ms
        t.back_off();
        assert_eq!(t.timeout(), ms(600));
        t.back_off();
        t.back_off();
        assert_eq!(t.timeout(), ms(2400));
        assert_eq!(t.srtt_ticks(), Some(1.0));
        t.back_off(); // 16 > 8: srtt 0, rttvar 2 + 1
        assert_eq!(t.srtt_ticks(), None);
        assert_eq!(t.backoff(), 16);
        for _ in 0..5 {
            t.back_off();
        }
        assert_eq!(t.backoff(), 64);
        assert_eq!(t.timeout(), ms(300 * 64));
        // The next timed ACK: srtt 8, rttvar 2 (initialised again), backoff 1.
        sample(&mut t, 5, 10_000, 10_030);
        assert_eq!(t.backoff(), 1);
        assert_eq!(t.timeout(), ms(300));
    }

    /// The bounds: at least `minrto_`, at least two ticks, at most `maxrto_`.
    #[test]
    fn bounds() {
        let mut t = Ns2Timer::new(ms(10), Nanos::ZERO, ms(3000), ms(200), ms(1000));
        sample(&mut t, 0, 0, 5); // 1 tick: 3 ticks = 30 ms
        assert_eq!(t.timeout(), ms(200), "minrto_");
        for _ in 0..6 {
            t.back_off();
        }
        assert_eq!(t.timeout(), ms(1000), "maxrto_");
        let mut t = Ns2Timer::new(ms(100), Nanos::ZERO, ms(50), Nanos::ZERO, ms(60_000));
        assert_eq!(t.timeout(), ms(200), "two ticks");
        t.back_off();
        assert_eq!(t.timeout(), ms(200));
    }
}
