//! TUF: Clerget and Dabbous, "TUF: Tag-based Unified Fairness", INRIA RR-3846, 1999.
//!
//! Edges (or sources) tag each packet with `T(B(X) / w)`, where `B(p)` is the flow's
//! throughput at loss rate `p` and `X` is uniform on [0, 1) (Section 3.2.1); a core router
//! is a FIFO that, when full, drops the packet with the highest tag among those queued and
//! the arrival (Section 3.2.2). No rate estimation at the core, no relabeling. With every
//! router dropping the highest tags first, each flow loses just the packets whose
//! `B(X)/w` exceeds the bottleneck's fair rate, which is max-min fairness.
//!
//! - [`tag_of_rate`]: `T(r) = floor(64 (log2 r + 10))`, `r` in 1000-byte packets per second
//!   (Section 3.3.1), 11-bit tags;
//! - [`van_der_corput`]: `X_n = I(n + D_F)` (Section 3.3.2), interleaving high and low tags;
//! - [`cbr_throughput`] and [`tcp_throughput`]: `B(p)` of Section 3.4;
//! - [`layer_x`]: X for layered sources (Section 4.4);
//! - [`TufTagger`]: per-flow tagging of unresponsive flows at an edge, with Eq. 3 rates;
//! - [`TufQueue`]: the drop-highest-tag FIFO, O(1) per packet, plus a second FIFO for
//!   untagged packets served by weighted round robin (Section 3.5.2).

use std::collections::VecDeque;

use rand::Rng;

use crate::packet::{FlowId, Packet};
use crate::queue::{ByteFifo, DropList, QueueDisc};
use crate::rate_estimator::RateEstimator;
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// Number of tags (11 bits).
pub const TAGS: usize = 2048;
/// Packet size of the tag's rate unit, bits.
const UNIT_BITS: f64 = 8000.0;

/// `T(r) = floor(2^6 (log2(r) + 10))` for `r` in 1000-byte packets per second, clamped to
/// 0..=2047 (`R_min = 2^-10`, `R_max = 2^22` packets/s). Takes bits/s.
pub fn tag_of_rate(rate_bps: f64) -> u16 {
    let r = rate_bps / UNIT_BITS;
    if r.is_nan() || r <= 0.0 {
        return 0;
    }
    let t = (64.0 * (r.log2() + 10.0)).floor();
    t.clamp(0.0, (TAGS - 1) as f64) as u16
}

/// `T^-1(k)`: the smallest rate (bits/s) with tag `k`.
pub fn rate_of_tag(tag: u16) -> f64 {
    2f64.powf(tag as f64 / 64.0 - 10.0) * UNIT_BITS
}

/// The top 5 bits of an IPv4 Identification field that carries a TUF tag.
///
/// TUF puts its 11-bit tag in the Identification field of unfragmented packets (Section
/// 3.5.1, allowed for atomic datagrams by RFC 6864) and marks such packets with a reserved
/// TOS value. Here the marker sits in the field itself, in the 5 bits the tag leaves free,
/// so a router can tell a tagged packet from the ID alone; an untagged sender picks this
/// pattern by chance in 1 packet of 32, which is why edges overwrite every ID they admit.
pub const IPV4_ID_TAG_MARKER: u16 = 0b10110;

/// The IPv4 Identification value carrying `tag` (0..=2047).
pub fn ipv4_id_of_tag(tag: u16) -> u16 {
    (IPV4_ID_TAG_MARKER << 11) | (tag & 0x07ff)
}

/// The tag carried in an IPv4 Identification value, if it bears the marker.
pub fn tag_of_ipv4_id(id: u16) -> Option<u16> {
    (id >> 11 == IPV4_ID_TAG_MARKER).then_some(id & 0x07ff)
}

/// `I(n)`: the bits of `n` mirrored about the binary point (van der Corput: 1/2, 1/4, 3/4,
/// 1/8, 5/8, ...), uniform on [0, 1) over any run of consecutive `n`.
pub fn van_der_corput(n: u32) -> f64 {
    n.reverse_bits() as f64 / 4_294_967_296.0
}

/// `X` for a packet of layer `j` (0-based) of `layers` equal layers, given `u` uniform on
/// [0, 1): uniform on `[(L - j - 1)/L, (L - j)/L)`, so the top layers get the low `X`, the
/// high tags, and are dropped first.
pub fn layer_x(j: u32, layers: u32, u: f64) -> f64 {
    let l = layers as f64;
    ((l - j as f64 - 1.0) + u) / l
}

