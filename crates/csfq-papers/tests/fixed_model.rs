//! The dataplane's integer CSFQ (`csfq-fixed`: fixed-point Eq. 3, Q0.32 drops, labels
//! carried as 16-bit floats) held to the same tolerances as the floating-point CSFQ, and
//! close to it where both run the same scenario.

use csfq_papers::experiments::find;
use csfq_sim::{DisciplineKind, SimReport, Simulation};

fn run(id: &str, d: DisciplineKind, seed: u64) -> SimReport {
    let mut s = find(id).unwrap().scenario().with_discipline(d);
    s.seed = seed;
    Simulation::new(&s.check().unwrap()).unwrap().run()
}

fn mean_alpha(r: &SimReport) -> f64 {
    let a = &r.links[0].alpha_mbps;
    a.iter().sum::<f64>() / a.len() as f64
}

/// csfq-fig3a: per-flow means over 3 seeds within the -15%..+10% band of the float CSFQ's
/// test, per-run RMS deviation under 6%, and mean alpha within 3% of the float CSFQ's.
#[test]
fn fixed_csfq_is_fair_like_the_float_one() {
    let mut mean = [0.0f64; 32];
    for seed in 1..=3 {
        let r = run("csfq-fig3a", DisciplineKind::CsfqFixed, seed);
        let devs: Vec<f64> = r
            .flows
            .iter()
            .map(|f| f.throughput_mbps / 0.3125 - 1.0)
            .collect();
        let rms = (devs.iter().map(|d| d * d).sum::<f64>() / 32.0).sqrt();
        assert!(rms < 0.06, "seed {seed}: rms {rms}");
        for (m, d) in mean.iter_mut().zip(&devs) {
            *m += d / 3.0;
        }
        let float = run("csfq-fig3a", DisciplineKind::Csfq, seed);
        let (a, b) = (mean_alpha(&r), mean_alpha(&float));
        assert!((a / b - 1.0).abs() < 0.03, "seed {seed}: alpha {a} vs {b}");
    }
    for (i, m) in mean.iter().enumerate() {
        assert!((-0.15..=0.10).contains(m), "flow {i}: {:+.1}%", m * 100.0);
    }
}

/// csfq-fig3b: the UDP at most 0.6 Mbps, as the float CSFQ's test requires; csfq-table4: the
/// relabeled labels, carried through the 16-bit codec, still give each flow 3.33 Mbps
/// within 5% on link 2.
#[test]
fn fixed_csfq_contains_udp_and_relabels_through_the_carrier() {
    let r = run("csfq-fig3b", DisciplineKind::CsfqFixed, 1);
    assert!(
        r.flows[0].throughput_mbps <= 0.6,
        "{}",
        r.flows[0].throughput_mbps
    );
    let r = run("csfq-table4", DisciplineKind::CsfqFixed, 1);
    for f in &r.flows {
        assert!(
            (f.throughput_mbps / (10.0 / 3.0) - 1.0).abs() <= 0.05,
            "flow {}: {}",
            f.flow,
            f.throughput_mbps
        );
    }
}
