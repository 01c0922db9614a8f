//! Delay statistics without a vector of samples: a fixed-size histogram with log buckets
//! (the layout of Gil Tene's HdrHistogram with two significant bits), RFC 3550's
//! interarrival jitter, and the per-flow and per-link records built from them.
//!
//! A flow's one-way delay is the sum, over its path, of each port's transmission time,
//! propagation delay and queueing; the first two are the same for every packet of the flow
//! (its data packets have one size), so the simulator records the **queueing delay**
//! (`one-way - base`) in the histogram and reports one-way statistics as `base +` the
//! queueing ones. A link's record holds the **sojourn** of packets in its queue, from
//! enqueue to the start of transmission.
//!
//! Memory: the `hdrhistogram` crate's smallest layout (one significant decimal digit) keeps
//! 32 sub-buckets per octave, about 1.5 KB per flow at 16-bit counts, most of the whole
//! per-flow budget of the scale benchmark. Two significant bits (4 sub-buckets per octave,
//! a bucket at most 25% of its lower bound wide, so a midpoint within 12.5%) over
//! 128 ns .. 68.7 s take 112 counts, 8 bits wide until one overflows: a flow's record is
//! 168 bytes.

use csfq_algo::Nanos;
use serde::{Deserialize, Serialize};

/// Nanoseconds per unit of the histogram's first (linear) buckets: 2^7 = 128 ns.
const UNIT_SHIFT: u32 = 7;
/// Sub-buckets per octave: 2^2.
const SUB_BITS: u32 = 2;
const SUB: usize = 1 << SUB_BITS;
/// The last octave kept: values up to 2^36 ns (68.7 s); larger ones count in the last
/// bucket (the exact maximum is kept beside it).
const TOP_SHIFT: u32 = 36;
/// Buckets: `SUB` linear ones below `SUB` units, then `SUB` per octave.
pub const BUCKETS: usize = SUB * (TOP_SHIFT - UNIT_SHIFT - SUB_BITS + 1) as usize;

/// A histogram of durations with log buckets.
///
/// Counts start 8 bits wide, inline (112 bytes: a flow of the scale benchmark delivers a
/// few hundred packets); when one would overflow they move to 16-bit and then 64-bit counts
/// on the heap, each step once per histogram, so a flow allocates at most twice over a run
/// and never per packet after that. Counts are exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelayHistogram {
    counts: Counts,
    /// Durations recorded.
    total: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Counts {
    U8([u8; BUCKETS]),
    U16(Box<[u16; BUCKETS]>),
    U64(Box<[u64; BUCKETS]>),
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram {
            counts: Counts::U8([0; BUCKETS]),
            total: 0,
        }
    }
}

impl DelayHistogram {
    /// The bucket of a duration in nanoseconds.
    pub fn bucket(ns: u64) -> usize {
        let u = ns >> UNIT_SHIFT;
        if u < SUB as u64 {
            return u as usize;
        }
        // The octave [2^e, 2^(e+1)) units, split in SUB equal parts.
        let e = 63 - u.leading_zeros();
        let idx = SUB * (e - SUB_BITS + 1) as usize + ((u >> (e - SUB_BITS)) as usize & (SUB - 1));
        idx.min(BUCKETS - 1)
    }

    /// A bucket's range `[low, high)` in nanoseconds (the last one is open above).
    pub fn bounds(bucket: usize) -> (u64, u64) {
        if bucket < SUB {
            let b = bucket as u64;
            return (b << UNIT_SHIFT, (b + 1) << UNIT_SHIFT);
        }
        let e = (bucket / SUB) as u32 + SUB_BITS - 1;
        let width = 1u64 << (e - SUB_BITS + UNIT_SHIFT);
        let low = (1u64 << (e + UNIT_SHIFT)) + (bucket % SUB) as u64 * width;
        (low, low + width)
    }

