//! Scenario tests for MAY, LAS and adaptive RED against the MAY paper's claims, each with
//! its reference and tolerance. Where ours departs from a published number the report
//! (`csfq reproduce --all`) says so and why; these tests hold what we stand by.

use csfq_algo::maxmin::jain_index;
use csfq_algo::may::SamplingModel;
use csfq_papers::experiments::{find, may_sampling};
use csfq_sim::{DisciplineKind, ScenarioFile, SimReport, Simulation};
use std::path::Path;

use DisciplineKind::*;

fn run(s: &ScenarioFile) -> SimReport {
    Simulation::new(&s.check().unwrap()).unwrap().run()
}

fn mean_fct(r: &SimReport) -> f64 {
    r.fct_buckets().last().unwrap().mean_s
}

/// may-fig9's ordering: LAS (stateful) finishes short transfers fastest, MAY next, and
/// MAY's mean completion time is below adaptive RED's and DRR's (published 1.26 < 1.72 <
/// 8.14, 10.34 s). Reference: the paper's ordering; every transfer must finish.
#[test]
fn may_finishes_short_transfers_before_red_and_drr() {
    let base = find("may-fig9").unwrap().scenario();
    let fct: Vec<(DisciplineKind, f64)> = [Las, May, Ared, Drr]
        .into_iter()
        .map(|d| {
            let r = run(&base.with_discipline(d));
            assert_eq!(r.fct_buckets().last().unwrap().unfinished, 0, "{d}");
            (d, mean_fct(&r))
        })
        .collect();
    let [(_, las), (_, may), (_, red), (_, drr)] = fct[..] else {
        unreachable!()
    };
    assert!(las < may, "{fct:?}");
    assert!(may < red && may < drr, "{fct:?}");
}

/// may-fig8 below the fair share: a 1 Mbit/s CBR among 19 TCPs on 40 Mbit/s (fair share
/// 2) loses under 1% of its packets under MAY (Theorem 3.2: lossless below 1/v). Two
/// minutes, the first discarded.
#[test]
fn may_spares_a_cbr_below_its_fair_share() {
    let mut s = find("may-fig8").unwrap().scenario();
    s.duration_s = 120.0;
    s.flows[0].get_mut().rate_mbps = Some(1.0);
    let r = run(&s);
    let cbr = &r.flows[0].series_mbps[60..];
    let got = cbr.iter().sum::<f64>() / cbr.len() as f64;
    assert!(got > 0.99, "CBR got {got} of 1 Mbit/s");
}

/// may-fig7 under DRR: Jain's index of throughput over the max-min share (computed by the
/// water-filling oracle, 0.5 and 1 Mbit/s), averaged over seeds 1-8, is within 0.03 of the
/// published 0.987, and no seed falls below 0.9. The seed reaches this run only through
/// DRR's tie-breaks between equally long queues when it pushes a packet out, so the spread
/// over seeds is that of the tie-break draws, which one published run does not pin down.
#[test]
fn drr_is_max_min_fair_across_three_bottlenecks() {
    let base = find("may-fig7").unwrap().scenario().with_discipline(Drr);
    let mut indices = Vec::new();
    for seed in 1..=8 {
        let mut s = base.clone();
        s.seed = seed;
        let sim = Simulation::new(&s.check().unwrap()).unwrap();
        let fair = sim.topology().max_min_allocation();
        let mut shares: Vec<f64> = fair.iter().map(|a| a / 1e6).collect();
        shares.sort_by(f64::total_cmp);
        shares.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        assert_eq!(shares, vec![0.5, 1.0]);
        let r = sim.run();
        let x: Vec<f64> = r
            .flows
            .iter()
            .zip(&fair)
            .map(|(f, a)| f.throughput_mbps * 1e6 / a)
            .collect();
        indices.push(jain_index(&x));
    }
    let mean = indices.iter().sum::<f64>() / indices.len() as f64;
    assert!(
        (mean - 0.987).abs() <= 0.03,
        "mean Jain {mean}: {indices:?}"
    );
    assert!(indices.iter().all(|&j| j > 0.9), "{indices:?}");
}

