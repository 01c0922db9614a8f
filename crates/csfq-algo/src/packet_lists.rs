//! Many per-flow FIFOs in one slab of packet slots, each a doubly linked list through it,
//! as Linux's per-flow qdiscs chain their `sk_buff`s (`sch_fq_codel.c`'s `flow->head`,
//! `flow->tail`).
//!
//! A per-flow scheduler with a `VecDeque` per flow keeps each queue's capacity at the most
//! that flow ever held: with 100 000 flows that is hundreds of bytes per flow for packets
//! long gone. Here a flow's queue is a 12-byte [`PacketList`], and the slab holds as many
//! slots as packets were queued in all the flows at once: it is bounded by the shared
//! buffer, not by the number of flows. Once the slab has grown to the standing queue,
//! pushing and popping allocate nothing (freed slots are reused, most recent first).

/// No slot.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct Slot<P> {
    /// The packet; `None` while the slot is free.
    packet: Option<P>,
    /// The previous packet of its list (toward the head); unused while free.
    prev: u32,
    /// The next packet of its list (toward the tail), or the next free slot.
    next: u32,
}

/// One FIFO of packets held in a [`PacketLists`] slab: its head, tail and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketList {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for PacketList {
    fn default() -> Self {
        PacketList {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl PacketList {
    /// Packets in the list.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the list holds no packet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The slab the [`PacketList`]s of one discipline keep their packets in. A list must only
/// be used with the slab its packets were pushed into.
#[derive(Debug, Clone)]
pub struct PacketLists<P> {
    slots: Vec<Slot<P>>,
    /// The first free slot (free slots are chained through `next`), or `NIL`.
    free: u32,
}

impl<P> Default for PacketLists<P> {
    fn default() -> Self {
        PacketLists {
            slots: Vec::new(),
            free: NIL,
        }
    }
}

impl<P> PacketLists<P> {
    /// Appends `packet` to `list`.
    pub fn push_back(&mut self, list: &mut PacketList, packet: P) {
        let slot = Slot {
            packet: Some(packet),
            prev: list.tail,
            next: NIL,
        };
        let i = match self.free {
            NIL => {
                // A slab of u32::MAX packets would outgrow any buffer a u32 can count.
                let i = self.slots.len() as u32;
                self.slots.push(slot);
                i
            }
            i => {
                self.free = self.slots[i as usize].next;
                self.slots[i as usize] = slot;
                i
            }
        };
        match list.tail {
            NIL => list.head = i,
            t => self.slots[t as usize].next = i,
        }
        list.tail = i;
        list.len += 1;
    }

    /// The packet at the head of `list`.
    pub fn front(&self, list: &PacketList) -> Option<&P> {
        match list.head {
            NIL => None,
            h => self.slots[h as usize].packet.as_ref(),
        }
    }

    /// Removes the head of `list` (the oldest packet).
    pub fn pop_front(&mut self, list: &mut PacketList) -> Option<P> {
        let h = list.head;
        (h != NIL).then(|| self.unlink(list, h))
    }

    /// Removes the tail of `list` (the most recent arrival).
    pub fn pop_back(&mut self, list: &mut PacketList) -> Option<P> {
        let t = list.tail;
        (t != NIL).then(|| self.unlink(list, t))
    }

    /// Takes slot `i` out of `list`, frees it and returns its packet.
    fn unlink(&mut self, list: &mut PacketList, i: u32) -> P {
        let Slot { prev, next, .. } = self.slots[i as usize];
        match prev {
            NIL => list.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => list.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
        list.len -= 1;
        self.release(i)
    }

    /// Frees slot `i` and returns its packet.
    fn release(&mut self, i: u32) -> P {
        let s = &mut self.slots[i as usize];
        s.next = self.free;
        self.free = i;
        s.packet.take().expect("a listed slot holds a packet")
    }

    /// Slots allocated: at most about twice the most packets held at once in all lists.
    pub fn reserved_slots(&self) -> usize {
        self.slots.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn lists_share_slots_and_keep_their_order() {
        let mut slab = PacketLists::default();
        let (mut a, mut b) = (PacketList::default(), PacketList::default());
        slab.push_back(&mut a, 1);
        slab.push_back(&mut b, 10);
        slab.push_back(&mut a, 2);
        slab.push_back(&mut b, 20);
        slab.push_back(&mut a, 3);
        assert_eq!((a.len(), b.len()), (3, 2));
        assert_eq!(slab.front(&a), Some(&1));
        assert_eq!(slab.pop_back(&mut a), Some(3));
        assert_eq!(slab.pop_front(&mut a), Some(1));
        assert_eq!(slab.pop_front(&mut b), Some(10));
        // Freed slots are reused: five packets were pushed, two are queued, and three more
        // take the three freed slots.
        for x in [4, 5, 30] {
            slab.push_back(if x < 10 { &mut a } else { &mut b }, x);
        }
        assert_eq!(slab.slots.len(), 5);
        let drain = |slab: &mut PacketLists<i32>, l: &mut PacketList| {
            std::iter::from_fn(|| slab.pop_front(l)).collect::<Vec<_>>()
        };
        assert_eq!(drain(&mut slab, &mut a), [2, 4, 5]);
        assert_eq!(drain(&mut slab, &mut b), [20, 30]);
        assert!(a.is_empty() && b.is_empty());
        assert_eq!(
            (slab.pop_front(&mut a), slab.pop_back(&mut b)),
            (None, None)
        );
    }

    proptest! {
        /// Any sequence of pushes and pops on four lists does what four `VecDeque`s do, and
        /// the slab never holds more slots than the most packets queued at once.
        #[test]
        fn behaves_as_one_deque_per_list(ops in prop::collection::vec((0u8..3, 0usize..4), 0..400)) {
            let mut slab = PacketLists::default();
            let mut lists = [PacketList::default(); 4];
            let mut model: [VecDeque<usize>; 4] = Default::default();
            let (mut queued, mut peak) = (0usize, 0usize);
            for (n, (op, l)) in ops.into_iter().enumerate() {
                match op {
                    0 => {
                        slab.push_back(&mut lists[l], n);
                        model[l].push_back(n);
                    }
                    1 => prop_assert_eq!(slab.pop_front(&mut lists[l]), model[l].pop_front()),
                    _ => prop_assert_eq!(slab.pop_back(&mut lists[l]), model[l].pop_back()),
                }
                prop_assert_eq!(slab.front(&lists[l]), model[l].front());
                prop_assert_eq!(lists[l].len(), model[l].len());
                queued = model.iter().map(|m| m.len()).sum();
                peak = peak.max(queued);
            }
            prop_assert!(slab.slots.len() <= peak);
            prop_assert_eq!(slab.slots.iter().filter(|s| s.packet.is_some()).count(), queued);
        }
    }
}
