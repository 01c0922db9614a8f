//! TCP NewReno, sans-IO: the sender and receiver are state machines driven by the
//! simulator with the current time; what they transmit is appended to a caller's buffer.
//!
//! Segments are numbered (not bytes) and of fixed size. Implemented:
//! slow start and congestion avoidance (RFC 5681, one segment per ACK in slow start and
//! `1/cwnd` per ACK after, as ns-2 does), fast retransmit and NewReno fast recovery with
//! partial ACKs (RFC 6582), the retransmission timer (RFC 6298: SRTT/RTTVAR, exponential
//! backoff, a configurable minimum, go-back-N after a timeout), RTT samples from echoed
//! timestamps (RFC 7323), optional delayed ACKs (every second segment or a timeout,
//! immediately for out-of-order data, RFC 5681 Section 4.2), and optional SACK (RFC 2018
//! blocks; loss recovery by RFC 6675's pipe and `IsLost` with DupThresh = 3). Instead of
//! RFC 6298's timer, ns-2's coarse one ([`crate::hosts::ns2_timer`]) when the scenario asks.
//! Instead of NewReno's congestion avoidance and halving, CUBIC's ([`cubic`], RFC 9438)
//! for a flow that selects it.

use std::collections::VecDeque;
use std::sync::Arc;

use csfq_algo::{FlowId, Nanos};

use crate::config::TcpConfig;
use crate::hosts::ns2_timer::Ns2Timer;
use crate::kinds::{CongestionControl, TcpTimer};
use crate::packet::{SackBlocks, SimPacket};

pub mod cubic;
mod receiver;
pub use receiver::{AckAction, TcpReceiver};

const DUP_THRESH: u32 = 3;
const MAX_RTO: Nanos = Nanos(60_000_000_000);
const SACKED: u8 = 1;
const RETRANSMITTED: u8 = 2;

/// What every connection of a run shares: the `[tcp]` table in the units the state
/// machines compute in, converted once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpParams {
    /// Data segment size, bytes.
    pub segment_bytes: u32,
    /// ACK size, bytes.
    pub ack_bytes: u32,
    /// Window limit, segments.
    pub max_window: u32,
    /// Initial window, segments.
    pub initial_window: u32,
    /// RFC 6298's minimum RTO.
    pub min_rto: Nanos,
    /// The RTO before the first RTT sample.
    pub initial_rto: Nanos,
    /// The clock granularity `G`.
    pub granularity: Nanos,
    /// `G` in ns as RFC 6298's arithmetic takes it.
    granularity_ns: f64,
    /// Delayed ACKs' timeout, if ACKs are delayed.
    pub delayed_ack: Option<Nanos>,
    /// SACK (RFC 2018, RFC 6675).
    pub sack: bool,
    /// RFC 6298's timer or ns-2's.
    pub timer: TcpTimer,
}

impl From<&TcpConfig> for TcpParams {
    fn from(c: &TcpConfig) -> Self {
        let ms = |x: f64| Nanos::from_secs_f64(x / 1e3);
        TcpParams {
            segment_bytes: c.segment_bytes,
            ack_bytes: c.ack_bytes,
            max_window: c.max_window_segments,
            initial_window: c.initial_window_segments,
            min_rto: ms(c.min_rto_ms),
            initial_rto: ms(c.initial_rto_ms),
            granularity: ms(c.clock_granularity_ms),
            granularity_ns: c.clock_granularity_ms * 1e6,
            delayed_ack: c.delayed_ack.then(|| ms(c.delayed_ack_ms)),
            sack: c.sack,
            timer: c.timer,
        }
    }
}

impl From<TcpConfig> for TcpParams {
    fn from(c: TcpConfig) -> Self {
        TcpParams::from(&c)
    }
}

/// Counters a sender keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
}

