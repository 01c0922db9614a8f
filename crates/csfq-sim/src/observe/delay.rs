//! Delay statistics without a vector of samples: a log-bucket histogram (HdrHistogram's
//! layout, with a chosen number of sub-buckets per octave), RFC 3550's interarrival
//! jitter, and the per-flow and per-link records built from them.
//!
//! A flow's one-way delay is the sum, over its path, of each port's transmission time,
//! propagation delay and queueing; the first two are the same for every packet of the flow
//! (its data packets have one size), so the simulator records the **queueing delay**
//! (`one-way - base`) in the histogram and reports one-way statistics as `base +` the
//! queueing ones. A link's record holds the **sojourn** of packets in its queue, from
//! enqueue to the start of transmission.
//!
//! Precision: with `2^b` sub-buckets per octave a bucket is at most `2^-b` of its lower
//! bound wide, so its midpoint, the value a quantile reports, is within `2^-(b+1)` of any
//! value in it (1 ns resolution below `2^b` ns, where buckets are 1 ns wide). The scenario's
//! `delay_precision` (default 0.01) picks the coarsest `b` meeting it for the links'
//! sojourn histograms (`b = 6`, 0.78%, by default) and twice it for the flows' (`b = 5`,
//! 1.56%): a run's flows share one layout and its links another, so each merges exactly
//! across flows, links and seeds.
//!
//! Memory: a flow's counts are kept sparse, 4 bytes per bucket a packet fell in (bucket
//! index and a 16-bit count, in order), so it costs what its distribution spans, not the
//! 1024 buckets of 1 ns .. 68.7 s at the flows' default: a flow of the million-flow
//! benchmark, a handful of packets, a few dozen bytes; a count past 65 535 turns it dense
//! (8 KB). A router port's
//! sojourn histogram is dense from the start (8 bytes a bucket, 15.9 KB at the default
//! precision): ports that carry traffic are few beside flows, and counting is then an index
//! instead of a search.

use csfq_algo::Nanos;
use serde::{Deserialize, Serialize};

/// The last octave kept: values up to 2^36 ns (68.7 s); larger ones count in the last
/// bucket (the exact maximum is kept beside it).
const TOP_SHIFT: u32 = 36;

/// How finely a histogram's buckets split each octave: `2^sub_bits` sub-buckets, a quantile
/// within `2^-(sub_bits+1)` of the true value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Precision {
    sub_bits: u8,
}

impl Default for Precision {
    fn default() -> Self {
        Precision::DEFAULT
    }
}

impl Precision {
    /// 64 sub-buckets per octave: quantiles within 0.78% (the default `delay_precision`,
    /// 0.01).
    pub const DEFAULT: Precision = Precision { sub_bits: 6 };
    /// The coarsest precision whose quantiles are within `error` of the true values
    /// (relative): 2 to 512 sub-buckets per octave, so `None` below 2^-10 (or not a
    /// number); any error from 0.25 up gets the coarsest.
    pub fn for_error(error: f64) -> Option<Precision> {
        (1u8..=9)
            .map(|sub_bits| Precision { sub_bits })
            .find(|p| p.relative_error() <= error)
    }

    /// The bound on a quantile's relative error: `2^-(sub_bits+1)`.
    pub fn relative_error(self) -> f64 {
        0.5f64.powi(i32::from(self.sub_bits) + 1)
    }

    fn sub(self) -> u64 {
        1 << self.sub_bits
    }

    /// Buckets: `2^sub_bits` 1 ns ones, then `2^sub_bits` per octave up to 2^36 ns.
    pub fn buckets(self) -> usize {
        (self.sub() * u64::from(TOP_SHIFT - u32::from(self.sub_bits) + 1)) as usize
    }

    /// The bucket of a duration in nanoseconds.
    #[inline]
    pub fn bucket(self, ns: u64) -> usize {
        let sub = self.sub();
        if ns < sub {
            return ns as usize;
        }
        // The octave [2^e, 2^(e+1)) ns, split in `sub` equal parts.
        let b = u32::from(self.sub_bits);
        let e = 63 - ns.leading_zeros();
        let idx = sub * u64::from(e - b + 1) + ((ns >> (e - b)) & (sub - 1));
        (idx as usize).min(self.buckets() - 1)
    }

