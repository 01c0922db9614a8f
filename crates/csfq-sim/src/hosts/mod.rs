//! The end systems: what sends each flow's packets and what receives them. Open-loop
//! sources (CBR "UDP" in [`source`], ON-OFF, RLM's layered sessions in [`rlm`]) and TCP
//! NewReno ([`tcp`], with ns-2's coarse timer in [`ns2_timer`]); TUF's tagging of TCP at
//! the source.
//!
//! Hosts never touch the event queue or the network: each handler appends `Action`s
//! (packets to send, events to schedule) in the order it wants them, and the engine
//! carries them out in that order. What reaches a flow's destination, and what the network
//! drops of it, is counted here in `FlowStats`.

pub mod ns2_timer;
pub mod rlm;
pub mod source;
pub mod tcp;

use std::sync::Arc;

use csfq_algo::{tuf, Dropped, FlowId, Nanos};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::events::{Action, EventKind};
use crate::kinds::{FlowKind, TcpTimer};
use crate::net::{FlowDef, OpenLoopDef, Topology};
use crate::observe::compact::{DropCounts, IntervalSeries};
use crate::observe::delay::{FlowDelay, Precision};
use crate::packet::{Kind, SimPacket};
use crate::rng::{stream, stream_seed, Stream};
use rlm::{RlmParams, RlmReceiver};
use source::{CbrSource, OnOffSource};
use tcp::{AckAction, TcpParams, TcpReceiver, TcpSender};

/// What sends a flow's packets. The open-loop ones draw their gaps (and ON/OFF periods,
/// and RLM's join experiments) from the flow's random stream, which they hold; TCP draws
/// nothing, so its flows keep no stream. TCP's sender and receiver are held in the record
/// (and set the enum's size), as TCP flows are the many and each of their packets reaches
/// one of the two: in its own allocation each was a second load after the record's, a
/// cache miss of its own for every packet when consecutive packets belong to different
/// flows (DRR at scale). RLM's session, larger than TCP's pair, stays boxed; the CBR and
/// ON/OFF sources, smaller, are boxed too, which no longer saves a TCP flow anything.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Endpoint {
    Cbr(Box<Drawn<CbrSource>>),
    OnOff(Box<Drawn<OnOffSource>>),
    Tcp {
        sender: TcpSender,
        receiver: TcpReceiver,
        /// The time of the pending `Rto` event, if any.
        rto_event: Option<Nanos>,
    },
    Rlm(Box<RlmSession>),
}

/// An open-loop source with the flow's random stream.
#[derive(Debug)]
pub(crate) struct Drawn<S> {
    src: S,
    rng: Pcg64Mcg,
}

/// One RLM session: a CBR source per layer and the receiver's subscription state.
#[derive(Debug)]
pub(crate) struct RlmSession {
    /// The flow's random stream: the layers' gaps and the receiver's join experiments.
    rng: Pcg64Mcg,
    params: RlmParams,
    layers: Vec<CbrSource>,
    receiver: Option<RlmReceiver>,
    sent: u64,
    received: u64,
}

/// What a flow's packets did: sent, delivered, dropped (by reason), delayed.
#[derive(Debug, Default, Clone)]
pub(crate) struct FlowStats {
    pub(crate) sent_pkts: u64,
    pub(crate) delivered_pkts: u64,
    pub(crate) delivered_bytes: u64,
    pub(crate) drops: DropCounts,
    pub(crate) ack_drops: u64,
    /// `delivered_bytes` at the last sample.
    sampled_bytes: u64,
    /// Of `delivered_bytes`, what packets delivered ahead of their arrival brought that
    /// arrive after the next sample: counted in the interval after it.
    past_sample_bytes: u64,
    /// Bytes delivered in each sampling interval.
    pub(crate) series: IntervalSeries,
    /// When a finite transfer's last segment was acknowledged.
    pub(crate) completed: Option<Nanos>,
    /// Delay of the data packets that reached the destination.
    pub(crate) delay: FlowDelay,
}

