//! The interfaces queue disciplines implement ([`QueueDisc`]; [`InOrder`] for those that
//! send in arrival order and decide on arrival, whose queues may keep a [`Queued`] record
//! of each packet instead of the packet), and the byte-counted FIFO they share.

use std::collections::VecDeque;

use rand::Rng;

use crate::ared::Ared;
use crate::csfne::CsfneCore;
use crate::csfne_fixed::FixedCsfnePort;
use crate::csfq::CsfqCore;
use crate::fifo::DropTail;
use crate::fixed::FixedCsfqCore;
use crate::fred::Fred;
use crate::may::May;
use crate::packet::{FlowId, Packet};
use crate::red::Red;
use crate::time::Nanos;
use crate::tuf_fixed::FixedTufPort;
use crate::verdict::Dropped;

/// A queue discipline at one output port: takes arrivals, hands out departures.
///
/// `enqueue` returns the packet it dropped, if any: the arrival itself, or (for
/// push-out disciplines such as DRR and TUF) one already queued. One arrival can cost more
/// than one packet (a push-out discipline makes room for a large arrival by pushing out
/// several small packets; CHOKe drops the arrival and its match): the rest are handed out
/// by `take_extra_drop`.
pub trait QueueDisc<P: Packet> {
    /// A packet arrives at time `now`; `rng` supplies the discipline's random draws.
    fn enqueue<R: Rng + ?Sized>(
        &mut self,
        packet: P,
        now: Nanos,
        rng: &mut R,
    ) -> Option<Dropped<P>>;
    /// The link is free at time `now`: the next packet to send, if any.
    fn dequeue(&mut self, now: Nanos) -> Option<P>;
    /// Bytes queued.
    fn len_bytes(&self) -> u32;
    /// Packets queued.
    fn len_packets(&self) -> usize;
    /// Packet slots the discipline has allocated (queue capacity, not occupancy). Grows
    /// with what has been queued at once, never with the buffer's size or the run's
    /// length; the simulator sums it to show that memory is bounded by what is queued.
    fn reserved_slots(&self) -> usize;
    /// Per-flow records the discipline holds (0 for the stateless): as many as the flows
    /// it has seen at most, where flows are numbered densely per queue.
    fn flow_slots(&self) -> usize {
        0
    }
    /// True when nothing is queued.
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// One more packet the last `enqueue` or `dequeue` dropped, if any (a dequeue drops
    /// when the discipline manages its queue at the head, as CoDel does). Call it after
    /// every `enqueue` and every `dequeue` until it returns `None`.
    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        None
    }
}

/// A discipline that sends in arrival order and decides a packet's fate only when it
/// arrives: it never drops, reorders or changes a packet once queued, and sends the head
/// first (drop-tail, RED, adaptive RED, FRED, CSFQ's and CS-FNE's cores, MAY, TUF's
/// filter). `admit` hands an accepted packet back as it will leave, so whoever sends it
/// can fix its departure when it is queued; the queue keeps only [`InOrder::Kept`] of it,
/// what its own bookkeeping reads again (the whole packet, or a [`Queued`] record where
/// the owner holds the packet itself). Every such discipline that keeps whole packets is
/// a [`QueueDisc`] as well.
pub trait InOrder<P: Packet> {
    /// What the queue keeps of each packet until it leaves.
    type Kept: Keep<P>;
    /// A packet arrives at time `now`: queued (handed back as it will leave, relabeled
    /// where the discipline relabels) or dropped.
    fn admit<R: Rng + ?Sized>(
        &mut self,
        packet: P,
        now: Nanos,
        rng: &mut R,
    ) -> Result<P, Dropped<P>>;
    /// The link is free at time `now`: what the queue kept of its head, which leaves.
    fn depart(&mut self, now: Nanos) -> Option<Self::Kept>;
    /// Bytes queued.
    fn len_bytes(&self) -> u32;
    /// Packets queued.
    fn len_packets(&self) -> usize;
    /// Slots the queue has allocated (see [`QueueDisc::reserved_slots`]).
    fn reserved_slots(&self) -> usize;
    /// Per-flow records held (see [`QueueDisc::flow_slots`]).
    fn flow_slots(&self) -> usize {
        0
    }
}

