//! CS-FNE in integer arithmetic: the model of what the Linux dataplane's CS-FNE core
//! (`crates/csfq-dp/bpf/csfne.bpf.c`) and the edge's TSW meter compute, operation for
//! operation. The algorithm is [`crate::csfne`]'s (Kim, master's thesis, 2005, Chapter 3);
//! what differs is where its inputs come from and how it is computed:
//!
//! - **The queue an arrival is compared with is a ring.** A classifier in front of the
//!   link's shaper cannot look into the shaper's queue. The core keeps a virtual queue
//!   drained at `C` (as the CSFQ core does: while the link is busy it holds what the real
//!   queue holds) and a ring of the flow fingerprints of the last packets it admitted,
//!   each with the time its last bit leaves the virtual queue. The packets still queued are
//!   the ring's newest entries whose time is later than now, found by a binary search (the
//!   times only grow); an arrival is compared with one of them drawn at random, as the
//!   thesis compares it with "a packet drawn at random from the queue" (Section 3.2.2).
//!   When the queue holds more packets than the ring, the draw is among the ring's, the
//!   queue's newest (the operator sizes the ring: `--ring`).
//! - **Fingerprints.** The program hashes a packet's 5-tuple with a seed drawn at attach
//!   time to 32 bits, the lowest set (never 0); two flows of one fingerprint (1 in 2^31
//!   for a pair) count as one flow. The model takes the fingerprint as an input.
//! - **Numbers.** `r_hit` and `r_miss` are Eq. (3) estimates ([`FixedRate`]) with the
//!   averaging constant `K` (Eqs. 3-2, 3-3); `CL = C / N_act = C r_hit / (r_hit + r_miss)`
//!   (Eq. 3-4) with both rates scaled to [`CL_BITS`] bits first, so the product fits 64
//!   bits up to 4 Tbit/s; `C` before any hit. The drop probability is
//!   [`drop_probability_q32`] against a 32-bit random draw (`draw`); which queued packet is
//!   compared is a second 32-bit number (`pick`), entry `n pick / 2^32` of the `n` queued.
//! - **Unlabeled traffic** (label 0: what crossed no edge, what arrived where the core does
//!   not trust labels, what cannot carry one) is priced as the CSFQ core prices it: one
//!   flow whose label is the Eq. (3) rate of all of it, with `K`, as an IPv4 label carries
//!   it. In the thesis label 0 means "below the flow's guaranteed rate: never dropped"; an
//!   edge here writes no guarantee, and a free pass for whatever arrives unlabeled would be
//!   one for any host that bypasses the edges.
//! - **Overflow.** A packet that would take the virtual queue past its limit is dropped;
//!   it joins neither the queue nor the ring.
//!
//! The edge's meter is the Time Sliding Window of the thesis's Fig. 3-1 ([`tsw_update`]),
//! on the same per-flow state as CSFQ's Eq. (3) ([`FixedRate`]), selected by
//! [`crate::fixed::Meter::Tsw`].

use rand::Rng;

use crate::fixed::{carried, drop_probability_q32, tables, ExpTables, FixedRate};
/// The edge's TSW meter, kept with the edge's other meter (`crate::fixed`).
pub use crate::fixed::{tsw_update, TSW_RATE_MAX, TSW_WIN_MIN_NS};
use crate::packet::Packet;
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// The most ring entries a core keeps (a power of two).
pub const RING_MAX: u32 = 4096;
/// Bits of the ring's size the binary search resolves: `log2(RING_MAX) + 1` steps.
pub const SEARCH_STEPS: u32 = 13;
/// Bits `r_hit` and `r_hit + r_miss` are scaled to before `C r_hit / (r_hit + r_miss)`.
pub const CL_BITS: u32 = 20;
/// The CS-FNE core's configuration in the program's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedCsfneParams {
    /// `C`, bit/s: the rate of the shaper behind the program.
    pub capacity_bps: u64,
    /// `K` of `r_hit`, `r_miss` and the unlabeled price, ns.
    pub k_ns: u64,
    /// The target queue: below it nothing is dropped by Eq. (2), bytes.
    pub target_bytes: u32,
    /// The virtual queue's size, bytes.
    pub limit_bytes: u32,
    /// Ring entries used: a power of two, at most [`RING_MAX`].
    pub ring: u32,
}

