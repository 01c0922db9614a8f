//! The event queue: integer-nanosecond time and heaps of events ordered by (time,
//! insertion order), so events at one instant run in the order they were scheduled and a
//! run is the same at every seed-for-seed repetition.
//!
//! **The canonical order.** Events run by time, then by the order they were scheduled in
//! (a counter, [`Events::reserve`]). A packet's arrival at the end of a hop is scheduled
//! when its transmission is fixed: at a port whose discipline departs in order (FIFO,
//! RED, adaptive RED, FRED, the CSFQ, CS-FNE, TUF-filter and MAY cores:
//! `Discipline::departs_in_order`), when the packet is queued, since nothing can change
//! when it leaves; at the others (DRR, FQ-CoDel, LAS, CHOKe, TUF's push-out queue), when
//! its transmission starts, at the end of the one before it (a `TxDone` event). An
//! in-order port has no `TxDone`: its queue is brought up to date before anything reads
//! it (an arrival, a sample, the end of a step), each packet leaving the discipline's
//! queue at the time its transmission started; so at one instant **a port's departures
//! come before an arrival there and before a sample**, whatever order the events that
//! fixed them were scheduled in. This order was adopted in place of one with a `TxDone`
//! per transmission (2 to 19% fewer events; results moved only through events at one
//! nanosecond, `tests/event_order.rs` checks that none moves where there are none); it
//! is deterministic and the same on every machine (integer time, a counter, no
//! addresses or hashes in the key).
//!
//! **Private hops.** A flow's last hop, the access port from its last router to its host,
//! is *private* when nothing else crosses it, no link record reports it, it is drop-tail,
//! at least as fast as the hop before it and has room for a packet (`mark_private_hops`
//! in the engine's ports). Such a hop never holds more than the packet that arrives and
//! never drops, and its packets reach it from one wire, in order; so a packet is handed
//! to it when it leaves the hop before (at the time it will arrive there), with no event
//! for its arrival at the router between. Its arrival at its host is then given its
//! scheduling order when it leaves that hop before, not when it reaches the router: **at
//! one instant, a host's arrival runs in the order of its departure from the hop before
//! its last**. This order replaced one with an arrival event at that router (25 to 33%
//! fewer events on the dumbbells; results moved only through events at one nanosecond,
//! which `tests/event_order.rs` checks as before).
//!
//! **Delivered ahead.** A packet handed to a private hop reaches its host's handler then,
//! with no event for its arrival, when nothing but that packet can change or read what
//! the host does with it before it arrives: it arrives by the end of the run and before
//! the sample after next, no earlier packet on that hop is still to arrive, none of the
//! host's timers is due by then, and the host answers (a TCP receiver's ACK, a sender's
//! segments) on an access port of its own to a router, drop-tail and untraced, whose queue
//! nothing else moves; an open-loop sink answers nothing (the engine's `place_handed`).
//! The host handles it at its arrival time, so nothing it computes changes; what it sends
//! and schedules is given its scheduling order when the packet was handed on, not at its
//! arrival: **at one instant, a host's answer runs in the order of the packet's departure
//! from the hop before its last**. Bytes it delivers after the next sample are counted in
//! the interval after it. The bounds are the run's own, never where a caller of
//! `Simulation::run_until` stops, so a run stepped by its caller is the run taken at once
//! (`tests/stepping.rs`); between two events the hosts' state may so run ahead of the
//! clock by the time a packet takes over its last two hops. This order replaced the one
//! with an arrival event at each host (about half the events on the dumbbells; results
//! moved only through events at one nanosecond, `tests/event_order.rs` as before).
//!
//! TCP's timers (a retransmission timeout per connection, a delayed ACK per receiver)
//! wait in a heap of their own: there is one per flow and most are hundreds of
//! milliseconds away, so they stay out of the way of the packets' events, which are taken
//! far more often. The next event is the earlier of the two heaps' first, by the same key,
//! so events run in the order one heap would give. A wire's packets are kept in order by
//! the ports, each with the scheduling order it was given when sent
//! ([`Events::reserve`]), and only its first is in a heap ([`Events::schedule_as`]).
//!
//! Both heaps are 4-ary, with the earliest of a node's four children found without a
//! branch ([`heap`]). Packets' arrivals wait beside them in a few runs, each already in
//! the order its events will run, appended to and taken from at their ends ([`runs`]):
//! an arrival is scheduled at its send time plus the link's delay, so on links of one
//! delay they come in order, and a heap would sort what is sorted. One that fits no run
//! waits in the heap. The next event is the earliest of the runs', the heap's and the
//! timers' first; every key is distinct, so where an event waits changes nothing of when
//! it runs.
//!
//! Components that are not the engine (hosts, overlay loops) do not touch the queue: they
//! return [`Action`]s, which the engine carries out in order.

mod heap;
mod runs;

use csfq_algo::Nanos;

use crate::packet::SimPacket;
use heap::EventHeap;
use runs::Runs;

