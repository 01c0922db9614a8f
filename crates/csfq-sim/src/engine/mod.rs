//! The discrete-event engine: it owns the run's parts and moves packets between them.
//!
//! - `crate::events`: the clock and the event queue (time, then scheduling order);
//! - `ports` (here): every output port's discipline and wire, where packets queue, are
//!   dropped and are sent;
//! - [`crate::hosts`]: the flows' sources, TCP senders and receivers;
//! - [`crate::overlay`]: the edge-to-edge loops' shapers and controllers;
//! - `report` (here): what the run produced, from all of them;
//! - `admit` (here): the guard every front-end runs before a simulation
//!   ([`Simulation::admit`]);
//! - `prefetch` (here): a cache hint, by which the loop asks for the next event's data
//!   while it handles the current one.
//!
//! A packet's path, per hop: `Simulation::forward` finds the next port of its path (or
//! its loop's shaper, or its destination), the port labels it if this is its edge, then
//! sends it at once, queues it, or drops it; when it leaves the port it travels for its
//! transmission and propagation time and arrives (an `Arrive` event) at the next node,
//! which forwards it again. At a port whose discipline departs in order, a queued packet
//! is put on the wire at once, its transmission starting when the ones before it end (see
//! `crate::events` on the canonical order). A packet whose next hop is a private one (a
//! host's access port that its flow alone crosses; `crate::events` says when) is handed to it
//! as it leaves the port before, with no arrival event at the router between, and most
//! often taken by the host then, ahead of its arrival (`Simulation::place_handed`; the
//! canonical order says when). A packet's
//! `hop` counts the ports it has left. Nothing on that path allocates once the queues and
//! the event heap have grown to their working size.
//!
//! Hosts and loops do not call the engine back: they return `Action`s (send this packet,
//! schedule that event), which the engine carries out in the order given. The order of
//! scheduling is part of the result (it breaks ties between events at one instant).

mod admit;
mod ports;
mod prefetch;
mod report;

use csfq_algo::Nanos;

use crate::config::Scenario;
use crate::discipline::Discipline;
use crate::events::{Action, EventKind, Events};
use crate::hosts::tcp::TcpParams;
use crate::hosts::Hosts;
use crate::kinds::DisciplineKind;
use crate::net::{BuildError, Topology};
use crate::observe::delay::{FlowDelay, Precision};
use crate::observe::report::SimReport;
use crate::observe::trace::{CannotTrace, TraceEnd, Tracer};
use crate::overlay::Loops;
use crate::packet::{Kind, SimPacket};
use ports::Ports;

pub use admit::{Admitted, Refused};

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
    topo: Topology,
    /// The scenario's name, discipline and seed, for the report.
    name: String,
    discipline: DisciplineKind,
    seed: u64,
    end: Nanos,
    events: Events,
    ports: Ports,
    hosts: Hosts,
    loops: Loops,
    sample_interval: Nanos,
    samples: usize,
    /// Actions hosts and loops asked for and the engine has not yet carried out. A
    /// handler appends its own after the end and carries out just those (see
    /// [`Simulation::act`]): one list, reused, so handling an event allocates nothing.
    actions: Vec<Action>,
}

impl Simulation {
    /// Builds a simulation of a checked scenario.
    pub fn new(s: &Scenario) -> Result<Self, BuildError> {
        Self::on(Topology::build(s)?, s)
    }

    /// Builds the simulation of `s` on its network `topo`, already built.
    fn on(topo: Topology, s: &Scenario) -> Result<Self, BuildError> {
        let ports = Ports::build(&topo, s)?;
        let samples = (s.duration_s / (s.sample_interval_ms() / 1e3)).floor() as usize + 1;
        // Flows' histograms at twice the links' relative error (validated: each has a
        // precision): there are many flows, and a finer layout costs each flow memory and
        // its packets a deeper search (observe::delay's note).
        let precision = Precision::for_error(2.0 * s.delay_precision()).unwrap_or_default();
        let hosts = Hosts::build(
            &topo,
            TcpParams::from(&s.tcp),
            s.seed,
            samples,
            precision,
            |i| {
                ports
                    .edge(topo.fwd_ports(i))
                    .is_some_and(Discipline::is_tuf)
            },
        );
        let loops = Loops::build(&topo, s)?;
        let mut sim = Simulation {
            end: Nanos::from_secs_f64(s.duration_s),
            name: s.name.clone(),
            discipline: s.discipline,
            seed: s.seed,
            topo,
            events: Events::new(),
            ports,
            hosts,
            loops,
            sample_interval: Nanos::from_secs_f64(s.sample_interval_ms() / 1e3),
            samples: 0,
            actions: Vec::with_capacity(64),
        };
        for (i, f) in sim.topo.flows.iter().enumerate() {
            sim.events.schedule(f.start, EventKind::Start(i as u32));
        }
        for (i, l) in sim.topo.loops.iter().enumerate() {
            sim.events.schedule(l.start, EventKind::LoopTick(i as u32));
        }
        sim.events.schedule(sim.sample_interval, EventKind::Sample);
        Ok(sim)
    }