/// One ring entry: an admitted packet's flow fingerprint and when it leaves the virtual
/// queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingEntry {
    /// The flow's fingerprint (never 0 for a packet).
    pub fingerprint: u32,
    /// When its last bit leaves the virtual queue, ns.
    pub finish_ns: u64,
}

/// One arrival, as the program sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsfneArrival {
    /// Now, ns.
    pub now_ns: u64,
    /// Its size, bytes.
    pub bytes: u32,
    /// Its label as carried, bit/s (0: unlabeled).
    pub label_bps: u64,
    /// Its flow's fingerprint.
    pub fingerprint: u32,
    /// The 32-bit number that picks the queued packet it is compared with.
    pub pick: u32,
    /// The 32-bit number its drop is decided by.
    pub draw: u32,
}

/// What the core did with a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsfneVerdict {
    /// Forwarded with its label.
    Forward,
    /// Forwarded with its label lowered to `CL` (bit/s).
    Relabel(u64),
    /// Dropped ([`DropReason::CsfneProbabilistic`] or [`DropReason::BufferOverflow`]).
    Drop(DropReason),
}

/// A packet's outcome and what it was judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsfneOutcome {
    /// The decision.
    pub verdict: CsfneVerdict,
    /// The label it was judged by, bit/s (an unlabeled packet's: the unlabeled price).
    pub label_bps: u64,
    /// Whether it matched the queued packet drawn for it (`None`: the queue was empty).
    pub hit: Option<bool>,
    /// `CL` it was judged against, bit/s.
    pub cl_bps: u64,
}

/// The CS-FNE core's state (`struct csfq_csfne_state`, less its lock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedCsfneCore {
    /// `r_hit`, Eq. (3) over the bytes of arrivals that matched.
    pub hit: FixedRate,
    /// `r_miss`, over those that did not.
    pub miss: FixedRate,
    /// The rate of all unlabeled traffic: its price.
    pub unlabeled: FixedRate,
    /// When the virtual queue at rate `C` empties, ns.
    pub vq_finish_ns: u64,
    /// Packets admitted so far (the ring's next entry is `admitted % ring`).
    pub admitted: u64,
    /// The ring, [`RING_MAX`] entries (the first `ring` used).
    pub ring: Vec<RingEntry>,
}

impl Default for FixedCsfneCore {
    fn default() -> Self {
        FixedCsfneCore {
            hit: FixedRate::default(),
            miss: FixedRate::default(),
            unlabeled: FixedRate::default(),
            vq_finish_ns: 0,
            admitted: 0,
            ring: vec![RingEntry::default(); RING_MAX as usize],
        }
    }
}

impl FixedCsfneCore {
    /// An empty core.
    pub fn new() -> Self {
        Self::default()
    }

    /// The virtual queue at `now_ns`, bytes.
    pub fn queue_bytes(&self, p: &FixedCsfneParams, now_ns: u64) -> u32 {
        if self.vq_finish_ns <= now_ns || p.capacity_bps == 0 {
            return 0;
        }
        // in 128 bits: a simulated buffer may be far larger than the dataplane's limit
        (u128::from(self.vq_finish_ns - now_ns) * u128::from(p.capacity_bps) / 8_000_000_000)
            .min(u128::from(u32::MAX)) as u32
    }

    fn entry(&self, p: &FixedCsfneParams, i: u64) -> RingEntry {
        self.ring[(i & u64::from(p.ring - 1)) as usize]
    }

