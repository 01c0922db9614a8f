//! The heaps the event queue keeps its events in: 4-ary min-heaps ordered by (time,
//! scheduling order), each node's four children side by side in memory.
//!
//! A heap's `pop` moves the last event down from the top, at each level to the earliest
//! of four children. Which child is earliest is as good as random, so a branch on it is
//! often mispredicted; here it is chosen with selects (conditional moves, no branch:
//! [`std::hint::select_unpredictable`]), and the branches left (the loop's, and whether the
//! moving event is earlier than that child, which it rarely is until the bottom) mostly go
//! one way. Measured, this is no slower than a branch on a heap that fits in the caches
//! and perhaps a few percent faster; on a heap far larger, where a branch lets the CPU
//! start loading the guessed child's children early, neither showed faster
//! (BENCHMARKS.md, "The heaps' pop without a branch on the child"). The `dary_heap`
//! crate's 4-ary heap, which the queue used before, took 1.06-1.11 of this one's time on
//! the small and 1000-flow cases (same section): that is why it is not used here. The
//! order events come out in is the one any heap gives (every key is distinct: no two
//! events share a scheduling order).

use std::hint::select_unpredictable;

use super::Event;

/// A node's children.
const D: usize = 4;

/// Events, earliest first by [`Event::key`].
#[derive(Debug)]
pub(super) struct EventHeap {
    data: Vec<Event>,
}

impl EventHeap {
    pub(super) fn with_capacity(n: usize) -> Self {
        EventHeap {
            data: Vec::with_capacity(n),
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.data.len()
    }

    #[inline]
    pub(super) fn capacity(&self) -> usize {
        self.data.capacity()
    }

    /// The earliest event.
    #[inline]
    pub(super) fn peek(&self) -> Option<&Event> {
        self.data.first()
    }

    #[inline]
    pub(super) fn push(&mut self, e: Event) {
        let key = e.key();
        let mut pos = self.data.len();
        self.data.push(e);
        // Up from the bottom while the parent is later (a new event is usually later
        // than most, so this mostly stops at once).
        while pos > 0 {
            let parent = (pos - 1) / D;
            if self.data[parent].key() <= key {
                break;
            }
            self.data[pos] = self.data[parent];
            pos = parent;
        }
        self.data[pos] = e;
    }

    /// Takes the earliest event.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Event> {
        let last = self.data.pop()?;
        let Some(&top) = self.data.first() else {
            return Some(last);
        };
        let data = &mut self.data[..];
        let n = data.len();
        let key = last.key();
        let mut pos = 0;
        // Down from the top, through nodes with four children.
        loop {
            let first = D * pos + 1;
            let Some(kids) = data.get(first..first + D) else {
                break;
            };
            let (i, earliest) = earliest_of_four(kids);
            let child = first + i;
            if key <= earliest {
                data[pos] = last;
                return Some(top);
            }
            data[pos] = data[child];
            pos = child;
        }
        // The last level may have a node with one to three children.
        let first = D * pos + 1;
        if first < n {
            let mut child = first;
            for i in first + 1..n {
                if data[i].key() < data[child].key() {
                    child = i;
                }
            }
            if data[child].key() < key {
                data[pos] = data[child];
                pos = child;
            }
        }
        data[pos] = last;
        Some(top)
    }
}

/// The index (0 to 3) and key of the earliest of four events, chosen without a branch.
#[inline(always)]
fn earliest_of_four(kids: &[Event]) -> (usize, u128) {
    let [a, b, c, d] = [kids[0].key(), kids[1].key(), kids[2].key(), kids[3].key()];
    let b_first = b < a;
    let (ab, i_ab) = (
        select_unpredictable(b_first, b, a),
        select_unpredictable(b_first, 1, 0),
    );
    let d_first = d < c;
    let (cd, i_cd) = (
        select_unpredictable(d_first, d, c),
        select_unpredictable(d_first, 3, 2),
    );
    let cd_first = cd < ab;
    (
        select_unpredictable(cd_first, i_cd, i_ab),
        select_unpredictable(cd_first, cd, ab),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventKind;
    use csfq_algo::Nanos;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Pushes and pops, three pushes to a pop (so the heap grows to hundreds, four and
        /// more levels deep) and runs of pops, at few distinct times (so many events share
        /// an instant) and at sizes across every shape of a node's last level: each pop
        /// gives the earliest (time, order) of what a sorted set holding the same events
        /// gives.
        #[test]
        fn pops_come_out_in_key_order(
            ops in proptest::collection::vec((0u8..4, 0u64..6), 1..1500)
        ) {
            let mut heap = EventHeap::with_capacity(0);
            let mut want = BTreeSet::new();
            let mut seq = 0u64;
            for (op, at) in ops {
                if op > 0 || want.is_empty() {
                    seq += 1;
                    heap.push(Event { at: Nanos(at), seq, kind: EventKind::Source(seq as u32) });
                    want.insert((at, seq));
                } else {
                    let e = heap.pop().expect("not empty");
                    prop_assert_eq!(Some((e.at.0, e.seq)), want.pop_first());
                    prop_assert_eq!(e.kind, EventKind::Source(e.seq as u32));
                }
                prop_assert_eq!(heap.len(), want.len());
                prop_assert_eq!(heap.peek().map(|e| (e.at.0, e.seq)), want.first().copied());
            }
            while let Some(e) = heap.pop() {
                prop_assert_eq!(Some((e.at.0, e.seq)), want.pop_first());
            }
            prop_assert!(want.is_empty());
        }
    }

    /// Each of the four children earliest in turn, ties between them broken by order.
    #[test]
    fn earliest_of_four_finds_each_position() {
        for earliest in 0..4 {
            let kids: Vec<Event> = (0..4u64)
                .map(|i| Event {
                    at: Nanos(if i == earliest { 5 } else { 9 }),
                    seq: 10 - i,
                    kind: EventKind::Sample,
                })
                .collect();
            assert_eq!(
                earliest_of_four(&kids),
                (earliest as usize, kids[earliest as usize].key())
            );
        }
        let tied: Vec<Event> = [7u64, 4, 6, 5]
            .iter()
            .map(|&seq| Event {
                at: Nanos(3),
                seq,
                kind: EventKind::Sample,
            })
            .collect();
        assert_eq!(earliest_of_four(&tied), (1, tied[1].key()));
    }
}