/// What happens at an event. Each names its component by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
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

/// What a host or a loop asks the engine to do, in the order it asks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Action {
    /// Send a packet from where it is (its `hop`) onwards.
    Send(SimPacket),
    /// Schedule an event.
    At(Nanos, EventKind),
}

#[derive(Debug, Clone, Copy)]
struct Event {
    at: Nanos,
    seq: u64,
    kind: EventKind,
}

impl Event {
    /// The order key: time, then scheduling order, as one integer (one comparison).
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.at.0) << 64) | u128::from(self.seq)
    }
}

/// An empty structure's first key: later than any event's (whose scheduling order is
/// below `u64::MAX`).
const NO_EVENT: u128 = u128::MAX;

/// Where an event waits.
#[derive(Debug, Clone, Copy)]
enum Source {
    Heap,
    Run(usize),
    Timers,
}

/// The clock and the pending events.
#[derive(Debug)]
pub(crate) struct Events {
    /// Every event but TCP's timers and the arrivals the runs hold.
    heap: EventHeap,
    /// Packets' arrivals that came in key order ([`runs`]).
    runs: Runs,
    /// Retransmission timeouts and delayed ACKs.
    timers: EventHeap,
    next_seq: u64,
    now: Nanos,
    handled: u64,
}

impl Events {
    pub(crate) fn new() -> Self {
        Events {
            heap: EventHeap::with_capacity(1024),
            runs: Runs::new(),
            timers: EventHeap::with_capacity(0),
            next_seq: 0,
            now: Nanos::ZERO,
            handled: 0,
        }
    }

    /// The current simulated time.
    #[inline]
    pub(crate) fn now(&self) -> Nanos {
        self.now
    }

    /// Events taken so far.
    pub(crate) fn handled(&self) -> u64 {
        self.handled
    }

    /// Takes the event just handled out of the count (an event that only records).
    pub(crate) fn uncount(&mut self) {
        self.handled -= 1;
    }

