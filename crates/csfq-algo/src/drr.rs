//! Deficit Round Robin: Shreedhar and Varghese, "Efficient Fair Queueing using Deficit
//! Round Robin", SIGCOMM 1995, Section 3 (Fig. 3's algorithm).
//!
//! Per-flow FIFOs served round robin, each visit granting a quantum of bytes. Buffer
//! management as in ns-2's `queue/drr.cc`, which every paper compared here ran ("all
//! algorithms used in the simulation, except CSFQ and FRED, were part of the standard
//! ns-2 distribution", CSFQ paper, Section 3): the arrival is queued, then while the
//! shared buffer holds more than its size the **head** of the longest queue is dropped
//! (`while (bytecnt > blimit_) getMaxflow(curr)->deque()`), the arrival's own queue
//! included ([`DrrDropEnd::Head`], the default). [`DrrDropEnd::Tail`] pushes packets out
//! from the tail of the longest queue until the arrival fits, and drops the arrival
//! instead if its own queue (with it) is the longest (Shreedhar and Varghese, Section 3).
//! Either way one drop is not always enough: while small-packet flows keep the buffer
//! full, one 200-byte packet never makes room for a 1500-byte arrival, and a flow of large
//! packets would be starved below its fair share.
//!
//! Among equally backlogged flows the push-out takes the one with the highest tie-break
//! number, drawn afresh at each of a flow's arrivals, so no flow is pushed out more often
//! for its index.
//!
//! Weights (Section 3: "quantum_i proportional to the flow's share"): a flow of weight `w`
//! gets `w x quantum_bytes` per round, so backlogged flows share in proportion to their
//! weights, the weighted comparison for weighted CSFQ.
//!
//! Queues are per flow, or per hash bucket ([`Drr::set_queue`]): Shreedhar and Varghese
//! hash flows into a fixed number of queues (Section 3.1), and ns-2's DRR, which the MAY
//! paper configures with 100 buckets, hashes the source address ([`ns2_bucket`]). Flows
//! that land in one bucket share its queue, its quantum and its push-outs.

use std::cmp::Ordering;
use std::collections::VecDeque;

use rand::Rng;

use crate::packet::Packet;
use crate::packet_lists::{PacketList, PacketLists};
use crate::queue::{DropList, QueueDisc};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// DRR configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrrParams {
    /// The shared buffer, bytes.
    pub buffer_bytes: u32,
    /// Bytes a flow may send per round; at least the largest packet (1500).
    pub quantum_bytes: u32,
    /// Which end of the longest queue loses a packet when the buffer is full.
    pub drop_end: DrrDropEnd,
}

/// Which end of the longest queue a full buffer drops from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DrrDropEnd {
    /// Queue the arrival, then drop the longest queue's head until the buffer fits
    /// (ns-2's `queue/drr.cc`).
    #[default]
    Head,
    /// Push out the longest queue's tail until the arrival fits; drop the arrival if its
    /// own queue is the longest.
    Tail,
}

impl DrrParams {
    /// DRR with a 1500-byte quantum, dropping from the head as ns-2 does.
    pub fn new(buffer_bytes: u32) -> Self {
        DrrParams {
            buffer_bytes,
            quantum_bytes: 1500,
            drop_end: DrrDropEnd::Head,
        }
    }
}

/// Marks a flow that is not in the heap (has no packets queued).
const NOT_QUEUED: u32 = u32::MAX;

#[derive(Debug, Clone)]
struct FlowQueue {
    /// Its packets, in [`Drr::slab`].
    packets: PacketList,
    bytes: u32,
    deficit: u32,
    /// Bytes per round for this flow.
    quantum: u32,
    /// Position in the backlog heap; `NOT_QUEUED` when the flow has no packets.
    heap_pos: u32,
    /// Counts the flow's idle periods; a round-robin entry of an earlier period is stale.
    epoch: u32,
    /// The flow reached the front of the round and has not yet been given its quantum.
    owed_quantum: bool,
}

