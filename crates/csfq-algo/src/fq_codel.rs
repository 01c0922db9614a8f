//! FQ-CoDel: Hoeiland-Joergensen, McKenney, Taht, Gettys and Dumazet, "The Flow Queue
//! CoDel Packet Scheduler and Active Queue Management Algorithm", RFC 8290 (2018), with
//! CoDel as in RFC 8289 (Nichols, Jacobson, McGregor and Iyengar, 2018). What operators
//! deploy today (Linux's default `fq_codel`): the stateful anchor a core-stateless scheme
//! is measured against.
//!
//! - Flows are hashed into `flows` buckets (1024, as Linux); flows that collide share a
//!   queue (RFC 8290 Section 4.1.1). The hash mixes the flow id with a perturbation the
//!   caller draws, as Linux seeds `jhash` at setup.
//! - Buckets with packets are on one of two lists; a bucket that becomes active joins the
//!   new list with a full quantum, so sparse flows go first (Section 4.1, 4.2). Each visit
//!   grants a `quantum` of bytes (DRR); a bucket whose deficit runs out moves to the tail
//!   of the old list; a new bucket that empties moves to the old list if it is not empty
//!   (Section 4.2's rule against starvation), an old one leaves.
//! - Each bucket runs CoDel at dequeue (RFC 8289 Section 5, the Linux `codel_dequeue`): a
//!   packet that waited more than `target` for a whole `interval` starts a dropping state,
//!   with drops spaced `interval / sqrt(count)`; `count` resumes near its last value if
//!   dropping restarts within 16 intervals. Below one MTU of backlog nothing is dropped.
//! - When the buffer overflows, the bucket with the most bytes loses packets from its head,
//!   half its backlog at most 64 packets per batch (Linux `fq_codel_drop`), until the
//!   arrival fits.

use std::collections::VecDeque;

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{DropList, QueueDisc};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// FQ-CoDel configuration (defaults: Linux's `fq_codel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FqCodelParams {
    /// The shared buffer, bytes.
    pub buffer_bytes: u32,
    /// Hash buckets (1024).
    pub flows: u32,
    /// Bytes per round (1514: an Ethernet MTU with its header).
    pub quantum_bytes: u32,
    /// CoDel's acceptable standing queue delay (5 ms).
    pub target: Nanos,
    /// CoDel's sliding window, about one worst-case RTT (100 ms).
    pub interval: Nanos,
    /// Packets dropped at most per overflow batch (64).
    pub drop_batch: u32,
    /// Below this backlog (bytes) CoDel never drops: one MTU.
    pub mtu_bytes: u32,
}

impl FqCodelParams {
    /// Linux's defaults over a buffer of `buffer_bytes`.
    pub fn new(buffer_bytes: u32) -> Self {
        FqCodelParams {
            buffer_bytes,
            flows: 1024,
            quantum_bytes: 1514,
            target: Nanos::from_millis(5),
            interval: Nanos::from_millis(100),
            drop_batch: 64,
            mtu_bytes: 1514,
        }
    }
}

/// Which list a bucket is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// CoDel's per-queue state (RFC 8289 Section 5.1).
#[derive(Debug, Clone, Copy, Default)]
struct Codel {
    /// When the sojourn time first stayed above target (0: it is below).
    first_above_time: Nanos,
    /// The next drop, while dropping.
    drop_next: Nanos,
    /// Drops since dropping began.
    count: u32,
    /// `count` when dropping last began.
    lastcount: u32,
    dropping: bool,
}

#[derive(Debug, Clone)]
struct Bucket<P> {
    /// Packets with their enqueue times.
    packets: VecDeque<(P, Nanos)>,
    deficit: i64,
    list: List,
    codel: Codel,
}

impl<P> Default for Bucket<P> {
    fn default() -> Self {
        Bucket {
            packets: VecDeque::new(),
            deficit: 0,
            list: List::None,
            codel: Codel::default(),
        }
    }
}

/// An FQ-CoDel queue.
#[derive(Debug, Clone)]
pub struct FqCodel<P> {
    params: FqCodelParams,
    perturbation: u64,
    /// Allocated at the first arrival: a port that carries nothing costs nothing.
    buckets: Vec<Bucket<P>>,
    /// Each bucket's backlog in bytes, apart from the buckets (as Linux's `backlogs`) so
    /// that the overflow drop's search for the fattest reads 4 KB in a row, not a field of
    /// every bucket.
    backlog: Vec<u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    bytes: u32,
    packets: usize,
    drops: DropList<P>,
}