/// One flow's end systems at run time.
#[derive(Debug)]
pub(crate) struct FlowRt {
    pub(crate) endpoint: Endpoint,
    seq: u32,
    /// TUF source tagging of a TCP flow: the packet counter of `X_n`.
    tuf_counter: Option<u32>,
    pub(crate) stats: FlowStats,
}

impl FlowRt {
    /// An open-loop source's next data packet (flow `f`), numbered and counted as sent.
    fn next_data(&mut self, f: usize, size: u32, now: Nanos) -> SimPacket {
        let seq = self.seq;
        self.seq += 1;
        self.stats.sent_pkts += 1;
        SimPacket::data(FlowId(f as u32), size, seq, now)
    }
}

/// What TUF's source tagging of TCP needs of the TCP configuration (TUF Section 3.4.1).
#[derive(Debug, Clone, Copy)]
struct TufSource {
    /// Segments acknowledged per ACK, Padhye's `b`.
    per_ack: f64,
    /// The window limit, segments.
    max_window: f64,
    segment_bytes: u32,
}

/// Every flow's end systems.
#[derive(Debug)]
pub(crate) struct Hosts {
    pub(crate) flows: Vec<FlowRt>,
    tuf: TufSource,
    /// A TCP sender's output, before it becomes actions.
    segments: Vec<SimPacket>,
}

impl Hosts {
    /// The end systems of every flow of `topo`: `edge_is_tuf(i)` tells whether flow `i`'s
    /// edge runs TUF (its TCP then tags at the source); `samples` is the number of samples
    /// the run will take, reserved once.
    pub(crate) fn build(
        topo: &Topology,
        tcp: TcpParams,
        seed: u64,
        samples: usize,
        precision: Precision,
        edge_is_tuf: impl Fn(usize) -> bool,
    ) -> Self {
        // One TCP configuration for every connection.
        let tcp = Arc::new(tcp);
        let mut flows = Vec::with_capacity(topo.flows.len());
        for (i, f) in topo.flows.iter().enumerate() {
            let id = FlowId(i as u32);
            let mut flow_rng = stream(seed, Stream::Flow, i as u64);
            // TUF tags TCP at the source, which knows its RTT and timeout (TUF Section 3.4.1):
            // the packet counter n of X_n = I(n + D_F) starts at a random D_F.
            let tuf_counter = (matches!(f.kind, FlowKind::Tcp | FlowKind::Web) && edge_is_tuf(i))
                .then(|| flow_rng.random::<u32>());
            let endpoint = match f.open_loop.as_deref() {
                Some(&OpenLoopDef::Cbr(c)) => Endpoint::Cbr(Box::new(Drawn {
                    src: CbrSource::new(c.rate_bps, c.packet_bytes, c.jitter),
                    rng: flow_rng,
                })),
                Some(&OpenLoopDef::OnOff { cbr: c, on, off }) => Endpoint::OnOff(Box::new(Drawn {
                    src: OnOffSource::new(
                        CbrSource::new(c.rate_bps, c.packet_bytes, c.jitter),
                        on,
                        off,
                    ),
                    rng: flow_rng,
                })),
                Some(&OpenLoopDef::Rlm {
                    layers,
                    base_bps,
                    packet_bytes,
                    jitter,
                }) => {
                    let params = RlmParams {
                        layers,
                        base_bps,
                        ..RlmParams::default()
                    };
                    Endpoint::Rlm(Box::new(RlmSession {
                        rng: flow_rng,
                        layers: (1..=layers)
                            .map(|i| CbrSource::new(params.layer_bps(i), packet_bytes, jitter))
                            .collect(),
                        params,
                        receiver: None,
                        sent: 0,
                        received: 0,
                    }))
                }
                None => Endpoint::Tcp {
                    sender: {
                        let mut s = TcpSender::with_limit(id, tcp.clone(), f.size_pkts);
                        s.set_congestion_control(f.congestion_control);
                        if tcp.timer == TcpTimer::Ns2 {
                            // ns-2 starts each sender's timer clock at a random phase.
                            let tick = tcp.granularity;
                            let draw = stream_seed(seed, Stream::TimerPhase, i as u64);
                            s.set_timer_phase(Nanos(draw % tick.0));
                        }
                        s
                    },
                    receiver: TcpReceiver::new(id, tcp.clone()),
                    rto_event: None,
                },
            };
            // Its data packets have one size, so they spend the same time on the wire at
            // every hop: what varies is queueing.
            let data_bytes = f
                .open_loop
                .as_deref()
                .map_or(tcp.segment_bytes, OpenLoopDef::packet_bytes);
            let base = topo.fwd(i).iter().fold(Nanos::ZERO, |t, h| {
                let p = &topo.ports[h.port as usize];
                t + Nanos::transmission(data_bytes, p.rate_bps) + p.delay
            });
            flows.push(FlowRt {
                endpoint,
                seq: 0,
                tuf_counter,
                stats: FlowStats {
                    // One value per sample: reserved once, so no slack grows with the run.
                    sampled_bytes: 0,
                    series: IntervalSeries::with_capacity(samples),
                    delay: FlowDelay::new(base, precision),
                    ..FlowStats::default()
                },
            });
        }
        Hosts {
            flows,
            tuf: TufSource {
                per_ack: if tcp.delayed_ack.is_some() { 2.0 } else { 1.0 },
                max_window: tcp.max_window as f64,
                segment_bytes: tcp.segment_bytes,
            },
            segments: Vec::with_capacity(64),
        }
    }