impl FlowQueue {
    fn new(quantum: u32) -> Self {
        FlowQueue {
            packets: PacketList::default(),
            bytes: 0,
            deficit: 0,
            quantum,
            heap_pos: NOT_QUEUED,
            epoch: 0,
            owed_quantum: true,
        }
    }

    fn is_active(&self) -> bool {
        self.heap_pos != NOT_QUEUED
    }
}

/// A backlogged flow in the push-out's heap, with what orders it: the heap's comparisons
/// read the entries, side by side in one array, and not the flows' records, which with
/// many flows are each a cache miss of their own.
#[derive(Debug, Clone, Copy)]
struct HeapEntry {
    /// The flow's bytes queued (high half) and its tie-break (low half): drawn at each of
    /// the flow's arrivals, it orders equally backlogged flows.
    key: u64,
    /// The flow's bytes per round.
    quantum: u32,
    flow: u32,
}

impl HeapEntry {
    fn bytes(&self) -> u32 {
        (self.key >> 32) as u32
    }

    fn tiebreak(&self) -> u32 {
        self.key as u32
    }

    /// Goes above `b` in the heap: more backlogged relative to its weight, or as
    /// backlogged and with the higher tie-break draw.
    #[inline]
    fn above(&self, b: &HeapEntry) -> bool {
        if self.quantum == b.quantum {
            // Equal weights (the usual case): one comparison of (bytes, tie-break).
            return self.key > b.key;
        }
        cmp_backlog(self.bytes(), self.quantum, b.bytes(), b.quantum)
            .then(self.tiebreak().cmp(&b.tiebreak()))
            == Ordering::Greater
    }
}

/// Compares `a_bytes / a_quantum` with `b_bytes / b_quantum` exactly: backlogs relative to
/// the flows' weights.
fn cmp_backlog(a_bytes: u32, a_quantum: u32, b_bytes: u32, b_quantum: u32) -> Ordering {
    (a_bytes as u64 * b_quantum as u64).cmp(&(b_bytes as u64 * a_quantum as u64))
}

/// The bucket ns-2's DRR (`queue/drr.cc`, `DRR::hash`, then `% buckets_`) puts a packet
/// from source address `saddr` in: `((i + (i >> 8) + ~(i >> 4)) % (2^24 - 1) + 1) %
/// buckets`, in C's 32-bit signed arithmetic. With ns-2's flat addressing the address is
/// the node's number, in the order the script created the nodes.
pub fn ns2_bucket(saddr: u32, buckets: u32) -> u32 {
    let i = saddr as i32;
    let h = (i.wrapping_add(i >> 8).wrapping_add(!(i >> 4)) % ((2 << 23) - 1)) + 1;
    (h % buckets.max(1) as i32).unsigned_abs()
}

/// A DRR scheduler over per-flow (or per-bucket) queues sharing one buffer.
///
/// Every operation is O(log n) in the flows with packets queued: the push-out finds the
/// most backlogged flow at the top of a binary max-heap ordered by backlog relative to
/// weight, and a flow emptied by a push-out leaves a stale entry in the round, skipped
/// when it comes up, instead of being searched for. The flows' queues are lists in one
/// slab ([`PacketLists`]), so a flow costs a fixed 36 bytes however many packets it once
/// had queued, and the slab holds what the shared buffer holds.
#[derive(Debug, Clone)]
pub struct Drr<P> {
    params: DrrParams,
    /// The queues: one per flow, indexed by `FlowId`, unless `queue_of` says otherwise.
    flows: Vec<FlowQueue>,
    /// Flow (by `FlowId`) to queue, where [`Drr::set_queue`] has set one; `NOT_QUEUED`
    /// (or past the end): the flow's own queue, numbered after every set one.
    queue_of: Vec<u32>,
    /// One more than the highest queue [`Drr::set_queue`] has named: flows without a set
    /// queue get `queues_set + FlowId`, so they never share a set one.
    queues_set: u32,
    /// The packets of every flow's queue.
    slab: PacketLists<P>,
    /// The round: flows with packets, in round-robin order, as `(flow, epoch)`; entries
    /// whose epoch is not the flow's current one are stale.
    round: VecDeque<(u32, u32)>,
    /// Flows with packets, a max-heap by backlog relative to weight, then tie-break.
    heap: Vec<HeapEntry>,
    bytes: u32,
    packets: usize,
    /// What the last arrival cost.
    drops: DropList<P>,
}