impl<P: Packet> FqCodel<P> {
    /// An empty queue; `perturbation` seeds the flow hash (Linux draws it at setup).
    pub fn new(params: FqCodelParams, perturbation: u64) -> Self {
        FqCodel {
            params,
            perturbation,
            buckets: Vec::new(),
            backlog: Vec::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            bytes: 0,
            packets: 0,
            drops: DropList::default(),
        }
    }

    /// The bucket of a flow (see [`bucket_index`]).
    pub fn bucket_of(&self, flow: crate::packet::FlowId) -> usize {
        bucket_index(flow, self.perturbation, self.params.flows)
    }

    /// Bytes queued in flow `flow`'s bucket.
    pub fn bucket_bytes(&self, flow: crate::packet::FlowId) -> u32 {
        self.backlog.get(self.bucket_of(flow)).copied().unwrap_or(0)
    }

    fn pop_head(&mut self, i: usize) -> Option<(P, Nanos)> {
        let (p, t) = self.buckets[i].packets.pop_front()?;
        let size = p.size_bytes();
        self.backlog[i] -= size;
        self.bytes -= size;
        self.packets -= 1;
        Some((p, t))
    }

    /// The overflow drop: half the fattest bucket's backlog from its head, at most
    /// `drop_batch` packets (Linux `fq_codel_drop`).
    fn drop_from_fattest(&mut self) {
        let Some((fat, bytes)) = self.fattest() else {
            return;
        };
        let threshold = bytes / 2;
        let mut dropped = 0;
        for _ in 0..self.params.drop_batch {
            let Some((p, _)) = self.pop_head(fat) else {
                break;
            };
            dropped += p.size_bytes();
            self.drops.push(Dropped::new(p, DropReason::FqCodelFattest));
            if dropped >= threshold {
                break;
            }
        }
    }

    /// The bucket with the most bytes and its backlog: the last of the fattest on a tie
    /// (Linux takes the first; a tie between the largest backlogs to the byte is rare).
    /// Linux scans every bucket; so does this while many are listed. While few are, it
    /// looks only at the buckets on the two lists, and finds the same: every bucket that
    /// holds a packet is on a list (a packet arriving to a bucket on no list puts it on
    /// the new list, and a bucket leaves the lists only when a dequeue finds it empty;
    /// one emptied by drops stays listed with no bytes), so when any bucket holds bytes,
    /// the largest backlog and every bucket holding it are among them.
    fn fattest(&self) -> Option<(usize, u32)> {
        let listed = self.new_flows.len() + self.old_flows.len();
        if listed.saturating_mul(FEW_LISTED) > self.backlog.len() {
            return last_fattest(&self.backlog);
        }
        if listed == 0 {
            return None;
        }
        // Backlog above index in one integer: the largest is the fattest, the last on a tie.
        let key = |&i: &u32| (u64::from(self.backlog[i as usize]) << 32) | u64::from(i);
        let (a, b) = self.new_flows.as_slices();
        let (c, d) = self.old_flows.as_slices();
        let most = [a, b, c, d]
            .into_iter()
            .map(|s| s.iter().map(key).fold(0, u64::max))
            .fold(0, u64::max);
        Some(((most & u64::from(u32::MAX)) as usize, (most >> 32) as u32))
    }

    /// RFC 8289's `should_drop` for the packet just taken from bucket `i` (enqueued at
    /// `enqueued`), or for none when the bucket emptied.
    fn should_drop(&mut self, i: usize, enqueued: Option<Nanos>, now: Nanos) -> bool {
        let (target, interval, mtu) = (
            self.params.target,
            self.params.interval,
            self.params.mtu_bytes,
        );
        let queue_bytes = self.bytes;
        let c = &mut self.buckets[i].codel;
        let Some(enqueued) = enqueued else {
            c.first_above_time = Nanos::ZERO;
            return false;
        };
        let sojourn = now.saturating_sub(enqueued);
        if sojourn < target || queue_bytes <= mtu {
            c.first_above_time = Nanos::ZERO;
            return false;
        }
        if c.first_above_time == Nanos::ZERO {
            c.first_above_time = now + interval;
            false
        } else {
            now >= c.first_above_time
        }
    }

    /// `t + interval / sqrt(count)`.
    fn control_law(&self, t: Nanos, count: u32) -> Nanos {
        let step = self.params.interval.0 as f64 / (count.max(1) as f64).sqrt();
        t + Nanos(step as u64)
    }