    /// Counts one duration.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.add(Self::bucket(ns), 1);
    }

    fn add(&mut self, b: usize, n: u64) {
        self.total += n;
        let sum = self.count(b) + n;
        match &mut self.counts {
            Counts::U8(c) if sum <= u64::from(u8::MAX) => c[b] = sum as u8,
            Counts::U16(c) if sum <= u64::from(u16::MAX) => c[b] = sum as u16,
            Counts::U64(c) => c[b] = sum,
            _ => {
                // Widen to the narrowest width that holds the new count.
                let old: Vec<u64> = (0..BUCKETS).map(|i| self.count(i)).collect();
                self.counts = if sum <= u64::from(u16::MAX) {
                    let mut c = Box::new([0u16; BUCKETS]);
                    for (w, &o) in c.iter_mut().zip(&old) {
                        *w = o as u16;
                    }
                    c[b] = sum as u16;
                    Counts::U16(c)
                } else {
                    let mut c = Box::new([0u64; BUCKETS]);
                    c.copy_from_slice(&old);
                    c[b] = sum;
                    Counts::U64(c)
                };
            }
        }
    }

    fn count(&self, b: usize) -> u64 {
        match &self.counts {
            Counts::U8(c) => u64::from(c[b]),
            Counts::U16(c) => u64::from(c[b]),
            Counts::U64(c) => c[b],
        }
    }

    /// Durations recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The buckets with a count, as `(bucket, count)`.
    pub fn counts(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..BUCKETS)
            .map(|b| (b, self.count(b)))
            .filter(|&(_, c)| c > 0)
    }

    /// The `q`-quantile (0 < q <= 1) in nanoseconds: the midpoint of the first bucket whose
    /// cumulative count reaches `q` of the total, at most `max` (the exact maximum, which
    /// also stands for the open last bucket); `None` if empty.
    pub fn quantile(&self, q: f64, max: u64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (b, c) in self.counts() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bounds(b);
                let mid = if b == BUCKETS - 1 {
                    max
                } else {
                    lo + (hi - lo) / 2
                };
                return Some(mid.min(max));
            }
        }
        Some(max)
    }

    /// Adds another histogram's counts (for aggregates over flows).
    pub fn merge(&mut self, other: &DelayHistogram) {
        for (b, c) in other.counts() {
            self.add(b, c);
        }
    }
}

/// RFC 3550 (section 6.4.1, appendix A.8) interarrival jitter, in its integer form: the
/// mean deviation of the difference in transit time of consecutive packets, smoothed with
/// gain 1/16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jitter {
    /// The last packet's transit time, ns (`NONE` before the first).
    last: u64,
    /// Jitter times 16, ns.
    j16: u64,
}

impl Default for Jitter {
    fn default() -> Self {
        Jitter {
            last: Self::NONE,
            j16: 0,
        }
    }
}

impl Jitter {
    /// No packet yet (585 years is no transit time).
    const NONE: u64 = u64::MAX;

    /// A packet arrived with this transit (one-way) time.
    #[inline]
    pub fn record(&mut self, transit: Nanos) {
        if self.last != Self::NONE {
            let d = transit.0.abs_diff(self.last);
            // J += (|D| - J) / 16, with J kept times 16 (RFC 3550 A.8).
            self.j16 = self.j16 + d - ((self.j16 + 8) >> 4);
        }
        self.last = transit.0;
    }

    /// The jitter, ns.
    pub fn ns(&self) -> f64 {
        self.j16 as f64 / 16.0
    }
}

/// A flow's delivered data packets' delay, as the simulator keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDelay {
    /// Transmission and propagation over the flow's path: a packet's one-way delay without
    /// queueing.
    pub base: Nanos,
    /// Queueing delay of each packet.
    pub queueing: DelayHistogram,
    /// Sum of the queueing delays, ns.
    pub sum_ns: u64,
    /// The largest queueing delay, ns.
    pub max_ns: u64,
    /// Interarrival jitter of the one-way delays.
    pub jitter: Jitter,
}