impl<P: Packet> Drr<P> {
    /// An empty DRR scheduler.
    pub fn new(params: DrrParams) -> Self {
        Drr {
            params,
            flows: Vec::new(),
            queue_of: Vec::new(),
            queues_set: 0,
            slab: PacketLists::default(),
            round: VecDeque::new(),
            heap: Vec::new(),
            bytes: 0,
            packets: 0,
            drops: DropList::default(),
        }
    }

    fn ensure_flow(&mut self, i: usize) {
        if i >= self.flows.len() {
            let quantum = self.params.quantum_bytes;
            self.flows.resize_with(i + 1, || FlowQueue::new(quantum));
        }
    }

    /// Puts `flow` in queue `queue` (a hash bucket), shared with every flow put there.
    /// Call before any packet arrives; flows never put anywhere keep queues of their own.
    pub fn set_queue(&mut self, flow: crate::packet::FlowId, queue: u32) {
        assert!(
            self.packets == 0,
            "queues are assigned before packets arrive"
        );
        let i = flow.index();
        if i >= self.queue_of.len() {
            self.queue_of.resize(i + 1, NOT_QUEUED);
        }
        self.queue_of[i] = queue;
        self.queues_set = self.queues_set.max(queue + 1);
    }

    /// The queue `flow`'s packets go to.
    #[inline]
    fn queue(&self, flow: crate::packet::FlowId) -> usize {
        match self.queue_of.get(flow.index()) {
            Some(&q) if q != NOT_QUEUED => q as usize,
            _ => self.queues_set as usize + flow.index(),
        }
    }

    /// Gives `flow` weight `weight` (> 0, finite): a quantum of `weight x quantum_bytes`
    /// bytes per round, at least 1 byte. Flows sharing a bucket share its quantum: the
    /// last weight set for any of them holds.
    pub fn set_weight(&mut self, flow: crate::packet::FlowId, weight: f64) {
        let i = self.queue(flow);
        self.ensure_flow(i);
        let q = (self.params.quantum_bytes as f64 * weight).round();
        self.flows[i].quantum = q.clamp(1.0, u32::MAX as f64) as u32;
        if self.flows[i].is_active() {
            let pos = self.flows[i].heap_pos as usize;
            self.heap[pos].quantum = self.flows[i].quantum;
            self.sift_up(pos);
            let pos = self.flows[i].heap_pos as usize;
            self.sift_down(pos);
        }
    }

    fn push<R: Rng + ?Sized>(&mut self, p: P, rng: &mut R) {
        let i = self.queue(p.flow());
        self.ensure_flow(i);
        let size = p.size_bytes();
        self.bytes += size;
        self.packets += 1;
        let q = &mut self.flows[i];
        q.bytes += size;
        let tiebreak: u32 = rng.random();
        let key = (q.bytes as u64) << 32 | tiebreak as u64;
        self.slab.push_back(&mut q.packets, p);
        if q.is_active() {
            let pos = q.heap_pos as usize;
            self.heap[pos].key = key;
            self.sift_up(pos);
        } else {
            q.owed_quantum = true;
            q.deficit = 0;
            self.round.push_back((i as u32, q.epoch));
            let pos = self.heap.len();
            q.heap_pos = pos as u32;
            self.heap.push(HeapEntry {
                key,
                quantum: q.quantum,
                flow: i as u32,
            });
            self.sift_up(pos);
        }
    }

    fn place(&mut self, pos: usize, e: HeapEntry) {
        self.heap[pos] = e;
        self.flows[e.flow as usize].heap_pos = pos as u32;
    }