    /// Drops the packet CoDel chose and takes the next one from bucket `i`.
    fn drop_and_next(&mut self, i: usize, p: P) -> Option<(P, Nanos)> {
        self.drops
            .push_extra(Dropped::new(p, DropReason::CodelHead));
        self.pop_head(i)
    }

    /// CoDel's dequeue on bucket `i` (RFC 8289 Section 5.4, as Linux `codel_dequeue`);
    /// the packets it drops go to the drop list.
    fn codel_dequeue(&mut self, i: usize, now: Nanos) -> Option<P> {
        let interval = self.params.interval;
        let Some(mut cur) = self.pop_head(i) else {
            self.buckets[i].codel.dropping = false;
            return None;
        };
        let drop = self.should_drop(i, Some(cur.1), now);
        if self.buckets[i].codel.dropping {
            if !drop {
                // Sojourn time below target: leave the dropping state.
                self.buckets[i].codel.dropping = false;
            } else {
                while self.buckets[i].codel.dropping && now >= self.buckets[i].codel.drop_next {
                    self.buckets[i].codel.count += 1;
                    let next = self.drop_and_next(i, cur.0);
                    if !self.should_drop(i, next.as_ref().map(|n| n.1), now) {
                        self.buckets[i].codel.dropping = false;
                    } else {
                        let c = self.buckets[i].codel;
                        self.buckets[i].codel.drop_next = self.control_law(c.drop_next, c.count);
                    }
                    match next {
                        Some(n) => cur = n,
                        None => return None,
                    }
                }
            }
            Some(cur.0)
        } else if drop {
            let next = self.drop_and_next(i, cur.0);
            let c = &mut self.buckets[i].codel;
            c.dropping = true;
            // If dropping stopped only recently, the drop rate that controlled the queue
            // last time is a good start: resume from the count it reached.
            let delta = c.count.wrapping_sub(c.lastcount);
            c.count = if delta > 1 && now.saturating_sub(c.drop_next) < Nanos(16 * interval.0) {
                delta
            } else {
                1
            };
            c.lastcount = c.count;
            let count = c.count;
            self.buckets[i].codel.drop_next = self.control_law(now, count);
            // Linux re-evaluates `should_drop` on the next packet for its side effect on
            // `first_above_time`.
            let _ = self.should_drop(i, next.as_ref().map(|n| n.1), now);
            next.map(|n| n.0)
        } else {
            Some(cur.0)
        }
    }
}

/// The overflow drop looks only at the listed buckets while at most one in this many is
/// listed (128 of Linux's 1024): each listed bucket costs a scalar step, where the scan of
/// every bucket compares four at a time in vector instructions.
const FEW_LISTED: usize = 8;

/// The largest of `backlog` and the last index that holds it. In two passes the compiler
/// turns into vector instructions, as the overflow drop scans every bucket (1024 by
/// default): the maximum, then the last block of 64 that holds it (each block compared
/// whole, without stopping early), searched within.
fn last_fattest(backlog: &[u32]) -> Option<(usize, u32)> {
    const BLOCK: usize = 64;
    if backlog.is_empty() {
        return None;
    }
    // A fold, not `Iterator::max`, which the compiler leaves a scalar loop.
    let bytes = backlog.iter().fold(0, |m, &b| m.max(b));
    let block = backlog
        .chunks(BLOCK)
        .rposition(|c| c.iter().fold(false, |found, &b| found | (b == bytes)))?;
    let start = block * BLOCK;
    let end = (start + BLOCK).min(backlog.len());
    let within = backlog[start..end].iter().rposition(|&b| b == bytes)?;
    Some((start + within, bytes))
}

/// The bucket of `flow` among `flows`: a 64-bit mix of its id and the perturbation,
/// scaled into `0..flows` by multiply-shift (as Linux's `reciprocal_scale`).
pub fn bucket_index(flow: crate::packet::FlowId, perturbation: u64, flows: u32) -> usize {
    let mut x = (flow.0 as u64) ^ perturbation;
    // SplitMix64's finalizer: every input bit affects every output bit.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (((x >> 32) * flows as u64) >> 32) as usize
}

