//! The discrete-event engine: integer-nanosecond time, a binary heap of events ordered by
//! (time, insertion order), per-component random streams.
//!
//! Per packet and hop: one enqueue at the port's discipline, and when the port is free a
//! dequeue that schedules the packet's arrival at the next node (after transmission and
//! propagation) and the port's next transmission. Nothing on that path allocates once the
//! queues and the heap have grown to their working size.

use dary_heap::QuaternaryHeap as BinaryHeap;
use std::cmp::Ordering;

use csfq_algo::maxmin::jain_index;
use csfq_algo::tuf;
use csfq_algo::{DropReason, Dropped, FlowId, Nanos};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use csfq_algo::overlay::{Control, Egress, Feedback, Ingress};

use crate::compact::{DropCounts, IntervalSeries};
use crate::delay::{FlowDelay, Sojourn};
use crate::discipline::Discipline;
use crate::overlay::LoopReport;
use crate::packet::{Kind, SimPacket};
use crate::report::{FlowReport, LinkReport, MayTableReport, SimReport};
use crate::rlm::{RlmParams, RlmReceiver};
use crate::scenario::{DisciplineKind, FlowKind, ScenarioFile, TcpTimer};
use crate::source::{CbrSource, OnOffSource};
use crate::tcp::{AckAction, TcpReceiver, TcpSender};
use crate::topology::{BuildError, Topology};
use crate::trace::{NoSuchPort, Tracer};

/// SplitMix64 finalizer: independent seeds for each component's random stream, so one
/// change does not reshuffle every other draw.
pub(crate) fn stream_seed(seed: u64, kind: u64, index: u64) -> u64 {
    let mut z =
        seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Debug)]
enum EventKind {
    /// A packet (its slot in the in-flight slab) reaches the node at the end of its hop.
    Arrive(u32),
    /// A port finished sending; start the next packet.
    TxDone(u32),
    /// An open-loop source's next packet (or ON/OFF switch).
    Source(u32),
    /// A flow's start time.
    Start(u32),
    /// An RLM session's next packet in one layer (1-based).
    Layer(u32, u8),
    /// An RLM receiver's loss window ends.
    RlmWindow(u32),
    /// A TCP retransmission timer.
    Rto(u32),
    /// A delayed-ACK timer.
    DelAck(u32),
    /// Record the time series.
    Sample,
    /// An overlay loop's shaper may release its next packet.
    LoopSend(u32),
    /// An overlay loop's ingress closes an interval and sends a control packet.
    LoopTick(u32),
    /// An overlay loop's egress interval ends.
    LoopInterval(u32),
}

#[derive(Debug)]
struct Event {
    at: Nanos,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed: the heap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Debug)]
struct Port {
    disc: Discipline,
    /// The port's random stream: an index into `Simulation::port_rngs`. A FIFO draws
    /// nothing, so FIFO ports (every host's access link) share stream 0 instead of
    /// holding 16 bytes each.
    rng: u32,
    /// The wire is busy until then.
    busy_until: Nanos,
    /// A `TxDone` event is scheduled (at `busy_until`): it starts the next packet.
    txdone_pending: bool,
    /// The most packets queued at once.
    peak_packets: u32,
    /// What a router port counts and samples for its link's report. Access ports (four
    /// per flow, never reported) carry none of it.
    record: Option<Box<LinkRecord>>,
    /// A [`Tracer`] is told of this port's packets.
    traced: bool,
    /// The port leaves a router: the first such port a packet meets is its edge.
    from_router: bool,
}

/// What a router port records for its link's report: counters, and time series sampled
/// every interval.
#[derive(Debug, Default)]
struct LinkRecord {
    tx_pkts: u64,
    tx_bytes: u64,
    drops: u64,
    queue: Vec<u32>,
    alpha: Vec<f64>,
    table: Vec<u32>,
    /// Packets' time in the queue, enqueue to the start of transmission.
    sojourn: Sojourn,
}

/// What sends a flow's packets. The open-loop ones draw their gaps (and ON/OFF periods,
/// and RLM's join experiments) from the flow's random stream, which they hold; TCP draws
/// nothing, so its flows keep no stream. Boxed, so a TCP flow's record stays small.
#[derive(Debug)]
enum Endpoint {
    Cbr(Box<Drawn<CbrSource>>),
    OnOff(Box<Drawn<OnOffSource>>),
    Tcp {
        sender: Box<TcpSender>,
        receiver: Box<TcpReceiver>,
        /// The time of the pending `Rto` event, if any.
        rto_event: Option<Nanos>,
    },
    Rlm(Box<RlmSession>),
}

/// An open-loop source with the flow's random stream.
#[derive(Debug)]
struct Drawn<S> {
    src: S,
    rng: Pcg64Mcg,
}

/// One RLM session: a CBR source per layer and the receiver's subscription state.
#[derive(Debug)]
struct RlmSession {
    /// The flow's random stream: the layers' gaps and the receiver's join experiments.
    rng: Pcg64Mcg,
    params: RlmParams,
    layers: Vec<CbrSource>,
    receiver: Option<RlmReceiver>,
    sent: u64,
    received: u64,
}

#[derive(Debug, Default, Clone)]
struct FlowStats {
    sent_pkts: u64,
    delivered_pkts: u64,
    delivered_bytes: u64,
    drops: DropCounts,
    ack_drops: u64,
    /// `delivered_bytes` at the last sample.
    sampled_bytes: u64,
    /// Bytes delivered in each sampling interval.
    series: IntervalSeries,
    /// When a finite transfer's last segment was acknowledged.
    completed: Option<Nanos>,
    /// Delay of the data packets that reached the destination.
    delay: FlowDelay,
}