/// An in-order discipline that keeps whole packets is a queue discipline: `enqueue`
/// admits (the queue keeps a copy; the packet handed back is dropped here) and `dequeue`
/// departs. (A macro, not a blanket impl over `InOrder`: that would overlap the other
/// disciplines' impls for packets of downstream crates.)
macro_rules! whole_packets {
    ($($t:ident: $bound:path),+ $(,)?) => {
        $(impl<P: $bound + Clone> $crate::queue::QueueDisc<P> for $t<P> {
            #[inline]
            fn enqueue<R: rand::Rng + ?Sized>(
                &mut self,
                packet: P,
                now: $crate::time::Nanos,
                rng: &mut R,
            ) -> Option<$crate::verdict::Dropped<P>> {
                $crate::queue::InOrder::admit(self, packet, now, rng).err()
            }
            #[inline]
            fn dequeue(&mut self, now: $crate::time::Nanos) -> Option<P> {
                $crate::queue::InOrder::<P>::depart(self, now)
            }
            fn len_bytes(&self) -> u32 {
                $crate::queue::InOrder::<P>::len_bytes(self)
            }
            fn len_packets(&self) -> usize {
                $crate::queue::InOrder::<P>::len_packets(self)
            }
            fn reserved_slots(&self) -> usize {
                $crate::queue::InOrder::<P>::reserved_slots(self)
            }
            fn flow_slots(&self) -> usize {
                $crate::queue::InOrder::<P>::flow_slots(self)
            }
        })+
    };
}

whole_packets!(
    DropTail: Packet,
    Red: Packet,
    Ared: Packet,
    Fred: Packet,
    CsfqCore: Packet,
    CsfneCore: Packet,
    FixedCsfnePort: Packet,
    FixedCsfqCore: Packet,
    May: Packet,
    FixedTufPort: crate::tuf::Tagged,
);

/// What a byte-counted queue holds: a packet, or what an in-order queue keeps of one.
pub trait Held {
    /// Its length on the wire, bytes.
    fn held_bytes(&self) -> u32;
    /// Its flow (as [`Packet::flow`]).
    fn held_flow(&self) -> FlowId;
}

impl<P: Packet> Held for P {
    #[inline(always)]
    fn held_bytes(&self) -> u32 {
        self.size_bytes()
    }
    #[inline(always)]
    fn held_flow(&self) -> FlowId {
        self.flow()
    }
}

/// What an in-order queue keeps of a packet `P` while it waits.
pub trait Keep<P>: Held + Sized {
    /// What is kept of `packet`, queued at `now`.
    fn keep(packet: &P, now: Nanos) -> Self;
}

/// The whole packet, copied.
impl<P: Packet + Clone> Keep<P> for P {
    #[inline(always)]
    fn keep(packet: &P, _now: Nanos) -> Self {
        packet.clone()
    }
}

/// What an in-order queue's bookkeeping reads of a packet once it is queued, and what its
/// sender needs when it leaves: its size, its flow, and when it was queued. 16 bytes,
/// where a simulator's packet is several times that and is held elsewhere (on the wire
/// it was put on when queued).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queued {
    /// When it was queued.
    pub at: Nanos,
    /// Its length on the wire, bytes.
    pub size: u32,
    /// Its flow (as [`Packet::flow`]).
    pub flow: FlowId,
}

impl Held for Queued {
    #[inline(always)]
    fn held_bytes(&self) -> u32 {
        self.size
    }
    #[inline(always)]
    fn held_flow(&self) -> FlowId {
        self.flow
    }
}

