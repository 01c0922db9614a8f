//! Output ports: each directed link's queue discipline, its wire, and what a router port
//! records for its link's report. Here a packet is labeled at its edge, enqueued or
//! dropped, and put on the wire; its arrival at the far end is an `Arrive` event naming its
//! slot in the in-flight slab, or, where the next hop is a private one, it is handed on to
//! that hop at once ([`Ports::hand_on`]).
//!
//! Where a packet is dropped, and why: [`Ports::send`] (the discipline refuses it on
//! arrival, or pushes others out to make room) and [`Ports::tx_done`] (disciplines that
//! manage the queue at its head, CoDel, drop while dequeueing). Each drop carries its
//! `DropReason` from `csfq-algo`; the port counts it, a tracer sees it, and `on_drop`
//! charges it to its flow.

use std::collections::VecDeque;

use csfq_algo::queue::Queued;
use csfq_algo::{Dropped, FlowId, Nanos};
use rand_pcg::Pcg64Mcg;

use crate::config::Scenario;
use crate::discipline::{Departure, Discipline};
use crate::events::{EventKind, Events};
use crate::kinds::DisciplineKind;
use crate::net::{BuildError, PortDef, Topology};
use crate::observe::delay::{Precision, Sojourn};
use crate::observe::trace::{CannotTrace, TraceEnd, Tracer};
use crate::packet::{InFlight, Kind, SimPacket};
use crate::rng::{stream, Stream};

#[derive(Debug)]
pub(super) struct Port {
    pub(super) disc: Discipline,
    /// The port's random stream: an index into `Ports::rngs`. A FIFO draws nothing, so
    /// FIFO ports (every host's access link) share stream 0 instead of holding 16 bytes
    /// each.
    rng: u32,
    /// The wire is busy until then.
    pub(super) busy_until: Nanos,
    /// A `TxDone` event is scheduled (at `busy_until`): it starts the next packet.
    txdone_pending: bool,
    /// The discipline departs in order ([`Discipline::departs_in_order`]): each packet is
    /// put on the wire when it is queued, at the time its transmission will start, and
    /// the queue keeps only a 16-byte record of it (its size, flow and arrival), which
    /// leaves (`dequeue` at that time) when the port is next looked at (see
    /// [`Ports::catch_up`]). No `TxDone` event.
    in_order: bool,
    /// With `in_order`: when the packet at the head of the discipline's queue starts its
    /// transmission (the ones behind it follow back to back).
    head_start: Nanos,
    /// The most packets queued at once.
    pub(super) peak_packets: u32,
    /// What a router port counts and samples for its link's report. Access ports (four
    /// per flow, never reported) carry none of it.
    pub(super) record: Option<Box<LinkRecord>>,
    /// A [`Tracer`] is told of this port's packets.
    traced: bool,
    /// The port leaves a router: the first such port a packet meets is its edge.
    from_router: bool,
    /// The slot of the last packet put on this port's wire ([`NONE`] if none yet), and
    /// when it arrives: until then it is the wire's last, and the next is put behind it.
    wire_tail: u32,
    wire_tail_at: Nanos,
}

impl Port {
    /// When the packet being sent now (if any) ends its transmission: the wire is busy
    /// until `busy_until`, but at an in-order port that includes the queued packets
    /// already put on the wire, whose transmissions start at `head_start`.
    pub(super) fn transmitting_until(&self) -> Nanos {
        if self.in_order && !self.disc.is_empty() {
            self.head_start
        } else {
            self.busy_until
        }
    }
}

/// No slot.
const NONE: u32 = u32::MAX;

/// [`Nanos::transmission`] remembered for a few (size, rate) pairs. A run has few packet
/// sizes and link rates, and the computation is a division and a `ceil` (a library call
/// on the baseline x86_64), once for every packet a port sends; a hit returns the same
/// value it would compute.
///
/// Open addressing: a pair's place is a multiplicative hash of its size and rate's bits,
/// and it is looked for there and in the next few places. A direct-mapped table indexed by
/// the size's and rate's low bits put a dumbbell's 40-byte ACKs and 1000-byte segments
/// (both multiples of 8) at one rate in one entry, which each then evicted.
#[derive(Debug, Default)]
struct TxTimes {
    /// (size, the rate's bits, the time); a rate's bits are never 0 (rates are validated
    /// positive), so an entry with none is free.
    entries: [(u32, u64, Nanos); TxTimes::ENTRIES],
    /// Times computed rather than found (tests read it).
    #[cfg(test)]
    computed: usize,
}

impl TxTimes {
    const ENTRIES: usize = 32;
    /// Places looked at for a pair before it replaces the one at its own.
    const PROBES: usize = 4;