    fn sift_up(&mut self, mut pos: usize) {
        let e = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if !e.above(&self.heap[parent]) {
                break;
            }
            self.place(pos, self.heap[parent]);
            pos = parent;
        }
        self.place(pos, e);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let e = self.heap[pos];
        let n = self.heap.len();
        loop {
            let left = 2 * pos + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = left + (right < n && self.heap[right].above(&self.heap[left])) as usize;
            if !self.heap[child].above(&e) {
                break;
            }
            self.place(pos, self.heap[child]);
            pos = child;
        }
        self.place(pos, e);
    }

    /// Flow `i` lost bytes: restores the heap, or takes the flow out of it (and out of the
    /// round, by making its entry stale) when it has none left.
    fn shrunk(&mut self, i: usize) {
        let q = &mut self.flows[i];
        let pos = q.heap_pos as usize;
        if !q.packets.is_empty() {
            let e = &mut self.heap[pos];
            e.key = (q.bytes as u64) << 32 | e.tiebreak() as u64;
            self.sift_down(pos);
            return;
        }
        q.heap_pos = NOT_QUEUED;
        q.deficit = 0;
        q.epoch = q.epoch.wrapping_add(1);
        let last = self.heap.pop().expect("an active flow is in the heap");
        if pos < self.heap.len() {
            self.place(pos, last);
            self.sift_up(pos);
            let pos = self.flows[last.flow as usize].heap_pos as usize;
            self.sift_down(pos);
        }
    }

    /// Removes the most recent packet of flow `i` (`tail`) or its oldest, which it has.
    fn pop_end(&mut self, i: usize, tail: bool) -> P {
        let q = &mut self.flows[i];
        let p = if tail {
            self.slab.pop_back(&mut q.packets)
        } else {
            self.slab.pop_front(&mut q.packets)
        }
        .expect("active flow has packets");
        let size = p.size_bytes();
        q.bytes -= size;
        self.bytes -= size;
        self.packets -= 1;
        self.shrunk(i);
        p
    }

    /// Checks the heap's order and positions (tests only).
    #[cfg(test)]
    fn check_heap(&self) {
        for (pos, e) in self.heap.iter().enumerate() {
            let q = &self.flows[e.flow as usize];
            assert_eq!(q.heap_pos as usize, pos);
            assert_eq!((e.bytes(), e.quantum), (q.bytes, q.quantum), "entry {pos}");
            if pos > 0 {
                assert!(!e.above(&self.heap[(pos - 1) / 2]), "heap order at {pos}");
            }
        }
    }

    /// Bytes queued in `flow`'s queue (with a bucket's other flows, if it shares one).
    pub fn flow_bytes(&self, flow: crate::packet::FlowId) -> u32 {
        self.flows.get(self.queue(flow)).map_or(0, |q| q.bytes)
    }
}

