//! The edge's labels with a coarse clock (the kernel's tick counter, which advances once a
//! jiffy: 4 ms at HZ = 250, 1 ms at HZ = 1000) against the fine one, in the integer model
//! the program runs (`fixed::FixedRate`, Eq. 3).
//!
//! With a coarse clock, every packet of a jiffy but the first sees no time pass: its bytes
//! wait (`pending_bytes`) and it carries the estimate as it was; at the next jiffy one
//! update takes them all over the jiffy's length. Each update's input is then the rate
//! over one jiffy, which holds a whole number of packets, within one packet of the true
//! count; Eq. (3) makes each new estimate a convex combination of the input and the old
//! estimate, so once the start has been forgotten (a few K) the estimate stays within
//! `8 P / tick` of the true rate for packets of `P` bytes: the bound asserted. What it is in
//! practice (far below the bound, as the averaging over K = 100 ms smooths the jiffies'
//! one-packet steps) is printed; the README quotes it. At 10 Gbit/s in 64-byte packets the
//! fine clock is the less accurate of the two: an update every 51 ns rounds its Q16
//! products 20 million times a second (0.62% low), where the coarse clock updates once a
//! jiffy (0.005%).

use csfq_algo::fixed::{tables, FixedRate};

const K_NS: u64 = 100_000_000;

/// The labels of a constant-rate flow of `rate_bps` in packets of `bytes`, for `secs`,
/// with time read at `tick_ns` resolution (1: the fine clock), after the first `10 K` (the
/// start from 0 then weighs e^-10 of the estimate).
fn labels(rate_bps: f64, bytes: u32, secs: f64, tick_ns: u64) -> Vec<u64> {
    let t = tables();
    let gap = bytes as f64 * 8.0 / rate_bps * 1e9;
    let n = (secs * 1e9 / gap) as u64;
    let mut r = FixedRate::default();
    let mut out = Vec::new();
    // Start away from 0 so the clock never reads 0 (the program's `no update yet`).
    let t0 = 1_000_000_000u64;
    for i in 0..n {
        let now = t0 + (i as f64 * gap) as u64;
        let now = now - now % tick_ns;
        let l = r.update(t, now, bytes, K_NS);
        if now - t0 >= 10 * K_NS {
            out.push(l);
        }
    }
    out
}

/// Mean and max of |coarse - fine| / rate over the run, the largest |coarse - rate| / rate
/// and |fine - rate| / rate, and the bound on the coarse clock's: 8 P / tick over the rate.
fn error(rate_bps: f64, bytes: u32, tick_ns: u64) -> (f64, f64, f64, f64, f64) {
    let secs = if rate_bps > 1e9 { 1.5 } else { 20.0 };
    let fine = labels(rate_bps, bytes, secs, 1);
    let coarse = labels(rate_bps, bytes, secs, tick_ns);
    // Both lists hold the same packets (the first 10 K cut at the same packet, give or take
    // the ticks' rounding); compare the common tail.
    let n = fine.len().min(coarse.len());
    let (f, c) = (&fine[fine.len() - n..], &coarse[coarse.len() - n..]);
    let errs: Vec<f64> = f
        .iter()
        .zip(c)
        .map(|(&a, &b)| (a as f64 - b as f64).abs() / rate_bps)
        .collect();
    let mean = errs.iter().sum::<f64>() / errs.len() as f64;
    let max = errs.iter().copied().fold(0.0, f64::max);
    let off = |v: &[u64]| {
        v.iter()
            .map(|&l| (l as f64 - rate_bps).abs() / rate_bps)
            .fold(0.0, f64::max)
    };
    let bound = 8.0 * bytes as f64 / (tick_ns as f64 * 1e-9) / rate_bps;
    (mean, max, off(c), off(f), bound)
}

#[test]
fn coarse_clock_labels_stay_within_one_packet_per_jiffy_of_the_fine_clocks() {
    for (rate, bytes) in [(10e6, 1500u32), (10e9, 1500), (10e6, 64), (10e9, 64)] {
        for tick in [1_000_000u64, 4_000_000] {
            let (mean, max, coarse, fine, bound) = error(rate, bytes, tick);
            eprintln!(
                "{:>5.0} Mbit/s, {bytes:>4} B packets, {} ms jiffy: |coarse - fine| / rate mean {:.4}%, max {:.4}%; off the rate: coarse {:.4}% (bound {:.3}%), fine {:.4}%",
                rate / 1e6,
                tick / 1_000_000,
                100.0 * mean,
                100.0 * max,
                100.0 * coarse,
                100.0 * bound,
                100.0 * fine
            );
            // Plus the fixed-point rounding of the updates (a quarter of a percent).
            assert!(
                coarse <= bound + 2.5e-3,
                "{rate} {bytes} {tick}: {coarse} > {bound}"
            );
        }
    }
}