/// may-fig2/3: the real MAY queue's sampling agrees with the paper's model counted in
/// whole packets (within 4 binomial standard errors), and meets the published claims:
/// more than 98% of short flows lossless at S0 = 500, 99% at S0 = 1000 (less 0.001 of
/// sampling error), about 1 bit per flow at S0 = 1000.
#[test]
fn may_sampling_matches_its_model_and_the_papers_claims() {
    for (k, s0) in [(1.25, 500.0), (2.0, 1000.0)] {
        let n = 100_000;
        let sim = may_sampling(3, k, 10.0, s0, n);
        let model = SamplingModel {
            shape: k,
            mean_pkts: 10.0,
            s0,
            whole_packets: true,
        };
        let h = model.hashed_share();
        let se = (h * (1.0 - h) / n as f64).sqrt();
        assert!(
            (sim.hashed_share - h).abs() < 4.0 * se,
            "k {k} S0 {s0}: simulated {} model {h}",
            sim.hashed_share
        );
        let bound = if s0 >= 1000.0 { 0.99 } else { 0.98 };
        assert!(sim.lossless_short_share > bound - 0.001, "{sim:?}");
        if s0 == 1000.0 {
            let bits = sim.hashed_share * 80.0;
            assert!((0.5..2.0).contains(&bits), "{bits} bits per flow");
        }
    }
}

/// MAY's table is reported over time and bounded by its capacity: a table of 8 entries
/// on may-fig5 never holds more than 8, and refuses inserts once full.
#[test]
fn may_table_is_reported_and_bounded() {
    let mut s = find("may-fig5").unwrap().scenario().with_discipline(May);
    s.duration_s = 20.0;
    s.may.table_capacity = 8;
    s.may.s0 = 10.0;
    let r = run(&s);
    let link = r.links.iter().find(|l| l.from == "r1").unwrap();
    let m = link.may.expect("a MAY link reports its table");
    assert_eq!(link.table_entries.len(), 20);
    assert!(link.table_entries.iter().all(|&n| n <= 8));
    assert_eq!(m.peak_entries, 8);
    assert_eq!(m.peak_bytes, 80);
    assert!(m.refused_full > 0);
}

/// Bad `[may]` parameters name the file, the line of the key and the field.
#[test]
fn bad_may_parameters_point_at_their_line() {
    let text = std::fs::read_to_string("../../scenarios/may-fig5.toml").unwrap();
    for (line, field) in [
        ("target_utilization = 1.5", "may.target_utilization"),
        ("q_w = 0", "may.q_w"),
        ("s0 = 0.5", "may.s0"),
        ("table_capacity = 0", "may.table_capacity"),
        ("update_interval_ms = -1", "may.update_interval_ms"),
    ] {
        let bad = format!("{text}\n[may]\ngain = 0.1\n{line}\n");
        let e = ScenarioFile::parse(&bad, Path::new("bad.toml")).unwrap_err();
        let want = bad.lines().position(|l| l == line).unwrap() + 1;
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert_eq!(e.line, want, "{e}");
        assert!(
            e.to_string().starts_with(&format!("bad.toml:{want}:1:")),
            "{e}"
        );
    }
}

/// The MAY scenarios' round-trip times: flow j of may-fig5 has access links of
/// 9.5 + j * 1.0101 ms each side, so RTT 40 + j * 4.04 ms (40 .. 440 ms over 100 flows);
/// may-fig9's transfers start one per second from 20 s with sizes in 1..=1000.
#[test]
fn heterogeneous_delays_and_periodic_transfers() {
    let s = find("may-fig5").unwrap().scenario();
    let t = csfq_sim::Topology::build(&s.check().unwrap()).unwrap();
    let rtt = |f: usize| {
        let d: u64 = t
            .fwd_ports(f)
            .chain(t.rev_ports(f))
            .map(|p| t.ports[p].delay.0)
            .sum();
        d as f64 / 1e6
    };
    assert!((rtt(0) - 40.0).abs() < 1e-6);
    assert!((rtt(99) - 440.0).abs() < 1e-6);
    let s = find("may-fig9").unwrap().scenario();
    let t = csfq_sim::Topology::build(&s.check().unwrap()).unwrap();
    let web: Vec<_> = t.flows.iter().filter(|f| f.size_pkts.is_some()).collect();
    assert_eq!(web.len(), 250);
    for (j, f) in web.iter().enumerate() {
        assert_eq!(f.start.0, (20 + j as u64) * 1_000_000_000);
        assert!((1..=1000).contains(&f.size_pkts.unwrap()));
    }
}
