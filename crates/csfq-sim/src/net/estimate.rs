//! A run's work, estimated before it starts, so that a run that would take days is said to
//! be so (and refused unless asked for) instead of found out.
//!
//! Each flow is taken to send at its share of the weighted max-min allocation (what the
//! network can carry of it; an open-loop source also ticks at its offered rate, and what
//! the network cannot carry is dropped on the way; a long TCP wants at most its window
//! per round trip), for as long as it is active; a finite
//! transfer sends its segments once. Every packet costs about one `Arrive` event per hop
//! and a `TxDone` event where it waited; a TCP data segment brings an ACK back over the
//! reverse path (one per two segments with delayed ACKs). This is an estimate of the
//! order of magnitude, not a bound: loss recovery, queue-free ports and unfair schemes move
//! the real count (the tests hold it within a factor of three on every shipped scenario).

use super::{OpenLoopDef, Topology};
use crate::config::TcpConfig;

/// Events per packet and hop: the `Arrive` at the end of the hop, and the port's `TxDone`
/// for the packets that waited (measured: 1.4-1.8 on the shipped scenarios).
const EVENTS_PER_HOP: f64 = 1.6;

/// What a run is expected to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkEstimate {
    /// Events the run will handle, about.
    pub events: f64,
    /// Packets it will put on a wire (over all hops), about.
    pub packet_hops: f64,
}

/// The TCP details the estimate needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TcpSizes {
    /// Data segment size, bytes.
    pub segment_bytes: u32,
    /// ACK size, bytes.
    pub ack_bytes: u32,
    /// The window limit, segments.
    pub max_window: u32,
    /// Whether ACKs are delayed (one per two segments).
    pub delayed_ack: bool,
}

impl From<&TcpConfig> for TcpSizes {
    fn from(c: &TcpConfig) -> Self {
        TcpSizes {
            segment_bytes: c.segment_bytes,
            ack_bytes: c.ack_bytes,
            max_window: c.max_window_segments,
            delayed_ack: c.delayed_ack,
        }
    }
}

impl WorkEstimate {
    /// Wall time at `events_per_s`, s.
    pub fn wall_s(&self, events_per_s: f64) -> f64 {
        self.events / events_per_s
    }
}

impl Topology {
    /// The work of running this network over `duration_s` simulated seconds, sampled every
    /// `sample_s` (see the module's comment for the model).
    pub fn work_estimate(&self, tcp: TcpSizes, duration_s: f64, sample_s: f64) -> WorkEstimate {
        let (caps, mut demands) = self.allocation_problem();
        let (seg, ack) = (
            f64::from(tcp.segment_bytes) * 8.0,
            f64::from(tcp.ack_bytes) * 8.0,
        );
        for (d, f) in demands.iter_mut().zip(&self.flows) {
            if f.open_loop.is_none() && f.size_pkts.is_none() {
                // A window per round trip, the round trip without queueing.
                let trip = |ports: &[super::Hop], bits: f64| -> f64 {
                    ports
                        .iter()
                        .map(|h| {
                            let p = &self.ports[h.port as usize];
                            p.delay.as_secs_f64() + bits / p.rate_bps
                        })
                        .sum()
                };
                let rtt = trip(f.fwd(), seg) + trip(f.rev(), ack);
                if rtt > 0.0 {
                    d.demand = f64::from(tcp.max_window) * seg / rtt;
                }
            }
        }
        let shares = csfq_algo::maxmin::water_fill(&caps, &demands)
            .expect("topology paths name existing ports");
        let mut ticks = 0.0;
        let mut hops = 0.0;
        for (f, &share) in self.flows.iter().zip(&shares) {
            let active = f.stop.saturating_sub(f.start).as_secs_f64();
            let (fwd, rev) = (f.fwd().len() as f64, f.rev().len() as f64);
            let share = if share.is_finite() { share } else { 0.0 };
            match f.open_loop.as_deref() {
                Some(o) => {
                    let bits = f64::from(o.packet_bytes()) * 8.0;
                    let offered = match *o {
                        OpenLoopDef::Rlm { .. } => share,
                        _ => f.demand_bps(),
                    };
                    ticks += offered / bits * active;
                    // Carried the whole way at its share; the rest dropped after a hop.
                    hops += (share / bits * fwd + (offered - share).max(0.0) / bits) * active;
                }
                None => {
                    let segments = match f.size_pkts {
                        Some(n) => f64::from(n),
                        None => share / (f64::from(tcp.segment_bytes) * 8.0) * active,
                    };
                    let acks = if tcp.delayed_ack { 0.5 } else { 1.0 };
                    hops += segments * (fwd + acks * rev);
                }
            }
        }
        let samples = if sample_s > 0.0 {
            duration_s / sample_s
        } else {
            0.0
        };
        WorkEstimate {
            // A Start event per flow, a tick per packet an open-loop source offers, and the
            // sampling.
            events: self.flows.len() as f64 + ticks + EVENTS_PER_HOP * hops + samples,
            packet_hops: hops,
        }
    }
}