/// `B_cbr(p) = R (1 - p)`.
pub fn cbr_throughput(rate_bps: f64, p: f64) -> f64 {
    rate_bps * (1.0 - p)
}

/// Padhye et al.'s TCP throughput at loss rate `p` (bits/s):
/// `min(W_max/RTT, 1 / (RTT sqrt(2bp/3) + t0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2)))`
/// packets/s of `segment_bytes`. `rtt_s`, `t0_s` in seconds; `b` packets per ACK.
pub fn tcp_throughput(
    p: f64,
    rtt_s: f64,
    t0_s: f64,
    w_max: f64,
    b: f64,
    segment_bytes: u32,
) -> f64 {
    let cap = w_max / rtt_s;
    let pkts = if p <= 0.0 {
        cap
    } else {
        let d = rtt_s * (2.0 * b * p / 3.0).sqrt()
            + t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
        cap.min(1.0 / d)
    };
    pkts * segment_bytes as f64 * 8.0
}

#[derive(Debug, Clone, Copy)]
struct TagFlow {
    rate: RateEstimator,
    weight: f64,
    n: u32,
}

/// Per-flow tagging of unresponsive flows at an edge: `T(R (1 - X_n) / w)` with `R` from
/// Eq. 3 (K = 100 ms in the report) and `X_n = I(n + D_F)`.
#[derive(Debug, Clone)]
pub struct TufTagger {
    k: Nanos,
    flows: Vec<TagFlow>,
}

impl TufTagger {
    /// Per-flow records held: one per flow seen, up to the highest flow number.
    pub fn flow_slots(&self) -> usize {
        self.flows.len()
    }

    /// A tagger with rate-averaging constant `k`.
    pub fn new(k: Nanos) -> Self {
        TufTagger {
            k,
            flows: Vec::new(),
        }
    }

    fn slot<R: Rng + ?Sized>(&mut self, f: FlowId, rng: &mut R) -> &mut TagFlow {
        let i = f.index();
        while self.flows.len() <= i {
            // D_F: a random start in the sequence keeps flows out of step.
            let n = rng.random::<u32>();
            self.flows.push(TagFlow {
                rate: RateEstimator::new(self.k),
                weight: 1.0,
                n,
            });
        }
        &mut self.flows[i]
    }

    /// Sets a flow's weight.
    pub fn set_weight<R: Rng + ?Sized>(&mut self, f: FlowId, w: f64, rng: &mut R) {
        assert!(w > 0.0 && w.is_finite(), "weight must be positive");
        self.slot(f, rng).weight = w;
    }

    /// Tags a packet of an unresponsive flow arriving at `now`.
    pub fn tag<P: Packet, R: Rng + ?Sized>(&mut self, p: &P, now: Nanos, rng: &mut R) -> u16 {
        let size = p.size_bytes();
        let s = self.slot(p.flow(), rng);
        let r = s.rate.update(now, size);
        s.n = s.n.wrapping_add(1);
        let x = van_der_corput(s.n);
        tag_of_rate(cbr_throughput(r, x) / s.weight)
    }
}

/// A packet a TUF queue can read a tag from.
pub trait Tagged: Packet {
    /// The packet's tag, or `None` if it carries none.
    fn tag(&self) -> Option<u16>;
}

/// TUF queue configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TufParams {
    /// Buffer for tagged packets, bytes.
    pub buffer_bytes: u32,
    /// Buffer for untagged packets, bytes (a drop-tail FIFO).
    pub untagged_buffer_bytes: u32,
    /// Weighted round robin: packets served from the tagged queue per round.
    pub tagged_weight: u32,
    /// Packets served from the untagged queue per round.
    pub untagged_weight: u32,
}

impl TufParams {
    /// A TUF queue of `buffer_bytes`, with a quarter of that for untagged packets and
    /// round-robin weights 3:1.
    pub fn new(buffer_bytes: u32) -> Self {
        TufParams {
            buffer_bytes,
            untagged_buffer_bytes: buffer_bytes / 4,
            tagged_weight: 3,
            untagged_weight: 1,
        }
    }
}