impl FlowDelay {
    /// A data packet sent at `sent` arrived at `now`.
    #[inline]
    pub fn record(&mut self, sent: Nanos, now: Nanos) {
        let transit = now.saturating_sub(sent);
        let q = transit.0.saturating_sub(self.base.0);
        self.queueing.record(q);
        self.sum_ns += q;
        self.max_ns = self.max_ns.max(q);
        self.jitter.record(transit);
    }

    /// The report: `None` if no packet arrived.
    pub fn report(&self) -> Option<DelayReport> {
        let queueing = DelayStats::of(&self.queueing, self.sum_ns, self.max_ns, 0)?;
        Some(DelayReport {
            packets: self.queueing.total(),
            one_way_ms: DelayStats::of(&self.queueing, self.sum_ns, self.max_ns, self.base.0)?,
            queueing_ms: queueing,
            jitter_ms: self.jitter.ns() / 1e6,
        })
    }
}

/// Summary statistics of a set of durations, ms.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct DelayStats {
    /// Mean (exact).
    pub mean: f64,
    /// Median (histogram bucket midpoint, within 12.5%).
    pub p50: f64,
    /// 95th percentile (likewise).
    pub p95: f64,
    /// 99th percentile (likewise).
    pub p99: f64,
    /// Maximum (exact).
    pub max: f64,
}

impl DelayStats {
    /// The statistics of a histogram with its exact sum and maximum, each value plus
    /// `offset` ns; `None` if it is empty.
    pub fn of(h: &DelayHistogram, sum_ns: u64, max_ns: u64, offset: u64) -> Option<Self> {
        let n = h.total();
        if n == 0 {
            return None;
        }
        let ms = |ns: u64| (ns + offset) as f64 / 1e6;
        Some(DelayStats {
            mean: (sum_ns as f64 / n as f64 + offset as f64) / 1e6,
            p50: ms(h.quantile(0.50, max_ns)?),
            p95: ms(h.quantile(0.95, max_ns)?),
            p99: ms(h.quantile(0.99, max_ns)?),
            max: ms(max_ns),
        })
    }
}

/// A flow's delay in a report.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct DelayReport {
    /// Data packets that reached the destination (TCP: duplicates and out-of-order ones
    /// too: every segment the network delivered).
    pub packets: u64,
    /// One-way delay, sender to receiver, ms.
    pub one_way_ms: DelayStats,
    /// The part of it spent waiting in queues, ms.
    pub queueing_ms: DelayStats,
    /// RFC 3550 interarrival jitter at the end of the run, ms.
    pub jitter_ms: f64,
}

/// A queue's sojourn times, as a router port keeps them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sojourn {
    /// Per packet.
    pub hist: DelayHistogram,
    /// Sum, ns.
    pub sum_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
}