    /// Flow `f` starts: its first packets or its source's first tick.
    pub(crate) fn start(&mut self, f: usize, def: &FlowDef, now: Nanos, out: &mut Vec<Action>) {
        let id = f as u32;
        match &mut self.flows[f].endpoint {
            Endpoint::Cbr(_) => out.push(Action::At(now, EventKind::Source(id))),
            Endpoint::OnOff(s) => {
                s.src.start(now, &mut s.rng);
                out.push(Action::At(now, EventKind::Source(id)));
            }
            Endpoint::Rlm(s) => {
                s.receiver = Some(RlmReceiver::new(s.params, now, &mut s.rng));
                for layer in 1..=s.params.layers {
                    out.push(Action::At(now, EventKind::Layer(id, layer)));
                }
                out.push(Action::At(now + s.params.window, EventKind::RlmWindow(id)));
            }
            Endpoint::Tcp { sender, .. } => {
                let mut segs = std::mem::take(&mut self.segments);
                sender.start(now, &mut segs);
                self.send_tcp(f, def, now, &mut segs, out);
                self.segments = segs;
            }
        }
    }

    /// An open-loop source's tick: a packet (unless OFF), and the next tick.
    pub(crate) fn source_tick(
        &mut self,
        f: usize,
        def: &FlowDef,
        now: Nanos,
        out: &mut Vec<Action>,
    ) {
        if now >= def.stop {
            return;
        }
        let flow = &mut self.flows[f];
        let (next, size) = match &mut flow.endpoint {
            Endpoint::Cbr(s) => (Some(now + s.src.next_gap(&mut s.rng)), Some(s.src.size)),
            Endpoint::OnOff(s) => match s.src.tick(now, &mut s.rng) {
                Ok(next) => (Some(next), Some(s.src.cbr.size)),
                Err(next_on) => (Some(next_on), None),
            },
            Endpoint::Tcp { .. } | Endpoint::Rlm(_) => (None, None),
        };
        if let Some(size) = size {
            out.push(Action::Send(flow.next_data(f, size, now)));
        }
        if let Some(next) = next {
            out.push(Action::At(next, EventKind::Source(f as u32)));
        }
    }

    /// One layer of an RLM session: send if the receiver subscribes to it, tick again.
    pub(crate) fn layer_tick(
        &mut self,
        f: usize,
        layer: u8,
        def: &FlowDef,
        now: Nanos,
        out: &mut Vec<Action>,
    ) {
        if now >= def.stop {
            return;
        }
        let flow = &mut self.flows[f];
        let Endpoint::Rlm(s) = &mut flow.endpoint else {
            return;
        };
        let src = &s.layers[layer as usize - 1];
        let next = now + src.next_gap(&mut s.rng);
        let size = src.size;
        let subscribed = s.receiver.as_ref().is_some_and(|r| layer <= r.level());
        if subscribed {
            s.sent += 1;
            out.push(Action::Send(flow.next_data(f, size, now)));
        }
        out.push(Action::At(next, EventKind::Layer(f as u32, layer)));
    }