impl<P: Packet> QueueDisc<P> for FqCodel<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, _rng: &mut R) -> Option<Dropped<P>> {
        if self.buckets.is_empty() {
            self.buckets
                .resize_with(self.params.flows as usize, Bucket::default);
            self.backlog = vec![0; self.params.flows as usize];
        }
        let size = p.size_bytes();
        if size > self.params.buffer_bytes {
            self.drops.push(Dropped::new(p, DropReason::BufferOverflow));
            return self.drops.finish();
        }
        let i = self.bucket_of(p.flow_hash_key());
        let b = &mut self.buckets[i];
        b.packets.push_back((p, now));
        self.backlog[i] += size;
        self.bytes += size;
        self.packets += 1;
        if b.list == List::None {
            b.list = List::New;
            b.deficit = self.params.quantum_bytes as i64;
            self.new_flows.push_back(i as u32);
        }
        while self.bytes > self.params.buffer_bytes {
            self.drop_from_fattest();
        }
        self.drops.finish()
    }

    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        self.drops.take_extra()
    }

    fn dequeue(&mut self, now: Nanos) -> Option<P> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i as usize, true),
                None => (*self.old_flows.front()? as usize, false),
            };
            if self.buckets[i].deficit <= 0 {
                self.buckets[i].deficit += self.params.quantum_bytes as i64;
                self.move_to_old(i, from_new);
                continue;
            }
            match self.codel_dequeue(i, now) {
                Some(p) => {
                    self.buckets[i].deficit -= p.size_bytes() as i64;
                    return Some(p);
                }
                None => {
                    // Empty: a new bucket goes to the old list if that has buckets (so a
                    // flow cannot stay new by emptying each round); otherwise it leaves.
                    if from_new && !self.old_flows.is_empty() {
                        self.move_to_old(i, true);
                    } else {
                        if from_new {
                            self.new_flows.pop_front();
                        } else {
                            self.old_flows.pop_front();
                        }
                        self.buckets[i].list = List::None;
                    }
                }
            }
        }
    }

    fn len_bytes(&self) -> u32 {
        self.bytes
    }
    fn len_packets(&self) -> usize {
        self.packets
    }
    fn reserved_slots(&self) -> usize {
        self.buckets
            .iter()
            .map(|b| b.packets.capacity())
            .sum::<usize>()
            + self.new_flows.capacity()
            + self.old_flows.capacity()
    }
}

