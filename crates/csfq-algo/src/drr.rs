//! Deficit Round Robin: Shreedhar and Varghese, "Efficient Fair Queueing using Deficit
//! Round Robin", SIGCOMM 1995, Section 3 (Fig. 3's algorithm).
//!
//! Per-flow FIFOs served round robin, each visit granting a quantum of bytes. Buffer
//! management as in the CSFQ paper's benchmark (and Shreedhar and Varghese, Section 3):
//! when the shared buffer is full, packets are pushed out from the tail of the longest
//! queue until the arrival fits; if the arrival's own queue (with the arrival) is the
//! longest, the arrival is dropped instead. Pushing out one packet is not enough: while
//! small-packet flows keep the buffer full, one 200-byte packet never makes room for a
//! 1500-byte arrival, and a flow of large packets would be starved below its fair share.
//!
//! Weights (Section 3: "quantum_i proportional to the flow's share"): a flow of weight `w`
//! gets `w x quantum_bytes` per round, so backlogged flows share in proportion to their
//! weights, the weighted comparison for weighted CSFQ.

use std::cmp::Ordering;
use std::collections::VecDeque;

use rand::Rng;

use crate::packet::Packet;
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
}

impl DrrParams {
    /// DRR with a 1500-byte quantum.
    pub fn new(buffer_bytes: u32) -> Self {
        DrrParams {
            buffer_bytes,
            quantum_bytes: 1500,
        }
    }
}

#[derive(Debug, Clone)]
struct FlowQueue<P> {
    packets: VecDeque<P>,
    bytes: u32,
    deficit: u32,
    active: bool,
    /// The flow reached the front of the round and has not yet been given its quantum.
    owed_quantum: bool,
    /// Bytes per round for this flow; 0: the default `quantum_bytes`.
    quantum: u32,
}

impl<P> Default for FlowQueue<P> {
    fn default() -> Self {
        FlowQueue {
            packets: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            active: false,
            owed_quantum: true,
            quantum: 0,
        }
    }
}

/// A DRR scheduler over per-flow queues sharing one buffer.
#[derive(Debug, Clone)]
pub struct Drr<P> {
    params: DrrParams,
    /// Per-flow queues indexed by `FlowId`.
    flows: Vec<FlowQueue<P>>,
    /// Flows with packets, in round-robin order.
    active: VecDeque<u32>,
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
            active: VecDeque::new(),
            bytes: 0,
            packets: 0,
            drops: DropList::default(),
        }
    }

    /// Gives `flow` weight `weight` (> 0, finite): a quantum of `weight x quantum_bytes`
    /// bytes per round, at least 1 byte.
    pub fn set_weight(&mut self, flow: crate::packet::FlowId, weight: f64) {
        let i = flow.index();
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, FlowQueue::default);
        }
        let q = (self.params.quantum_bytes as f64 * weight).round();
        self.flows[i].quantum = q.clamp(1.0, u32::MAX as f64) as u32;
    }

    fn push(&mut self, p: P) {
        let i = p.flow().index();
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, FlowQueue::default);
        }
        let q = &mut self.flows[i];
        q.bytes += p.size_bytes();
        self.bytes += p.size_bytes();
        self.packets += 1;
        q.packets.push_back(p);
        if !q.active {
            q.active = true;
            q.owed_quantum = true;
            q.deficit = 0;
            self.active.push_back(i as u32);
        }
    }

    /// Flow `i`'s bytes per round.
    fn quantum(&self, i: usize) -> u32 {
        match self.flows.get(i).map_or(0, |q| q.quantum) {
            0 => self.params.quantum_bytes,
            q => q,
        }
    }

    /// Compares `a_bytes / a_quantum` with `b_bytes / b_quantum` exactly: backlogs relative
    /// to the flows' weights.
    fn cmp_backlog(a_bytes: u32, a_quantum: u32, b_bytes: u32, b_quantum: u32) -> Ordering {
        (a_bytes as u64 * b_quantum as u64).cmp(&(b_bytes as u64 * a_quantum as u64))
    }

    /// The active flow with the most bytes queued relative to its weight (bytes when all
    /// weights are equal); ties are broken uniformly at random, so no flow is pushed out
    /// more often for its index.
    fn longest<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut ties = 0u32;
        for &i in &self.active {
            let i = i as usize;
            let (b, q) = (self.flows[i].bytes, self.quantum(i));
            let vs_best =
                best.map(|cur| Self::cmp_backlog(b, q, self.flows[cur].bytes, self.quantum(cur)));
            match vs_best {
                Some(Ordering::Less) => {}
                Some(Ordering::Equal) => {
                    ties += 1;
                    if rng.random_range(0..ties + 1) == 0 {
                        best = Some(i);
                    }
                }
                _ => {
                    best = Some(i);
                    ties = 0;
                }
            }
        }
        best
    }

    /// Removes the most recent packet of flow `i`, which has one.
    fn pop_tail(&mut self, i: usize) -> P {
        let q = &mut self.flows[i];
        let p = q.packets.pop_back().expect("active flow has packets");
        let size = p.size_bytes();
        q.bytes -= size;
        self.bytes -= size;
        self.packets -= 1;
        if q.packets.is_empty() {
            q.active = false;
            self.active.retain(|&f| f as usize != i);
        }
        p
    }

    /// Bytes queued by one flow.
    pub fn flow_bytes(&self, flow: crate::packet::FlowId) -> u32 {
        self.flows.get(flow.index()).map_or(0, |q| q.bytes)
    }
}