/// The drop-highest-tag FIFO with a second queue for untagged traffic.
///
/// Tagged packets sit in arrival order in `fifo` (with holes where one was evicted) and,
/// by their sequence number, in one of 2048 per-tag lists; a bitmap of non-empty lists finds
/// the highest queued tag in at most 32 word scans. Arrival, departure and eviction are O(1).
#[derive(Debug, Clone)]
pub struct TufQueue<P> {
    params: TufParams,
    fifo: VecDeque<Option<(P, u16)>>,
    /// Sequence number of `fifo[0]`.
    head_seq: u64,
    buckets: Vec<VecDeque<u64>>,
    nonempty: [u64; TAGS / 64],
    bytes: u32,
    packets: usize,
    untagged: ByteFifo<P>,
    /// Packets served in the current round from (tagged, untagged).
    served: (u32, u32),
    /// What the last arrival cost.
    drops: DropList<P>,
}

impl<P: Tagged> TufQueue<P> {
    /// An empty TUF queue.
    pub fn new(params: TufParams) -> Self {
        TufQueue {
            params,
            fifo: VecDeque::new(),
            head_seq: 0,
            buckets: vec![VecDeque::new(); TAGS],
            nonempty: [0; TAGS / 64],
            bytes: 0,
            packets: 0,
            untagged: ByteFifo::new(params.untagged_buffer_bytes),
            served: (0, 0),
            drops: DropList::default(),
        }
    }

    /// The highest tag queued.
    fn highest(&self) -> Option<u16> {
        self.nonempty
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| (i * 64 + 63 - w.leading_zeros() as usize) as u16)
    }

    fn mark(&mut self, tag: u16, on: bool) {
        let (i, b) = (tag as usize / 64, tag as usize % 64);
        if on {
            self.nonempty[i] |= 1 << b;
        } else {
            self.nonempty[i] &= !(1 << b);
        }
    }

    fn push_tagged(&mut self, p: P, tag: u16) {
        let seq = self.head_seq + self.fifo.len() as u64;
        self.bytes += p.size_bytes();
        self.packets += 1;
        self.fifo.push_back(Some((p, tag)));
        self.buckets[tag as usize].push_back(seq);
        self.mark(tag, true);
    }

    /// Removes the most recent packet with tag `tag`.
    fn evict(&mut self, tag: u16) -> P {
        let b = &mut self.buckets[tag as usize];
        let seq = b.pop_back().expect("bitmap marks a non-empty bucket");
        if b.is_empty() {
            self.mark(tag, false);
        }
        let (p, _) = self.fifo[(seq - self.head_seq) as usize]
            .take()
            .expect("live entry");
        self.bytes -= p.size_bytes();
        self.packets -= 1;
        p
    }

    fn pop_tagged(&mut self) -> Option<P> {
        while let Some(front) = self.fifo.pop_front() {
            self.head_seq += 1;
            if let Some((p, tag)) = front {
                let b = &mut self.buckets[tag as usize];
                b.pop_front();
                if b.is_empty() {
                    self.mark(tag, false);
                }
                self.bytes -= p.size_bytes();
                self.packets -= 1;
                return Some(p);
            }
        }
        None
    }

    /// Bytes of tagged packets queued.
    pub fn tagged_bytes(&self) -> u32 {
        self.bytes
    }
}

