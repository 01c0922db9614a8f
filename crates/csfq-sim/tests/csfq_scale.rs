//! CSFQ at the scale of a modern network: a 1 Gbit/s bottleneck shared by a thousand
//! flows, step changes in the number of flows, and a 10 Gbit/s link with a small buffer.
//! References: the max-min fair share (water-filling, `csfq_algo::maxmin::fair_share`)
//! for constant-rate flows; `C / N` for the UDP flow among long-lived TCPs (which can all
//! reach it); FIFO on the same scenario where the link is not congested.

use std::path::Path;

use csfq_algo::maxmin::{fair_share, jain_index};
use csfq_sim::config::EstimatorKind;
use csfq_sim::observe::report::LinkReport;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, SimReport, Simulation};

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../scenarios/{name}.toml"));
    ScenarioFile::load(&path).expect("shipped scenario")
}

fn run(s: &Scenario) -> SimReport {
    Simulation::new(s).expect("valid").run()
}

fn with_estimator(s: Scenario, e: EstimatorKind) -> Scenario {
    s.variant(|s| s.csfq.estimator = e).unwrap()
}

fn bottleneck(r: &SimReport) -> &LinkReport {
    r.links
        .iter()
        .find(|l| l.from == "r1" && l.to == "r2")
        .expect("r1 -> r2")
}

/// The mean of a flow's throughput series over `[from_s, to_s)`, Mbit/s.
fn mean_over(r: &SimReport, flow: usize, from_s: f64, to_s: f64) -> f64 {
    let dt = r.sample_interval_s;
    let s = &r.flows[flow].series_mbps;
    let (a, b) = ((from_s / dt).round() as usize, (to_s / dt).round() as usize);
    s[a..b.min(s.len())].iter().sum::<f64>() / (b.min(s.len()) - a) as f64
}

/// scale-1000 (1 UDP at 1 Gbit/s, 999 TCP, 1 Gbit/s link; fair share C/N = 1 Mbit/s), with
/// the label-histogram estimator: from 1 s on the UDP gets at most twice its share, TCP
/// Jain >= 0.95, utilization >= 98%. The first second is left out and bounded separately:
/// all 999 TCPs start together, their first windows overflow the buffer, and they wait
/// out a 200 ms retransmission timeout while the UDP has the idle link to itself (it takes
/// about 190 Mbit/s over that second). Before the fixes to the paper's estimator the UDP
/// still had 12-100 Mbit/s in seconds 2-5.
#[test]
fn scale_1000_udp_held_to_its_share() {
    let r = run(&scenario("scale-1000"));
    let udp_after_1s = mean_over(&r, 0, 1.0, 10.0);
    assert!(udp_after_1s <= 2.0, "UDP {udp_after_1s} Mbit/s from 1 s on");
    let first = mean_over(&r, 0, 0.0, 1.0);
    assert!(first <= 300.0, "UDP {first} Mbit/s in the first second");
    let tcp: Vec<f64> = r.flows[1..].iter().map(|f| f.throughput_mbps).collect();
    assert!(jain_index(&tcp) >= 0.95, "TCP Jain {}", jain_index(&tcp));
    let u = bottleneck(&r).utilization;
    assert!(u >= 0.98, "utilization {u}");
}

/// The same with the paper's estimator (its constants scaled to the link: K_c = 16 ms):
/// after the overflow-budget fix it also holds the UDP from 1 s on.
#[test]
fn scale_1000_paper_estimator_after_the_fixes() {
    let r = run(&with_estimator(
        scenario("scale-1000"),
        EstimatorKind::Paper,
    ));
    let udp_after_1s = mean_over(&r, 0, 1.0, 10.0);
    assert!(udp_after_1s <= 2.0, "UDP {udp_after_1s} Mbit/s from 1 s on");
    let tcp: Vec<f64> = r.flows[1..].iter().map(|f| f.throughput_mbps).collect();
    assert!(jain_index(&tcp) >= 0.95, "TCP Jain {}", jain_index(&tcp));
}

/// scale-cbr-step: 1000 constant-rate flows at 2 Mbit/s, 500 more at 5 s. From 1 s after
/// each change, every sample of alpha is within 10% of the water-filling fair share
/// (1 Mbit/s, then 2/3 Mbit/s), with either estimator.
#[test]
fn alpha_follows_a_step_within_one_second() {
    for e in [EstimatorKind::Histogram, EstimatorKind::Paper] {
        let r = run(&with_estimator(scenario("scale-cbr-step"), e));
        let link = bottleneck(&r);
        let dt = r.sample_interval_s;
        let before = fair_share(&[2.0; 1000], 1000.0);
        let after = fair_share(&[2.0; 1500], 1000.0);
        for (i, &a) in link.alpha_mbps.iter().enumerate() {
            let t = (i + 1) as f64 * dt;
            let want = match t {
                t if (1.0..5.0).contains(&t) => before,
                t if t >= 6.0 => after,
                _ => continue,
            };
            assert!(
                (a / want - 1.0).abs() < 0.10,
                "{e:?}: alpha {a} at {t:.1} s vs fair share {want}"
            );
        }
    }
}

/// scale-udp-step and scale-tcp-step: 999 TCPs, then the UDP starts at 5 s, or 500 more
/// TCPs join the UDP at 5 s. From 1 s after the step the UDP gets at most twice its fair
/// share C/N (1 Mbit/s with 1000 flows, 2/3 with 1500).
#[test]
fn udp_held_within_one_second_of_a_step() {
    let r = run(&scenario("scale-udp-step"));
    let udp = mean_over(&r, 0, 6.0, 10.0);
    assert!(udp <= 2.0 * 1.0, "UDP start: {udp} Mbit/s from 6 s on");
    let r = run(&scenario("scale-tcp-step"));
    let udp = mean_over(&r, 0, 6.0, 10.0);
    assert!(
        udp <= 2.0 * 1000.0 / 1500.0,
        "TCP step: {udp} Mbit/s from 6 s on"
    );
}

/// small-buffer-10g: 2 TCP and a 5 Mbit/s UDP on a 10 Gbit/s link with a 64 KB buffer
/// behind 100 Gbit/s access links use 2% of it. CSFQ must not drop there: the TCPs get
/// what FIFO gives them, within 1%, and CSFQ drops nothing. (With the paper's 100 ms
/// constants a single burst that crossed the threshold kept `alpha` at the burst's
/// largest label for 100 ms, and growing TCPs were dropped on an idle link; the scaled
/// constants give K_c = 1 ms here.)
#[test]
fn small_buffer_fast_link_is_not_policed_when_idle() {
    let s = scenario("small-buffer-10g");
    let fifo = run(&s.clone().with_discipline(DisciplineKind::Fifo));
    for e in [EstimatorKind::Histogram, EstimatorKind::Paper] {
        let r = run(&with_estimator(s.clone(), e));
        for f in 1..3 {
            let (got, want) = (r.flows[f].throughput_mbps, fifo.flows[f].throughput_mbps);
            assert!(
                (got / want - 1.0).abs() < 0.01,
                "{e:?}: TCP {f} {got} vs FIFO {want}"
            );
        }
        let probabilistic: u64 = r
            .flows
            .iter()
            .flat_map(|f| &f.drops)
            .filter(|(why, _)| *why == "csfq_prob")
            .map(|(_, n)| n)
            .sum();
        assert_eq!(probabilistic, 0, "{e:?}");
    }
}