impl<P: Packet> QueueDisc<P> for Drr<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, _now: Nanos, rng: &mut R) -> Option<Dropped<P>> {
        let size = p.size_bytes();
        let own = p.flow().index();
        while self.bytes + size > self.params.buffer_bytes {
            // Recomputed each time: the arrival's queue may become the longest.
            let own_bytes = self.flows.get(own).map_or(0, |q| q.bytes) + size;
            match self.longest(rng) {
                Some(v)
                    if v != own
                        && Self::cmp_backlog(
                            self.flows[v].bytes,
                            self.quantum(v),
                            own_bytes,
                            self.quantum(own),
                        ) != Ordering::Less =>
                {
                    let evicted = self.pop_tail(v);
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
        self.push(p);
        self.drops.finish()
    }

    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        self.drops.take_extra()
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<P> {
        loop {
            let i = *self.active.front()? as usize;
            let default = self.params.quantum_bytes;
            let q = &mut self.flows[i];
            if q.owed_quantum {
                let quantum = if q.quantum == 0 { default } else { q.quantum };
                q.deficit = q.deficit.saturating_add(quantum);
                q.owed_quantum = false;
            }
            let head = q
                .packets
                .front()
                .expect("active flow has packets")
                .size_bytes();
            if head <= q.deficit {
                let p = q.packets.pop_front().expect("checked");
                q.deficit -= head;
                q.bytes -= head;
                self.bytes -= head;
                self.packets -= 1;
                if q.packets.is_empty() {
                    q.active = false;
                    q.deficit = 0;
                    self.active.pop_front();
                }
                return Some(p);
            }
            // Not enough deficit: end of this flow's turn.
            q.owed_quantum = true;
            self.active.rotate_left(1);
        }
    }
    fn len_bytes(&self) -> u32 {
        self.bytes
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn reserved_slots(&self) -> usize {
        self.flows
            .iter()
            .map(|q| q.packets.capacity())
            .sum::<usize>()
            + self.active.capacity()
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

    /// When pushing out makes the arrival's own queue the longest, the arrival goes too.
    #[test]
    fn drops_the_arrival_once_its_own_queue_is_longest() {
        let mut q: Drr<TestPacket> = Drr::new(DrrParams::new(3000));
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