/// The sending side of a TCP connection with unlimited data.
#[derive(Debug, Clone)]
pub struct TcpSender {
    flow: FlowId,
    /// Shared by every connection of a run.
    cfg: Arc<TcpParams>,
    snd_una: u32,
    snd_nxt: u32,
    /// One past the highest segment ever sent.
    max_sent: u32,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    /// Highest segment outstanding when recovery began (RFC 6582 `recover`).
    recover: Option<u32>,
    srtt_ns: f64,
    rttvar_ns: f64,
    has_rtt: bool,
    rto: Nanos,
    /// ns-2's timer, when the scenario runs it instead of RFC 6298's.
    ns2: Option<Box<Ns2Timer>>,
    deadline: Option<Nanos>,
    stopped: bool,
    /// Segments to send in all (`None`: unlimited).
    limit: Option<u32>,
    /// SACK scoreboard from `snd_una`: flags `SACKED`, `RETRANSMITTED`.
    board: VecDeque<u8>,
    /// CUBIC's state, for a flow that runs it (boxed: NewReno flows carry a pointer).
    cubic: Option<Box<cubic::Cubic>>,
    stats: SenderStats,
}

impl TcpSender {
    /// A sender for `flow` with unlimited data.
    pub fn new(flow: FlowId, cfg: impl Into<Arc<TcpParams>>) -> Self {
        Self::with_limit(flow, cfg, None)
    }

    /// A sender for `flow` with `limit` segments to send (`None`: unlimited).
    pub fn with_limit(flow: FlowId, cfg: impl Into<Arc<TcpParams>>, limit: Option<u32>) -> Self {
        let cfg = cfg.into();
        let initial_rto = cfg.initial_rto;
        let ns2 = (cfg.timer == TcpTimer::Ns2).then(|| {
            Box::new(Ns2Timer::new(
                cfg.granularity,
                Nanos::ZERO,
                initial_rto,
                cfg.min_rto,
                MAX_RTO,
            ))
        });
        TcpSender {
            flow,
            snd_una: 0,
            snd_nxt: 0,
            max_sent: 0,
            cwnd: cfg.initial_window as f64,
            ssthresh: f64::INFINITY,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            has_rtt: false,
            rto: ns2.as_ref().map_or(initial_rto, |t| t.timeout()),
            ns2,
            deadline: None,
            stopped: false,
            limit,
            // Grows with the window as it opens (a million flows of small windows would
            // otherwise each reserve the largest).
            board: VecDeque::new(),
            cubic: None,
            stats: SenderStats::default(),
            cfg,
        }
    }

    /// Sets the phase of ns-2's timer clock (`boot_time_`, random in `[0, tick)` in ns-2);
    /// no effect under RFC 6298's timer. Call before [`Self::start`].
    pub fn set_timer_phase(&mut self, phase: Nanos) {
        if let Some(t) = &mut self.ns2 {
            t.set_phase(phase);
        }
    }

    /// Runs `cc`'s congestion avoidance and decrease. Call before [`Self::start`].
    pub fn set_congestion_control(&mut self, cc: CongestionControl) {
        self.cubic = match cc {
            CongestionControl::NewReno => None,
            CongestionControl::Cubic => Some(Box::default()),
        };
    }

    /// Opens the connection: sends the initial window.
    pub fn start(&mut self, now: Nanos, out: &mut Vec<SimPacket>) {
        self.send_allowed(now, out);
    }