    /// An RLM receiver's loss window ends: it may join or leave a layer.
    pub(crate) fn rlm_window(&mut self, f: usize, now: Nanos, out: &mut Vec<Action>) {
        if let Endpoint::Rlm(s) = &mut self.flows[f].endpoint {
            if let Some(rx) = &mut s.receiver {
                rx.on_window(now, s.sent, s.received, &mut s.rng);
            }
            out.push(Action::At(
                now + s.params.window,
                EventKind::RlmWindow(f as u32),
            ));
        }
    }

    /// A TCP retransmission timer fires (unless an earlier one superseded it).
    pub(crate) fn rto(&mut self, f: usize, def: &FlowDef, now: Nanos, out: &mut Vec<Action>) {
        let Endpoint::Tcp {
            sender, rto_event, ..
        } = &mut self.flows[f].endpoint
        else {
            return;
        };
        if *rto_event != Some(now) {
            return; // superseded by an earlier timer event
        }
        *rto_event = None;
        let mut segs = std::mem::take(&mut self.segments);
        sender.on_timeout(now, &mut segs);
        self.send_tcp(f, def, now, &mut segs, out);
        self.segments = segs;
    }

    /// A TCP receiver's delayed-ACK timer fires.
    pub(crate) fn delack(&mut self, f: usize, now: Nanos, out: &mut Vec<Action>) {
        if let Endpoint::Tcp { receiver, .. } = &mut self.flows[f].endpoint {
            if let Some(ack) = receiver.on_delack_timer(now) {
                out.push(Action::Send(ack));
            }
        }
    }

    /// Whether nothing but packets changes flow `f`'s receiver (`data`) or sender (ACKs)
    /// until `at`: no timer of it is due by then, so one of its packets can be handled at
    /// `at` ahead of the events before it. Open-loop sinks only count.
    pub(crate) fn quiet_through(&self, f: usize, data: bool, at: Nanos) -> bool {
        match (&self.flows[f].endpoint, data) {
            (Endpoint::Cbr(_) | Endpoint::OnOff(_), true) => true,
            (Endpoint::Tcp { receiver, .. }, true) => {
                receiver.delack_deadline().is_none_or(|d| d > at)
            }
            (Endpoint::Tcp { rto_event, .. }, false) => rto_event.is_none_or(|e| e > at),
            _ => false,
        }
    }

    /// A packet reaches the end of its path: its flow's receiver (data) or sender (ACK).
    pub(crate) fn deliver(
        &mut self,
        p: SimPacket,
        def: &FlowDef,
        now: Nanos,
        out: &mut Vec<Action>,
    ) {
        let f = p.flow.index();
        let segment_bytes = self.tuf.segment_bytes as u64;
        let flow = &mut self.flows[f];
        if p.kind == Kind::Data {
            flow.stats.delay.record(p.ts, now);
        }
        match (&mut flow.endpoint, p.kind) {
            (Endpoint::Cbr(_) | Endpoint::OnOff(_), _) => {
                flow.stats.delivered_pkts += 1;
                flow.stats.delivered_bytes += p.size as u64;
            }
            (Endpoint::Rlm(s), _) => {
                s.received += 1;
                flow.stats.delivered_pkts += 1;
                flow.stats.delivered_bytes += p.size as u64;
            }
            (Endpoint::Tcp { receiver, .. }, Kind::Data) => {
                let (n, action) = receiver.on_data(&p, now);
                flow.stats.delivered_pkts += n as u64;
                flow.stats.delivered_bytes += n as u64 * segment_bytes;
                out.push(match action {
                    AckAction::Send(ack) => Action::Send(ack),
                    AckAction::Delay(at) => Action::At(at, EventKind::DelAck(f as u32)),
                });
            }
            (Endpoint::Tcp { sender, .. }, Kind::Ack) => {
                let mut segs = std::mem::take(&mut self.segments);
                sender.on_ack(&p, now, &mut segs);
                if flow.stats.completed.is_none() && sender.is_complete() {
                    flow.stats.completed = Some(now);
                }
                self.send_tcp(f, def, now, &mut segs, out);
                self.segments = segs;
            }
            (_, Kind::Control | Kind::Feedback) => unreachable!("loop messages go to loops"),
        }
    }

