//! Scenario tests: the CSFQ paper's single-link experiments (Section 3.1), with the
//! tolerances stated in each test. Full-length runs (10 simulated seconds); each takes
//! well under a second.

use csfq_papers::experiments::{fig4_with, find};
use csfq_sim::{DisciplineKind, SimReport, Simulation, Topology};

fn run(id: &str, d: DisciplineKind, seed: u64) -> SimReport {
    let mut s = find(id).unwrap().scenario().with_discipline(d);
    s.seed = seed;
    Simulation::new(&s.check().unwrap()).unwrap().run()
}

const FAIR: f64 = 0.3125; // 10 Mbps / 32 flows

/// csfq-fig3a, CSFQ: every flow's throughput, averaged over 5 seeds, within -15%..+10% of
/// the fair share (the paper reports -11%..+5% for its single run).
///
/// Why the band applies to the mean: one 10-second run has sampling noise. Flow i offers
/// (i+1) x 390 packets and CSFQ accepts each with probability ~1/(i+1), so the accepted count
/// has a binomial standard deviation of ~4% of the fair share; measured per-run RMS deviation
/// is 3.9-5.1% over seeds 1-10, and the worst of 32 flows in one run reaches +6..+15%. The
/// per-run bound below (RMS under 6%) checks that noise separately.
#[test]
fn fig3a_csfq_every_flow_near_fair_share() {
    let seeds = 1..=5u64;
    let mut mean = [0.0f64; 32];
    for seed in seeds.clone() {
        let r = run("csfq-fig3a", DisciplineKind::Csfq, seed);
        let devs: Vec<f64> = r
            .flows
            .iter()
            .map(|f| f.throughput_mbps / FAIR - 1.0)
            .collect();
        let rms = (devs.iter().map(|d| d * d).sum::<f64>() / devs.len() as f64).sqrt();
        assert!(
            rms < 0.06,
            "seed {seed}: per-flow RMS deviation {:.1}%",
            rms * 100.0
        );
        for (m, d) in mean.iter_mut().zip(&devs) {
            *m += d / seeds.clone().count() as f64;
        }
        // CSFQ does not waste the link.
        assert!(
            r.links[0].utilization > 0.97,
            "utilization {}",
            r.links[0].utilization
        );
    }
    for (i, m) in mean.iter().enumerate() {
        assert!(
            (-0.15..=0.10).contains(m),
            "flow {i}: mean {:+.1}%",
            m * 100.0
        );
    }
}

/// csfq-fig3a, DRR: every flow within +-5% of the fair share, but flow 0, which sends
/// exactly its fair share: its packets pushed out of the shared 64 KB buffer (two packets
/// per flow) are lost for good and nothing makes them up, so it may fall to -8%.
#[test]
fn fig3a_drr_is_fair() {
    for seed in 1..=3 {
        let r = run("csfq-fig3a", DisciplineKind::Drr, seed);
        for f in &r.flows {
            let dev = f.throughput_mbps / FAIR - 1.0;
            let lo = if f.flow == 0 { -0.08 } else { -0.05 };
            assert!(
                (lo..=0.05).contains(&dev),
                "seed {seed} flow {}: {:+.1}%",
                f.flow,
                dev * 100.0
            );
        }
    }
}

/// csfq-fig3a, FIFO and RED: throughput proportional to the sending rate. Each flow's share
/// of the link is its share of the offered load (flow i offers (i+1)/528 of it) within
/// 20% of that share for the 24 fastest flows (the slowest send too few packets in 10 s
/// for a tight bound), and the fastest gets at least 10 times the slowest.
#[test]
fn fig3a_fifo_and_red_are_proportional_to_rate() {
    for d in [DisciplineKind::Fifo, DisciplineKind::Red] {
        let r = run("csfq-fig3a", d, 1);
        let total: f64 = r.flows.iter().map(|f| f.throughput_mbps).sum();
        for f in &r.flows[8..] {
            let expected = total * (f.flow + 1) as f64 / 528.0;
            let dev = f.throughput_mbps / expected - 1.0;
            assert!(
                dev.abs() <= 0.20,
                "{d} flow {}: {:.3} vs {:.3}",
                f.flow,
                f.throughput_mbps,
                expected
            );
        }
        assert!(
            r.flows[31].throughput_mbps > 10.0 * r.flows[0].throughput_mbps,
            "{d}"
        );
    }
}