    /// Stops sending new data (what is outstanding is still recovered).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// When the retransmission timer fires, if it is running.
    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }

    /// The congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The smoothed round-trip time, once measured.
    pub fn srtt(&self) -> Option<Nanos> {
        match &self.ns2 {
            Some(t) => t.srtt(),
            None => self.has_rtt.then_some(Nanos(self.srtt_ns as u64)),
        }
    }

    /// The retransmission timeout.
    pub fn rto(&self) -> Nanos {
        self.rto
    }

    /// The counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// A finite transfer whose every segment is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.limit.is_some_and(|l| self.snd_una >= l)
    }

    /// Whether new data (segment `snd_nxt`) may be sent: not stopped, not past the limit.
    fn has_data(&self) -> bool {
        !(self.stopped && self.snd_nxt >= self.max_sent)
            && self.limit.is_none_or(|l| self.snd_nxt < l)
    }

    fn window(&self) -> u32 {
        (self.cwnd.floor() as u32).clamp(1, self.cfg.max_window)
    }

    fn transmit(&mut self, seq: u32, now: Nanos, out: &mut Vec<SimPacket>) {
        out.push(SimPacket::data(self.flow, self.cfg.segment_bytes, seq, now));
        self.stats.segments_sent += 1;
        if seq < self.max_sent {
            self.stats.retransmits += 1;
        } else if let Some(t) = &mut self.ns2 {
            t.on_new_segment(seq, now);
        }
        if self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
    }

    /// Sends new segments while the window allows (outside SACK recovery).
    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<SimPacket>) {
        let limit = self.snd_una + self.window();
        while self.snd_nxt < limit && self.has_data() {
            let seq = self.snd_nxt;
            self.transmit(seq, now, out);
            self.snd_nxt += 1;
            if self.snd_nxt > self.max_sent {
                self.max_sent = self.snd_nxt;
                self.board.push_back(0);
            }
        }
    }

    fn flags(&self, seq: u32) -> u8 {
        self.board
            .get((seq - self.snd_una) as usize)
            .copied()
            .unwrap_or(0)
    }

    /// RFC 6675 `IsLost`: at least DupThresh segments above `seq` are SACKed.
    fn is_lost(&self, seq: u32) -> bool {
        let start = (seq - self.snd_una) as usize + 1;
        self.board
            .iter()
            .skip(start)
            .filter(|f| **f & SACKED != 0)
            .count() as u32
            >= DUP_THRESH
    }

    /// RFC 6675 `SetPipe`: segments believed to be in the network.
    fn pipe(&self) -> u32 {
        let mut pipe = 0;
        let mut sacked_above = 0;
        // Walk from the top so "SACKed above" is a running count.
        for i in (0..(self.snd_nxt - self.snd_una) as usize).rev() {
            let f = self.board[i];
            if f & SACKED != 0 {
                sacked_above += 1;
                continue;
            }
            if sacked_above < DUP_THRESH {
                pipe += 1;
            }
            if f & RETRANSMITTED != 0 {
                pipe += 1;
            }
        }
        pipe
    }

    /// SACK recovery transmission (RFC 6675 NextSeg): lost holes first, then new data.
    fn sack_send(&mut self, now: Nanos, out: &mut Vec<SimPacket>) {
        let mut pipe = self.pipe();
        while (pipe as f64) < self.cwnd {
            let hole = (self.snd_una..self.snd_nxt)
                .find(|&s| self.flags(s) & (SACKED | RETRANSMITTED) == 0 && self.is_lost(s));
            if let Some(seq) = hole {
                self.board[(seq - self.snd_una) as usize] |= RETRANSMITTED;
                self.transmit(seq, now, out);
            } else if self.snd_nxt < self.snd_una + self.cfg.max_window && self.has_data() {
                let seq = self.snd_nxt;
                self.transmit(seq, now, out);
                self.snd_nxt += 1;
                if self.snd_nxt > self.max_sent {
                    self.max_sent = self.snd_nxt;
                    self.board.push_back(0);
                }
            } else {
                break;
            }
            pipe += 1;
        }
    }

    fn rtt_sample(&mut self, sample: Nanos) {
        // RFC 6298 Section 2 (alpha = 1/8, beta = 1/4, K = 4).
        let r = sample.0 as f64;
        if !self.has_rtt {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
        }
        // RTO = SRTT + max(G, K * RTTVAR) (RFC 6298 2.3), then the configured minimum.
        let g_ns = self.cfg.granularity_ns;
        let rto = Nanos((self.srtt_ns + (4.0 * self.rttvar_ns).max(g_ns)) as u64);
        self.rto = rto.max(self.cfg.min_rto).min(MAX_RTO);
    }

    fn record_sacks(&mut self, blocks: &SackBlocks) {
        for &(start, end) in blocks {
            for seq in start.max(self.snd_una)..end.min(self.max_sent) {
                self.board[(seq - self.snd_una) as usize] |= SACKED;
            }
        }
    }

    /// An ACK arrives.
    pub fn on_ack(&mut self, ack: &SimPacket, now: Nanos, out: &mut Vec<SimPacket>) {
        let next = ack.seq;
        if next > self.max_sent {
            return; // acknowledges data never sent: ignore
        }
        if self.cfg.sack {
            self.record_sacks(&ack.sack);
        }
        if next > self.snd_una {
            let newly = next - self.snd_una;
            // The timeout the timer restarts with: ns-2 of the 1990s (before `timerfix_`)
            // restarts it before the round trip is sampled and the back-off cleared.
            let rearm = match &mut self.ns2 {
                Some(t) => {
                    let before = t.timeout();
                    t.on_new_ack(next, now);
                    self.rto = t.timeout();
                    before
                }
                None => {
                    self.rtt_sample(now.saturating_sub(ack.ts));
                    self.rto
                }
            };
            for _ in 0..newly {
                self.board.pop_front();
            }
            self.snd_una = next;
            self.snd_nxt = self.snd_nxt.max(next);
            if self.in_recovery {
                if self.recover.is_some_and(|r| next > r) {
                    // Full ACK: leave recovery with cwnd = ssthresh (RFC 6582 3.2 step 3).
                    self.in_recovery = false;
                    self.cwnd = self.ssthresh;
                    self.dupacks = 0;
                } else if !self.cfg.sack {
                    // Partial ACK: retransmit the next hole, deflate by what was acked.
                    self.transmit(self.snd_una, now, out);
                    self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += 1.0;
                } else if let Some(c) = &mut self.cubic {
                    let rtt_s = self.srtt_ns / 1e9;
                    let rtt_s = match &self.ns2 {
                        Some(t) => t.srtt().map_or(0.0, |r| r.as_secs_f64()),
                        None => rtt_s,
                    };
                    let max = f64::from(self.cfg.max_window);
                    self.cwnd = c.on_ack(self.cwnd, newly, now, rtt_s).min(max);
                } else {
                    self.cwnd += 1.0 / self.cwnd;
                }
            }
            self.deadline = (self.snd_una < self.max_sent).then(|| now + rearm);
        } else if next == self.snd_una && self.snd_una < self.max_sent {
            self.dupacks += 1;
            let may_enter = self.recover.is_none_or(|r| next > r);
            let lost = self.cfg.sack && self.is_lost(self.snd_una);
            if !self.in_recovery && may_enter && (self.dupacks == DUP_THRESH || lost) {
                // Fast retransmit (RFC 6582 3.2 step 2).
                let flight = (self.snd_nxt - self.snd_una) as f64;
                self.ssthresh = match &mut self.cubic {
                    Some(c) => c.on_congestion(self.cwnd, flight),
                    None => (flight / 2.0).max(2.0),
                };
                self.recover = Some(self.max_sent - 1);
                self.in_recovery = true;
                self.stats.fast_retransmits += 1;
                if let Some(t) = &mut self.ns2 {
                    // ns-2 restarts the timer on a fast retransmit and stops timing.
                    t.stop_timing();
                    self.deadline = Some(now + self.rto);
                }
                if !self.board.is_empty() {
                    self.board[0] |= RETRANSMITTED;
                }
                self.transmit(self.snd_una, now, out);
                self.cwnd = if self.cfg.sack {
                    self.ssthresh
                } else {
                    self.ssthresh + 3.0
                };
            } else if self.in_recovery && !self.cfg.sack {
                self.cwnd += 1.0; // window inflation
            }
        }
        if self.in_recovery && self.cfg.sack {
            self.sack_send(now, out);
        } else {
            self.send_allowed(now, out);
        }
    }

    /// The retransmission timer fired at `now` (ignored if it was moved later).
    pub fn on_timeout(&mut self, now: Nanos, out: &mut Vec<SimPacket>) {
        match self.deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        self.stats.timeouts += 1;
        let flight = (self.snd_nxt - self.snd_una) as f64;
        self.ssthresh = match &mut self.cubic {
            Some(c) => c.on_timeout(self.cwnd, flight),
            None => (flight / 2.0).max(2.0),
        };
        self.cwnd = 1.0;
        self.recover = Some(self.max_sent.saturating_sub(1));
        self.in_recovery = false;
        self.dupacks = 0;
        match &mut self.ns2 {
            Some(t) => {
                t.back_off();
                t.stop_timing();
                self.rto = t.timeout();
            }
            None => self.rto = (self.rto + self.rto).min(MAX_RTO), // back off (RFC 6298 5.5)
        }
        self.snd_nxt = self.snd_una; // go back N
        for f in &mut self.board {
            *f = 0;
        }
        self.deadline = None;
        self.send_allowed(now, out);
    }
}

#[cfg(test)]
mod tests;