impl<P: Packet> Keep<P> for Queued {
    #[inline(always)]
    fn keep(packet: &P, now: Nanos) -> Self {
        Queued {
            at: now,
            size: packet.size_bytes(),
            flow: packet.flow(),
        }
    }
}

/// The drops one arrival causes at a push-out queue: the first is what `enqueue` returns,
/// the rest wait for `take_extra_drop`. Keeps its capacity, so it allocates nothing once
/// warm.
#[derive(Debug, Clone)]
pub struct DropList<P> {
    first: Option<Dropped<P>>,
    rest: Vec<Dropped<P>>,
}

impl<P> Default for DropList<P> {
    fn default() -> Self {
        DropList {
            first: None,
            rest: Vec::new(),
        }
    }
}

impl<P> DropList<P> {
    /// Records one drop of the current arrival.
    pub fn push(&mut self, d: Dropped<P>) {
        match self.first {
            None => self.first = Some(d),
            Some(_) => self.rest.push(d),
        }
    }

    /// Records a drop made while dequeueing (CoDel drops at the head): handed out by
    /// `take_extra_drop` after the `dequeue`.
    pub fn push_extra(&mut self, d: Dropped<P>) {
        self.rest.push(d);
    }

    /// Ends the arrival: the drop `enqueue` returns.
    pub fn finish(&mut self) -> Option<Dropped<P>> {
        self.first.take()
    }

    /// The next further drop, for `take_extra_drop`.
    pub fn take_extra(&mut self) -> Option<Dropped<P>> {
        self.rest.pop()
    }
}

/// Appends `packet` to a queue whose first slots come one at a time (the standard growth
/// reserves four): most hosts' access-link queues, and most flows' queues in a per-flow
/// scheduler with many flows, never hold more than two or three packets, and a million of
/// them hold that memory for the whole run. Past four, the capacity doubles as usual.
pub(crate) fn push_back_small<P>(queue: &mut VecDeque<P>, packet: P) {
    if queue.len() == queue.capacity() && queue.capacity() < 4 {
        queue.reserve_exact(1);
    }
    queue.push_back(packet);
}

/// A FIFO that counts its bytes and refuses what does not fit in `capacity_bytes`: of
/// packets, or of what an in-order queue keeps of them ([`Held`]).
#[derive(Debug, Clone)]
pub struct ByteFifo<P> {
    packets: VecDeque<P>,
    bytes: u32,
    capacity_bytes: u32,
}

impl<P: Held> ByteFifo<P> {
    /// An empty FIFO holding at most `capacity_bytes` bytes.
    pub fn new(capacity_bytes: u32) -> Self {
        ByteFifo {
            // Grows with what is queued, not with the buffer: a 1 MB buffer reserved up front
            // for 40-byte packets would hold 25 000 slots per port whether used or not.
            packets: VecDeque::new(),
            bytes: 0,
            capacity_bytes,
        }
    }

    /// Whether a packet of `size` bytes fits now.
    pub fn fits(&self, size: u32) -> bool {
        self.bytes + size <= self.capacity_bytes
    }

    /// Appends the packet, or hands it back if it does not fit.
    pub fn push(&mut self, packet: P) -> Result<(), P> {
        let size = packet.held_bytes();
        if !self.fits(size) {
            return Err(packet);
        }
        self.bytes += size;
        push_back_small(&mut self.packets, packet);
        Ok(())
    }

    /// Queues what `P` keeps of `packet`, queued at `now`, if the packet fits; the packet
    /// is handed back either way (`Ok` queued, `Err` refused).
    pub fn admit<Q>(&mut self, packet: Q, now: Nanos) -> Result<Q, Q>
    where
        Q: Packet,
        P: Keep<Q>,
    {
        let size = packet.size_bytes();
        if !self.fits(size) {
            return Err(packet);
        }
        self.bytes += size;
        push_back_small(&mut self.packets, P::keep(&packet, now));
        Ok(packet)
    }