    #[inline]
    fn get(&mut self, bytes: u32, rate_bps: f64) -> Nanos {
        const K: u64 = 0x9E37_79B9_7F4A_7C15;
        let bits = rate_bps.to_bits();
        let home = ((u64::from(bytes).wrapping_mul(K) ^ bits).wrapping_mul(K) >> 59) as usize;
        let mut free = home;
        for k in 0..Self::PROBES {
            let i = (home + k) % Self::ENTRIES;
            let e = self.entries[i];
            if e.1 == bits && e.0 == bytes {
                return e.2;
            }
            if e.1 == 0 {
                free = i;
                break;
            }
        }
        let t = Nanos::transmission(bytes, rate_bps);
        self.entries[free] = (bytes, bits, t);
        #[cfg(test)]
        {
            self.computed += 1;
        }
        t
    }
}

/// A drop at port `port_id` (its link's record `record`, traced if `traced`): counted
/// there, traced if watched, and charged to its flow by `on_drop`.
fn charge_drop(
    port_id: usize,
    record: &mut Option<Box<LinkRecord>>,
    traced: bool,
    tracer: &mut Option<Box<dyn Tracer>>,
    d: &Dropped<SimPacket>,
    now: Nanos,
    on_drop: &mut impl FnMut(&Dropped<SimPacket>),
) {
    if let Some(r) = record {
        r.drops += 1;
    }
    if traced {
        if let Some(t) = tracer {
            t.dropped(now, port_id, &d.packet, d.reason);
        }
    }
    on_drop(d);
}

/// What a router port records for its link's report: counters, and time series sampled
/// every interval.
#[derive(Debug, Default)]
pub(super) struct LinkRecord {
    pub(super) tx_pkts: u64,
    pub(super) tx_bytes: u64,
    pub(super) drops: u64,
    pub(super) queue: Vec<u32>,
    pub(super) alpha: Vec<f64>,
    pub(super) table: Vec<u32>,
    /// Packets' time in the queue, enqueue to the start of transmission.
    pub(super) sojourn: Sojourn,
}

/// Every port of the network, and the packets on its wires.
#[derive(Debug)]
pub(super) struct Ports {
    pub(super) ports: Vec<Port>,
    /// The in-order ports whose state a report reads (a link record or a trace): brought
    /// up to date at each sample and at the end of each step ([`Ports::catch_up_observed`]).
    observed: Vec<u32>,
    /// The ports' random streams (see `Port::rng`).
    rngs: Vec<Pcg64Mcg>,
    /// Packets propagating on links, each in its wire's list; an `Arrive` event names
    /// the slot of its wire's first.
    in_flight: Vec<InFlight>,
    free_slots: Vec<u32>,
    /// Transmissions started so far (at an in-order port that is not observed, counted
    /// when the port is next looked at, and at the end of the run).
    pub(super) hops: u64,
    tracer: Option<Box<dyn Tracer>>,
    /// The packets queued at each traced in-order port, as they will leave, for the
    /// tracer: an in-order queue keeps only a record of each (its port, and its packets in
    /// arrival order).
    held: Vec<(u32, VecDeque<SimPacket>)>,
    /// Transmission times computed lately, by packet size and link rate.
    tx_times: TxTimes,
    /// The end of the run: a packet that would reach a private hop later is not handed on.
    end: Nanos,
    /// Packets handed to a private hop and not yet put on its wire: the engine delivers
    /// each to its host ahead of its arrival, or puts it on the wire ([`Ports::onto_wire`]).
    ahead: VecDeque<Ahead>,
    /// The packets delivered ahead whose time at their private hop is still to come, as
    /// the hop's wire would hold them, kept if a trace may begin later (`keep_ahead`): it
    /// recovers the queue of the port before from them as from the wires
    /// ([`Ports::queued_on_wire`]). Those of the past are dropped from the front.
    delivered_ahead: VecDeque<SimPacket>,
    keep_ahead: bool,
    /// A packet has been delivered ahead: a trace begun now needs `delivered_ahead`.
    any_ahead: bool,
}

/// A packet handed to a private hop: it reaches its host at `at`; its `enq` is when it
/// reached the hop (the wire's own clock for [`Ports::onto_wire`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Ahead {
    pub(super) port: u32,
    pub(super) at: Nanos,
    pub(super) packet: SimPacket,
}