    /// A bucket's range `[low, high)` in nanoseconds (the last one is open above).
    pub fn bounds(self, bucket: usize) -> (u64, u64) {
        let sub = self.sub();
        let bucket = bucket as u64;
        if bucket < sub {
            return (bucket, bucket + 1);
        }
        let b = u32::from(self.sub_bits);
        let e = (bucket / sub) as u32 + b - 1;
        let width = 1u64 << (e - b);
        let low = (1u64 << e) + (bucket % sub) * width;
        (low, low + width)
    }
}

/// A histogram of durations with log buckets; counts exact. Two are equal when they hold
/// the same counts at the same precision, however each keeps them.
#[derive(Debug, Clone, Default)]
pub struct DelayHistogram {
    precision: Precision,
    /// Where the last sparse count went: a flow's next packet most often falls in the same
    /// bucket, found then without the search (it sits in padding: no byte more).
    hint: u16,
    counts: Counts,
    /// Durations recorded.
    total: u64,
}

impl PartialEq for DelayHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.precision == other.precision
            && self.total == other.total
            && self.counts().eq(other.counts())
    }
}

impl Eq for DelayHistogram {}

#[derive(Debug, Clone)]
enum Counts {
    /// `(bucket, count)` in bucket order, for the buckets with a count.
    Sparse(Vec<(u16, u16)>),
    /// A count per bucket.
    Dense(Box<[u64]>),
}

impl Default for Counts {
    fn default() -> Self {
        Counts::Sparse(Vec::new())
    }
}

impl DelayHistogram {
    /// An empty histogram of that precision.
    pub fn new(precision: Precision) -> Self {
        DelayHistogram {
            precision,
            ..Self::default()
        }
    }

    /// An empty histogram of that precision with a count per bucket from the start (8
    /// bytes a bucket): for the few histograms that see many packets, as a link's, where
    /// counting costs an index instead of a search.
    pub fn dense(precision: Precision) -> Self {
        DelayHistogram {
            precision,
            hint: 0,
            counts: Counts::Dense(vec![0; precision.buckets()].into_boxed_slice()),
            total: 0,
        }
    }