    /// Removes the head.
    pub fn pop(&mut self) -> Option<P> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.held_bytes();
        Some(p)
    }

    /// Removes the tail (the most recent arrival).
    pub fn pop_back(&mut self) -> Option<P> {
        let p = self.packets.pop_back()?;
        self.bytes -= p.held_bytes();
        Some(p)
    }

    /// Removes the packet at position `i` from the head.
    pub fn remove(&mut self, i: usize) -> Option<P> {
        let p = self.packets.remove(i)?;
        self.bytes -= p.held_bytes();
        Some(p)
    }

    /// The packet at position `i` from the head.
    pub fn get(&self, i: usize) -> Option<&P> {
        self.packets.get(i)
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Packet slots reserved (allocated) by the queue: at most about twice the most it has
    /// held at once.
    pub fn reserved_slots(&self) -> usize {
        self.packets.capacity()
    }

    /// The byte capacity.
    pub fn capacity_bytes(&self) -> u32 {
        self.capacity_bytes
    }
}

#[cfg(test)]
pub(crate) mod test_packet {
    use crate::packet::{FlowId, Packet};

    /// A minimal packet for unit tests.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct TestPacket {
        pub flow: FlowId,
        pub size: u32,
        pub label: f64,
    }

    impl TestPacket {
        pub fn new(flow: u32, size: u32, label: f64) -> Self {
            TestPacket {
                flow: FlowId(flow),
                size,
                label,
            }
        }
    }

    impl Packet for TestPacket {
        fn flow(&self) -> FlowId {
            self.flow
        }
        fn size_bytes(&self) -> u32 {
            self.size
        }
        fn label(&self) -> f64 {
            self.label
        }
        fn set_label(&mut self, label: f64) {
            self.label = label;
        }
    }
}

/// A generator whose every draw is the same word, so a test fixes what `random::<f64>()`
/// returns (the top 53 bits of the word over 2^53).
#[cfg(test)]
pub(crate) struct ConstRng(pub u64);

#[cfg(test)]
impl ConstRng {
    /// Every `random::<f64>()` returns `x` (rounded down to a multiple of 2^-53).
    pub fn f64(x: f64) -> Self {
        ConstRng(((x * (1u64 << 53) as f64) as u64) << 11)
    }
}

#[cfg(test)]
impl rand::RngCore for ConstRng {
    fn next_u32(&mut self) -> u32 {
        (self.0 >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for (i, b) in dst.iter_mut().enumerate() {
            *b = (self.0 >> (8 * (i % 8))) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_packet::TestPacket;
    use super::*;

    #[test]
    fn fifo_counts_bytes_and_refuses_overflow() {
        let mut q = ByteFifo::new(2500);
        assert!(q.push(TestPacket::new(0, 1000, 0.0)).is_ok());
        assert!(q.push(TestPacket::new(1, 1000, 0.0)).is_ok());
        let refused = q.push(TestPacket::new(2, 1000, 0.0)).unwrap_err();
        assert_eq!(refused.flow.0, 2);
        assert!(q.push(TestPacket::new(3, 500, 0.0)).is_ok());
        assert_eq!(q.bytes(), 2500);
        assert_eq!(q.pop().unwrap().flow.0, 0);
        assert_eq!(q.pop_back().unwrap().flow.0, 3);
        assert_eq!(q.bytes(), 1000);
    }

    #[test]
    fn small_queues_grow_a_slot_at_a_time_then_double() {
        let mut q = VecDeque::new();
        let mut caps = Vec::new();
        for i in 0..6 {
            push_back_small(&mut q, TestPacket::new(i, 100, 0.0));
            caps.push(q.capacity());
        }
        // One slot per packet up to four (the standard growth would reserve four at once),
        // then the usual growth: at least double.
        assert_eq!(caps[..4], [1, 2, 3, 4]);
        assert!(caps[4] >= 8 && caps[5] == caps[4], "{caps:?}");
        let order: Vec<u32> = q.iter().map(|p| p.flow.0).collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
    }
}
