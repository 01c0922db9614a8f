//! A run's work, estimated before it starts, so that a run that would take days is said to
//! be so (and refused unless asked for) instead of found out.
//!
//! Each flow is taken to send at its share of the weighted max-min allocation (what the
//! network can carry of it; an open-loop source also ticks at its offered rate, an RLM
//! session at the cumulative rate of all its layers, and what the network cannot carry is
//! dropped on the way; a long TCP wants at most its window
//! per round trip), for as long as it is active; a finite
//! transfer sends its segments once. Every packet costs about one `Arrive` event per hop
//! and a `TxDone` event where it waited at a port that decides when it sends; a TCP data segment brings an ACK back over the
//! reverse path (one per two segments with delayed ACKs); an overlay loop sends a control
//! packet every `tau` and gets its feedback back. This is an estimate of the
//! order of magnitude, not a bound: loss recovery, queue-free ports and unfair schemes move
//! the real count (the tests hold it within a factor of three on every shipped scenario).

use csfq_algo::maxmin::{water_fill, MaxMinFlow};

use super::{OpenLoopDef, Topology};
use crate::config::{Scenario, TcpConfig};

/// Events per packet and hop that ends in an event: the `Arrive` at the end of the hop,
/// and a `TxDone` for the packets that waited at a port whose discipline decides when it
/// sends (DRR, FQ-CoDel, LAS, CHOKe, TUF; in-order ports have none). The shipped
/// scenarios handled 1.0-1.9 events per packet put on a wire, their sources' ticks
/// included (`events` over `packet_hops` in their reports), when every hop ended in one;
/// 1.25 was their median. Two hops end in none: the one into a private hop (the packet is
/// handed on) and, where its host takes it ahead, the private hop itself
/// ([`Topology::event_hops`]).
const EVENTS_PER_HOP: f64 = 1.25;

/// What a run is expected to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkEstimate {
    /// Events the run will handle, about.
    pub events: f64,
    /// Packets it will put on a wire (over all hops), about.
    pub packet_hops: f64,
    /// The flows it holds (what sets how fast it runs at scale).
    pub flows: usize,
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
    /// The events per second the run is expected at ([`events_per_second`] of its flows).
    pub fn events_per_s(&self) -> f64 {
        events_per_second(self.flows)
    }

    /// Wall time at [`Self::events_per_s`], s.
    pub fn wall_s(&self) -> f64 {
        self.events / self.events_per_s()
    }

    /// What a run estimated at more than a minute is expected to take, said before it
    /// starts ("about 1.2e8 events, about 3 minutes at 0.8 million events per second").
    pub fn expected(&self) -> Option<String> {
        let wall_s = self.wall_s();
        (wall_s > 60.0).then(|| {
            format!(
                "about {:.1e} events, about {} at {} million events per second",
                self.events,
                human_duration(wall_s),
                millions(self.events_per_s())
            )
        })
    }

    /// Refuses a run estimated at more than [`LONG_RUN_S`].
    pub fn refuse_if_too_long(&self) -> Result<(), TooLong> {
        let wall_s = self.wall_s();
        if wall_s > LONG_RUN_S {
            return Err(TooLong {
                events: self.events,
                wall_s,
                events_per_s: self.events_per_s(),
            });
        }
        Ok(())
    }
}

impl Topology {
    /// The hops of flow `f`'s data path (`data`) or ACK path that end in an event: all
    /// but the one into a private hop (its packets are handed on) and the private hop
    /// itself where its host takes them ahead (see `engine`).
    pub(crate) fn event_hops(&self, f: usize, data: bool) -> f64 {
        let path = if data { self.fwd(f) } else { self.rev(f) };
        let private = path
            .last()
            .is_some_and(|h| self.ports[h.port as usize].private);
        let handed = usize::from(private);
        let ahead = usize::from(private && self.delivers_ahead(f, data));
        path.len().saturating_sub(handed + ahead) as f64
    }

    /// The work of running this network as scenario `s` runs it (its TCP settings,
    /// duration and sampling).
    pub fn work_estimate_of(&self, s: &Scenario) -> WorkEstimate {
        self.work_estimate(
            TcpSizes::from(&s.tcp),
            s.duration_s,
            s.sample_interval_ms() / 1e3,
        )
    }