    /// Its precision.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Counts one duration.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.add(self.precision.bucket(ns), 1);
    }

    fn add(&mut self, b: usize, n: u64) {
        self.total += n;
        match &mut self.counts {
            Counts::Dense(c) => c[b] += n,
            Counts::Sparse(v) => {
                // Every bucket index fits 16 bits (at most 14 336 buckets).
                let key = b as u16;
                let hint = usize::from(self.hint);
                let found = match v.get(hint) {
                    Some(&(k, _)) if k == key => Ok(hint),
                    _ => v.binary_search_by_key(&key, |&(k, _)| k),
                };
                self.hint = match found {
                    Ok(i) | Err(i) => i as u16,
                };
                match found {
                    Ok(i) => {
                        let sum = u64::from(v[i].1) + n;
                        if let Ok(c) = u16::try_from(sum) {
                            v[i].1 = c;
                            return;
                        }
                    }
                    Err(i) => {
                        if let Ok(c) = u16::try_from(n) {
                            v.insert(i, (key, c));
                            return;
                        }
                    }
                }
                // A count past 16 bits: a count per bucket from now on.
                let mut dense = vec![0u64; self.precision.buckets()].into_boxed_slice();
                for &(k, c) in v.iter() {
                    dense[usize::from(k)] = u64::from(c);
                }
                dense[b] += n;
                self.counts = Counts::Dense(dense);
            }
        }
    }

    /// Durations recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The buckets with a count, in order, as `(bucket, count)`.
    pub fn counts(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (sparse, dense) = match &self.counts {
            Counts::Sparse(v) => (Some(v.iter()), None),
            Counts::Dense(c) => (None, Some(c.iter().enumerate())),
        };
        let sparse = sparse
            .into_iter()
            .flatten()
            .map(|&(k, c)| (usize::from(k), u64::from(c)));
        let dense = dense
            .into_iter()
            .flatten()
            .filter(|&(_, &n)| n > 0)
            .map(|(b, &n)| (b, n));
        sparse.chain(dense)
    }

    /// The buckets with a count, in order, as `(low_ns, high_ns, count)`: the range
    /// `[low, high)` (the last bucket, 2^36 ns on, is open above).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts().map(|(b, c)| {
            let (lo, hi) = self.precision.bounds(b);
            (lo, hi, c)
        })
    }

    /// The value a bucket stands for: its midpoint, or `max` for the open last bucket;
    /// never above `max` (the exact maximum).
    pub fn value_of(&self, bucket: usize, max: u64) -> u64 {
        if bucket == self.precision.buckets() - 1 {
            return max;
        }
        let (lo, hi) = self.precision.bounds(bucket);
        (lo + (hi - lo) / 2).min(max)
    }

    /// The `q`-quantile (0 < q <= 1) in nanoseconds: the midpoint of the first bucket whose
    /// cumulative count reaches `q` of the total (within the precision's relative error of
    /// the exact order statistic), at most `max` (the exact maximum, which also stands for
    /// the open last bucket); `None` if empty.
    pub fn quantile(&self, q: f64, max: u64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (b, c) in self.counts() {
            seen += c;
            if seen >= rank {
                return Some(self.value_of(b, max));
            }
        }
        Some(max)
    }

    /// Adds another histogram's counts (for aggregates over flows, links or seeds): exact
    /// between histograms of one precision; one of another precision is re-bucketed at
    /// its buckets' midpoints.
    pub fn merge(&mut self, other: &DelayHistogram) {
        for (b, c) in other.counts() {
            let b = if other.precision == self.precision {
                b
            } else {
                let (lo, hi) = other.precision.bounds(b);
                self.precision.bucket(lo + (hi - lo) / 2)
            };
            self.add(b, c);
        }
    }
}

/// The exported form: `{"relative_error": e, "buckets": [[low_ns, high_ns, count], ...]}`,
/// the buckets with a count in order (`relative_error` names the precision: `2^-(b+1)`).
#[derive(Serialize, Deserialize)]
struct Exported {
    relative_error: f64,
    buckets: Vec<(u64, u64, u64)>,
}

impl Serialize for DelayHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Exported {
            relative_error: self.precision.relative_error(),
            buckets: self.buckets().collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for DelayHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let e = Exported::deserialize(d)?;
        let precision = (1u8..=9)
            .map(|sub_bits| Precision { sub_bits })
            .find(|p| p.relative_error() == e.relative_error)
            .ok_or_else(|| D::Error::custom("relative_error is no histogram's precision"))?;
        let mut h = DelayHistogram::new(precision);
        let mut last = None;
        for (lo, hi, c) in e.buckets {
            let b = precision.bucket(lo);
            if precision.bounds(b) != (lo, hi) || c == 0 || last >= Some(b) {
                return Err(D::Error::custom(format!(
                    "[{lo}, {hi}) with {c} is not a bucket of this precision in order"
                )));
            }
            last = Some(b);
            h.add(b, c);
        }
        Ok(h)
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
    /// No packet yet, over a path of that `base` delay, queueing kept at `precision`.
    pub fn new(base: Nanos, precision: Precision) -> Self {
        FlowDelay {
            base,
            queueing: DelayHistogram::new(precision),
            ..FlowDelay::default()
        }
    }

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
    /// Median (a histogram bucket's midpoint, within the run's `delay_precision`).
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
    /// No packet yet, kept at `precision`, a count per bucket (a router port's queue sees
    /// many packets; ports are few beside flows).
    pub fn new(precision: Precision) -> Self {
        Sojourn {
            hist: DelayHistogram::dense(precision),
            ..Sojourn::default()
        }
    }

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

    /// Every precision a scenario may ask for.
    fn every_precision() -> Vec<Precision> {
        (1u8..=9).map(|sub_bits| Precision { sub_bits }).collect()
    }