impl<P: Packet> FqCodel<P> {
    /// Moves the head bucket of its list to the tail of the old list.
    fn move_to_old(&mut self, i: usize, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
        self.old_flows.push_back(i as u32);
        self.buckets[i].list = List::Old;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::queue::test_packet::TestPacket;
    use rand::SeedableRng;

    /// The search as it was: the largest, then the last bucket holding it.
    fn plain_scan(backlog: &[u32]) -> Option<(usize, u32)> {
        let &m = backlog.iter().max()?;
        Some((backlog.iter().rposition(|&b| b == m)?, m))
    }

    proptest::proptest! {
        /// The blocked search finds what a plain scan finds: the largest backlog, the last
        /// bucket on a tie (values drawn from a few, so ties are common; lengths around
        /// the block's).
        #[test]
        fn the_fattest_bucket_is_the_last_of_the_largest(
            backlog in proptest::collection::vec(0u32..4, 0..300)
        ) {
            proptest::prop_assert_eq!(last_fattest(&backlog), plain_scan(&backlog));
        }

        /// As FQ-CoDel's buckets are when one overflows: mostly empty, a few fat ones
        /// anywhere among 1024 or so, any size a `u32` holds.
        #[test]
        fn a_few_fat_buckets_among_many_empty(
            len in 0usize..1100,
            fat in proptest::collection::vec((0usize..1100, proptest::prelude::any::<u32>()), 0..4)
        ) {
            let mut backlog = vec![0u32; len];
            for (at, bytes) in fat {
                if at < len {
                    backlog[at] = bytes;
                }
            }
            proptest::prop_assert_eq!(last_fattest(&backlog), plain_scan(&backlog));
        }
    }

    /// One fat bucket at every position of slices about the block's size and FQ-CoDel's
    /// 1024, and a tie between the first and the last bucket.
    #[test]
    fn one_fat_bucket_anywhere_is_found() {
        for len in [1, 2, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025] {
            for at in 0..len {
                let mut backlog = vec![7u32; len];
                backlog[at] = u32::MAX;
                assert_eq!(last_fattest(&backlog), Some((at, u32::MAX)), "{len} {at}");
            }
            let mut tie = vec![0u32; len];
            tie[0] = 9;
            tie[len - 1] = 9;
            assert_eq!(last_fattest(&tie), Some((len - 1, 9)), "{len}");
        }
        assert_eq!(last_fattest(&[]), None);
        assert_eq!(last_fattest(&[0, 0, 0]), Some((2, 0)));
    }
    use rand_pcg::Pcg64Mcg;

    fn ms(x: f64) -> Nanos {
        Nanos::from_secs_f64(x / 1e3)
    }

    /// A queue whose flows 0..n all land in different buckets (checked).
    fn queue(buffer: u32) -> FqCodel<TestPacket> {
        let q = FqCodel::new(FqCodelParams::new(buffer), 7);
        let b: Vec<usize> = (0..4).map(|f| q.bucket_of(FlowId(f))).collect();
        for i in 0..4 {
            assert!(!b[..i].contains(&b[i]), "flows collide: {b:?}");
        }
        q
    }

    /// Two backlogged flows with 1500- and 500-byte packets get equal bytes within one
    /// quantum (DRR, Section 4.2).
    #[test]
    fn backlogged_flows_share_bytes_equally() {
        let mut q = queue(10_000_000);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..400 {
            q.enqueue(TestPacket::new(0, 1500, 0.0), Nanos(0), &mut rng);
            q.enqueue(TestPacket::new(1, 500, 0.0), Nanos(0), &mut rng);
        }
        let mut bytes = [0u32; 2];
        for _ in 0..300 {
            // At time 0 every sojourn is 0: CoDel stays out of it.
            let p = q.dequeue(Nanos(0)).unwrap();
            bytes[p.flow.index()] += p.size;
        }
        assert!(bytes[0].abs_diff(bytes[1]) <= 1514, "{bytes:?}");
    }

    /// A sparse flow's packet goes ahead of a backlogged flow's queue: its bucket is new.
    #[test]
    fn a_sparse_flow_is_served_first() {
        let mut q = queue(10_000_000);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..50 {
            q.enqueue(TestPacket::new(0, 1000, 0.0), Nanos(0), &mut rng);
        }
        // Flow 0 has used its first quantum after two packets and moved to the old list.
        for _ in 0..2 {
            assert_eq!(q.dequeue(Nanos(0)).unwrap().flow.0, 0);
        }
        q.enqueue(TestPacket::new(1, 100, 0.0), Nanos(0), &mut rng);
        assert_eq!(q.dequeue(Nanos(0)).unwrap().flow.0, 1);
        assert_eq!(q.dequeue(Nanos(0)).unwrap().flow.0, 0);
    }

    /// CoDel by hand: 100 packets queued at 0, one dequeue every 10 ms. The first dequeue
    /// (sojourn 10 ms > 5) starts the interval: first drop at 110 ms, then at
    /// `drop_next = 110 + 100/sqrt(1)` = 210, `+ 100/sqrt(2)` = 280.7 (first dequeue at or
    /// after: 290), `+ 100/sqrt(3)` = 338.4 (340), `+ 100/2` = 388.4 (390).
    #[test]
    fn codel_drops_on_its_control_law() {
        let mut q = queue(10_000_000);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..100 {
            q.enqueue(TestPacket::new(0, 1000, 0.0), Nanos(0), &mut rng);
        }
        let mut drops_at = Vec::new();
        for k in 1..=40u64 {
            let now = ms(10.0 * k as f64);
            assert!(q.dequeue(now).is_some());
            while let Some(d) = q.take_extra_drop() {
                assert_eq!(d.reason, DropReason::CodelHead);
                drops_at.push(10 * k);
            }
        }
        assert_eq!(drops_at, vec![110, 210, 290, 340, 390]);
    }

    /// Once the sojourn time falls below target, dropping stops.
    #[test]
    fn codel_stops_below_target() {
        let mut q = queue(10_000_000);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for _ in 0..30 {
            q.enqueue(TestPacket::new(0, 1000, 0.0), Nanos(0), &mut rng);
        }
        let mut n = 0;
        for k in 1..=12u64 {
            q.dequeue(ms(10.0 * k as f64));
            while q.take_extra_drop().is_some() {
                n += 1;
            }
        }
        assert_eq!(n, 1);
        // Drain before the next scheduled drop (210 ms): dropping, but not yet due.
        while q.dequeue(ms(125.0)).is_some() {}
        assert!(q.take_extra_drop().is_none());
        // From 300 ms on, bursts of 5 packets wait 1 ms each (above one MTU of backlog but
        // below target): the dropping state ends and nothing more is dropped.
        for k in 0..20u64 {
            let t = ms(300.0 + 10.0 * k as f64);
            for _ in 0..5 {
                q.enqueue(TestPacket::new(0, 1000, 0.0), t, &mut rng);
            }
            while q.dequeue(t + ms(1.0)).is_some() {}
            assert!(q.take_extra_drop().is_none(), "burst {k}");
        }
    }

    /// A full buffer drops from the head of the fattest bucket, half its backlog: flow 0
    /// holds 8 of 10 KB, the arrival from flow 1 overflows it, and 4 of flow 0's packets
    /// (4 KB = half of 8) go, oldest first.
    #[test]
    fn overflow_drops_half_the_fattest_bucket_from_its_head() {
        let mut q = queue(10_000);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for i in 0..8 {
            q.enqueue(TestPacket::new(0, 1000, i as f64), Nanos(0), &mut rng);
        }
        for _ in 0..2 {
            q.enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng);
        }
        let first = q
            .enqueue(TestPacket::new(1, 1000, 0.0), Nanos(0), &mut rng)
            .unwrap();
        let mut dropped = vec![first];
        while let Some(d) = q.take_extra_drop() {
            dropped.push(d);
        }
        assert_eq!(dropped.len(), 4);
        let mut labels: Vec<f64> = dropped.iter().map(|d| d.packet.label).collect();
        labels.sort_by(f64::total_cmp);
        assert_eq!(labels, vec![0.0, 1.0, 2.0, 3.0]);
        assert!(dropped
            .iter()
            .all(|d| d.reason == DropReason::FqCodelFattest));
        assert_eq!(q.bucket_bytes(FlowId(0)), 4000);
        assert_eq!(q.len_bytes(), 7000);
    }