#[derive(Debug)]
struct FlowRt {
    endpoint: Endpoint,
    seq: u32,
    /// TUF source tagging of a TCP flow: the packet counter of `X_n`.
    tuf_counter: Option<u32>,
    stats: FlowStats,
}

/// One overlay loop at run time: its shaper queue and ingress, its egress, and the payloads
/// of its control and feedback packets in flight (packets carry only their number).
#[derive(Debug)]
struct LoopRt {
    ingress: Ingress,
    egress: Egress,
    queue: Discipline,
    rng: Pcg64Mcg,
    /// The pending `LoopSend` event's time, if any.
    send_at: Option<Nanos>,
    /// The pending `LoopInterval` event's time, if any.
    interval_at: Option<Nanos>,
    controls: std::collections::VecDeque<Control>,
    feedbacks: std::collections::VecDeque<Feedback>,
    sent_pkts: u64,
    ingress_drops: u64,
    peak_queue: u32,
    control_sent: u64,
    control_lost: u64,
    feedback_sent: u64,
    feedback_lost: u64,
    lambda_series: Vec<f64>,
    mu_series: Vec<f64>,
    acc_series: Vec<f64>,
    queue_series: Vec<u32>,
}

/// Memory a run holds, as the simulator counts it: packet slots allocated, beside the most
/// packets its queues held at once. Allocations follow what is queued and in flight, not
/// buffer sizes or the run's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    /// Packet slots the ports' queue disciplines have allocated.
    pub queue_slots: usize,
    /// The sum over ports of the most packets each has queued at once.
    pub queue_peak_packets: usize,
    /// Ports.
    pub ports: usize,
    /// Slots for packets on the wire.
    pub wire_slots: usize,
    /// Slots of the event queue.
    pub event_slots: usize,
    /// Per-flow records the ports' disciplines hold (edges' estimators, per-flow queues
    /// and counters): at most, at each port, the flows that cross it.
    pub flow_slots: usize,
}

/// A simulation in progress.
#[derive(Debug)]
pub struct Simulation {
    scenario: ScenarioFile,
    topo: Topology,
    now: Nanos,
    end: Nanos,
    heap: BinaryHeap<Event>,
    next_seq: u64,
    ports: Vec<Port>,
    /// The ports' random streams (see `Port::rng`).
    port_rngs: Vec<Pcg64Mcg>,
    flows: Vec<FlowRt>,
    loops: Vec<LoopRt>,
    out: Vec<SimPacket>,
    /// Packets propagating on links, indexed by the slot their `Arrive` event names.
    in_flight: Vec<SimPacket>,
    free_slots: Vec<u32>,
    sample_interval: Nanos,
    samples: usize,
    events: u64,
    hops: u64,
    tracer: Option<Box<dyn Tracer>>,
}