    #[test]
    fn buckets_tile_the_range_in_order() {
        // At every precision each bucket's range starts where the previous one ends, is at
        // most 2^-b of its lower bound wide, and each value falls in the bucket holding it.
        for p in every_precision() {
            let mut end = 0;
            for b in 0..p.buckets() {
                let (lo, hi) = p.bounds(b);
                assert_eq!(lo, end, "{p:?} bucket {b}");
                assert!(hi > lo);
                assert!(
                    (hi - lo) == 1 || (hi - lo) * p.sub() <= lo,
                    "{p:?} [{lo}, {hi})"
                );
                for v in [lo, lo + (hi - lo) / 2, hi - 1] {
                    assert_eq!(p.bucket(v), b, "{p:?} value {v}");
                }
                end = hi;
            }
            assert_eq!(end, 1 << TOP_SHIFT);
            assert_eq!(p.bucket(u64::MAX), p.buckets() - 1);
            assert!(p.buckets() <= usize::from(u16::MAX));
        }
        assert_eq!(Precision::DEFAULT.buckets(), 64 * 31);
    }

    #[test]
    fn the_precision_asked_for_is_the_coarsest_that_meets_it() {
        // 2^-(b+1) <= e: 0.01 -> b = 6 (0.78%), 0.02 -> 5 (1.56%), 0.0078125 -> 6 exactly.
        let b = |e: f64| Precision::for_error(e).map(|p| p.sub_bits);
        assert_eq!(b(0.01), Some(6));
        assert_eq!(b(0.02), Some(5));
        assert_eq!(b(0.0078125), Some(6));
        assert_eq!(b(0.25), Some(1));
        assert_eq!(b(0.001), Some(9));
        assert_eq!(b(0.0009), None);
        assert_eq!(b(0.3), Some(1));
        assert_eq!(b(f64::NAN), None);
        assert_eq!(Precision::default().relative_error(), 0.0078125);
    }