impl<P: Tagged> QueueDisc<P> for TufQueue<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, _now: Nanos, _rng: &mut R) -> Option<Dropped<P>> {
        let Some(tag) = p.tag() else {
            return self
                .untagged
                .push(p)
                .err()
                .map(|p| Dropped::new(p, DropReason::BufferOverflow));
        };
        // Full: the highest tags among the queue and the arrival go, until the arrival fits
        // or has the highest tag itself (ties: the arrival). One eviction is not enough
        // when a large arrival meets small queued packets.
        let size = p.size_bytes();
        while self.bytes + size > self.params.buffer_bytes {
            match self.highest() {
                Some(h) if h > tag => {
                    let evicted = self.evict(h);
                    self.drops
                        .push(Dropped::new(evicted, DropReason::TufHighestTag));
                }
                _ => {
                    self.drops.push(Dropped::new(p, DropReason::TufHighestTag));
                    return self.drops.finish();
                }
            }
        }
        self.push_tagged(p, tag);
        self.drops.finish()
    }

    fn take_extra_drop(&mut self) -> Option<Dropped<P>> {
        self.drops.take_extra()
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<P> {
        // Weighted round robin between the tagged and untagged queues, in packets.
        let w = (self.params.tagged_weight, self.params.untagged_weight);
        for _ in 0..2 {
            if self.served.0 < w.0 && self.packets > 0 {
                self.served.0 += 1;
                return self.pop_tagged();
            }
            if self.served.1 < w.1 && !self.untagged.is_empty() {
                self.served.1 += 1;
                return self.untagged.pop();
            }
            self.served = (0, 0); // round over (or one queue empty): start a new one
        }
        None
    }
    fn len_bytes(&self) -> u32 {
        self.bytes + self.untagged.bytes()
    }
    fn len_packets(&self) -> usize {
        self.packets + self.untagged.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.capacity()
            + self.buckets.iter().map(VecDeque::capacity).sum::<usize>()
            + self.untagged.reserved_slots()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packet::TestPacket;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    /// A test packet whose label field carries the tag (negative: untagged).
    impl Tagged for TestPacket {
        fn tag(&self) -> Option<u16> {
            (self.label >= 0.0).then_some(self.label as u16)
        }
    }

    #[test]
    fn tag_conversion_is_monotone_with_under_one_percent_rounding() {
        let mut prev = 0;
        // R_min = 2^-10 packets/s .. R_max = 2^22 packets/s, in bits/s.
        let (lo, hi) = (2f64.powi(-10) * 8000.0, 2f64.powi(22) * 8000.0);
        let mut r = lo;
        while r < hi {
            let t = tag_of_rate(r);
            assert!(t >= prev, "not monotone at {r}");
            prev = t;
            // Rounding: the tag's rate is within 1% below r (2^(1/64) - 1 = 1.09%... the
            // report's bound is < 2^(1/32) - 1; floor makes T^-1(T(r)) <= r).
            let back = rate_of_tag(t);
            assert!(
                back <= r * (1.0 + 1e-12) && r / back < 2f64.powf(1.0 / 64.0) + 1e-12,
                "{r} -> {t} -> {back}"
            );
            r *= 1.003;
        }
        assert_eq!(tag_of_rate(0.0), 0);
        assert_eq!(tag_of_rate(1e30), 2047);
    }

    #[test]
    fn ipv4_id_codec_round_trips_every_tag_and_rejects_unmarked_ids() {
        for tag in 0..TAGS as u16 {
            assert_eq!(tag_of_ipv4_id(ipv4_id_of_tag(tag)), Some(tag));
        }
        let marked = (0..=u16::MAX)
            .filter(|&id| tag_of_ipv4_id(id).is_some())
            .count();
        assert_eq!(marked, TAGS, "exactly one ID per tag is recognized");
        assert_eq!(tag_of_ipv4_id(0), None);
    }

    #[test]
    fn van_der_corput_sequence() {
        let xs: Vec<f64> = (1..=7).map(van_der_corput).collect();
        assert_eq!(xs, vec![0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]);
    }

    #[test]
    fn layered_x_puts_top_layers_lowest() {
        assert_eq!(layer_x(0, 3, 0.0), 2.0 / 3.0);
        assert!((layer_x(2, 3, 0.999) - 0.333).abs() < 1e-3);
    }

    #[test]
    fn tcp_model_limits() {
        // No loss: the window limit. 20 packets per 100 ms of 1000 bytes = 1.6 Mbps.
        let b = tcp_throughput(0.0, 0.1, 1.0, 20.0, 1.0, 1000);
        assert!((b - 1.6e6).abs() < 1e-6);
        // Throughput falls as loss grows.
        assert!(
            tcp_throughput(0.01, 0.1, 1.0, 1000.0, 1.0, 1000)
                > tcp_throughput(0.1, 0.1, 1.0, 1000.0, 1.0, 1000)
        );
    }

    /// A CBR flow tagged T(R(1 - X)): the share of its packets with tags above the tag of a
    /// rate `f` is `1 - f/R` (Section 3.2.1's filter argument), here f = R/4.
    #[test]
    fn cbr_tags_cut_at_fair_rate_drop_the_excess() {
        let mut tagger = TufTagger::new(Nanos::from_millis(100));
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let rate = 4e6;
        let k = tag_of_rate(rate / 4.0);
        let mut above = 0;
        let n = 20_000;
        for i in 0..n {
            let p = TestPacket::new(0, 1000, 0.0);
            if tagger.tag(&p, Nanos(i * 2_000_000), &mut rng) > k {
                above += 1;
            }
        }
        let frac = above as f64 / n as f64;
        assert!((frac - 0.75).abs() < 0.02, "{frac}");
    }

    /// The queue never keeps a packet whose tag exceeds one it dropped at the same instant,
    /// and its byte count matches what it holds; checked after every operation on random
    /// sequences (the invariant).
    #[test]
    fn never_keeps_a_tag_above_one_it_dropped() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        for _ in 0..50 {
            let mut q: TufQueue<TestPacket> = TufQueue::new(TufParams::new(10_000));
            for _ in 0..2000 {
                if rng.random_bool(0.6) {
                    let tag = rng.random_range(0..2048u16);
                    if let Some(d) =
                        q.enqueue(TestPacket::new(0, 1000, tag as f64), Nanos(0), &mut rng)
                    {
                        let dropped = d.packet.label as u16;
                        let max_kept = q.highest().unwrap_or(0);
                        assert!(max_kept <= dropped, "kept {max_kept} > dropped {dropped}");
                    }
                } else {
                    q.dequeue(Nanos(0));
                }
                assert!(q.tagged_bytes() <= 10_000);
                let live: u32 = q.fifo.iter().flatten().map(|(p, _)| p.size).sum();
                assert_eq!(live, q.tagged_bytes());
            }
        }
    }

    #[test]
    fn fifo_order_for_survivors_and_round_robin_for_untagged() {
        let mut q: TufQueue<TestPacket> = TufQueue::new(TufParams {
            buffer_bytes: 3000,
            untagged_buffer_bytes: 3000,
            tagged_weight: 1,
            untagged_weight: 1,
        });
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for (flow, tag) in [(1, 5.0), (2, 900.0), (3, 7.0)] {
            assert!(q
                .enqueue(TestPacket::new(flow, 1000, tag), Nanos(0), &mut rng)
                .is_none());
        }
        // Full: an arrival with tag 10 evicts the tag-900 packet.
        let d = q
            .enqueue(TestPacket::new(4, 1000, 10.0), Nanos(0), &mut rng)
            .unwrap();
        assert_eq!(d.packet.flow.0, 2);
        // An untagged packet waits in its own queue.
        assert!(q
            .enqueue(TestPacket::new(9, 1000, -1.0), Nanos(0), &mut rng)
            .is_none());
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Nanos(0)))
            .map(|p| p.flow.0)
            .collect();
        assert_eq!(order, vec![1, 9, 3, 4]);
    }

    /// A 1500-byte arrival with a low tag meets a buffer full of 200-byte packets with
    /// higher tags: the highest tags go, as many as it takes, and never a tag below the
    /// arrival's.
    #[test]
    fn evicts_as_many_highest_tags_as_a_large_arrival_needs() {
        let mut q: TufQueue<TestPacket> = TufQueue::new(TufParams::new(3000));
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        for i in 0..15u32 {
            // Tags 100, 110, ..., 240.
            let tag = 100.0 + 10.0 * i as f64;
            assert!(q
                .enqueue(TestPacket::new(0, 200, tag), Nanos(0), &mut rng)
                .is_none());
        }
        let first = q
            .enqueue(TestPacket::new(1, 1500, 50.0), Nanos(0), &mut rng)
            .unwrap();
        let mut tags: Vec<u16> = std::iter::once(first)
            .chain(std::iter::from_fn(|| q.take_extra_drop()))
            .map(|d| d.packet.label as u16)
            .collect();
        tags.sort_unstable();
        assert_eq!(tags, vec![170, 180, 190, 200, 210, 220, 230, 240]);
        assert_eq!(q.highest(), Some(160));
        assert_eq!(q.tagged_bytes(), 2900);

        // A second 1500-byte arrival, tag 150: only tag 160 is above it. Once that is gone
        // the arrival ties for the highest tag (ties go against the arrival) and is
        // dropped as well.
        let first = q
            .enqueue(TestPacket::new(2, 1500, 150.0), Nanos(0), &mut rng)
            .unwrap();
        let rest: Vec<_> = std::iter::from_fn(|| q.take_extra_drop()).collect();
        assert_eq!(first.packet.label as u16, 160);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].packet.flow.0, 2);
        assert_eq!(q.highest(), Some(150));
    }
}