    /// Slots the heaps and the runs have allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.heap.capacity() + self.runs.capacity() + self.timers.capacity()
    }

    #[inline]
    pub(crate) fn schedule(&mut self, at: Nanos, kind: EventKind) {
        let seq = self.reserve();
        self.schedule_as(at, seq, kind);
    }

    /// The scheduling order of an event scheduled now, to be put in a heap later with
    /// [`Events::schedule_as`] (a wire's later packets wait in their link's list, in
    /// order, and only the first is in the heap).
    #[inline]
    pub(crate) fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Puts an event in its heap (or, an arrival, in a run) with the order
    /// [`Events::reserve`] gave it when it was scheduled. It must not be earlier than the
    /// event being handled.
    #[inline]
    pub(crate) fn schedule_as(&mut self, at: Nanos, seq: u64, kind: EventKind) {
        debug_assert!(at >= self.now && (1..=self.next_seq).contains(&seq));
        let event = Event { at, seq, kind };
        match kind {
            EventKind::Rto(_) | EventKind::DelAck(_) => self.timers.push(event),
            EventKind::Arrive(_) => {
                if let Err(event) = self.runs.push(event) {
                    self.heap.push(event);
                }
            }
            _ => self.heap.push(event),
        }
    }

    /// Where the first event outside the timers' heap waits, and its key ([`NO_EVENT`]
    /// if there is none).
    #[inline(always)]
    fn first_untimed(&self) -> (Source, u128) {
        let heap = self.heap.peek().map_or(NO_EVENT, Event::key);
        match self.runs.first() {
            Some((run, key)) if key < heap => (Source::Run(run), key),
            _ => (Source::Heap, heap),
        }
    }

    /// Where the next event waits, and its time.
    #[inline(always)]
    fn first(&self) -> Option<(Source, Nanos)> {
        let (source, key) = self.first_untimed();
        let timer = self.timers.peek().map_or(NO_EVENT, Event::key);
        let (source, key) = if timer < key {
            (Source::Timers, timer)
        } else {
            (source, key)
        };
        (key != NO_EVENT).then_some((source, Nanos((key >> 64) as u64)))
    }

    /// The next event at or before `t`, with the clock moved to it.
    #[inline]
    pub(crate) fn next_until(&mut self, t: Nanos) -> Option<EventKind> {
        let (source, at) = self.first()?;
        if at > t {
            return None;
        }
        let ev = match source {
            Source::Heap => self.heap.pop(),
            Source::Run(i) => self.runs.pop(i),
            Source::Timers => self.timers.pop(),
        }?;
        self.now = ev.at;
        self.handled += 1;
        Some(ev.kind)
    }

    /// The first event outside the timers' heap, if any: the next to run unless a timer
    /// is earlier or the event being handled schedules an earlier one.
    #[inline]
    pub(crate) fn peek(&self) -> Option<EventKind> {
        match self.first_untimed() {
            (Source::Run(i), _) => self.runs.front(i).map(|e| e.kind),
            _ => self.heap.peek().map(|e| e.kind),
        }
    }

    /// Moves the clock to `t` if it is later (nothing is pending before it).
    pub(crate) fn advance_to(&mut self, t: Nanos) {
        self.now = self.now.max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Earliest first; events at one instant in the order they were scheduled; nothing
    /// past the horizon.
    #[test]
    fn events_run_by_time_then_by_scheduling_order() {
        let mut q = Events::new();
        q.schedule(Nanos(20), EventKind::Sample);
        q.schedule(Nanos(10), EventKind::Source(1));
        q.schedule(Nanos(10), EventKind::Source(2));
        q.schedule(Nanos(30), EventKind::Source(3));
        assert_eq!(q.next_until(Nanos(25)), Some(EventKind::Source(1)));
        assert_eq!(q.now(), Nanos(10));
        assert_eq!(q.next_until(Nanos(25)), Some(EventKind::Source(2)));
        assert_eq!(q.next_until(Nanos(25)), Some(EventKind::Sample));
        assert_eq!(q.next_until(Nanos(25)), None);
        q.advance_to(Nanos(25));
        assert_eq!((q.now(), q.handled()), (Nanos(25), 3));
    }

    /// A timer scheduled before a packet event at the same instant runs first, one
    /// scheduled after it runs after, though they wait in different heaps.
    #[test]
    fn timers_and_packets_interleave_by_scheduling_order() {
        let mut q = Events::new();
        q.schedule(Nanos(10), EventKind::Rto(1));
        q.schedule(Nanos(10), EventKind::Arrive(2));
        q.schedule(Nanos(10), EventKind::DelAck(3));
        q.schedule(Nanos(5), EventKind::TxDone(4));
        let order: Vec<_> = std::iter::from_fn(|| q.next_until(Nanos(10))).collect();
        assert_eq!(
            order,
            [
                EventKind::TxDone(4),
                EventKind::Rto(1),
                EventKind::Arrive(2),
                EventKind::DelAck(3)
            ]
        );
    }

    use proptest::prelude::*;
    use std::collections::{BTreeMap, VecDeque};

    proptest! {
        /// Events scheduled at random (many at one instant), timers among them, and wires
        /// whose packets wait in order with only the first in a heap, as the ports keep
        /// them: every event runs in the order of one sorted map of (time, scheduling
        /// order) holding all of them from the moment they were scheduled.
        #[test]
        fn heaps_and_wires_run_events_in_one_order(
            ops in proptest::collection::vec((0u8..4, 0u64..4, 0usize..3), 1..400)
        ) {
            let mut q = Events::new();
            let mut all: BTreeMap<(Nanos, u64), EventKind> = BTreeMap::new();
            let mut wires: [VecDeque<(Nanos, u64, u32)>; 3] = Default::default();
            let mut seq = 0u64;
            let check_pop = |q: &mut Events,
                             all: &mut BTreeMap<(Nanos, u64), EventKind>,
                             wires: &mut [VecDeque<(Nanos, u64, u32)>; 3]| {
                let got = q.next_until(Nanos(u64::MAX));
                let want = all.pop_first();
                assert_eq!(got, want.map(|(_, kind)| kind));
                if let Some(((at, _), _)) = want {
                    assert_eq!(q.now(), at);
                }
                if let Some(EventKind::Arrive(id)) = got {
                    let w = wires.iter_mut().find(|w| w.front().is_some_and(|f| f.2 == id));
                    let w = w.expect("an arrival is its wire's first packet");
                    w.pop_front();
                    if let Some(&(at, seq, next)) = w.front() {
                        q.schedule_as(at, seq, EventKind::Arrive(next));
                    }
                }
            };
            for (id, (what, delay, link)) in ops.into_iter().enumerate() {
                let id = id as u32;
                let at = q.now() + Nanos(delay);
                match what {
                    0 | 1 => {
                        let kind = match (what, id % 2) {
                            (0, 0) => EventKind::Rto(id),
                            (0, _) => EventKind::DelAck(id),
                            _ => EventKind::Source(id),
                        };
                        q.schedule(at, kind);
                        seq += 1;
                        all.insert((at, seq), kind);
                    }
                    2 => {
                        let w = &mut wires[link];
                        let at = w.back().map_or(at, |b| at.max(b.0));
                        let s = q.reserve();
                        seq += 1;
                        prop_assert_eq!(s, seq);
                        all.insert((at, s), EventKind::Arrive(id));
                        if w.is_empty() {
                            q.schedule_as(at, s, EventKind::Arrive(id));
                        }
                        w.push_back((at, s, id));
                    }
                    _ => check_pop(&mut q, &mut all, &mut wires),
                }
            }
            while !all.is_empty() {
                check_pop(&mut q, &mut all, &mut wires);
            }
            prop_assert_eq!(q.next_until(Nanos(u64::MAX)), None);
        }
    }
}