impl Ports {
    /// The ports of `topo` with their disciplines, and the flows' weights set at their
    /// edges and schedulers.
    pub(super) fn build(topo: &Topology, s: &Scenario) -> Result<Self, BuildError> {
        let tables = s.discipline_tables();
        let mut rngs = vec![stream(s.seed, Stream::Port, u64::MAX)];
        let mut ports: Vec<Port> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let disc = Discipline::build(p.discipline, &tables, p.rate_bps, p.buffer_bytes)
                    .map_err(|source| BuildError::Parameters {
                        from: topo.nodes[p.from as usize].name().into_owned(),
                        to: topo.nodes[p.to as usize].name().into_owned(),
                        source,
                    })?;
                Ok(Port {
                    in_order: disc.departs_in_order(),
                    disc,
                    rng: if p.discipline == DisciplineKind::Fifo {
                        0
                    } else {
                        rngs.push(stream(s.seed, Stream::Port, i as u64));
                        (rngs.len() - 1) as u32
                    },
                    busy_until: Nanos::ZERO,
                    from_router: topo.nodes[p.from as usize].is_router(),
                    txdone_pending: false,
                    head_start: Nanos::ZERO,
                    peak_packets: 0,
                    // A link direction no flow or loop crosses (most of a large topology's
                    // with a few flows) carries nothing: it records nothing either, and the
                    // report names it among the unused ones.
                    record: (p.between_routers && topo.port_flows()[i] > 0).then(|| {
                        Box::new(LinkRecord {
                            sojourn: Sojourn::new(
                                Precision::for_error(s.delay_precision()).unwrap_or_default(),
                            ),
                            ..LinkRecord::default()
                        })
                    }),
                    traced: false,
                    wire_tail: NONE,
                    wire_tail_at: Nanos::ZERO,
                })
            })
            .collect::<Result<_, BuildError>>()?;
        let observed = ports
            .iter()
            .enumerate()
            .filter(|(_, p)| p.in_order && p.record.is_some())
            .map(|(i, _)| i as u32)
            .collect();
        // Schedulers get weights relative to the smallest, so every quantum is at least
        // the default one; with all weights equal nothing is set.
        let min_weight = topo
            .flows
            .iter()
            .map(|f| f.weight)
            .fold(f64::INFINITY, f64::min);
        let weighted = topo.flows.iter().any(|f| f.weight != min_weight);
        let buckets = s.drr.buckets;
        for (i, f) in topo.flows.iter().enumerate() {
            if buckets > 0 {
                // ns-2's DRR hashes the source address: the flow's own sending host,
                // numbered in flow order.
                let bucket = csfq_algo::drr::ns2_bucket(i as u32, buckets);
                for h in topo.fwd(i) {
                    ports[h.port as usize]
                        .disc
                        .set_bucket(FlowId(h.local), bucket);
                }
            }
            // Disciplines know a flow by its index at their port.
            if weighted {
                for h in topo.fwd(i) {
                    ports[h.port as usize]
                        .disc
                        .set_scheduling_weight(FlowId(h.local), f.weight / min_weight);
                }
            }
            // The flow's edge is the first router on its path: weights live there.
            if let Some(h) = topo
                .fwd(i)
                .iter()
                .find(|h| ports[h.port as usize].from_router)
            {
                let port = &mut ports[h.port as usize];
                port.disc
                    .set_weight(FlowId(h.local), f.weight, &mut rngs[port.rng as usize]);
            }
        }
        Ok(Ports {
            ports,
            end: Nanos::from_secs_f64(s.duration_s),
            observed,
            rngs,
            in_flight: Vec::with_capacity(1024),
            free_slots: Vec::with_capacity(1024),
            hops: 0,
            tracer: None,
            held: Vec::new(),
            tx_times: TxTimes::default(),
            ahead: VecDeque::new(),
            delivered_ahead: VecDeque::new(),
            keep_ahead: false,
            any_ahead: false,
        })
    }

    /// The discipline of the first router port on `ports`' path: the flow's edge.
    pub(super) fn edge(&self, mut path: impl Iterator<Item = usize>) -> Option<&Discipline> {
        path.find(|&p| self.ports[p].from_router)
            .map(|p| &self.ports[p].disc)
    }

    /// Traces `ports` from now on (see [`crate::Simulation::trace`]).
    pub(super) fn trace(
        &mut self,
        ports: &[usize],
        tracer: Box<dyn Tracer>,
        events: &mut Events,
        topo: &Topology,
    ) -> Result<(), CannotTrace> {
        let now = events.now();
        let defs = &topo.ports;
        for &port in ports {
            if port >= self.ports.len() {
                return Err(CannotTrace::NoSuchPort {
                    port,
                    ports: self.ports.len(),
                });
            }
            if defs[port].private {
                return Err(CannotTrace::PrivateHop { port });
            }
        }
        if self.any_ahead && !self.keep_ahead {
            return Err(CannotTrace::NotKept);
        }
        for p in &mut self.ports {
            p.traced = false;
        }
        self.held.clear();
        for &p in ports {
            if self.ports[p].in_order {
                if !self.observed.contains(&(p as u32)) {
                    self.observed.push(p as u32);
                }
                let queued = self.queued_on_wire(p, now, topo);
                // Each is recorded when its transmission starts, in time order, as the
                // packets queued from now on will be.
                let mut start = self.ports[p].head_start;
                for q in &queued {
                    events.schedule(start, EventKind::TxDone(p as u32));
                    start += self.tx_times.get(q.size, defs[p].rate_bps);
                }
                self.held.push((p as u32, queued));
            }
            self.ports[p].traced = true;
        }
        self.tracer = Some(tracer);
        Ok(())
    }

    /// The packets queued now at in-order port `port`, as they will leave: the last ones
    /// it sent on (each was put on its wire when it was queued, one hop further on, or
    /// handed on to a private hop after it, whose wire holds it two hops further on).
    fn queued_on_wire(&mut self, port: usize, now: Nanos, topo: &Topology) -> VecDeque<SimPacket> {
        // Packets whose transmission has started by now leave the queue first, untraced
        // (a port that is not observed is brought up to date only when next looked at).
        self.catch_up(port, now, &topo.ports);
        let queued = self.ports[port].disc.len_packets();
        // Each with when it reaches the end of this port's link (a private hop's packet
        // entered its queue then) and the order it was sent in.
        // A packet two hops on: on a private hop's wire, or delivered ahead from it.
        let two_on = |p: SimPacket| {
            let hop = p.hop - 2;
            let here = topo.hop(p.flow.index(), p.kind == Kind::Data, hop as usize)?;
            (here.port == port as u32).then(|| {
                let local = here.local;
                (p.enq, 0, SimPacket { hop, local, ..p })
            })
        };
        let mut sent: Vec<(Nanos, u64, SimPacket)> = self
            .in_flight
            .iter()
            .filter_map(|w| {
                if w.port == port as u32 {
                    let hop = w.packet.hop - 1;
                    return Some((w.at, w.seq, SimPacket { hop, ..w.packet }));
                }
                if !topo.ports.get(w.port as usize)?.private {
                    return None;
                }
                two_on(w.packet)
            })
            .chain(self.delivered_ahead.iter().filter_map(|&p| two_on(p)))
            .collect();
        sent.sort_by_key(|w| (w.0, w.1));
        sent[sent.len().saturating_sub(queued)..]
            .iter()
            .map(|w| w.2)
            .collect()
    }

    /// Flushes the tracer, if any.
    pub(super) fn finish_trace(&mut self) -> std::io::Result<TraceEnd> {
        self.tracer.as_mut().map_or(
            Ok(TraceEnd {
                packets: 0,
                stopped_at: None,
            }),
            |t| t.finish(),
        )
    }

    /// Slots for packets on the wire.
    pub(super) fn wire_slots(&self) -> usize {
        self.in_flight.capacity() + self.delivered_ahead.capacity()
    }

    /// Asks the CPU for what `next`, the event likely to run next, reads first: the
    /// arriving packet's slot, or the port whose transmission ends. (Fetching more ahead,
    /// read from the slot when the current event is done, did not help at 100 000 flows:
    /// the next hop's route record gained nothing, its port made the run slower;
    /// BENCHMARKS.md.)
    #[inline]
    pub(super) fn prefetch(&self, next: EventKind) {
        match next {
            EventKind::Arrive(slot) => {
                if let Some(w) = self.in_flight.get(slot as usize) {
                    super::prefetch::prefetch(w);
                }
            }
            EventKind::TxDone(port) => {
                if let Some(p) = self.ports.get(port as usize) {
                    super::prefetch::prefetch(p);
                }
            }
            _ => {}
        }
    }

    /// The packet that arrives at the end of its hop, its slot freed and the next packet
    /// on its wire, if any, put in the heap.
    #[inline]
    pub(super) fn arrival(&mut self, slot: u32, events: &mut Events) -> SimPacket {
        self.free_slots.push(slot);
        let w = &mut self.in_flight[slot as usize];
        w.port = NONE;
        let (packet, next) = (w.packet, w.next);
        if next != NONE {
            let n = &self.in_flight[next as usize];
            events.schedule_as(n.at, n.seq, EventKind::Arrive(next));
        }
        packet
    }

    /// A packet reaches port `port_id` (its `local` and `enq` set): labeled if this is its
    /// edge, then sent at once, queued, or dropped.
    /// `now` is the event's time, or, for a host's answer to a packet delivered ahead, a
    /// later one at a drop-tail port only that host sends on.
    #[inline(always)]
    pub(super) fn send(
        &mut self,
        port_id: usize,
        mut p: SimPacket,
        now: Nanos,
        topo: &Topology,
        events: &mut Events,
        mut on_drop: impl FnMut(&Dropped<SimPacket>),
    ) {
        self.enter(port_id, &mut p, now);
        let port = &mut self.ports[port_id];
        if port.in_order {
            self.send_in_order(port_id, p, now, topo, events, &mut on_drop);
            return;
        }
        debug_assert_eq!(now, events.now(), "only in-order ports send ahead");
        let rng = &mut self.rngs[port.rng as usize];
        let (tracer, r) = (&mut self.tracer, &mut port.record);
        let traced = port.traced;
        port.disc.enqueue(p, now, rng, &mut |d| {
            charge_drop(port_id, r, traced, tracer, &d, now, &mut on_drop);
        });
        // A TxDone event is only scheduled when a packet waits behind the one on the wire.
        let port = &mut self.ports[port_id];
        // A queue of u32::MAX packets would need more than a u32 buffer of bytes.
        port.peak_packets = port.peak_packets.max(port.disc.len_packets() as u32);
        if !port.txdone_pending {
            if now >= port.busy_until {
                self.start_tx(port_id, topo, events, &mut on_drop);
            } else if !port.disc.is_empty() {
                port.txdone_pending = true;
                let at = port.busy_until;
                events.schedule(at, EventKind::TxDone(port_id as u32));
            }
        }
    }

    /// A packet reaches port `port_id` at `now`: if it is the first router port on the
    /// packet's path, its edge, it (re)writes the label.
    #[inline]
    fn enter(&mut self, port_id: usize, p: &mut SimPacket, now: Nanos) {
        let port = &mut self.ports[port_id];
        if !p.entered && port.from_router {
            p.entered = true;
            let rng = &mut self.rngs[port.rng as usize];
            port.disc.label_at_edge(p, now, rng);
        }
    }

    /// Port `port_id` finished sending: start the next packet.
    pub(super) fn tx_done(
        &mut self,
        port_id: usize,
        topo: &Topology,
        events: &mut Events,
        mut on_drop: impl FnMut(&Dropped<SimPacket>),
    ) {
        if self.ports[port_id].in_order {
            // A traced in-order port's departure: recorded now, in time order. The event
            // is the trace's, not the model's: not counted, so a traced run reports the
            // events an untraced one does.
            events.uncount();
            self.catch_up(port_id, events.now(), &topo.ports);
            return;
        }
        self.ports[port_id].txdone_pending = false;
        self.start_tx(port_id, topo, events, &mut on_drop);
    }

    /// [`Ports::send`] at a port whose discipline departs in order, at `now` (a private
    /// hop's packet arrives later than the event being handled: [`Ports::hand_on`]): the
    /// queue brought up to date, then the packet sent at once (an idle drop-tail port),
    /// dropped, or queued and put on the wire at the end of the transmissions before it.
    fn send_in_order<F: FnMut(&Dropped<SimPacket>)>(
        &mut self,
        port_id: usize,
        p: SimPacket,
        now: Nanos,
        topo: &Topology,
        events: &mut Events,
        on_drop: &mut F,
    ) {
        let defs = &topo.ports;
        self.catch_up(port_id, now, defs);
        let port = &mut self.ports[port_id];
        if now >= port.busy_until && port.disc.passes_through(p.size) {
            port.peak_packets = port.peak_packets.max(1);
            self.account(port_id, &p, now);
            let handed = self.put_on_wire(port_id, p, now, now, topo, events);
            self.hand_on(handed, topo, events, on_drop);
            return;
        }
        let rng = &mut self.rngs[port.rng as usize];
        let (tracer, r) = (&mut self.tracer, &mut port.record);
        let traced = port.traced;
        let queued = port.disc.enqueue(p, now, rng, &mut |d| {
            charge_drop(port_id, r, traced, tracer, &d, now, on_drop);
        });
        // In order: the arrival queued, as it will leave, or dropped (only the arrival
        // ever is).
        let Some(queued) = queued else {
            return;
        };
        if traced {
            self.held_at(port_id).push_back(queued);
        }
        let port = &mut self.ports[port_id];
        let len = port.disc.len_packets();
        port.peak_packets = port.peak_packets.max(len as u32);
        let start = port.busy_until.max(now);
        if len == 1 {
            port.head_start = start;
        }
        let traced = port.traced;
        let handed = self.put_on_wire(port_id, queued, start, now, topo, events);
        if start == now {
            self.catch_up(port_id, now, defs);
        } else if traced {
            events.schedule(start, EventKind::TxDone(port_id as u32));
        }
        self.hand_on(handed, topo, events, on_drop);
    }

    /// Hands a packet that has just left a port to the private hop after it (see
    /// [`PortDef::private`]), at the time it reaches it: the hop's queue is brought to
    /// that time, ahead of the event being handled, and the packet queued there at once,
    /// with no event for its arrival at the router between. Nothing else reaches that
    /// queue, and every packet that does comes this way in the order it arrives, so the
    /// hop sees what it would see at each arrival; it never drops, and nothing reads it
    /// before the run's end (it has no link record, and cannot be traced). Only the order
    /// of events at one instant changes: the packet's arrival at its host is given its
    /// scheduling order now, not when it reaches the router (see [`crate::events`]).
    #[inline]
    fn hand_on<F: FnMut(&Dropped<SimPacket>)>(
        &mut self,
        handed: Option<(usize, SimPacket)>,
        topo: &Topology,
        events: &mut Events,
        on_drop: &mut F,
    ) {
        if let Some((port_id, mut p)) = handed {
            let at = p.enq;
            self.enter(port_id, &mut p, at);
            self.send_in_order(port_id, p, at, topo, events, on_drop);
            debug_assert!(
                self.ports[port_id].disc.len_packets() <= 1,
                "a private hop holds at most the packet that arrived"
            );
        }
    }

    /// Takes out of an in-order port's queue every packet whose transmission has started
    /// by `now` (at `now` included), each dequeued at the time it started and recorded
    /// then. The packets are already on the wire.
    ///
    /// The check that nothing is due, what most calls find, is inlined at each call; the
    /// dequeues are not.
    #[inline(always)]
    fn catch_up(&mut self, port_id: usize, now: Nanos, defs: &[PortDef]) {
        let port = &self.ports[port_id];
        if port.head_start > now || port.disc.is_empty() {
            return;
        }
        self.catch_up_due(port_id, now, defs);
    }

    /// [`Ports::catch_up`] of a port with a transmission due.
    #[inline(never)]
    fn catch_up_due(&mut self, port_id: usize, now: Nanos, defs: &[PortDef]) {
        loop {
            let port = &mut self.ports[port_id];
            let at = port.head_start;
            if at > now || port.disc.is_empty() {
                return;
            }
            // In order: nothing is dropped at the head.
            let mut head_drop = |d: Dropped<SimPacket>| {
                debug_assert!(false, "an in-order discipline dropped at its head: {d:?}");
            };
            let d = port
                .disc
                .dequeue(at, &mut head_drop)
                .expect("a queue that is not empty dequeues");
            port.head_start = at + self.tx_times.get(d.size(), defs[port_id].rate_bps);
            match d {
                Departure::Packet(p) => self.account(port_id, &p, at),
                Departure::Kept(k) => self.account_kept(port_id, k, at),
            }
        }
    }

    /// The packets held for the tracer at traced in-order port `port_id`.
    fn held_at(&mut self, port_id: usize) -> &mut VecDeque<SimPacket> {
        let i = self
            .held
            .iter()
            .position(|(p, _)| *p == port_id as u32)
            .expect("every traced in-order port holds its queued packets");
        &mut self.held[i].1
    }

    /// Brings every in-order port up to `now`: once, at the end of the run.
    pub(super) fn catch_up_all(&mut self, now: Nanos, defs: &[PortDef]) {
        for port in 0..self.ports.len() {
            if self.ports[port].in_order {
                self.catch_up(port, now, defs);
            }
        }
    }

    /// Brings every observed in-order port up to `now` (see `observed`).
    pub(super) fn catch_up_observed(&mut self, now: Nanos, defs: &[PortDef]) {
        for i in 0..self.observed.len() {
            let port = self.observed[i] as usize;
            self.catch_up(port, now, defs);
        }
    }

    fn start_tx<F: FnMut(&Dropped<SimPacket>)>(
        &mut self,
        port_id: usize,
        topo: &Topology,
        events: &mut Events,
        on_drop: &mut F,
    ) {
        let now = events.now();
        let port = &mut self.ports[port_id];
        let (tracer, r) = (&mut self.tracer, &mut port.record);
        let traced = port.traced;
        // Disciplines that manage the queue at its head (CoDel) drop while dequeueing.
        let next = port.disc.dequeue(now, &mut |d| {
            charge_drop(port_id, r, traced, tracer, &d, now, on_drop);
        });
        // An in-order port never gets here: its packets were put on the wire when queued.
        let Some(Departure::Packet(p)) = next else {
            return;
        };
        self.transmit(port_id, p, topo, events, on_drop);
    }

    /// Puts a packet that has left port `port_id`'s queue on the wire.
    fn transmit<F: FnMut(&Dropped<SimPacket>)>(
        &mut self,
        port_id: usize,
        p: SimPacket,
        topo: &Topology,
        events: &mut Events,
        on_drop: &mut F,
    ) {
        let now = events.now();
        self.account(port_id, &p, now);
        let handed = self.put_on_wire(port_id, p, now, now, topo, events);
        let port = &mut self.ports[port_id];
        if !port.disc.is_empty() {
            port.txdone_pending = true;
            events.schedule(port.busy_until, EventKind::TxDone(port_id as u32));
        }
        self.hand_on(handed, topo, events, on_drop);
    }

    /// A packet starts its transmission at port `port_id` at `at`: traced, and counted in
    /// the link's record.
    #[inline(always)]
    fn account(&mut self, port_id: usize, p: &SimPacket, at: Nanos) {
        if self.ports[port_id].traced {
            if let Some(t) = &mut self.tracer {
                t.sent(at, port_id, p);
            }
        }
        self.record_tx(port_id, p.size, p.enq, at);
    }

    /// [`Ports::account`] of a packet an in-order queue kept a record of: the tracer is
    /// given the packet held for it.
    fn account_kept(&mut self, port_id: usize, k: Queued, at: Nanos) {
        if self.ports[port_id].traced {
            let mut p = self
                .held_at(port_id)
                .pop_front()
                .expect("a traced in-order port holds each packet its queue kept");
            debug_assert_eq!(p.size, k.size);
            // A packet recovered from a private hop's wire when the trace began carries
            // its arrival there: it entered this queue when its record says.
            p.enq = k.at;
            if let Some(t) = &mut self.tracer {
                t.sent(at, port_id, &p);
            }
        }
        self.record_tx(port_id, k.size, k.at, at);
    }

    /// A transmission of `size` bytes queued at `queued_at` starts at `at`: counted, and
    /// in the link's record.
    #[inline]
    fn record_tx(&mut self, port_id: usize, size: u32, queued_at: Nanos, at: Nanos) {
        self.hops += 1;
        if let Some(r) = &mut self.ports[port_id].record {
            r.tx_pkts += 1;
            r.tx_bytes += size as u64;
            r.sojourn.record(at.saturating_sub(queued_at).0);
        }
    }

    /// Puts a packet on port `port_id`'s wire at `now` (the event's time, or a private
    /// hop's arrival), its transmission starting at `start` (now, or when the ones before
    /// it end), and marks the port busy until it ends. A packet whose next hop is a private
    /// one that it reaches by the end of the run is not put on the wire but returned, with
    /// its `local` and `enq` set for that hop, to be handed on ([`Ports::hand_on`]).
    #[must_use]
    #[inline(always)]
    fn put_on_wire(
        &mut self,
        port_id: usize,
        mut p: SimPacket,
        start: Nanos,
        now: Nanos,
        topo: &Topology,
        events: &mut Events,
    ) -> Option<(usize, SimPacket)> {
        let def = &topo.ports[port_id];
        let tx = self.tx_times.get(p.size, def.rate_bps);
        p.hop += 1;
        let arrive = start + tx + def.delay;
        self.ports[port_id].busy_until = start + tx;
        if def.feeds_private && arrive <= self.end {
            let next = match p.kind {
                Kind::Data => topo.hop(p.flow.index(), true, p.hop as usize),
                Kind::Ack => topo.hop(p.flow.index(), false, p.hop as usize),
                Kind::Control | Kind::Feedback => None,
            };
            // A private hop has one user: a packet bound for it comes from this port.
            if let Some(h) = next.filter(|h| topo.ports[h.port as usize].private) {
                p.local = h.local;
                p.enq = arrive;
                return Some((h.port as usize, p));
            }
        }
        if def.private {
            // To its host ahead, or to the wire: the engine decides (it knows the host).
            debug_assert_eq!(now, p.enq, "a private hop's clock is its packet's arrival");
            self.ahead.push_back(Ahead {
                port: port_id as u32,
                at: arrive,
                packet: p,
            });
            return None;
        }
        self.onto_wire(port_id, p, arrive, now, events);
        None
    }

    /// A packet handed to a private hop is not yet placed.
    #[inline]
    pub(super) fn handed_any(&self) -> bool {
        !self.ahead.is_empty()
    }

    /// The next packet handed to a private hop and not yet placed, if any.
    #[inline]
    pub(super) fn take_ahead(&mut self) -> Option<Ahead> {
        self.ahead.pop_front()
    }

    /// A packet on port `port_id`'s wire has yet to arrive (its event not yet handled).
    #[inline]
    pub(super) fn wire_pending(&self, port_id: usize) -> bool {
        let tail = self.ports[port_id].wire_tail;
        tail != NONE && self.in_flight[tail as usize].port == port_id as u32
    }

    /// Keeps the packets delivered ahead that a trace begun later needs (see
    /// `delivered_ahead`).
    pub(super) fn keep_for_a_later_trace(&mut self) {
        self.keep_ahead = true;
    }

    /// Whether port `port_id` is traced.
    #[inline]
    pub(super) fn traced(&self, port_id: usize) -> bool {
        self.ports[port_id].traced
    }

    /// A packet handed to a private hop, delivered to its host ahead of its arrival at
    /// `a.at`: kept while that is to come for a trace that may begin (see
    /// `delivered_ahead`); the past ones dropped.
    #[inline]
    pub(super) fn keep_delivered(&mut self, a: &Ahead, now: Nanos) {
        self.any_ahead = true;
        if !self.keep_ahead {
            return;
        }
        while self.delivered_ahead.front().is_some_and(|p| p.enq <= now) {
            self.delivered_ahead.pop_front();
        }
        if a.packet.enq > now {
            self.delivered_ahead.push_back(a.packet);
        }
    }

    /// Puts packet `p` on port `port_id`'s wire, to arrive at `arrive`; `now` is the
    /// port's clock (the event's time, or a private hop's arrival).
    pub(super) fn onto_wire(
        &mut self,
        port_id: usize,
        p: SimPacket,
        arrive: Nanos,
        now: Nanos,
        events: &mut Events,
    ) {
        // Is the wire's last packet still on it? It is if it arrives later than now; if
        // it arrives now, its slot says whether it has yet (a slot freed, or taken by
        // another port's packet, names no longer this port).
        let port = &self.ports[port_id];
        let tail = port.wire_tail;
        let on_wire = tail != NONE
            && (port.wire_tail_at > now
                || (port.wire_tail_at == now
                    && self.in_flight[tail as usize].port == port_id as u32));
        // Links never change their delay or rate during a run, so this always holds; if
        // it did not, the packet would wait in the heap on its own, not out of order.
        let behind = on_wire && port.wire_tail_at <= arrive;
        // Packets on the wire wait in a slab; events carry only the slot, keeping heap
        // entries small.
        let w = InFlight {
            packet: p,
            at: arrive,
            seq: events.reserve(),
            next: NONE,
            port: port_id as u32,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.in_flight[slot as usize] = w;
                slot
            }
            None => {
                self.in_flight.push(w);
                (self.in_flight.len() - 1) as u32
            }
        };
        if behind {
            // Behind the wire's last packet: a wire's packets arrive in the order they
            // were sent (each starts after the last one's transmission, and all take the
            // same delay).
            self.in_flight[tail as usize].next = slot;
        } else {
            debug_assert!(
                !on_wire,
                "a packet would arrive before the one sent before it"
            );
            events.schedule_as(arrive, w.seq, EventKind::Arrive(slot));
        }
        let port = &mut self.ports[port_id];
        port.wire_tail = slot;
        port.wire_tail_at = arrive;
    }

    /// Records each router port's queue, fair-share estimate and table size.
    pub(super) fn sample(&mut self, now: Nanos, defs: &[PortDef]) {
        self.catch_up_observed(now, defs);
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlowSpec, LinkSpec, ScenarioBuilder};
    use proptest::prelude::*;

    /// A TCP flow with access links at 100 Mbit/s over a 10 Mbit/s link: its last access
    /// ports are private hops.
    fn dumbbell() -> Scenario {
        ScenarioBuilder::new("private", 1.0, DisciplineKind::Csfq)
            .routers(["r1", "r2"])
            .link(LinkSpec::new("r1", "r2", 10.0))
            .flow(FlowSpec::tcp("r1", "r2").access(100.0, 1.0))
            .build()
            .unwrap()
    }

    /// A tracer that keeps nothing.
    #[derive(Debug)]
    struct Nothing;

    impl Tracer for Nothing {
        fn sent(&mut self, _: Nanos, _: usize, _: &SimPacket) {}
        fn dropped(&mut self, _: Nanos, _: usize, _: &SimPacket, _: csfq_algo::DropReason) {}
        fn finish(&mut self) -> std::io::Result<TraceEnd> {
            Ok(TraceEnd {
                packets: 0,
                stopped_at: None,
            })
        }
    }

    /// A trace cannot name a private hop (its packets are queued ahead of their arrival),
    /// and says so.
    #[test]
    fn a_trace_of_a_private_hop_is_refused() {
        let s = dumbbell();
        let mut sim = crate::Simulation::new(&s).unwrap();
        let port = sim.topology().fwd(0).last().unwrap().port as usize;
        assert!(sim.topology().ports[port].private);
        let refused = sim.trace(&[0, port], Box::new(Nothing));
        assert_eq!(refused, Err(CannotTrace::PrivateHop { port }));
        let text = refused.unwrap_err().to_string();
        assert!(text.contains("private access port"), "{text}");
    }

    proptest! {
        /// Remembered or computed, the time is the one `Nanos::transmission` gives, as
        /// sizes and rates (a few of each, so entries are hit, replaced and hit again)
        /// come in any order.
        #[test]
        fn remembered_transmission_times_are_computed_ones(
            ops in proptest::collection::vec((0usize..6, 0usize..5), 1..300)
        ) {
            const SIZES: [u32; 6] = [40, 52, 1000, 1040, 1500, 64_000];
            const RATES: [f64; 5] = [1e6, 10e6, 1e9, 10e9, 1.5e8 / 7.0];
            let mut t = TxTimes::default();
            for (s, r) in ops {
                let (size, rate) = (SIZES[s], RATES[r]);
                prop_assert_eq!(t.get(size, rate), Nanos::transmission(size, rate));
            }
        }
    }

    /// A run's few sizes and rates are each computed once: every pair of 40, 52, 1000,
    /// 1040 and 1500 bytes with 10 Mbit/s, 100 Mbit/s, 1 Gbit/s and 10 Gbit/s (20 pairs,
    /// more than a dumbbell has) looked up 50 times in turn, 20 computations.
    #[test]
    fn a_runs_sizes_and_rates_are_computed_once() {
        let mut t = TxTimes::default();
        for _ in 0..50 {
            for size in [40, 52, 1000, 1040, 1500] {
                for rate in [10e6, 100e6, 1e9, 10e9] {
                    assert_eq!(t.get(size, rate), Nanos::transmission(size, rate));
                }
            }
        }
        assert_eq!(t.computed, 20);
    }
}