    /// From now on, tells `tracer` of every packet that `ports` (indices into
    /// [`Topology::ports`]) send or drop; replaces an earlier tracer. Call
    /// [`Simulation::finish_trace`] after the run to flush it.
    pub fn trace(&mut self, ports: &[usize], tracer: Box<dyn Tracer>) -> Result<(), CannotTrace> {
        self.ports
            .trace(ports, tracer, &mut self.events, &self.topo)
    }

    /// Keeps what a trace begun after the run has started needs ([`Simulation::trace`]):
    /// the packets its hosts took ahead of their arrival while they are still queued at
    /// the port before their last hop. Call before running; without it such a trace is
    /// refused ([`CannotTrace::NotKept`]) once a host has taken one.
    pub fn keep_for_a_later_trace(&mut self) {
        self.ports.keep_for_a_later_trace();
    }

    /// Flushes the tracer (if any); returns what it recorded, or its first error.
    pub fn finish_trace(&mut self) -> std::io::Result<TraceEnd> {
        self.ports.finish_trace()
    }

    /// The network being simulated.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The current simulated time.
    pub fn now(&self) -> Nanos {
        self.events.now()
    }

    /// When the run ends.
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// What the run has allocated so far, and the most it has queued.
    pub fn memory(&self) -> MemoryUse {
        let ports = &self.ports.ports;
        MemoryUse {
            queue_slots: ports.iter().map(|p| p.disc.reserved_slots()).sum(),
            queue_peak_packets: ports.iter().map(|p| p.peak_packets as usize).sum(),
            ports: ports.len(),
            wire_slots: self.ports.wire_slots(),
            event_slots: self.events.capacity(),
            flow_slots: ports.iter().map(|p| p.disc.flow_slots()).sum(),
        }
    }

    /// Per-flow records each port's discipline holds (see [`MemoryUse::flow_slots`]).
    pub fn flow_slots_by_port(&self) -> Vec<usize> {
        self.ports
            .ports
            .iter()
            .map(|p| p.disc.flow_slots())
            .collect()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events.handled()
    }

    /// Packets and bytes delivered to the flows' receivers so far (TCP: in-order segments).
    pub fn delivered(&self) -> (u64, u64) {
        self.hosts.delivered()
    }

    /// How many flows have delivered at least one packet so far: in a run where more
    /// flows start at once than the bottleneck's buffer holds, the rest lose their first
    /// packets and wait out TCP's initial retransmission timeout.
    pub fn flows_served(&self) -> usize {
        self.hosts.flows_served()
    }

    /// Flow `i`'s delay record so far (its queueing histogram, for distributions over
    /// packets of several flows); `None` past the last flow.
    pub fn flow_delay(&self, i: usize) -> Option<&FlowDelay> {
        self.hosts.flows.get(i).map(|f| &f.stats.delay)
    }

    /// Runs every event up to and including `t` (capped at the end of the run). The
    /// network is then as of `t`; a host may have taken a packet that arrives later than
    /// `t`, ahead of its arrival (the canonical order's "delivered ahead"), so its flow's
    /// counts read between steps may run ahead of `t` by a packet's last two hops. What
    /// the run reports at its end is the same however it was stepped.
    pub fn run_until(&mut self, t: Nanos) {
        let t = t.min(self.end);
        while let Some(kind) = self.events.next_until(t) {
            if let Some(next) = self.events.peek() {
                self.ports.prefetch(next);
            }
            self.handle(kind);
        }
        self.events.advance_to(t);
        // What a report reads is as of `t`: departures fixed earlier and started by then
        // (at the end, at every port, for the count of transmissions).
        if t == self.end {
            self.ports.catch_up_all(t, &self.topo.ports);
        } else {
            self.ports.catch_up_observed(t, &self.topo.ports);
        }
    }

