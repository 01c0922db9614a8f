//! The event queue: integer-nanosecond time and a heap of events ordered by (time,
//! insertion order), so events at one instant run in the order they were scheduled and a
//! run is the same at every seed-for-seed repetition.
//!
//! Components that are not the engine (hosts, overlay loops) do not touch the queue: they
//! return [`Action`]s, which the engine carries out in order.

use std::cmp::Ordering;

use csfq_algo::Nanos;
use dary_heap::QuaternaryHeap;

use crate::packet::SimPacket;

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

#[derive(Debug)]
struct Event {
    at: Nanos,
    seq: u64,
    kind: EventKind,
}

impl Event {
    /// The order key: time, then scheduling order, as one integer (one comparison).
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at.0) << 64) | u128::from(self.seq)
    }
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
    // Reversed, as `cmp`; written out so the heap's comparisons stay one integer compare.
    #[inline]
    fn lt(&self, o: &Self) -> bool {
        o.key() < self.key()
    }
    #[inline]
    fn le(&self, o: &Self) -> bool {
        o.key() <= self.key()
    }
    #[inline]
    fn gt(&self, o: &Self) -> bool {
        o.key() > self.key()
    }
    #[inline]
    fn ge(&self, o: &Self) -> bool {
        o.key() >= self.key()
    }
}
impl Ord for Event {
    // Reversed: the heap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key().cmp(&self.key())
    }
}

/// The clock and the pending events.
#[derive(Debug)]
pub(crate) struct Events {
    heap: QuaternaryHeap<Event>,
    next_seq: u64,
    now: Nanos,
    handled: u64,
}

impl Events {
    pub(crate) fn new() -> Self {
        Events {
            heap: QuaternaryHeap::with_capacity(1024),
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

    /// Slots the heap has allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.heap.capacity()
    }

    #[inline]
    pub(crate) fn schedule(&mut self, at: Nanos, kind: EventKind) {
        self.next_seq += 1;
        self.heap.push(Event {
            at,
            seq: self.next_seq,
            kind,
        });
    }

    /// The next event at or before `t`, with the clock moved to it.
    #[inline]
    pub(crate) fn next_until(&mut self, t: Nanos) -> Option<EventKind> {
        if self.heap.peek().is_none_or(|e| e.at > t) {
            return None;
        }
        let ev = self.heap.pop().expect("peeked");
        self.now = ev.at;
        self.handled += 1;
        Some(ev.kind)
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
}