/// csfq-fig3b: the UDP flow at 10 Mbps against 31 TCPs. CSFQ <= 0.6 Mbps (paper 0.361),
/// DRR <= 0.5 (paper 0.396), FIFO and RED >= 7 (paper > 8), FRED 0.8..3.5 (paper ~1.8).
#[test]
fn fig3b_udp_is_contained_by_csfq_and_drr_only() {
    let udp = |d| run("csfq-fig3b", d, 1).flows[0].throughput_mbps;
    let csfq = udp(DisciplineKind::Csfq);
    assert!(csfq <= 0.6, "csfq {csfq}");
    let drr = udp(DisciplineKind::Drr);
    assert!(drr <= 0.5, "drr {drr}");
    for d in [DisciplineKind::Fifo, DisciplineKind::Red] {
        let u = udp(d);
        assert!(u >= 7.0, "{d} {u}");
    }
    for d in [DisciplineKind::Fred1, DisciplineKind::Fred2] {
        let u = udp(d);
        assert!((0.8..=3.5).contains(&u), "{d} {u}");
    }
}

/// csfq-fig3b under CSFQ: the TCPs share what is left about equally (Jain's index of
/// throughput over max-min share above 0.95), and the link stays busy.
#[test]
fn fig3b_csfq_tcps_share_fairly() {
    let r = run("csfq-fig3b", DisciplineKind::Csfq, 1);
    assert!(r.jain_index > 0.95, "jain {}", r.jain_index);
    assert!(r.links[0].utilization > 0.95);
}

/// csfq-fig4: CSFQ keeps the TCP flow above half its fair share 10/N for every N = 2..32.
/// DRR protects it up to N = 20 (above 0.9) and both FIFO and RED starve it at N = 32.
#[test]
fn fig4_csfq_protects_tcp_for_every_n() {
    let base = find("csfq-fig4").unwrap().scenario();
    for n in 2..=32 {
        let s = fig4_with(&base.with_discipline(DisciplineKind::Csfq), n);
        let r = Simulation::new(&s.check().unwrap()).unwrap().run();
        let norm = r.flows[0].throughput_mbps / (10.0 / n as f64);
        assert!(norm > 0.5, "N = {n}: TCP at {norm:.2} of its fair share");
    }
    for n in [2, 8, 14, 20] {
        let s = fig4_with(&base.with_discipline(DisciplineKind::Drr), n);
        let r = Simulation::new(&s.check().unwrap()).unwrap().run();
        let norm = r.flows[0].throughput_mbps / (10.0 / n as f64);
        assert!(norm > 0.9, "DRR N = {n}: {norm:.2}");
    }
    for d in [DisciplineKind::Fifo, DisciplineKind::Red] {
        let s = fig4_with(&base.with_discipline(d), 32);
        let r = Simulation::new(&s.check().unwrap()).unwrap().run();
        assert!(r.flows[0].throughput_mbps / (10.0 / 32.0) < 0.3, "{d}");
    }
}

/// Constant-rate flows through CSFQ: the per-flow throughputs approach the water-filling
/// solution of the same scenario (an oracle computed independently of the simulation).
#[test]
fn csfq_approaches_water_filling_on_udp_scenario() {
    let s = find("csfq-fig3a").unwrap().scenario();
    let fair = Topology::build(&s.check().unwrap())
        .unwrap()
        .max_min_allocation();
    let r = Simulation::new(&s.check().unwrap()).unwrap().run();
    let err: f64 = r
        .flows
        .iter()
        .zip(&fair)
        .map(|(f, a)| (f.throughput_mbps * 1e6 - a).abs() / a)
        .sum::<f64>()
        / fair.len() as f64;
    assert!(err < 0.05, "mean relative error {err}");
}

/// The same scenario and seed give byte-identical results; another seed does not.
#[test]
fn runs_are_deterministic_for_a_seed() {
    let a = run("csfq-fig3b", DisciplineKind::Csfq, 7);
    let b = run("csfq-fig3b", DisciplineKind::Csfq, 7);
    assert_eq!(a, b);
    assert_eq!(a.flows_csv(), b.flows_csv());
    let c = run("csfq-fig3b", DisciplineKind::Csfq, 8);
    assert_ne!(a.flows_csv(), c.flows_csv());
}