    /// How many of the ring's newest entries are still in the virtual queue at `now_ns`:
    /// a binary search for the oldest whose finish is later (finishes only grow).
    pub fn queued(&self, p: &FixedCsfneParams, now_ns: u64) -> u64 {
        let m = self.admitted.min(u64::from(p.ring));
        let first = self.admitted - m;
        let (mut lo, mut hi) = (0u64, m);
        for _ in 0..SEARCH_STEPS {
            if lo < hi {
                let mid = (lo + hi) / 2;
                if self.entry(p, first + mid).finish_ns > now_ns {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
        }
        m - lo
    }

    /// `CL = C r_hit / (r_hit + r_miss)`, bit/s; `C` before any hit.
    pub fn cl_bps(&self, p: &FixedCsfneParams) -> u64 {
        let (h, m) = (self.hit.rate_bps, self.miss.rate_bps);
        if h == 0 {
            return p.capacity_bps;
        }
        let s = h.saturating_add(m);
        let shift = (64 - s.leading_zeros()).saturating_sub(CL_BITS);
        p.capacity_bps * (h >> shift) / (s >> shift)
    }

    /// One arrival: the comparison with a queued packet, then Eq. (2) against `CL` above
    /// the target queue, then the virtual queue's limit.
    pub fn on_arrival(
        &mut self,
        t: &ExpTables,
        p: &FixedCsfneParams,
        a: &CsfneArrival,
    ) -> CsfneOutcome {
        let (now, bytes) = (a.now_ns, a.bytes);
        let label = if a.label_bps == 0 {
            carried(self.unlabeled.update(t, now, bytes, p.k_ns))
        } else {
            a.label_bps
        };
        let queue = self.queue_bytes(p, now);
        let n = self.queued(p, now);
        let hit = if n > 0 {
            let j = self.admitted - n + ((u64::from(a.pick) * n) >> 32);
            let hit = self.entry(p, j).fingerprint == a.fingerprint;
            let (h, m) = if hit { (bytes, 0) } else { (0, bytes) };
            self.hit.update(t, now, h, p.k_ns);
            self.miss.update(t, now, m, p.k_ns);
            Some(hit)
        } else {
            None
        };
        let cl = self.cl_bps(p);
        let mut outcome = CsfneOutcome {
            verdict: CsfneVerdict::Forward,
            label_bps: label,
            hit,
            cl_bps: cl,
        };
        if queue >= p.target_bytes {
            let prob = drop_probability_q32(cl, label);
            if prob > 0 {
                if a.draw < prob {
                    outcome.verdict = CsfneVerdict::Drop(DropReason::CsfneProbabilistic);
                    return outcome;
                }
                outcome.verdict = CsfneVerdict::Relabel(cl);
            }
        }
        if u64::from(queue) + u64::from(bytes) > u64::from(p.limit_bytes) {
            outcome.verdict = CsfneVerdict::Drop(DropReason::BufferOverflow);
            return outcome;
        }
        let service = u64::from(bytes) * 8_000_000_000 / p.capacity_bps;
        self.vq_finish_ns = self.vq_finish_ns.max(now) + service;
        let i = (self.admitted & u64::from(p.ring - 1)) as usize;
        self.ring[i] = RingEntry {
            fingerprint: a.fingerprint,
            finish_ns: self.vq_finish_ns,
        };
        self.admitted += 1;
        outcome
    }

    /// `N_act = (r_hit + r_miss) / r_hit` (1 before any hit).
    pub fn active_flows(&self) -> f64 {
        active_flows(self.hit.rate_bps, self.miss.rate_bps)
    }
}

/// `N_act = (r_hit + r_miss) / r_hit` from the two rates (1 before any hit).
pub fn active_flows(hit_bps: u64, miss_bps: u64) -> f64 {
    if hit_bps == 0 {
        1.0
    } else {
        (hit_bps as f64 + miss_bps as f64) / hit_bps as f64
    }
}

/// The integer CS-FNE core as a simulator port: [`FixedCsfneCore`] (its virtual queue and
/// ring, as the dataplane keeps them) in front of a FIFO, two 32-bit random numbers per
/// packet, a flow's fingerprint its number plus one. Beside [`crate::csfne::CsfneCore`],
/// which samples its real queue, it shows what the ring costs.
#[derive(Debug, Clone)]
pub struct FixedCsfnePort<K> {
    params: FixedCsfneParams,
    core: FixedCsfneCore,
    fifo: ByteFifo<K>,
}

impl<K: Held> FixedCsfnePort<K> {
    /// A port whose virtual queue and FIFO hold `buffer_bytes` (`params.limit_bytes`).
    pub fn new(params: FixedCsfneParams) -> Self {
        FixedCsfnePort {
            params,
            core: FixedCsfneCore::new(),
            fifo: ByteFifo::new(params.limit_bytes),
        }
    }

    /// `CL`, bit/s.
    pub fn threshold_rate(&self) -> f64 {
        self.core.cl_bps(&self.params) as f64
    }
}

impl<P: Packet, K: Keep<P>> InOrder<P> for FixedCsfnePort<K> {
    type Kept = K;

    #[inline]
    fn admit<R: Rng + ?Sized>(
        &mut self,
        mut p: P,
        now: Nanos,
        rng: &mut R,
    ) -> Result<P, Dropped<P>> {
        let a = CsfneArrival {
            now_ns: now.0,
            bytes: p.size_bytes(),
            label_bps: p.label() as u64,
            fingerprint: p.flow().0.wrapping_add(1),
            pick: rng.random(),
            draw: rng.random(),
        };
        match self.core.on_arrival(tables(), &self.params, &a).verdict {
            CsfneVerdict::Drop(reason) => return Err(Dropped::new(p, reason)),
            CsfneVerdict::Relabel(l) => p.set_label(carried(l) as f64),
            CsfneVerdict::Forward => {}
        }
        self.fifo
            .admit(p, now)
            .map_err(|p| Dropped::new(p, DropReason::BufferOverflow))
    }
    fn depart(&mut self, _now: Nanos) -> Option<K> {
        self.fifo.pop()
    }
    fn len_bytes(&self) -> u32 {
        self.fifo.bytes()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.reserved_slots()
    }
}

/// A deterministic 32-bit sequence for the vectors (SplitMix64's output, high half).
fn mix(i: u64) -> u32 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 32) as u32
}