    /// The work of running this network over `duration_s` simulated seconds, sampled every
    /// `sample_s` (see the module's comment for the model).
    pub fn work_estimate(&self, tcp: TcpSizes, duration_s: f64, sample_s: f64) -> WorkEstimate {
        let (caps, mut demands) = self.allocation_problem();
        let (seg, ack) = (
            f64::from(tcp.segment_bytes) * 8.0,
            f64::from(tcp.ack_bytes) * 8.0,
        );
        for (i, (d, f)) in demands.iter_mut().zip(&self.flows).enumerate() {
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
                let rtt = trip(self.fwd(i), seg) + trip(self.rev(i), ack);
                if rtt > 0.0 {
                    d.demand = f64::from(tcp.max_window) * seg / rtt;
                }
            }
        }
        let carried = self.carried_bits(&caps, &demands);
        let mut ticks = 0.0;
        let mut hops = 0.0;
        let mut event_hops = 0.0;
        for (i, (f, &carried)) in self.flows.iter().zip(&carried).enumerate() {
            let active = f.stop.saturating_sub(f.start).as_secs_f64();
            let (fwd, rev) = (self.fwd(i).len() as f64, self.rev(i).len() as f64);
            let (fwd_ev, rev_ev) = (self.event_hops(i, true), self.event_hops(i, false));
            // The flow's mean share while it is active.
            let share = if active > 0.0 && carried.is_finite() {
                carried / active
            } else {
                0.0
            };
            match f.open_loop.as_deref() {
                Some(o) => {
                    let bits = f64::from(o.packet_bytes()) * 8.0;
                    // An RLM session ticks every layer, subscribed or not (it sends only
                    // the subscribed ones): its cumulative rate, base (2^layers - 1).
                    let (offered, ticking) = match *o {
                        OpenLoopDef::Rlm {
                            layers, base_bps, ..
                        } => (share, base_bps * (2f64.powi(i32::from(layers)) - 1.0)),
                        _ => (f.demand_bps(), f.demand_bps()),
                    };
                    ticks += ticking / bits * active;
                    // Carried the whole way at its share; the rest dropped after a hop.
                    hops += (share / bits * fwd + (offered - share).max(0.0) / bits) * active;
                    event_hops +=
                        (share / bits * fwd_ev + (offered - share).max(0.0) / bits) * active;
                }
                None => {
                    let segments = match f.size_pkts {
                        Some(n) => f64::from(n),
                        None => share / (f64::from(tcp.segment_bytes) * 8.0) * active,
                    };
                    let acks = if tcp.delayed_ack { 0.5 } else { 1.0 };
                    hops += segments * (fwd + acks * rev);
                    event_hops += segments * (fwd_ev + acks * rev_ev);
                }
            }
        }
        // Each overlay loop: a control packet every tau from ingress to egress, its
        // feedback back, and the egress's measurement every T.
        for l in &self.loops {
            let active = (duration_s - l.start.as_secs_f64()).max(0.0);
            let per = |t: csfq_algo::Nanos| {
                let t = t.as_secs_f64();
                if t > 0.0 {
                    active / t
                } else {
                    0.0
                }
            };
            let rounds = per(l.params.tau);
            ticks += rounds + per(l.params.interval);
            hops += rounds * (l.fwd.len() + l.rev.len()) as f64;
            event_hops += rounds * (l.fwd.len() + l.rev.len()) as f64;
        }
        let samples = if sample_s > 0.0 {
            duration_s / sample_s
        } else {
            0.0
        };
        WorkEstimate {
            // A Start event per flow, a tick per packet an open-loop source offers, and the
            // sampling.
            events: self.flows.len() as f64 + ticks + EVENTS_PER_HOP * event_hops + samples,
            packet_hops: hops,
            flows: self.flows.len(),
        }
    }
}

/// The most intervals of constant membership [`Topology::carried_bits`] water-fills; with
/// more start and stop instants than this, equal slices of the run.
const MAX_PIECES: usize = 16;