impl Sojourn {
    /// A packet waited `ns`.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.record(ns);
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The statistics, ms; `None` if no packet left the queue.
    pub fn stats(&self) -> Option<DelayStats> {
        DelayStats::of(&self.hist, self.sum_ns, self.max_ns, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range_in_order() {
        // Every bucket's range starts where the previous one ends, and each value falls in
        // the bucket whose range holds it.
        let mut end = 0;
        for b in 0..BUCKETS {
            let (lo, hi) = DelayHistogram::bounds(b);
            assert_eq!(lo, end, "bucket {b}");
            assert!(hi > lo);
            if b >= 2 * SUB {
                // At most 25% of its lower bound wide.
                assert!((hi - lo) * 4 <= lo, "bucket {b}: [{lo}, {hi})");
            }
            for v in [lo, lo + (hi - lo) / 2, hi - 1] {
                assert_eq!(DelayHistogram::bucket(v), b, "value {v}");
            }
            end = hi;
        }
        assert_eq!(end, 1 << TOP_SHIFT);
        assert_eq!(DelayHistogram::bucket(u64::MAX), BUCKETS - 1);
        assert_eq!(BUCKETS, 112);
        // What a flow keeps (see the module's note on memory).
        assert_eq!(std::mem::size_of::<FlowDelay>(), 168);
    }

    #[test]
    fn quantiles_within_the_bucket_error_of_the_exact_ones() {
        // 10 000 delays spread over five decades; each histogram quantile within 12.5% (or
        // half the 128 ns unit) of the exact order statistic.
        let mut v: Vec<u64> = (0..10_000u64)
            .map(|i| (1.0f64 * 10f64.powf(2.0 + 5.0 * ((i * 7919) % 10_000) as f64 / 1e4)) as u64)
            .collect();
        let mut h = DelayHistogram::default();
        for &x in &v {
            h.record(x);
        }
        v.sort_unstable();
        let max = *v.last().unwrap();
        for q in [0.5, 0.95, 0.99, 1.0] {
            let exact = v[((q * v.len() as f64).ceil() as usize).max(1) - 1] as f64;
            let est = h.quantile(q, max).unwrap() as f64;
            assert!(
                (est - exact).abs() <= (exact * 0.125).max(64.0),
                "q {q}: {est} vs {exact}"
            );
        }
    }

    #[test]
    fn counts_widen_exactly_past_u8_and_u16() {
        // 70 000 packets in one bucket and 1 000 in a far one: the first passes u8::MAX and
        // then u16::MAX, and the counts widen twice; both stay exact.
        let mut h = DelayHistogram::default();
        for i in 0..71_000u64 {
            h.record(if i % 71 == 0 { 50_000_000 } else { 1_000 });
            if i == 200 {
                assert!(matches!(h.counts, Counts::U8(_)));
            }
            if i == 1_000 {
                assert!(matches!(h.counts, Counts::U16(_)));
            }
        }
        assert_eq!(h.total(), 71_000);
        assert!(matches!(h.counts, Counts::U64(_)));
        let got: Vec<(usize, u64)> = h.counts().collect();
        assert_eq!(
            got,
            vec![
                (DelayHistogram::bucket(1_000), 70_000),
                (DelayHistogram::bucket(50_000_000), 1_000)
            ]
        );
        // p98.5 is in the near bucket, p99 in the far one.
        assert!(h.quantile(0.985, 50_000_000).unwrap() < 2_000);
        assert!(h.quantile(0.99, 50_000_000).unwrap() > 40_000_000);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = DelayHistogram::default();
        let mut b = DelayHistogram::default();
        for x in 0..1000 {
            a.record(x * 1000);
            b.record(x * 3000);
        }
        let mut both = DelayHistogram::default();
        for x in 0..1000 {
            both.record(x * 1000);
        }
        for x in 0..1000 {
            both.record(x * 3000);
        }
        a.merge(&b);
        assert_eq!(a, both);
    }

    #[test]
    fn jitter_follows_rfc3550() {
        // Transit times alternating 10 and 12 ms: |D| = 2 ms every packet, so J tends to
        // 2 ms; after n steps J = 2 ms * (1 - (15/16)^n) up to the integer rounding.
        let mut j = Jitter::default();
        j.record(Nanos::from_millis(10));
        assert_eq!(j.ns(), 0.0);
        for i in 0..200u32 {
            j.record(Nanos::from_millis(if i % 2 == 0 { 12 } else { 10 }));
        }
        let expect = 2e6 * (1.0 - (15.0f64 / 16.0).powi(200));
        assert!((j.ns() - expect).abs() < 1.0, "{} vs {expect}", j.ns());
        // Constant transit: no jitter.
        let mut j = Jitter::default();
        for _ in 0..10 {
            j.record(Nanos::from_millis(5));
        }
        assert_eq!(j.ns(), 0.0);
    }
}