    proptest::proptest! {
        /// The overflow drop's choice, looking at the listed buckets or scanning all, is
        /// the plain scan's of every bucket, after any mix of arrivals (from few flows or
        /// from hundreds, so both ways are taken; of three sizes, so that buckets often
        /// tie for the most bytes), departures at times that make CoDel drop, and
        /// overflows; the buckets' lists are checked against their packets too.
        #[test]
        fn the_fattest_is_found_among_the_listed_buckets(
            flows in proptest::prop_oneof![1u32..20, 100u32..400],
            ops in proptest::collection::vec((0u8..4, 0u32..400, 0usize..3), 1..1200)
        ) {
            let mut q: FqCodel<TestPacket> = FqCodel::new(FqCodelParams::new(300_000), 3);
            let mut rng = Pcg64Mcg::seed_from_u64(1);
            let mut now = Nanos::ZERO;
            for (op, flow, size) in ops {
                let size = [500, 1000, 1500][size];
                now += ms(1.0);
                if op == 0 {
                    let _ = q.dequeue(now);
                    while q.take_extra_drop().is_some() {}
                } else {
                    let _ = q.enqueue(TestPacket::new(flow % flows, size, 0.0), now, &mut rng);
                    while q.take_extra_drop().is_some() {}
                }
                let listed: Vec<u32> = q.new_flows.iter().chain(&q.old_flows).copied().collect();
                for (i, b) in q.buckets.iter().enumerate() {
                    proptest::prop_assert_eq!(b.packets.is_empty(), q.backlog[i] == 0);
                    if !b.packets.is_empty() {
                        proptest::prop_assert!(listed.contains(&(i as u32)), "bucket {} unlisted", i);
                    }
                }
                if q.len_bytes() > 0 {
                    proptest::prop_assert_eq!(q.fattest(), plain_scan(&q.backlog));
                }
            }
        }
    }

    /// 1000 flows in 1024 buckets occupy `1024 (1 - (1 - 1/1024)^1000)` = 638 buckets on
    /// average (balls in bins); the hash must come within 4 standard deviations (about 9.6
    /// each) of that for three perturbations.
    #[test]
    fn the_hash_spreads_flows_like_random_balls_in_bins() {
        let expected = 1024.0 * (1.0 - (1.0 - 1.0 / 1024.0f64).powi(1000));
        for seed in [1u64, 2, 3] {
            let q: FqCodel<TestPacket> = FqCodel::new(FqCodelParams::new(64_000), seed);
            let mut used = vec![false; 1024];
            for f in 0..1000 {
                used[q.bucket_of(FlowId(f))] = true;
            }
            let n = used.iter().filter(|&&u| u).count() as f64;
            assert!((n - expected).abs() <= 4.0 * 9.6, "{n} vs {expected}");
        }
    }
}