impl Topology {
    /// Bits each flow is carried over the run: the flows' weighted max-min shares change as
    /// flows start and stop, so each interval between those instants is water-filled with
    /// the flows active in it (a flow that stops at 2 ms leaves the link to the others for
    /// the rest of the run). With more than [`MAX_PIECES`] intervals (4 beyond 10 000
    /// flows), the run is cut into that many equal slices, and a flow active for part of a
    /// slice wants that part of its demand over the whole slice.
    fn carried_bits(&self, caps: &[f64], demands: &[MaxMinFlow]) -> Vec<f64> {
        let span = |f: &super::FlowDef| (f.start.as_secs_f64(), f.stop.as_secs_f64());
        let mut instants: Vec<f64> = self
            .flows
            .iter()
            .flat_map(|f| {
                let (a, b) = span(f);
                [a, b]
            })
            .filter(|t| t.is_finite())
            .collect();
        instants.sort_by(f64::total_cmp);
        instants.dedup();
        // Each piece is a water-fill over every flow: fewer of them for large networks.
        let max_pieces = if self.flows.len() > 10_000 {
            4
        } else {
            MAX_PIECES
        };
        let pieces: Vec<(f64, f64)> = if instants.len() <= max_pieces + 1 {
            instants.windows(2).map(|w| (w[0], w[1])).collect()
        } else {
            let (t0, t1) = (instants[0], instants[instants.len() - 1]);
            let step = (t1 - t0) / max_pieces as f64;
            (0..max_pieces)
                .map(|i| (t0 + step * i as f64, t0 + step * (i + 1) as f64))
                .collect()
        };
        let mut carried = vec![0.0; self.flows.len()];
        let mut active = demands.to_vec();
        for (a, b) in pieces {
            if b <= a {
                continue;
            }
            // A flow active for part of a piece wants that part of its demand over it (in
            // exact pieces, all of it or nothing): what it is carried is its share there.
            for ((d, full), f) in active.iter_mut().zip(demands).zip(&self.flows) {
                let (s, e) = span(f);
                let overlap = (e.min(b) - s.max(a)).max(0.0);
                d.demand = if overlap > 0.0 {
                    full.demand * (overlap / (b - a)).min(1.0)
                } else {
                    0.0 // an unbounded demand times nothing is nothing, not NaN
                };
            }
            let shares = water_fill(caps, &active).expect("topology paths name existing ports");
            for (c, share) in carried.iter_mut().zip(shares) {
                if share.is_finite() {
                    *c += share * (b - a);
                }
            }
        }
        carried
    }
}

/// The events per second a run of up to [`CACHED_FLOWS`] flows is expected at: below what
/// this simulator handles on one core on most small cases (7-12 million in `csfq bench`;
/// FQ-CoDel on csfq-fig3a, 2.6 million, is slower), so that a wall time estimated from it
/// is seldom short.
pub const EVENTS_PER_SECOND: f64 = 5e6;

/// Up to this many flows a run's state stays mostly in the caches.
pub const CACHED_FLOWS: usize = 1000;

/// The events per second a run of `flows` flows is expected at: [`EVENTS_PER_SECOND`] up to
/// [`CACHED_FLOWS`], then falling as the flows' state outgrows the caches (every event
/// waits for memory), by 6.25^(1/3) (1.84 times) for each tenfold, to 0.8 million at a
/// million flows. That is about the slowest of FIFO, CSFQ and DRR in `csfq bench --scale`
/// (long-lived TCP through one bottleneck, one core): at a million flows DRR ran 0.83-0.95
/// million events a second and FIFO 2.8-3.1; at 100 000 DRR 1.2-1.5 and FIFO 2.7-3.7 (this
/// gives 1.47). An estimate of the order, not a bound: a slower discipline or machine
/// takes longer.
pub fn events_per_second(flows: usize) -> f64 {
    let tenfolds = (flows.max(CACHED_FLOWS) as f64 / CACHED_FLOWS as f64).log10();
    // 5 to 0.8 million over three tenfolds.
    EVENTS_PER_SECOND * 6.25f64.powf(-tenfolds / 3.0)
}

/// The longest run started without asking for a long one (`csfq run --long`,
/// `csfq.run(..., long=True)`): a day, estimated.
pub const LONG_RUN_S: f64 = 86_400.0;

/// A run estimated to take longer than [`LONG_RUN_S`], refused unless asked for.
#[derive(Debug, thiserror::Error)]
#[error(
    "this run would handle about {events:.1e} events: about {} at {} million events per \
     second (estimated from each flow's share of the links, its packet size and how long it \
     runs); shorten duration_s or lower the rates, or ask for a long run (csfq run --long; \
     long=True in Python)",
    human_duration(*wall_s),
    millions(*events_per_s)
)]
pub struct TooLong {
    /// Events estimated.
    pub events: f64,
    /// Wall time estimated, s.
    pub wall_s: f64,
    /// The events per second the estimate assumed.
    pub events_per_s: f64,
}

/// An events-per-second rate in millions, to two significant digits, without trailing
/// zeros ("12", "5", "1.7", "0.8", "0.05").
pub fn millions(events_per_s: f64) -> String {
    let m = events_per_s / 1e6;
    let s = if m >= 9.95 {
        format!("{m:.0}")
    } else if m >= 0.995 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A duration in the largest unit that keeps it readable.
pub fn human_duration(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} minutes", s / 60.0),
        s if s < 172_800.0 => format!("{:.0} hours", s / 3600.0),
        s if s < 2.0 * 31_557_600.0 => format!("{:.0} days", s / 86_400.0),
        s => format!("{:.0} years", s / 31_557_600.0),
    }
}
