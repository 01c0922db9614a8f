//! Scenario tests for edge-to-edge overlay loops against the overlay paper's claims
//! (Section 7), each with its reference and tolerance. Interior routers are FIFO in every
//! run. Where ours departs from a published number the report (`csfq reproduce --all`) says
//! so and why; these tests hold what we stand by.

use csfq_algo::alpha_fair::{linear_network_min_delay, linear_network_proportional};
use csfq_papers::experiments::{dumbbell, find, leased, linear, without_loops};
use csfq_sim::observe::report::FlowReport;
use csfq_sim::{ScenarioFile, SimReport, Simulation};

fn run(s: &ScenarioFile) -> SimReport {
    Simulation::new(&s.check().unwrap()).unwrap().run()
}

/// A flow's mean throughput over the samples from `from_s` on, Mbit/s.
fn late(f: &FlowReport, r: &SimReport, from_s: f64) -> f64 {
    let skip = (from_s / r.sample_interval_s).round() as usize;
    let xs = &f.series_mbps[skip..];
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn network_drops(r: &SimReport) -> u64 {
    r.links.iter().map(|l| l.dropped_pkts).sum()
}

/// Fig. 8: the UDP's excess stays at its own ingress and the TCP gets its fair share
/// (10 of the 20 Mbps, ±10%); nothing is lost inside the network. Without loops the same
/// FIFO network gives the TCP under 1 Mbps (the reference the loops are judged against).
#[test]
fn loops_hold_a_udp_to_its_share_at_its_own_ingress() {
    let s = find("overlay-fig8").unwrap().scenario();
    let r = run(&s);
    let (udp, tcp) = (late(&r.flows[0], &r, 10.0), late(&r.flows[1], &r, 10.0));
    assert!((tcp / 10.0 - 1.0).abs() < 0.1, "tcp {tcp}");
    assert!((udp / 10.0 - 1.0).abs() < 0.1, "udp {udp}");
    assert_eq!(network_drops(&r), 0);
    assert!(r.loops[0].ingress_drops > 0);
    assert_eq!(r.loops[0].network_lost_bytes, 0);
    assert_eq!(r.loops[0].control_lost + r.loops[0].feedback_lost, 0);
    let fifo = run(&without_loops(&s));
    assert!(late(&fifo.flows[1], &fifo, 10.0) < 1.0);
}

/// Fig. 6 with M = 3: the long loop's throughput lies between the proportional-fair
/// C/(1+MK) = 7.69 and the min-potential-delay C/(1+K sqrt M) = 12.6 Mbps (closed forms,
/// also computed by `Topology::alpha_fair_allocation`), every bottleneck carries at least
/// 95% of its capacity as goodput, and no packet is lost inside the network.
#[test]
fn the_long_loop_lies_between_proportional_and_min_delay_fairness() {
    let s = linear(3);
    let topo = csfq_sim::Topology::build(&s.check().unwrap()).unwrap();
    let pf = linear_network_proportional(100.0, 3, 4);
    let md = linear_network_min_delay(100.0, 3, 4);
    assert!((topo.alpha_fair_allocation(1.0)[0] / 1e6 / pf - 1.0).abs() < 1e-9);
    assert!((topo.alpha_fair_allocation(2.0)[0] / 1e6 / md - 1.0).abs() < 1e-9);
    let r = run(&s);
    let x: Vec<f64> = r.flows.iter().map(|f| late(f, &r, 10.0)).collect();
    assert!(x[0] > pf && x[0] < md, "long {} not in ({pf}, {md})", x[0]);
    for link in 0..3 {
        let load = x[0] + x[1 + 4 * link..5 + 4 * link].iter().sum::<f64>();
        assert!(load > 95.0, "link {link}: {load}");
    }
    assert_eq!(network_drops(&r), 0);
}

/// Fig. 10 with b = 0.5: the quasi-leased line carries its 50 Mbps (at least 98%) with no
/// packet lost, and best effort backs off to the remaining 50 Mbps (±10%).
#[test]
fn a_quasi_leased_line_gets_its_rate_without_loss() {
    let r = run(&leased(0.5));
    let (be, qll) = (late(&r.flows[0], &r, 3.0), late(&r.flows[1], &r, 3.0));
    assert!(qll >= 0.98 * 50.0, "leased {qll}");
    assert_eq!(r.flows[1].dropped_pkts, 0);
    assert!((be / 50.0 - 1.0).abs() < 0.1, "best effort {be}");
    assert_eq!(network_drops(&r), 0);
}

/// Fig. 9: the assured loop keeps its assurance (at least its 4 Mbps) and gets more than
/// the best-effort UDP loop. (The paper's 7 Mbps assumes the cut is taken from the input
/// rate; see the report for why AIMD-ER's cut from the output rate gives less.)
#[test]
fn an_assured_loop_keeps_its_assurance_and_more_than_best_effort() {
    let s = find("overlay-fig9").unwrap().scenario();
    let r = run(&s);
    let (udp, tcp) = (late(&r.flows[0], &r, 10.0), late(&r.flows[1], &r, 10.0));
    assert!(tcp > 4.0 && tcp > udp, "tcp {tcp}, udp {udp}");
    assert!(tcp + udp > 9.5, "tcp {tcp} + udp {udp}");
}

/// Fig. 7: spreading 500 TCP flows over 10 loops cuts the spread of their goodputs (CoV)
/// at least in half against plain FIFO everywhere (the paper: from up to 4 to 1.2).
#[test]
fn loops_narrow_the_spread_of_tcp_goodput() {
    let cov = |r: &SimReport| {
        let x: Vec<f64> = r.flows.iter().map(|f| f.throughput_mbps).collect();
        let m = x.iter().sum::<f64>() / x.len() as f64;
        let v = x.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / x.len() as f64;
        v.sqrt() / m
    };
    let plain = cov(&run(&dumbbell(0, 500, false)));
    let looped = cov(&run(&dumbbell(10, 500, false)));
    assert!(
        looped < plain / 2.0,
        "CoV {looped} with loops, {plain} without"
    );
}