    #[test]
    fn quantiles_within_the_precision_of_the_exact_ones() {
        // 20 000 delays spread over seven decades (100 ns .. 1 s); at every precision each
        // quantile is within the precision's relative error of the exact order statistic.
        let mut v: Vec<u64> = (0..20_000u64)
            .map(|i| 10f64.powf(2.0 + 7.0 * ((i * 7919) % 20_000) as f64 / 2e4) as u64)
            .collect();
        v.sort_unstable();
        let max = *v.last().unwrap();
        for p in every_precision() {
            let mut h = DelayHistogram::new(p);
            for &x in &v {
                h.record(x);
            }
            for q in [0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
                let exact = v[((q * v.len() as f64).ceil() as usize).max(1) - 1] as f64;
                let est = h.quantile(q, max).unwrap() as f64;
                assert!(
                    (est - exact).abs() <= exact * p.relative_error(),
                    "{p:?} q {q}: {est} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn sparse_counts_equal_dense_ones_whatever_the_order() {
        // Runs of one bucket (the hint's case), jumps below and above it, and new buckets
        // inserted before the hinted one: the sparse counts must equal a count per bucket.
        let p = Precision::for_error(0.02).unwrap();
        let mut sparse = DelayHistogram::new(p);
        let mut dense = vec![0u64; p.buckets()];
        let mut x = 1u64;
        for i in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ns = if i % 3 == 0 {
                5_000
            } else {
                (x >> 40) % 50_000_000
            };
            sparse.record(ns);
            dense[p.bucket(ns)] += 1;
        }
        let want: Vec<(usize, u64)> = dense
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| (b, c))
            .collect();
        assert!(matches!(sparse.counts, Counts::Sparse(_)));
        assert_eq!(sparse.counts().collect::<Vec<_>>(), want);
        assert_eq!(sparse.total(), 5_000);
    }

    #[test]
    fn two_close_medians_print_apart() {
        // The case that made 12.5% buckets too coarse: sojourn medians of 26.36 and
        // 27.16 ms fell in one bucket and both printed 27.263. At the default precision
        // each is within 0.78% of itself, so they stay 3% apart.
        let med = |ns: u64| {
            let mut h = DelayHistogram::default();
            h.record(ns);
            h.quantile(0.5, u64::MAX).unwrap() as f64
        };
        let (a, b) = (med(26_360_000), med(27_160_000));
        assert!((a / 26.36e6 - 1.0).abs() <= 0.0078125, "{a}");
        assert!((b / 27.16e6 - 1.0).abs() <= 0.0078125, "{b}");
        assert!(b / a > 1.02, "{a} {b}");
    }

    #[test]
    fn counts_turn_dense_exactly_past_u16() {
        // 70 000 packets in one bucket and 1 000 in a far one: sparse (4 bytes a bucket)
        // until the first passes u16::MAX, then dense; both stay exact.
        let mut h = DelayHistogram::default();
        for i in 0..71_000u64 {
            h.record(if i % 71 == 0 { 50_000_000 } else { 1_000 });
            if i == 60_000 {
                assert!(matches!(&h.counts, Counts::Sparse(v) if v.len() == 2));
            }
        }
        assert_eq!(h.total(), 71_000);
        assert!(matches!(h.counts, Counts::Dense(_)));
        let p = h.precision();
        let got: Vec<(usize, u64)> = h.counts().collect();
        assert_eq!(
            got,
            vec![(p.bucket(1_000), 70_000), (p.bucket(50_000_000), 1_000)]
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
        // One sparse, one dense: the same counts.
        let mut dense = DelayHistogram::default();
        for _ in 0..70_000 {
            dense.record(5);
        }
        let mut sparse = DelayHistogram::default();
        sparse.record(5);
        sparse.merge(&dense);
        assert_eq!(sparse.total(), 70_001);
        assert_eq!(sparse.counts().collect::<Vec<_>>(), vec![(5, 70_001)]);
        // A link's, dense from the start, equals a sparse one of the same counts.
        let mut link = DelayHistogram::dense(Precision::DEFAULT);
        let mut flow = DelayHistogram::default();
        for ns in [5, 1_000, 5, 26_360_000] {
            link.record(ns);
            flow.record(ns);
        }
        assert!(matches!(link.counts, Counts::Dense(_)));
        assert!(matches!(flow.counts, Counts::Sparse(_)));
        assert_eq!(link, flow);
        flow.record(7);
        assert_ne!(link, flow);
    }

    #[test]
    fn the_exported_form_round_trips_and_names_its_buckets() {
        let mut h = DelayHistogram::new(Precision::for_error(0.02).unwrap());
        for ns in [0, 3, 1_000, 1_005, 26_360_000] {
            h.record(ns);
        }
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(json["relative_error"], 0.015625);
        // 1000 and 1005 ns share the bucket [992, 1008): 32 sub-buckets of 16 ns in [512, 1024).
        assert_eq!(
            json["buckets"],
            serde_json::json!([
                [0, 1, 1],
                [3, 4, 1],
                [992, 1008, 2],
                [26214400, 26738688, 1]
            ])
        );
        let back: DelayHistogram = serde_json::from_value(json).unwrap();
        assert_eq!(back, h);
        // A bucket that is not one of this precision is refused.
        let bad = serde_json::json!({"relative_error": 0.015625, "buckets": [[990, 1024, 2]]});
        assert!(serde_json::from_value::<DelayHistogram>(bad).is_err());
    }

    #[test]
    fn a_flow_of_a_few_packets_costs_a_few_bytes() {
        // What a flow keeps (the module's note on memory): the record, and 4 bytes per
        // bucket used on the heap.
        assert_eq!(std::mem::size_of::<FlowDelay>(), 80);
        let mut d = FlowDelay::new(Nanos::ZERO, Precision::DEFAULT);
        for i in 0..12u64 {
            d.record(Nanos::ZERO, Nanos(i * 250_000));
        }
        let Counts::Sparse(v) = &d.queueing.counts else {
            panic!("sparse")
        };
        assert_eq!(v.len(), 12);
        assert!(v.capacity() * 4 <= 64, "{}", v.capacity());
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