    /// Hands a TCP sender's output to the network and keeps one timer event pending.
    fn send_tcp(
        &mut self,
        f: usize,
        def: &FlowDef,
        now: Nanos,
        segs: &mut Vec<SimPacket>,
        out: &mut Vec<Action>,
    ) {
        let flow = &mut self.flows[f];
        flow.stats.sent_pkts += segs.len() as u64;
        if let (Some(n), Endpoint::Tcp { sender, .. }) = (&mut flow.tuf_counter, &flow.endpoint) {
            // TUF at the source: tag = T(B(X_n) / w) with Padhye's B (TUF Section 3.4.1).
            let t = self.tuf;
            let rtt = sender
                .srtt()
                .unwrap_or(sender.rto())
                .as_secs_f64()
                .max(1e-6);
            let t0 = sender.rto().as_secs_f64();
            for p in segs.iter_mut() {
                *n = n.wrapping_add(1);
                let x = tuf::van_der_corput(*n);
                let rate =
                    tuf::tcp_throughput(x, rtt, t0, t.max_window, t.per_ack, t.segment_bytes);
                p.tag = tuf::tag_of_rate(rate / def.weight);
            }
        }
        if let Endpoint::Tcp {
            sender, rto_event, ..
        } = &mut flow.endpoint
        {
            if now >= def.stop {
                sender.stop();
            }
            if let Some(d) = sender.deadline() {
                if rto_event.is_none_or(|e| d < e) {
                    *rto_event = Some(d);
                    out.push(Action::At(d, EventKind::Rto(f as u32)));
                }
            }
        }
        out.extend(segs.drain(..).map(Action::Send));
    }

    /// Charges a drop in the network to the flow whose packet it was.
    /// Loop messages are not a flow's: their loop counts them lost when a later one arrives.
    pub(crate) fn record_drop(&mut self, d: &Dropped<SimPacket>) {
        let flow = d.packet.flow.index();
        match d.packet.kind {
            Kind::Data => self.flows[flow].stats.drops.add(d.reason.code()),
            Kind::Ack => self.flows[flow].stats.ack_drops += 1,
            Kind::Control | Kind::Feedback => {}
        }
    }

    /// Records each flow's bytes delivered since the last sample (those delivered ahead
    /// that arrive after this sample wait for the next).
    pub(crate) fn sample(&mut self) {
        for f in &mut self.flows {
            let st = &mut f.stats;
            let by_now = st.delivered_bytes - st.past_sample_bytes;
            st.series.push(by_now - st.sampled_bytes);
            st.sampled_bytes = by_now;
            st.past_sample_bytes = 0;
        }
    }

    /// Flow `f`'s bytes delivered so far.
    #[inline]
    pub(crate) fn delivered_bytes(&self, f: usize) -> u64 {
        self.flows[f].stats.delivered_bytes
    }

    /// `bytes` of flow `f`'s, delivered ahead, arrive after the next sample.
    #[inline]
    pub(crate) fn carry_past_sample(&mut self, f: usize, bytes: u64) {
        self.flows[f].stats.past_sample_bytes += bytes;
    }

    /// Packets and bytes delivered to the flows' receivers so far (TCP: in-order segments).
    pub(crate) fn delivered(&self) -> (u64, u64) {
        self.flows.iter().fold((0, 0), |(p, b), f| {
            (p + f.stats.delivered_pkts, b + f.stats.delivered_bytes)
        })
    }

    /// How many flows have delivered at least one packet to their receivers.
    pub(crate) fn flows_served(&self) -> usize {
        self.flows
            .iter()
            .filter(|f| f.stats.delivered_pkts > 0)
            .count()
    }
}

#[cfg(test)]
mod tests;