impl<P: Packet> QueueDisc<P> for Drr<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, _now: Nanos, rng: &mut R) -> Option<Dropped<P>> {
        let size = p.size_bytes();
        if self.params.drop_end == DrrDropEnd::Head {
            // ns-2: queued first, then the longest queue's head until the buffer fits.
            self.push(p, rng);
            while self.bytes > self.params.buffer_bytes {
                let v = self.heap.first().expect("a queued packet").flow as usize;
                let dropped = self.pop_end(v, false);
                self.drops
                    .push(Dropped::new(dropped, DropReason::DrrLongestQueue));
            }
            return self.drops.finish();
        }
        let own = self.queue(p.flow());
        while self.bytes + size > self.params.buffer_bytes {
            // Looked up each time: the arrival's queue may become the longest. The top
            // (the most backlogged) loses its last packet when it is another flow's queue
            // at least as long as the arrival's own with the arrival (a tie goes against
            // the top); otherwise the arrival is dropped.
            let (own_bytes, own_quantum) = self
                .flows
                .get(own)
                .map_or((size, self.params.quantum_bytes), |q| {
                    (q.bytes + size, q.quantum)
                });
            match self.heap.first().map(|e| e.flow as usize) {
                Some(v)
                    if v != own
                        && cmp_backlog(
                            self.flows[v].bytes,
                            self.flows[v].quantum,
                            own_bytes,
                            own_quantum,
                        ) != Ordering::Less =>
                {
                    let evicted = self.pop_end(v, true);
                    self.drops
                        .push(Dropped::new(evicted, DropReason::DrrLongestQueue));
                }
                _ => {
                    self.drops
                        .push(Dropped::new(p, DropReason::DrrLongestQueue));
                    return self.drops.finish();
                }
            }
        }
        self.push(p, rng);
        self.drops.finish()
    }

    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        self.drops.take_extra()
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<P> {
        loop {
            let (flow, epoch) = *self.round.front()?;
            let i = flow as usize;
            let q = &mut self.flows[i];
            if q.epoch != epoch {
                // The flow was emptied by push-outs after this entry was made.
                self.round.pop_front();
                continue;
            }
            if q.owed_quantum {
                q.deficit = q.deficit.saturating_add(q.quantum);
                q.owed_quantum = false;
            }
            let head = self
                .slab
                .front(&q.packets)
                .expect("active flow has packets")
                .size_bytes();
            if head <= q.deficit {
                let p = self.slab.pop_front(&mut q.packets).expect("checked");
                q.deficit -= head;
                q.bytes -= head;
                self.bytes -= head;
                self.packets -= 1;
                if q.packets.is_empty() {
                    self.round.pop_front();
                }
                self.shrunk(i);
                return Some(p);
            }
            // Not enough deficit: end of this flow's turn.
            q.owed_quantum = true;
            self.round.rotate_left(1);
        }
    }
    fn len_bytes(&self) -> u32 {
        self.bytes
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn reserved_slots(&self) -> usize {
        self.slab.reserved_slots() + self.round.capacity() + self.heap.capacity()
    }
    fn flow_slots(&self) -> usize {
        self.flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packet::TestPacket;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    #[test]
    fn serves_backlogged_flows_equally_in_bytes() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(1_000_000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Flow 0 sends 1500-byte packets, flow 1 sends 500-byte packets.
        for _ in 0..300 {
            q.enqueue(TestPacket::new(0, 1500, 0.0), Nanos(0), &mut rng);
            q.enqueue(TestPacket::new(1, 500, 0.0), Nanos(0), &mut rng);
        }
        let mut bytes = [0u32; 2];
        for _ in 0..200 {
            let p = q.dequeue(Nanos(0)).unwrap();
            bytes[p.flow.index()] += p.size;
        }
        // Byte shares equal within one quantum.
        assert!(bytes[0].abs_diff(bytes[1]) <= 1500, "{bytes:?}");
    }

    /// ns-2's DRR::hash by hand: address 0: 0 + 0 + ~0 = -1, % (2^24 - 1) = -1, + 1 = 0;
    /// 15: 15 + 0 + ~0 = 14, + 1 = 15; 16: 16 + 0 + ~1 = 14, + 1 = 15 (15 and 16 collide);
    /// 100: 100 + 0 + ~6 = 93, + 1 = 94; 255: 255 + 0 + ~15 = 239, + 1 = 240, % 100 = 40.
    #[test]
    fn ns2_bucket_is_ns2_drr_hash() {
        let b: Vec<u32> = [0, 15, 16, 100, 255].map(|a| ns2_bucket(a, 100)).to_vec();
        assert_eq!(b, [0, 15, 15, 94, 40]);
        assert!((0..100_000).all(|a| ns2_bucket(a, 100) < 100));
    }

    /// Two backlogged flows hashed into one bucket share one queue's quantum: together
    /// they get what a flow alone in its bucket gets; unassigned flows keep their own
    /// queues, apart from every bucket.
    #[test]
    fn flows_in_one_bucket_share_its_quantum() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(10_000_000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for (flow, bucket) in [(0, 3), (1, 3), (2, 0)] {
            q.set_queue(crate::packet::FlowId(flow), bucket);
        }
        for _ in 0..400 {
            for f in 0..4 {
                q.enqueue(TestPacket::new(f, 1000, 0.0), Nanos(0), &mut rng);
            }
        }
        let mut bytes = [0u32; 4];
        for _ in 0..600 {
            let p = q.dequeue(Nanos(0)).unwrap();
            bytes[p.flow.index()] += p.size;
        }
        // Three queues (bucket 3, bucket 0, flow 3's own), 200 packets each, within the
        // one quantum a round cut short leaves.
        for (got, queue) in [
            (bytes[0] + bytes[1], "bucket 3"),
            (bytes[2], "bucket 0"),
            (bytes[3], "own"),
        ] {
            assert!(got.abs_diff(200_000) <= 1000, "{queue}: {bytes:?}");
        }
        assert_eq!(
            q.flow_bytes(crate::packet::FlowId(0)),
            800_000 - bytes[0] - bytes[1]
        );
    }

    /// 2000 flows, one after another, each queue 40 packets that are then sent: the packet
    /// slots follow the most queued at once (40), not the flows that ever queued (a queue
    /// per flow keeping its capacity would hold 80 000 slots).
    #[test]
    fn packet_slots_follow_the_queue_not_the_flows() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(1_000_000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for f in 0..2000 {
            for _ in 0..40 {
                assert!(q
                    .enqueue(TestPacket::new(f, 1000, 0.0), Nanos(0), &mut rng)
                    .is_none());
            }
            for _ in 0..40 {
                assert_eq!(q.dequeue(Nanos(0)).map(|p| p.flow.0), Some(f));
            }
        }
        assert!(q.is_empty());
        assert_eq!(q.flow_slots(), 2000);
        assert!(q.slab.reserved_slots() <= 80, "{}", q.slab.reserved_slots());
    }

    /// Weights 1, 2 and 3 (quanta 1500, 3000, 4500 bytes): backlogged flows are served
    /// 1 : 2 : 3 in bytes, within one round's quanta; with a full buffer the push-out takes
    /// the flow most backlogged relative to its weight, so the shares hold.
    #[test]
    fn weighted_flows_are_served_in_proportion_to_their_weights() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(60_000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for f in 0..3u32 {
            q.set_weight(crate::packet::FlowId(f), (f + 1) as f64);
        }
        let mut bytes = [0u64; 3];
        for _ in 0..3000 {
            // Every flow offers far more than it gets: the buffer stays full.
            for f in 0..3 {
                for _ in 0..3 {
                    let _ = q.enqueue(TestPacket::new(f, 1000, 0.0), Nanos(0), &mut rng);
                }
            }
            for _ in 0..3 {
                let p = q.dequeue(Nanos(0)).unwrap();
                bytes[p.flow.index()] += p.size as u64;
            }
        }
        let total: u64 = bytes.iter().sum();
        for (f, &b) in bytes.iter().enumerate() {
            let want = total as f64 * (f + 1) as f64 / 6.0;
            assert!((b as f64 - want).abs() <= 9000.0, "{bytes:?}");
        }
    }

    /// A weight changed while flows are queued reorders the push-out's heap at once: the
    /// flow whose backlog is the largest relative to its new weight is the one pushed out.
    #[test]
    fn weight_changed_while_queued_moves_the_flow_in_the_heap() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams {
            drop_end: DrrDropEnd::Tail,
            ..DrrParams::new(10_000)
        });
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Flow 0: 5000 bytes, flow 1: 3000, flow 2: 2000; the buffer is full.
        for (f, n) in [(0, 5), (1, 3), (2, 2)] {
            for _ in 0..n {
                assert!(q
                    .enqueue(TestPacket::new(f, 1000, 0.0), Nanos(0), &mut rng)
                    .is_none());
            }
        }
        q.check_heap();
        // Weight 4 for flow 0: 5000 / 4 is below flow 1's 3000 / 1.
        q.set_weight(crate::packet::FlowId(0), 4.0);
        q.check_heap();
        let d = q
            .enqueue(TestPacket::new(2, 1000, 0.0), Nanos(0), &mut rng)
            .expect("the buffer was full");
        assert_eq!(
            d.packet.flow.index(),
            1,
            "pushed out flow 1, the longest by weight"
        );
        assert_eq!(q.flow_bytes(crate::packet::FlowId(1)), 2000);
        // And back to weight 1: flow 0 is the longest again.
        q.set_weight(crate::packet::FlowId(0), 1.0);
        q.check_heap();
        let d = q
            .enqueue(TestPacket::new(2, 1000, 0.0), Nanos(0), &mut rng)
            .expect("the buffer was full");
        assert_eq!(d.packet.flow.index(), 0);
        q.check_heap();
    }

    #[test]
    fn full_buffer_drops_from_longest_queue() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(5000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..4 {
            assert!(q
                .enqueue(TestPacket::new(0, 1000, 0.0), Nanos(0), &mut rng)
                .is_none());
        }
        assert!(q
            .enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng)
            .is_none());
        // Full: flow 1's arrival pushes out flow 0's tail.
        let d = q
            .enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng)
            .unwrap();
        assert_eq!(
            (d.packet.flow.0, d.reason),
            (0, DropReason::DrrLongestQueue)
        );
        // Flow 0's own arrival is dropped: it is the longest.
        let d = q
            .enqueue(TestPacket::new(0, 1000, 0.0), Nanos(0), &mut rng)
            .unwrap();
        assert_eq!(d.packet.flow.0, 0);
        assert_eq!(q.flow_bytes(crate::packet::FlowId(0)), 3000);
        assert_eq!(q.len_bytes(), 5000);
    }

    /// A 1500-byte arrival meets a buffer full of another flow's 200-byte packets: eight
    /// of them (1600 bytes) are pushed out, the arrival is queued, and the drops come out
    /// of `enqueue` and `take_extra_drop`, newest first.
    #[test]
    fn pushes_out_until_a_large_arrival_fits() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(3000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..15 {
            assert!(q
                .enqueue(TestPacket::new(0, 200, 0.0), Nanos(0), &mut rng)
                .is_none());
        }
        let first = q
            .enqueue(TestPacket::new(1, 1500, 0.0), Nanos(0), &mut rng)
            .unwrap();
        let mut dropped = vec![first];
        dropped.extend(std::iter::from_fn(|| q.take_extra_drop()));
        assert_eq!(dropped.len(), 8);
        assert!(dropped.iter().all(|d| d.packet.flow.0 == 0));
        assert_eq!(q.flow_bytes(crate::packet::FlowId(0)), 1400);
        assert_eq!(q.flow_bytes(crate::packet::FlowId(1)), 1500);
        assert_eq!((q.len_bytes(), q.len_packets()), (2900, 8));
    }

    /// Many flows, random sizes and weights, arrivals and departures interleaved: every
    /// push-out takes a flow that was at least as backlogged (relative to its weight) as
    /// every other, checked against a brute-force scan of a shadow count of the bytes.
    #[test]
    fn push_out_takes_a_most_backlogged_flow() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(40_000));
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut draw = Pcg64Mcg::seed_from_u64(8);
        const N: usize = 50;
        let quantum: Vec<u64> = (0..N).map(|f| 1500 * (1 + f as u64 % 3)).collect();
        for f in 0..N {
            q.set_weight(crate::packet::FlowId(f as u32), (1 + f % 3) as f64);
        }
        let mut shadow = [0u64; N];
        let mut pushed_out = 0;
        for _ in 0..20_000 {
            if draw.random_range(0..10) < 6 {
                let f = draw.random_range(0..N as u32);
                let size = draw.random_range(40..1500u32);
                let before = shadow;
                let mut drops: Vec<_> = q
                    .enqueue(TestPacket::new(f, size, 0.0), Nanos(0), &mut rng)
                    .into_iter()
                    .collect();
                drops.extend(std::iter::from_fn(|| q.take_extra_drop()));
                // `enqueue` returns the first made, the rest come out newest first: replay
                // them in the order they were made.
                if drops.len() > 1 {
                    drops[1..].reverse();
                }
                shadow[f as usize] += size as u64;
                let mut seen = before;
                seen[f as usize] += size as u64;
                for d in &drops {
                    let v = d.packet.flow.index();
                    if !(v == f as usize && d.packet.size == size) {
                        pushed_out += 1;
                        // `v` was a most backlogged flow when it was chosen.
                        for g in 0..N {
                            if g != f as usize {
                                assert!(
                                    seen[v] * quantum[g] >= seen[g] * quantum[v],
                                    "pushed out {v} ({}) while {g} had {}",
                                    seen[v],
                                    seen[g]
                                );
                            }
                        }
                    }
                    seen[v] -= d.packet.size as u64;
                    shadow[v] -= d.packet.size as u64;
                }
            } else if let Some(p) = q.dequeue(Nanos(0)) {
                shadow[p.flow.index()] -= p.size as u64;
            }
            for (f, &b) in shadow.iter().enumerate() {
                assert_eq!(q.flow_bytes(crate::packet::FlowId(f as u32)) as u64, b);
            }
            assert_eq!(q.len_bytes() as u64, shadow.iter().sum::<u64>());
            q.check_heap();
        }
        assert!(
            pushed_out > 1000,
            "{pushed_out} push-outs: the buffer was rarely full"
        );
    }

    /// The default, ns-2's: the arrival is queued, then heads of the longest queue go.
    #[test]
    fn drops_heads_of_the_longest_queue_after_queueing_the_arrival() {
        // ns-2's queue/drr.cc, by hand. A 3000-byte buffer; flow 0: 1600 bytes in 200-byte
        // packets; flow 1: 1400 bytes in one packet.
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(3000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..8 {
            assert!(q
                .enqueue(TestPacket::new(0, 200, 0.0), Nanos(0), &mut rng)
                .is_none());
        }
        assert!(q
            .enqueue(TestPacket::new(1, 1400, 0.0), Nanos(0), &mut rng)
            .is_none());
        // Flow 1's 1000-byte arrival is queued (4000 bytes); flow 1 is then the longest
        // (2400 > 1600) and loses its head, the 1400-byte packet: 2600 bytes, the arrival
        // kept.
        let d = q
            .enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng)
            .unwrap();
        assert_eq!((d.packet.flow.0, d.packet.size), (1, 1400));
        assert!(q.take_extra_drop().is_none());
        assert_eq!(q.len_bytes(), 2600);
        assert_eq!(q.flow_bytes(crate::packet::FlowId(1)), 1000);
        // A 1500-byte arrival of flow 0 (4100 bytes): flow 0 (3100) is the longest until
        // six of its 200-byte heads are gone (2900 bytes); the arrival stays.
        let mut dropped = vec![q
            .enqueue(TestPacket::new(0, 1500, 0.0), Nanos(0), &mut rng)
            .unwrap()];
        while let Some(d) = q.take_extra_drop() {
            dropped.push(d);
        }
        let sizes: Vec<_> = dropped
            .iter()
            .map(|d| (d.packet.flow.0, d.packet.size))
            .collect();
        assert_eq!(sizes, vec![(0, 200); 6]);
        assert_eq!(q.len_bytes(), 2900);
        assert_eq!(q.flow_bytes(crate::packet::FlowId(0)), 1900);
        q.check_heap();
    }

    /// Tail push-out: when pushing out makes the arrival's own queue the longest, the
    /// arrival goes too.
    #[test]
    fn drops_the_arrival_once_its_own_queue_is_longest() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams {
            drop_end: DrrDropEnd::Tail,
            ..DrrParams::new(3000)
        });
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        // Flow 0: 1600 bytes in 200-byte packets; flow 1: 1400 bytes in one packet.
        for _ in 0..8 {
            q.enqueue(TestPacket::new(0, 200, 0.0), Nanos(0), &mut rng);
        }
        q.enqueue(TestPacket::new(1, 1400, 0.0), Nanos(0), &mut rng);
        // Flow 1's 1000-byte arrival: flow 1 would hold 2400 > 1600: the arrival is dropped
        // and nothing is pushed out.
        let d = q
            .enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng)
            .unwrap();
        assert_eq!((d.packet.flow.0, d.packet.size), (1, 1000));
        assert!(q.take_extra_drop().is_none());
        assert_eq!(q.len_bytes(), 3000);
    }
}