    /// Runs to the end and reports.
    pub fn run(mut self) -> SimReport {
        self.run_until(self.end);
        self.report()
    }

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::Arrive(slot) => {
                let p = self.ports.arrival(slot, &mut self.events);
                self.forward(p, self.events.now());
            }
            EventKind::TxDone(port) => {
                let hosts = &mut self.hosts;
                self.ports
                    .tx_done(port as usize, &self.topo, &mut self.events, |d| {
                        hosts.record_drop(d)
                    });
                self.place_handed();
            }
            EventKind::Sample => self.sample(),
            _ => self.handle_timer(kind),
        }
    }

    /// A host's or a loop's own event: it says what to do, the engine does it.
    fn handle_timer(&mut self, kind: EventKind) {
        let now = self.events.now();
        let flows = &self.topo.flows;
        let start = self.actions.len();
        let out = &mut self.actions;
        match kind {
            EventKind::Source(f) => {
                let f = f as usize;
                self.hosts.source_tick(f, &flows[f], now, out);
            }
            EventKind::Start(f) => {
                let f = f as usize;
                self.hosts.start(f, &flows[f], now, out);
            }
            EventKind::Layer(f, layer) => {
                let f = f as usize;
                self.hosts.layer_tick(f, layer, &flows[f], now, out);
            }
            EventKind::RlmWindow(f) => self.hosts.rlm_window(f as usize, now, out),
            EventKind::Rto(f) => {
                let f = f as usize;
                self.hosts.rto(f, &flows[f], now, out);
            }
            EventKind::DelAck(f) => self.hosts.delack(f as usize, now, out),
            EventKind::LoopSend(l) => self.loops.send(l as usize, now, out),
            EventKind::LoopTick(l) => {
                let l = l as usize;
                self.loops.tick(l, &self.topo.loops[l], now, out);
            }
            EventKind::LoopInterval(l) => {
                let l = l as usize;
                self.loops.interval(l, &self.topo.loops[l], now, out);
            }
            EventKind::Arrive(_) | EventKind::TxDone(_) | EventKind::Sample => {
                unreachable!("the engine's own events")
            }
        }
        self.act(start, now);
    }

    /// Carries out, in order, the actions from `start` on, then forgets them. Sending a
    /// packet may deliver one, whose handler appends and carries out its own actions
    /// before the next of these: as if each handler had sent and scheduled itself.
    /// `now` is the time the actions were asked for: the event's, or that of a packet
    /// delivered ahead.
    fn act(&mut self, start: usize, now: Nanos) {
        let mut i = start;
        while let Some(&a) = self.actions.get(i) {
            i += 1;
            match a {
                Action::Send(p) => self.forward(p, now),
                Action::At(at, kind) => self.events.schedule(at, kind),
            }
        }
        self.actions.truncate(start);
    }

    /// Moves a packet one step: to its loop's shaper, to the next port of its path, or,
    /// at the end of its path, to its destination.
    /// `now` is the event's time, or, for what a host sends in answer to a packet
    /// delivered ahead, the time it answers.
    #[inline]
    fn forward(&mut self, mut p: SimPacket, now: Nanos) {
        let hop = p.hop as usize;
        let next = match p.kind {
            Kind::Data => {
                let f = p.flow.index();
                let overlay = if self.topo.rides_overlay(f) {
                    self.topo.flows[f].overlay
                } else {
                    None
                };
                if let Some(o) = overlay {
                    if p.hop == o.entry && !p.shaped {
                        // Into the loop's shaper queue; it sends the packet on later.
                        p.local = o.local;
                        let start = self.actions.len();
                        let hosts = &mut self.hosts;
                        let out = &mut self.actions;
                        self.loops
                            .enqueue(o.id as usize, p, now, out, |d| hosts.record_drop(d));
                        self.act(start, now);
                        return;
                    }
                    if p.hop == o.exit {
                        self.loops.egress_data(o.id as usize, p.size);
                    }
                }
                self.topo
                    .hop(f, true, hop)
                    .map(|h| (h.port as usize, h.local))
            }
            Kind::Ack => self
                .topo
                .hop(p.flow.index(), false, hop)
                .map(|h| (h.port as usize, h.local)),
            Kind::Control => {
                let def = &self.topo.loops[self.loops.of_message(&p)];
                def.fwd.get(hop).map(|&port| (port, def.fwd_local[hop]))
            }
            Kind::Feedback => {
                let def = &self.topo.loops[self.loops.of_message(&p)];
                def.rev.get(hop).map(|&port| (port, def.rev_local[hop]))
            }
        };
        let Some((port_id, local)) = next else {
            self.deliver(p, now);
            return;
        };
        p.local = local;
        p.enq = now;
        let hosts = &mut self.hosts;
        self.ports
            .send(port_id, p, now, &self.topo, &mut self.events, |d| {
                hosts.record_drop(d)
            });
        self.place_handed();
    }

    /// A packet at the end of its path, at `now`: to its flow's host, or its loop's edge.
    #[inline(never)]
    fn deliver(&mut self, p: SimPacket, now: Nanos) {
        let start = self.actions.len();
        if matches!(p.kind, Kind::Control | Kind::Feedback) {
            let def = &self.topo.loops[self.loops.of_message(&p)];
            self.loops.deliver(p, def, now, &mut self.actions);
        } else {
            let def = &self.topo.flows[p.flow.index()];
            self.hosts.deliver(p, def, now, &mut self.actions);
        }
        self.act(start, now);
    }

    /// Places each packet just handed to a private hop: delivered to its host ahead of
    /// its arrival, where nothing but that packet could change what the host does with it
    /// until then, or else put on the hop's wire to arrive as an event. Ahead, when: it
    /// arrives by the end of the run and before the sample after next (the bytes it
    /// delivers past the next sample are counted in the interval after it:
    /// [`Hosts::carry_past_sample`]); no packet before it on that wire is still to arrive
    /// (the host sees its packets in order); the host's timers are not due by then
    /// ([`Hosts::quiet_through`]); and the host answers, if at all, on an access port of
    /// its own, drop-tail and not traced, whose queue it alone moves
    /// ([`Topology::delivers_ahead`]). What the host schedules and sends then takes its
    /// scheduling order now, not at the packet's arrival: the canonical order of events at
    /// one instant (see [`crate::events`]). The hosts' state between two events may so be
    /// ahead of the clock by the time a packet takes over its last two hops; what a run
    /// reports is not (every delivery it counts arrived by the end).
    ///
    /// Called after every send; most hand nothing on, and that check is inlined there.
    #[inline(always)]
    fn place_handed(&mut self) {
        if self.ports.handed_any() {
            self.place_handed_now();
        }
    }

    /// [`Simulation::place_handed`] with a packet handed on.
    #[inline(never)]
    fn place_handed_now(&mut self) {
        while let Some(a) = self.ports.take_ahead() {
            let (f, data) = (a.packet.flow.index(), a.packet.kind == Kind::Data);
            // Where the host answers: looked up only once the cheaper conditions hold.
            let answers_untraced = || {
                let path = if data {
                    self.topo.rev(f)
                } else {
                    self.topo.fwd(f)
                };
                path.first()
                    .is_some_and(|h| !self.ports.traced(h.port as usize))
            };
            let next_sample = self.next_sample();
            let ahead = a.at <= self.end
                && a.at < Nanos(next_sample.0.saturating_add(self.sample_interval.0))
                && matches!(a.packet.kind, Kind::Data | Kind::Ack)
                && self.topo.delivers_ahead(f, data)
                && !self.ports.wire_pending(a.port as usize)
                && self.hosts.quiet_through(f, data, a.at)
                && answers_untraced();
            if !ahead {
                self.ports.onto_wire(
                    a.port as usize,
                    a.packet,
                    a.at,
                    a.packet.enq,
                    &mut self.events,
                );
                continue;
            }
            let now = self.events.now();
            self.ports.keep_delivered(&a, now);
            let before = self.hosts.delivered_bytes(f);
            self.deliver(a.packet, a.at);
            if a.at >= next_sample {
                let bytes = self.hosts.delivered_bytes(f) - before;
                self.hosts.carry_past_sample(f, bytes);
            }
        }
    }

    /// When the next sample is taken (past the end if none is left).
    #[inline]
    fn next_sample(&self) -> Nanos {
        Nanos(
            self.sample_interval
                .0
                .saturating_mul(self.samples as u64 + 1),
        )
    }

    fn sample(&mut self) {
        self.samples += 1;
        self.hosts.sample();
        self.ports.sample(self.events.now(), &self.topo.ports);
        self.loops.sample();
        let next = self.events.now() + self.sample_interval;
        if next <= self.end {
            self.events.schedule(next, EventKind::Sample);
        }
    }
}

#[cfg(test)]
mod tests;
