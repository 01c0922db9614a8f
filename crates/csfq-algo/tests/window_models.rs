//! CSFQ's fair-share estimation is written twice in Rust: in floating point
//! (`csfq::FairShareEstimator`, what the simulator runs) and in the dataplane's integer
//! arithmetic (`fixed::FixedCore`, which the eBPF core is tested against packet by packet
//! on shared vectors). Here both see the same arrivals and the same random draws, each
//! with its own FIFO served at `C`, and must settle on the same fair share: the max-min
//! share of the offered rates (water-filling), within 5%, and within 3% of each other.

use csfq_algo::csfq::{CsfqParams, Estimator, FairShareEstimator};
use csfq_algo::fixed::{tables, Arrival, FixedCore, FixedCoreParams, FixedVerdict};
use csfq_algo::maxmin::{water_fill, MaxMinFlow};
use csfq_algo::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

const C: f64 = 10e6;
const BUFFER: u32 = 64_000;
const SIZE: u32 = 1000;
const SECS: f64 = 20.0;

/// A FIFO served at `C`: the bytes still to send at `now`.
struct Fifo {
    finish_ns: u64,
}

impl Fifo {
    fn backlog(&self, now: u64) -> u32 {
        (self.finish_ns.saturating_sub(now) as f64 * C / 8e9) as u32
    }

    /// Takes `bytes` unless the buffer is full; whether it took them.
    fn offer(&mut self, now: u64, bytes: u32) -> bool {
        if self.backlog(now) + bytes > BUFFER {
            return false;
        }
        self.finish_ns = self.finish_ns.max(now) + (f64::from(bytes) * 8e9 / C) as u64;
        true
    }
}

/// Mean `alpha` over the second half of the run, float and fixed, for 10 flows offering
/// `rates` (bits/s) of periodic 1000-byte packets labeled with their rates.
fn settle(estimator: Estimator, rates: &[f64]) -> (f64, f64) {
    let params = CsfqParams {
        estimator,
        ..CsfqParams::new(C, BUFFER)
    };
    let fixed = FixedCoreParams {
        capacity_bps: C as u64,
        k_alpha_ns: params.k_alpha.0,
        k_c_ns: params.k_c.0,
        threshold_bytes: params.threshold_bytes,
        overflow_budget: params.overflow_budget,
        estimator,
    };
    let mut float = FairShareEstimator::new(params);
    let mut int = FixedCore::new(&fixed);
    let (mut qf, mut qi) = (Fifo { finish_ns: 0 }, Fifo { finish_ns: 0 });
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    // Each flow's next packet, staggered so they do not arrive in step.
    let gap: Vec<u64> = rates
        .iter()
        .map(|r| (f64::from(SIZE) * 8e9 / r) as u64)
        .collect();
    let mut next: Vec<u64> = gap.iter().map(|g| rng.random_range(0..*g)).collect();
    let end = (SECS * 1e9) as u64;
    let (mut sum_f, mut sum_i, mut n) = (0.0, 0.0, 0u64);
    loop {
        let (i, &now) = next.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
        if now >= end {
            break;
        }
        next[i] += gap[i];
        let label = rates[i];
        let draw: u32 = rng.random();
        // Floating point: Eq. (2) with the same draw, then the FIFO.
        let drop = f64::from(draw) < float.drop_probability(label) * 4_294_967_296.0;
        let backlog = qf.backlog(now);
        float.on_arrival(label, SIZE, Nanos(now), drop, backlog);
        if !drop && !qf.offer(now, SIZE) {
            float.on_overflow();
        }
        // Integers: the same arrival.
        let backlog = qi.backlog(now);
        let v = int.on_arrival(
            tables(),
            &fixed,
            &Arrival {
                now_ns: now,
                bytes: SIZE,
                label_bps: label as u64,
                queue_bytes: backlog,
                draw,
            },
        );
        if matches!(v, FixedVerdict::Forward(_)) && !qi.offer(now, SIZE) {
            int.on_overflow();
        }
        if now >= end / 2 {
            sum_f += float.alpha();
            sum_i += int.alpha_bps as f64;
            n += 1;
        }
    }
    (sum_f / n as f64, sum_i / n as f64)
}

#[test]
fn float_and_integer_estimators_settle_on_the_max_min_share() {
    // Flow i offers i x 20/55 Mbit/s: 20 Mbit/s in all on a 10 Mbit/s link.
    let rates: Vec<f64> = (1..=10).map(|i| i as f64 * 20e6 / 55.0).collect();
    let flows: Vec<MaxMinFlow> = rates
        .iter()
        .map(|&r| MaxMinFlow {
            demand: r,
            weight: 1.0,
            links: vec![0],
        })
        .collect();
    let share = water_fill(&[C], &flows).unwrap();
    let fair = share.iter().cloned().fold(0.0, f64::max);
    for estimator in [Estimator::Paper, Estimator::Histogram] {
        let (f, i) = settle(estimator, &rates);
        println!("{estimator:?}: max-min {fair:.0}, float {f:.0}, integer {i:.0}");
        assert!(
            (f / fair - 1.0).abs() < 0.05,
            "{estimator:?}: float {f} vs {fair}"
        );
        assert!(
            (i / fair - 1.0).abs() < 0.05,
            "{estimator:?}: integer {i} vs {fair}"
        );
        assert!(
            (f / i - 1.0).abs() < 0.03,
            "{estimator:?}: float {f} vs integer {i}"
        );
    }
}