/// The vectors' core: 10 Mbit/s, K = 10 ms, target 8 KB, limit 24 KB, a ring of 64.
pub fn vector_params() -> FixedCsfneParams {
    FixedCsfneParams {
        capacity_bps: 10_000_000,
        k_ns: 10_000_000,
        target_bytes: 8_000,
        limit_bytes: 24_000,
        ring: 64,
    }
}

/// Test vectors for the dataplane: the model's outputs on fixed inputs, one CSV line each.
/// `testdata/csfne-fixed-vectors.csv` holds this text; the program tests replay it.
///
/// - `tsw,now,flow,bytes,win,rate`: the edge with the TSW meter on eight flows.
/// - `csfneparams,C,K,target,limit,ring`, then
///   `csfne,now,flow,bytes,label,pick,draw,verdict,out,hit,hit_bps,miss_bps,admitted,queue`:
///   the core on five flows (one unlabeled) offered 1.6 C with a silence that empties the
///   queue and a burst that overflows it; `verdict` 0 forward, 1 relabel to `out`, 2 drop by Eq. (2), 3 overflow; `hit`
///   `-` when nothing was queued; `queue` the virtual queue after the packet, bytes.
pub fn test_vectors() -> String {
    use crate::fixed::{FixedEdge, Meter};
    use crate::packet::FlowId;
    use std::fmt::Write as _;
    let t = tables();
    let mut out = String::from(
        "# csfq CS-FNE fixed-point model vectors; regenerate: CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo csfne_vectors\n",
    );
    // The edge with the TSW meter: staggered starts, sizes, gaps and same-instant packets.
    let win = 100_000_000;
    let mut e = FixedEdge::with_meter(crate::time::Nanos(win), Meter::Tsw);
    let mut now = 1_000u64;
    for i in 0..96u64 {
        let flow = if i < 24 { i / 3 } else { (i * 5) % 8 };
        let bytes = 100 + ((i * 613) % 1400) as u32;
        now += [0, 5_000, 70_000, 1_200_000, 30_000_000][(i % 5) as usize];
        let rate = e.estimate(FlowId(flow as u32), now, bytes);
        writeln!(out, "tsw,{now},{flow},{bytes},{win},{rate}").unwrap();
    }
    let p = vector_params();
    writeln!(
        out,
        "csfneparams,{},{},{},{},{}",
        p.capacity_bps, p.k_ns, p.target_bytes, p.limit_bytes, p.ring
    )
    .unwrap();
    // Flows 0-3 labeled 8, 4, 2 and 1.2 Mbit/s (flow 0 far above any fair share), flow 4
    // unlabeled; arrivals at 1.6 C on average (0.32 C for the first 60 packets), 100 ms of silence after packet 900 and a
    // burst of 60 packets 10 us apart from packet 1200.
    let labels = [8_000_000u64, 4_000_000, 2_000_000, 1_200_000, 0];
    let mut c = FixedCsfneCore::new();
    let mut now = 1_000_000u64;
    for i in 0..1500u64 {
        let flow = [0, 0, 0, 1, 0, 2, 1, 3, 4, 0, 1, 2][(mix(i << 1) % 12) as usize];
        let bytes = 200 + (mix(i << 2) % 1301);
        now += if i == 900 {
            100_000_000
        } else if (1200..1260).contains(&i) {
            10_000 // a burst: the virtual queue overflows
        } else {
            // a gap of the packet's time at 1.6 C on average; five times that at first
            let t16 = u64::from(bytes) * 8_000_000_000 / 16_000_000;
            (t16 / 2 + u64::from(mix(i << 3)) % t16) * if i < 60 { 5 } else { 1 }
        };
        let a = CsfneArrival {
            now_ns: now,
            bytes,
            label_bps: if labels[flow as usize] == 0 {
                0
            } else {
                carried(labels[flow as usize])
            },
            fingerprint: flow as u32 + 1,
            pick: mix((i << 4) | 1),
            draw: mix((i << 5) | 3),
        };
        let o = c.on_arrival(t, &p, &a);
        let (verdict, outl) = match o.verdict {
            CsfneVerdict::Forward => (0, 0),
            CsfneVerdict::Relabel(l) => (1, l),
            CsfneVerdict::Drop(DropReason::CsfneProbabilistic) => (2, 0),
            CsfneVerdict::Drop(_) => (3, 0),
        };
        let hit = match o.hit {
            None => "-",
            Some(true) => "1",
            Some(false) => "0",
        };
        writeln!(
            out,
            "csfne,{now},{flow},{bytes},{},{},{},{verdict},{outl},{hit},{},{},{},{}",
            a.label_bps,
            a.pick,
            a.draw,
            c.hit.rate_bps,
            c.miss.rate_bps,
            c.admitted,
            c.queue_bytes(&p, now)
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csfne::TswMeter;
    use crate::queue::test_packet::TestPacket;

    /// TSW by hand: 1000 bytes every 4 ms is 2 Mbit/s; from a first packet at 1 ms, the
    /// second at 5 ms gives (0 + 16 000 bits) / (4 ms + 100 ms) = 153 846 bit/s, the third
    /// (153 846 x 100 000 us / 10^6 = 15 384 bits held, plus 8 000) / 104 ms =
    /// 224 846 bit/s.
    #[test]
    fn tsw_by_hand() {
        let mut s = FixedRate::default();
        assert_eq!(tsw_update(&mut s, 1_000_000, 1000, 100_000_000), 0);
        assert_eq!(tsw_update(&mut s, 5_000_000, 1000, 100_000_000), 153_846);
        assert_eq!(tsw_update(&mut s, 9_000_000, 1000, 100_000_000), 224_846);
    }

    /// The integer meter follows the float meter (csfne.rs) on one flow's packets, from
    /// 64 kbit/s to 1 Gbit/s: at most 0.1% apart once the first packet's different start
    /// (counted at once by the float meter, with the second by the integer one) has
    /// decayed, as `e^(-t / win)`: over the last two of twenty windows.
    #[test]
    fn tsw_follows_the_float_meter() {
        for (bytes, gap_ns) in [(200u32, 25_000_000u64), (1500, 1_200_000), (1500, 12_000)] {
            let win = 100_000_000;
            let mut s = FixedRate::default();
            let mut f = TswMeter::new(Nanos(win));
            let mut p = TestPacket::new(0, bytes, 0.0);
            let mut now = 1_000u64;
            f.label(&mut p, Nanos(now));
            tsw_update(&mut s, now, bytes, win);
            // The float meter counts the first packet at once, the integer one with the
            // second: from the second on both count every byte.
            while now < 20 * win {
                now += gap_ns;
                f.label(&mut p, Nanos(now));
                let r = tsw_update(&mut s, now, bytes, win);
                if now > 18 * win {
                    let rel = (r as f64 - p.label).abs() / p.label;
                    assert!(
                        rel < 1e-3,
                        "{bytes} B every {gap_ns} ns: {r} vs {}",
                        p.label
                    );
                }
            }
        }
    }

    /// `CL` by hand: hits at a quarter of all bytes is 4 flows, `CL = C / 4`.
    #[test]
    fn cl_is_c_over_the_flows() {
        let p = FixedCsfneParams {
            ring: 64,
            ..vector_params()
        };
        let mut c = FixedCsfneCore::new();
        assert_eq!(c.cl_bps(&p), 10_000_000);
        c.hit.rate_bps = 2_500_000;
        c.miss.rate_bps = 7_500_000;
        assert_eq!(c.cl_bps(&p), 2_500_000);
        assert_eq!(c.active_flows(), 4.0);
        // Rates past 2^20 scaled alike: 1 Gbit/s hits of 3 Gbit/s.
        c.hit.rate_bps = 1_000_000_000;
        c.miss.rate_bps = 2_000_000_000;
        let cl = c.cl_bps(&p);
        assert!((cl as f64 / (10e6 / 3.0) - 1.0).abs() < 1e-5, "{cl}");
    }

    /// The ring's queued entries by hand: three packets of 1250 bytes at 10 Mbit/s admitted
    /// at 0 leave at 1, 2 and 3 ms; at 1.5 ms two are queued, at 3 ms none.
    #[test]
    fn queued_entries_by_hand() {
        let p = vector_params();
        let t = tables();
        let mut c = FixedCsfneCore::new();
        for f in 1..=3 {
            c.on_arrival(
                t,
                &p,
                &CsfneArrival {
                    now_ns: 1,
                    bytes: 1250,
                    label_bps: 1_000_000,
                    fingerprint: f,
                    pick: 0,
                    draw: u32::MAX,
                },
            );
        }
        assert_eq!(c.queued(&p, 1), 3);
        assert_eq!(c.queued(&p, 1_500_001), 2);
        assert_eq!(c.queue_bytes(&p, 1_500_001), 1875);
        assert_eq!(c.queued(&p, 3_000_001), 0);
        // pick 0 draws the oldest queued (fingerprint 2 at 1.5 ms), pick near 2^32 the newest
        let mut d = c.clone();
        let hit = |c: &mut FixedCsfneCore, fp, pick| {
            c.on_arrival(
                t,
                &p,
                &CsfneArrival {
                    now_ns: 1_500_001,
                    bytes: 100,
                    label_bps: 1_000_000,
                    fingerprint: fp,
                    pick,
                    draw: u32::MAX,
                },
            )
            .hit
        };
        assert_eq!(hit(&mut c, 2, 0), Some(true));
        assert_eq!(hit(&mut d, 3, u32::MAX), Some(true));
    }

    /// The ring against the real queue: one arrival stream (flows of rates 1:1:2:4, a
    /// 1.5x overload) judged by the integer core with a ring of 256, and its `N_act` set
    /// beside `n / (C_r^2 + 1)` (Eq. 3-5 of the thesis: 3.2 for these rates), which the
    /// float core's sampling of its real queue converges to (csfne.rs's test). Over the
    /// last half of 20 s, the ring's mean estimate is within 10% of it, at three seeds.
    #[test]
    fn the_ring_estimates_the_flows_as_the_queue_does() {
        let rates = [1.0, 1.0, 2.0, 4.0];
        let n = rates.len() as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let var = rates.iter().map(|r| (r - mean) * (r - mean)).sum::<f64>() / n;
        let expected = n / (var / (mean * mean) + 1.0);
        let t = tables();
        let p = FixedCsfneParams {
            capacity_bps: 10_000_000,
            k_ns: 100_000_000,
            target_bytes: 1_000_000, // never drop by Eq. (2): the queue's mix is the offered
            limit_bytes: 64_000,
            ring: 256,
        };
        for seed in 1..=3u64 {
            let mut c = FixedCsfneCore::new();
            let total: f64 = rates.iter().sum();
            let mut now = 1_000u64;
            let (mut sum, mut k) = (0.0, 0u64);
            for i in 0..150_000u64 {
                let u = mix(seed << 40 | i) as f64 / 2f64.powi(32) * total;
                let mut acc = 0.0;
                let flow = rates
                    .iter()
                    .position(|r| {
                        acc += r;
                        u < acc
                    })
                    .unwrap_or(3);
                // 1000-byte packets at 15 Mbit/s on average, exponential gaps.
                let e = -(1.0 - mix(seed << 44 | i) as f64 / 2f64.powi(32)).ln();
                now += (e * 533_333.0) as u64 + 1;
                c.on_arrival(
                    t,
                    &p,
                    &CsfneArrival {
                        now_ns: now,
                        bytes: 1000,
                        label_bps: 1_000_000,
                        fingerprint: flow as u32 + 1,
                        pick: mix(seed << 48 | i),
                        draw: u32::MAX,
                    },
                );
                if now > 10_000_000_000 {
                    sum += c.active_flows();
                    k += 1;
                }
            }
            let got = sum / k as f64;
            assert!(
                (got / expected - 1.0).abs() < 0.1,
                "seed {seed}: N_act {got} vs {expected}"
            );
        }
    }

    /// The committed vectors are what the model computes (regenerate with
    /// `CSFQ_WRITE_VECTORS=1 cargo test -p csfq-algo csfne_vectors`), and they exercise
    /// every path: both drops, relabels, hits and misses, an empty queue.
    #[test]
    fn csfne_vectors_match_the_committed_file() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/csfne-fixed-vectors.csv"
        );
        let now = test_vectors();
        if std::env::var_os("CSFQ_WRITE_VECTORS").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let committed = std::fs::read_to_string(path).expect("testdata/csfne-fixed-vectors.csv");
        assert_eq!(
            committed, now,
            "the model changed: regenerate the vectors and update the dataplane"
        );
        let rows: Vec<Vec<&str>> = now
            .lines()
            .filter(|l| l.starts_with("csfne,"))
            .map(|l| l.split(',').collect())
            .collect();
        let count = |col: usize, v: &str| rows.iter().filter(|r| r[col] == v).count();
        for (col, v, what) in [
            (7, "0", "forwarded"),
            (7, "1", "relabeled"),
            (7, "2", "dropped by Eq. (2)"),
            (7, "3", "overflowed"),
            (9, "1", "hits"),
            (9, "0", "misses"),
            (9, "-", "arrivals at an empty queue"),
        ] {
            assert!(count(col, v) >= 5, "{what}: {}", count(col, v));
        }
    }
}