impl Simulation {
    /// Builds a simulation of a validated scenario.
    pub fn new(scenario: &ScenarioFile) -> Result<Self, BuildError> {
        let topo = Topology::build(scenario)?;
        let seed = scenario.seed;
        let mut port_rngs = vec![Pcg64Mcg::seed_from_u64(stream_seed(seed, 1, u64::MAX))];
        let mut ports: Vec<Port> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| Port {
                disc: Discipline::build(p.discipline, scenario, p.rate_bps, p.buffer_bytes),
                rng: if p.discipline == DisciplineKind::Fifo {
                    0
                } else {
                    port_rngs.push(Pcg64Mcg::seed_from_u64(stream_seed(seed, 1, i as u64)));
                    (port_rngs.len() - 1) as u32
                },
                busy_until: Nanos::ZERO,
                from_router: topo.nodes[p.from as usize].is_router(),
                txdone_pending: false,
                peak_packets: 0,
                record: p.between_routers.then(Box::default),
                traced: false,
            })
            .collect();
        let mut flows = Vec::with_capacity(topo.flows.len());
        // Schedulers get weights relative to the smallest, so every quantum is at least
        // the default one; with all weights equal nothing is set.
        let min_weight = topo
            .flows
            .iter()
            .map(|f| f.weight)
            .fold(f64::INFINITY, f64::min);
        let weighted = topo.flows.iter().any(|f| f.weight != min_weight);
        let samples =
            (scenario.duration_s / (scenario.sample_interval_ms() / 1e3)).floor() as usize + 1;
        // One TCP configuration for every connection.
        let tcp = std::sync::Arc::new(scenario.tcp);
        for (i, f) in topo.flows.iter().enumerate() {
            let id = FlowId(i as u32);
            // Disciplines know a flow by its index at their port.
            if weighted {
                for h in f.fwd() {
                    ports[h.port as usize]
                        .disc
                        .set_scheduling_weight(FlowId(h.local), f.weight / min_weight);
                }
            }
            // The flow's edge is the first router on its path: weights live there.
            let edge = f.fwd().iter().find(|h| ports[h.port as usize].from_router);
            let edge_port = edge.map(|h| h.port as usize);
            if let Some(h) = edge {
                let port = &mut ports[h.port as usize];
                port.disc
                    .set_weight(FlowId(h.local), f.weight, &mut port_rngs[port.rng as usize]);
            }
            let mut flow_rng = Pcg64Mcg::seed_from_u64(stream_seed(seed, 2, i as u64));
            // TUF tags TCP at the source, which knows its RTT and timeout (TUF Section 3.4.1):
            // the packet counter n of X_n = I(n + D_F) starts at a random D_F.
            let tuf_counter = matches!(f.kind, FlowKind::Tcp | FlowKind::Web)
                .then_some(())
                .and(edge_port)
                .filter(|&e| ports[e].disc.is_tuf())
                .map(|_| flow_rng.random::<u32>());
            let open = || {
                f.open_loop
                    .as_deref()
                    .expect("open-loop flows have a source")
            };
            let endpoint = match f.kind {
                FlowKind::Udp => {
                    let o = open();
                    Endpoint::Cbr(Box::new(Drawn {
                        src: CbrSource::new(
                            o.rate_bps.expect("validated"),
                            o.packet_bytes,
                            o.jitter,
                        ),
                        rng: flow_rng,
                    }))
                }
                FlowKind::Onoff => {
                    let o = open();
                    let (on, off) = o.on_off.expect("validated");
                    Endpoint::OnOff(Box::new(Drawn {
                        src: OnOffSource::new(
                            CbrSource::new(
                                o.rate_bps.expect("validated"),
                                o.packet_bytes,
                                o.jitter,
                            ),
                            on,
                            off,
                        ),
                        rng: flow_rng,
                    }))
                }
                FlowKind::Rlm => {
                    let o = open();
                    let (layers, base_bps) = o.rlm_layers.expect("rlm flows have layers");
                    let params = RlmParams {
                        layers,
                        base_bps,
                        ..RlmParams::default()
                    };
                    Endpoint::Rlm(Box::new(RlmSession {
                        rng: flow_rng,
                        layers: (1..=layers)
                            .map(|i| CbrSource::new(params.layer_bps(i), o.packet_bytes, o.jitter))
                            .collect(),
                        params,
                        receiver: None,
                        sent: 0,
                        received: 0,
                    }))
                }
                FlowKind::Tcp | FlowKind::Web => Endpoint::Tcp {
                    sender: Box::new({
                        let mut s = TcpSender::with_limit(id, tcp.clone(), f.size_pkts);
                        if tcp.timer == TcpTimer::Ns2 {
                            // ns-2 starts each sender's timer clock at a random phase.
                            let tick = Nanos::from_secs_f64(tcp.clock_granularity_ms / 1e3);
                            s.set_timer_phase(Nanos(stream_seed(seed, 5, i as u64) % tick.0));
                        }
                        s
                    }),
                    receiver: Box::new(TcpReceiver::new(id, tcp.clone())),
                    rto_event: None,
                },
            };
            // Its data packets have one size, so they spend the same time on the wire at
            // every hop: what varies is queueing.
            let data_bytes = match f.kind {
                FlowKind::Tcp | FlowKind::Web => tcp.segment_bytes,
                FlowKind::Udp | FlowKind::Onoff | FlowKind::Rlm => open().packet_bytes,
            };
            let base = f.fwd().iter().fold(Nanos::ZERO, |t, h| {
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
                    delay: FlowDelay {
                        base,
                        ..FlowDelay::default()
                    },
                    ..FlowStats::default()
                },
            });
        }
        let loops = topo
            .loops
            .iter()
            .enumerate()
            .map(|(i, l)| LoopRt {
                ingress: Ingress::new(l.params, l.start),
                egress: Egress::new(l.params.interval),
                queue: Discipline::build(
                    l.queue,
                    scenario,
                    topo.ports[l.fwd[0]].rate_bps,
                    l.buffer_bytes,
                ),
                rng: Pcg64Mcg::seed_from_u64(stream_seed(seed, 4, i as u64)),
                send_at: None,
                interval_at: None,
                controls: Default::default(),
                feedbacks: Default::default(),
                sent_pkts: 0,
                ingress_drops: 0,
                peak_queue: 0,
                control_sent: 0,
                control_lost: 0,
                feedback_sent: 0,
                feedback_lost: 0,
                lambda_series: Vec::new(),
                mu_series: Vec::new(),
                acc_series: Vec::new(),
                queue_series: Vec::new(),
            })
            .collect();
        let mut sim = Simulation {
            end: Nanos::from_secs_f64(scenario.duration_s),
            scenario: scenario.clone(),
            topo,
            now: Nanos::ZERO,
            heap: BinaryHeap::with_capacity(1024),
            next_seq: 0,
            ports,
            port_rngs,
            flows,
            loops,
            out: Vec::with_capacity(64),
            in_flight: Vec::with_capacity(1024),
            free_slots: Vec::with_capacity(1024),
            sample_interval: Nanos::from_secs_f64(scenario.sample_interval_ms() / 1e3),
            samples: 0,
            events: 0,
            hops: 0,
            tracer: None,
        };
        for i in 0..sim.flows.len() {
            let start = sim.topo.flows[i].start;
            sim.schedule(start, EventKind::Start(i as u32));
        }
        for i in 0..sim.loops.len() {
            let start = sim.topo.loops[i].start;
            sim.schedule(start, EventKind::LoopTick(i as u32));
        }
        sim.schedule(sim.sample_interval, EventKind::Sample);
        Ok(sim)
    }

    /// From now on, tells `tracer` of every packet that `ports` (indices into
    /// [`Topology::ports`]) send or drop; replaces an earlier tracer. Call
    /// [`Simulation::finish_trace`] after the run to flush it.
    pub fn trace(&mut self, ports: &[usize], tracer: Box<dyn Tracer>) -> Result<(), NoSuchPort> {
        if let Some(&port) = ports.iter().find(|&&p| p >= self.ports.len()) {
            return Err(NoSuchPort {
                port,
                ports: self.ports.len(),
            });
        }
        for p in &mut self.ports {
            p.traced = false;
        }
        for &p in ports {
            self.ports[p].traced = true;
        }
        self.tracer = Some(tracer);
        Ok(())
    }

    /// Flushes the tracer (if any); returns what it recorded, or its first error.
    pub fn finish_trace(&mut self) -> std::io::Result<crate::trace::TraceEnd> {
        self.tracer.as_mut().map_or(
            Ok(crate::trace::TraceEnd {
                packets: 0,
                stopped_at: None,
            }),
            |t| t.finish(),
        )
    }

    /// The network being simulated.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The current simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// When the run ends.
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// What the run has allocated so far, and the most it has queued.
    pub fn memory(&self) -> MemoryUse {
        MemoryUse {
            queue_slots: self.ports.iter().map(|p| p.disc.reserved_slots()).sum(),
            queue_peak_packets: self.ports.iter().map(|p| p.peak_packets as usize).sum(),
            ports: self.ports.len(),
            wire_slots: self.in_flight.capacity(),
            event_slots: self.heap.capacity(),
            flow_slots: self.ports.iter().map(|p| p.disc.flow_slots()).sum(),
        }
    }

    /// Per-flow records each port's discipline holds (see [`MemoryUse::flow_slots`]).
    pub fn flow_slots_by_port(&self) -> Vec<usize> {
        self.ports.iter().map(|p| p.disc.flow_slots()).collect()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packets and bytes delivered to the flows' receivers so far (TCP: in-order segments).
    pub fn delivered(&self) -> (u64, u64) {
        self.flows.iter().fold((0, 0), |(p, b), f| {
            (p + f.stats.delivered_pkts, b + f.stats.delivered_bytes)
        })
    }

    #[inline]
    fn schedule(&mut self, at: Nanos, kind: EventKind) {
        self.next_seq += 1;
        self.heap.push(Event {
            at,
            seq: self.next_seq,
            kind,
        });
    }

    /// Flow `i`'s delay record so far (its queueing histogram, for distributions over
    /// packets of several flows); `None` past the last flow.
    pub fn flow_delay(&self, i: usize) -> Option<&FlowDelay> {
        self.flows.get(i).map(|f| &f.stats.delay)
    }

    /// Runs every event up to and including `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Nanos) {
        let t = t.min(self.end);
        while self.heap.peek().is_some_and(|e| e.at <= t) {
            let ev = self.heap.pop().expect("peeked");
            self.now = ev.at;
            self.events += 1;
            self.handle(ev.kind);
        }
        self.now = self.now.max(t);
    }

    /// Runs to the end and reports.
    pub fn run(mut self) -> SimReport {
        self.run_until(self.end);
        self.report()
    }

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::Arrive(slot) => {
                let p = self.in_flight[slot as usize];
                self.free_slots.push(slot);
                self.forward(p);
            }
            EventKind::TxDone(port) => {
                self.ports[port as usize].txdone_pending = false;
                self.start_tx(port as usize);
            }
            EventKind::Source(f) => self.source_tick(f as usize),
            EventKind::Start(f) => self.start_flow(f as usize),
            EventKind::Layer(f, layer) => self.layer_tick(f as usize, layer),
            EventKind::RlmWindow(f) => {
                let now = self.now;
                let flow = &mut self.flows[f as usize];
                if let Endpoint::Rlm(s) = &mut flow.endpoint {
                    if let Some(rx) = &mut s.receiver {
                        rx.on_window(now, s.sent, s.received, &mut s.rng);
                    }
                    let next = now + s.params.window;
                    self.schedule(next, EventKind::RlmWindow(f));
                }
            }
            EventKind::Rto(f) => self.rto(f as usize),
            EventKind::DelAck(f) => {
                let now = self.now;
                if let Endpoint::Tcp { receiver, .. } = &mut self.flows[f as usize].endpoint {
                    if let Some(ack) = receiver.on_delack_timer(now) {
                        self.forward(ack);
                    }
                }
            }
            EventKind::Sample => self.sample(),
            EventKind::LoopSend(l) => self.loop_send(l as usize),
            EventKind::LoopTick(l) => self.loop_tick(l as usize),
            EventKind::LoopInterval(l) => self.loop_interval(l as usize),
        }
    }

    /// The loop's id as a packet's flow: after the flows'.
    fn loop_flow(&self, l: usize) -> FlowId {
        FlowId((self.flows.len() + l) as u32)
    }

    /// A data packet reaches its loop's ingress: into the shaper queue.
    fn loop_enqueue(&mut self, l: usize, mut p: SimPacket) {
        let now = self.now;
        if let Some(o) = self.topo.flows[p.flow.index()].overlay {
            p.local = o.local;
        }
        let lp = &mut self.loops[l];
        if let Some(d) = lp.queue.enqueue(p, now, &mut lp.rng) {
            lp.ingress_drops += 1;
            self.record_drop(d);
            while let Some(d) = self.loops[l].queue.take_extra_drop() {
                self.loops[l].ingress_drops += 1;
                self.record_drop(d);
            }
        }
        let lp = &mut self.loops[l];
        lp.peak_queue = lp.peak_queue.max(lp.queue.len_bytes());
        self.loop_reschedule(l);
    }

    /// Keeps one `LoopSend` event pending, at the time the bucket next allows a packet.
    fn loop_reschedule(&mut self, l: usize) {
        let now = self.now;
        let lp = &mut self.loops[l];
        if lp.queue.is_empty() {
            lp.send_at = None;
            return;
        }
        let at = lp.ingress.ready_at(now);
        if lp.send_at != Some(at) {
            lp.send_at = Some(at);
            self.schedule(at, EventKind::LoopSend(l as u32));
        }
    }

    fn loop_send(&mut self, l: usize) {
        let now = self.now;
        let lp = &mut self.loops[l];
        if lp.send_at != Some(now) {
            return; // superseded by a rate change
        }
        lp.send_at = None;
        if lp.ingress.ready_at(now) > now {
            self.loop_reschedule(l);
            return;
        }
        if let Some(mut p) = lp.queue.dequeue(now) {
            lp.ingress.on_send(p.size, now);
            lp.sent_pkts += 1;
            p.shaped = true;
            self.forward(p);
        }
        self.loop_reschedule(l);
    }

    fn loop_tick(&mut self, l: usize) {
        let now = self.now;
        let lp = &mut self.loops[l];
        let c = lp.ingress.tick(now);
        lp.controls.push_back(c);
        lp.control_sent += 1;
        let def = &self.topo.loops[l];
        let (tau, size) = (def.params.tau, def.control_bytes);
        let id = self.loop_flow(l);
        self.forward(SimPacket::loop_message(
            id,
            Kind::Control,
            size,
            c.k as u32,
            now,
        ));
        self.schedule(now + tau, EventKind::LoopTick(l as u32));
    }

    fn loop_interval(&mut self, l: usize) {
        let now = self.now;
        let lp = &mut self.loops[l];
        if lp.interval_at != Some(now) {
            return; // the egress re-synchronized
        }
        lp.interval_at = None;
        let fb = lp.egress.on_interval_end(now);
        self.loop_interval_schedule(l);
        if let Some(fb) = fb {
            self.loop_feedback(l, fb);
        }
    }

    /// Keeps one `LoopInterval` event pending at the egress's next interval end.
    fn loop_interval_schedule(&mut self, l: usize) {
        let lp = &mut self.loops[l];
        if let Some(at) = lp.egress.next_interval_end() {
            if lp.interval_at != Some(at) {
                lp.interval_at = Some(at);
                self.schedule(at, EventKind::LoopInterval(l as u32));
            }
        }
    }

    /// The egress sends feedback back to the ingress over the reverse route.
    fn loop_feedback(&mut self, l: usize, fb: Feedback) {
        let now = self.now;
        let lp = &mut self.loops[l];
        lp.feedbacks.push_back(fb);
        lp.feedback_sent += 1;
        let size = self.topo.loops[l].control_bytes;
        let id = self.loop_flow(l);
        self.forward(SimPacket::loop_message(
            id,
            Kind::Feedback,
            size,
            fb.k as u32,
            now,
        ));
    }

    /// A control packet reaches the egress, or a feedback packet the ingress.
    fn loop_deliver(&mut self, p: SimPacket) {
        let now = self.now;
        let l = p.flow.index() - self.flows.len();
        let k = p.seq as u64;
        let lp = &mut self.loops[l];
        match p.kind {
            Kind::Control => {
                while lp.controls.front().is_some_and(|c| c.k < k) {
                    lp.controls.pop_front();
                    lp.control_lost += 1;
                }
                let Some(c) = lp.controls.pop_front() else {
                    return;
                };
                let fb = lp.egress.on_control(&c, now);
                self.loop_interval_schedule(l);
                if let Some(fb) = fb {
                    self.loop_feedback(l, fb);
                }
            }
            Kind::Feedback => {
                while lp.feedbacks.front().is_some_and(|f| f.k < k) {
                    lp.feedbacks.pop_front();
                    lp.feedback_lost += 1;
                }
                let Some(fb) = lp.feedbacks.pop_front() else {
                    return;
                };
                lp.ingress.on_feedback(&fb, now);
                self.loop_reschedule(l);
            }
            Kind::Data | Kind::Ack => unreachable!("loop messages only"),
        }
    }

    fn start_flow(&mut self, f: usize) {
        let now = self.now;
        let flow = &mut self.flows[f];
        match &mut flow.endpoint {
            Endpoint::Cbr(_) => self.schedule(now, EventKind::Source(f as u32)),
            Endpoint::OnOff(s) => {
                s.src.start(now, &mut s.rng);
                self.schedule(now, EventKind::Source(f as u32));
            }
            Endpoint::Rlm(s) => {
                s.receiver = Some(RlmReceiver::new(s.params, now, &mut s.rng));
                let window = s.params.window;
                for layer in 1..=s.params.layers {
                    self.schedule(now, EventKind::Layer(f as u32, layer));
                }
                self.schedule(now + window, EventKind::RlmWindow(f as u32));
            }
            Endpoint::Tcp { sender, .. } => {
                let mut out = std::mem::take(&mut self.out);
                sender.start(now, &mut out);
                self.send_tcp(f, &mut out);
                self.out = out;
            }
        }
    }

    fn source_tick(&mut self, f: usize) {
        let now = self.now;
        if now >= self.topo.flows[f].stop {
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
            let seq = flow.seq;
            flow.seq += 1;
            flow.stats.sent_pkts += 1;
            self.forward(SimPacket::data(FlowId(f as u32), size, seq, now));
        }
        if let Some(next) = next {
            self.schedule(next, EventKind::Source(f as u32));
        }
    }

    /// One layer of an RLM session: send if the receiver subscribes to it, tick again.
    fn layer_tick(&mut self, f: usize, layer: u8) {
        let now = self.now;
        if now >= self.topo.flows[f].stop {
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
            let seq = flow.seq;
            flow.seq += 1;
            flow.stats.sent_pkts += 1;
            self.forward(SimPacket::data(FlowId(f as u32), size, seq, now));
        }
        self.schedule(next, EventKind::Layer(f as u32, layer));
    }

    /// Hands the TCP sender's output to the network and keeps one timer event pending.
    fn send_tcp(&mut self, f: usize, out: &mut Vec<SimPacket>) {
        let now = self.now;
        let stop = self.topo.flows[f].stop;
        let flow = &mut self.flows[f];
        flow.stats.sent_pkts += out.len() as u64;
        if let (Some(n), Endpoint::Tcp { sender, .. }) = (&mut flow.tuf_counter, &flow.endpoint) {
            // TUF at the source: tag = T(B(X_n) / w) with Padhye's B (TUF Section 3.4.1).
            let cfg = &self.scenario.tcp;
            let rtt = sender
                .srtt()
                .unwrap_or(sender.rto())
                .as_secs_f64()
                .max(1e-6);
            let t0 = sender.rto().as_secs_f64();
            let b = if cfg.delayed_ack { 2.0 } else { 1.0 };
            let w = self.topo.flows[f].weight;
            for p in out.iter_mut() {
                *n = n.wrapping_add(1);
                let x = tuf::van_der_corput(*n);
                let rate = tuf::tcp_throughput(
                    x,
                    rtt,
                    t0,
                    cfg.max_window_segments as f64,
                    b,
                    cfg.segment_bytes,
                );
                p.tag = tuf::tag_of_rate(rate / w);
            }
        }
        if let Endpoint::Tcp {
            sender, rto_event, ..
        } = &mut flow.endpoint
        {
            if now >= stop {
                sender.stop();
            }
            if let Some(d) = sender.deadline() {
                if rto_event.is_none_or(|e| d < e) {
                    *rto_event = Some(d);
                    self.schedule(d, EventKind::Rto(f as u32));
                }
            }
        }
        for p in out.drain(..) {
            self.forward(p);
        }
    }

    fn rto(&mut self, f: usize) {
        let now = self.now;
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
        let mut out = std::mem::take(&mut self.out);
        sender.on_timeout(now, &mut out);
        self.send_tcp(f, &mut out);
        self.out = out;
    }

    /// Moves a packet one step: deliver it, or enqueue it at the next port of its path.
    #[inline]
    fn forward(&mut self, mut p: SimPacket) {
        let now = self.now;
        let hop = p.hop as usize;
        let next = match p.kind {
            Kind::Data => {
                let def = &self.topo.flows[p.flow.index()];
                if let Some(o) = def.overlay {
                    if p.hop == o.entry && !p.shaped {
                        self.loop_enqueue(o.id as usize, p);
                        return;
                    }
                    if p.hop == o.exit {
                        self.loops[o.id as usize].egress.on_data(p.size);
                    }
                }
                let def = &self.topo.flows[p.flow.index()];
                def.fwd().get(hop).map(|h| (h.port as usize, h.local))
            }
            Kind::Ack => {
                let def = &self.topo.flows[p.flow.index()];
                def.rev().get(hop).map(|h| (h.port as usize, h.local))
            }
            Kind::Control => {
                let def = &self.topo.loops[p.flow.index() - self.flows.len()];
                def.fwd.get(hop).map(|&port| (port, def.fwd_local[hop]))
            }
            Kind::Feedback => {
                let def = &self.topo.loops[p.flow.index() - self.flows.len()];
                def.rev.get(hop).map(|&port| (port, def.rev_local[hop]))
            }
        };
        let Some((port_id, local)) = next else {
            if matches!(p.kind, Kind::Control | Kind::Feedback) {
                self.loop_deliver(p);
            } else {
                self.deliver(p);
            }
            return;
        };
        p.local = local;
        p.enq = now;
        let port = &mut self.ports[port_id];
        let rng = &mut self.port_rngs[port.rng as usize];
        if !p.entered && port.from_router {
            // The first router the packet meets is its edge: it (re)writes the label.
            p.entered = true;
            port.disc.label_at_edge(&mut p, now, rng);
        }
        if !port.txdone_pending && now >= port.busy_until && port.disc.passes_through(p.size) {
            // An idle drop-tail port: what enqueue and start_tx would do, without a slot.
            port.peak_packets = port.peak_packets.max(1);
            self.transmit(port_id, p);
            return;
        }
        if let Some(d) = port.disc.enqueue(p, now, rng) {
            self.port_drop(port_id, d);
            while let Some(d) = self.ports[port_id].disc.take_extra_drop() {
                self.port_drop(port_id, d);
            }
        }
        // A TxDone event is only scheduled when a packet waits behind the one on the wire.
        let port = &mut self.ports[port_id];
        // A queue of u32::MAX packets would need more than a u32 buffer of bytes.
        port.peak_packets = port.peak_packets.max(port.disc.len_packets() as u32);
        if !port.txdone_pending {
            if now >= port.busy_until {
                self.start_tx(port_id);
            } else if !port.disc.is_empty() {
                port.txdone_pending = true;
                let at = port.busy_until;
                self.schedule(at, EventKind::TxDone(port_id as u32));
            }
        }
    }

    /// A drop at a port: counted there, traced if watched, and charged to its flow.
    fn port_drop(&mut self, port_id: usize, d: Dropped<SimPacket>) {
        let port = &mut self.ports[port_id];
        if let Some(r) = &mut port.record {
            r.drops += 1;
        }
        if port.traced {
            if let Some(t) = &mut self.tracer {
                t.dropped(self.now, port_id, &d.packet, d.reason);
            }
        }
        self.record_drop(d);
    }

    fn record_drop(&mut self, d: Dropped<SimPacket>) {
        // Lost loop messages are counted by the loop when a later one arrives.
        let Some(rt) = self.flows.get_mut(d.packet.flow.index()) else {
            return;
        };
        let st = &mut rt.stats;
        match d.packet.kind {
            Kind::Data => st.drops.add(d.reason.code()),
            Kind::Ack => st.ack_drops += 1,
            Kind::Control | Kind::Feedback => {}
        }
    }

    fn start_tx(&mut self, port_id: usize) {
        let now = self.now;
        let port = &mut self.ports[port_id];
        let next = port.disc.dequeue(now);
        // Disciplines that manage the queue at its head (CoDel) drop while dequeueing.
        while let Some(d) = self.ports[port_id].disc.take_extra_drop() {
            self.port_drop(port_id, d);
        }
        let Some(p) = next else {
            return;
        };
        self.transmit(port_id, p);
    }

    /// Puts a packet that has left port `port_id`'s queue on the wire.
    fn transmit(&mut self, port_id: usize, mut p: SimPacket) {
        let now = self.now;
        let port = &mut self.ports[port_id];
        if port.traced {
            if let Some(t) = &mut self.tracer {
                t.sent(now, port_id, &p);
            }
        }
        if let Some(r) = &mut port.record {
            r.tx_pkts += 1;
            r.tx_bytes += p.size as u64;
            r.sojourn.record(now.saturating_sub(p.enq).0);
        }
        self.hops += 1;
        let def = &self.topo.ports[port_id];
        let tx = Nanos::transmission(p.size, def.rate_bps);
        p.hop += 1;
        let arrive = now + tx + def.delay;
        // Packets on the wire wait in a slab; events carry only the slot, keeping
        // heap entries small.
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.in_flight[slot as usize] = p;
                slot
            }
            None => {
                self.in_flight.push(p);
                (self.in_flight.len() - 1) as u32
            }
        };
        self.schedule(arrive, EventKind::Arrive(slot));
        let port = &mut self.ports[port_id];
        port.busy_until = now + tx;
        if !port.disc.is_empty() {
            port.txdone_pending = true;
            self.schedule(now + tx, EventKind::TxDone(port_id as u32));
        }
    }

    fn deliver(&mut self, p: SimPacket) {
        let now = self.now;
        let f = p.flow.index();
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
                flow.stats.delivered_bytes += n as u64 * self.scenario.tcp.segment_bytes as u64;
                match action {
                    AckAction::Send(ack) => self.forward(ack),
                    AckAction::Delay(at) => self.schedule(at, EventKind::DelAck(f as u32)),
                }
            }
            (Endpoint::Tcp { sender, .. }, Kind::Ack) => {
                let mut out = std::mem::take(&mut self.out);
                sender.on_ack(&p, now, &mut out);
                if flow.stats.completed.is_none() && sender.is_complete() {
                    flow.stats.completed = Some(now);
                }
                self.send_tcp(f, &mut out);
                self.out = out;
            }
            (_, Kind::Control | Kind::Feedback) => unreachable!("loop messages go to loops"),
        }
    }

    fn sample(&mut self) {
        self.samples += 1;
        for f in &mut self.flows {
            let st = &mut f.stats;
            st.series.push(st.delivered_bytes - st.sampled_bytes);
            st.sampled_bytes = st.delivered_bytes;
        }
        for p in &mut self.ports {
            if let Some(rec) = &mut p.record {
                rec.queue.push(p.disc.len_bytes());
                if let Some(a) = p.disc.alpha() {
                    rec.alpha.push(a / 1e6);
                }
                if let Some(n) = p.disc.table_entries() {
                    rec.table.push(n as u32);
                }
            }
        }
        for l in &mut self.loops {
            let e = l.egress.stats();
            l.lambda_series.push(l.ingress.rate_bps() / 1e6);
            l.mu_series.push(e.mu_bps / 1e6);
            l.acc_series
                .push(e.accumulation_bytes / l.ingress.params().packet_bytes as f64);
            l.queue_series.push(l.queue.len_bytes());
        }
        let next = self.now + self.sample_interval;
        if next <= self.end {
            self.schedule(next, EventKind::Sample);
        }
    }

    /// The results so far.
    pub fn report(&self) -> SimReport {
        let dur = self.now.as_secs_f64();
        let interval = self.sample_interval.as_secs_f64();
        let fair = self.topo.reference_allocation();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, (rt, def)) in self.flows.iter().zip(&self.topo.flows).enumerate() {
            let active = (def.stop.min(self.now).saturating_sub(def.start)).as_secs_f64();
            let st = &rt.stats;
            let (retransmits, timeouts) = match &rt.endpoint {
                Endpoint::Tcp { sender, .. } => {
                    (sender.stats().retransmits, sender.stats().timeouts)
                }
                _ => (0, 0),
            };
            let series_mbps = st
                .series
                .iter()
                .map(|b| b as f64 * 8.0 / interval / 1e6)
                .collect();
            flows.push(FlowReport {
                flow: i as u32,
                kind: def.kind.name(),
                src: self.topo.nodes[def.src].name().into_owned(),
                dst: self.topo.nodes[def.dst].name().into_owned(),
                offered_mbps: def
                    .open_loop
                    .as_deref()
                    .and_then(|o| o.rate_bps)
                    .map(|r| r / 1e6),
                weight: def.weight,
                throughput_mbps: if active > 0.0 {
                    st.delivered_bytes as f64 * 8.0 / active / 1e6
                } else {
                    0.0
                },
                sent_pkts: st.sent_pkts,
                delivered_pkts: st.delivered_pkts,
                dropped_pkts: st.drops.total(),
                drops: DropReason::ALL
                    .iter()
                    .filter(|r| st.drops.get(r.code()) > 0)
                    .map(|r| (r.name(), st.drops.get(r.code())))
                    .collect(),
                ack_drops: st.ack_drops,
                size_pkts: def.size_pkts,
                fct_s: st
                    .completed
                    .map(|t| t.saturating_sub(def.start).as_secs_f64()),
                retransmits,
                timeouts,
                series_mbps,
                delay: st.delay.report(),
            });
        }
        // Jain's index over the flows with a reference share; raw throughputs if none has one.
        let normalized: Vec<f64> = flows
            .iter()
            .zip(&fair)
            .filter(|(_, a)| **a > 0.0 && a.is_finite())
            .map(|(f, a)| f.throughput_mbps * 1e6 / a)
            .collect();
        let normalized = if normalized.is_empty() {
            flows.iter().map(|f| f.throughput_mbps).collect()
        } else {
            normalized
        };
        let links = self
            .ports
            .iter()
            .zip(&self.topo.ports)
            .filter(|(_, d)| d.between_routers)
            .map(|(p, d)| (p, d, p.record.as_deref().expect("router ports record")))
            .map(|(p, d, rec)| LinkReport {
                from: self.topo.nodes[d.from as usize].name().into_owned(),
                to: self.topo.nodes[d.to as usize].name().into_owned(),
                discipline: d.discipline.name(),
                rate_mbps: d.rate_bps / 1e6,
                tx_pkts: rec.tx_pkts,
                // Busy time within the run: a packet still on the wire at the end counts
                // only for the part of its transmission that happened.
                utilization: if dur > 0.0 {
                    let unsent = p.busy_until.saturating_sub(self.now).as_secs_f64();
                    ((rec.tx_bytes as f64 * 8.0 / d.rate_bps - unsent) / dur).max(0.0)
                } else {
                    0.0
                },
                dropped_pkts: rec.drops,
                mean_queue_bytes: if rec.queue.is_empty() {
                    0.0
                } else {
                    rec.queue.iter().map(|&q| q as f64).sum::<f64>() / rec.queue.len() as f64
                },
                peak_queue_pkts: p.peak_packets as u64,
                sojourn_ms: rec.sojourn.stats(),
                sojourn: rec.sojourn.hist.clone(),
                queue_bytes: rec.queue.clone(),
                alpha_mbps: rec.alpha.clone(),
                table_entries: rec.table.clone(),
                may: p.disc.may_stats().map(|m| MayTableReport {
                    inserts: m.inserts,
                    refused_full: m.refused_full,
                    expired: m.expired,
                    peak_entries: m.peak_entries as u64,
                    peak_bytes: (m.peak_entries * csfq_algo::may::ENTRY_BYTES) as u64,
                }),
            })
            .collect();
        SimReport {
            scenario: self.scenario.name.clone(),
            discipline: self.scenario.discipline.name(),
            seed: self.scenario.seed,
            duration_s: dur,
            sample_interval_s: interval,
            flows,
            links,
            jain_index: jain_index(&normalized),
            events: self.events,
            packet_hops: self.hops,
            loops: self
                .loops
                .iter()
                .zip(&self.topo.loops)
                .map(|(rt, d)| {
                    let (e, i) = (rt.egress.stats(), rt.ingress.stats());
                    LoopReport {
                        name: d.name.clone(),
                        ingress: self.topo.nodes[d.ingress].name().into_owned(),
                        egress: self.topo.nodes[d.egress].name().into_owned(),
                        service: match d.params.service {
                            csfq_algo::overlay::Service::BestEffort => "best-effort",
                            csfq_algo::overlay::Service::Assured { .. } => "assured",
                            csfq_algo::overlay::Service::QuasiLeased { .. } => "quasi-leased",
                        },
                        rate_mbps: match d.params.service {
                            csfq_algo::overlay::Service::BestEffort => None,
                            csfq_algo::overlay::Service::Assured { rate_bps, .. }
                            | csfq_algo::overlay::Service::QuasiLeased { rate_bps } => {
                                Some(rate_bps / 1e6)
                            }
                        },
                        tau_ms: d.params.tau.as_secs_f64() * 1e3,
                        sent_pkts: rt.sent_pkts,
                        ingress_drops: rt.ingress_drops,
                        peak_ingress_queue_bytes: rt.peak_queue,
                        network_lost_bytes: e.lost_bytes,
                        control_sent: rt.control_sent,
                        control_lost: rt.control_lost,
                        feedback_sent: rt.feedback_sent,
                        feedback_lost: rt.feedback_lost,
                        epochs: i.epochs,
                        resyncs: e.resyncs,
                        lambda_mbps: rt.lambda_series.clone(),
                        mu_mbps: rt.mu_series.clone(),
                        accumulation_pkts: rt.acc_series.clone(),
                        ingress_queue_bytes: rt.queue_series.clone(),
                    }
                })
                .collect(),
        }
    }
}
