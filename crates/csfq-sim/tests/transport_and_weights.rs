//! Whole-network checks of the transport models and of weighted CSFQ, each against an
//! independent oracle (the link capacity, the weighted water-filling allocation).

use std::path::Path;

use csfq_sim::{Scenario, ScenarioFile, Simulation, Topology};

fn scenario(text: &str) -> Scenario {
    ScenarioFile::parse(text, Path::new("test.toml")).unwrap()
}

fn tcp_dumbbell(n: u32, discipline: &str, tcp: &str) -> Scenario {
    scenario(&format!(
        r#"
name = "tcp"
duration_s = 20.0
discipline = "{discipline}"
routers = ["a", "b"]
[tcp]
{tcp}
[[link]]
between = ["a", "b"]
rate_mbps = 10
delay_ms = 5
[[flow]]
kind = "tcp"
from = "a"
to = "b"
count = {n}
access = {{ rate_mbps = 100, delay_ms = 1 }}
"#
    ))
}

/// One TCP flow alone fills a 10 Mbps link: goodput at least 90% of capacity, whatever the
/// loss-recovery options.
#[test]
fn single_tcp_fills_the_link() {
    for opts in [
        "",
        "sack = true",
        "delayed_ack = true",
        "sack = true\ndelayed_ack = true",
    ] {
        let r = Simulation::new(&tcp_dumbbell(1, "fifo", opts))
            .unwrap()
            .run();
        let goodput = r.flows[0].throughput_mbps;
        // Payload share of the wire is 100%: segments are counted at their wire size.
        assert!(goodput > 9.0, "[{opts}] goodput {goodput}");
        assert!(goodput <= 10.0 + 1e-9);
    }
}

/// Eight TCP flows through a drop-tail bottleneck: the link stays busy, losses are
/// recovered (every flow delivers), and SACK needs no more timeouts than NewReno.
#[test]
fn competing_tcps_recover_losses() {
    let mut timeouts = Vec::new();
    for opts in ["", "sack = true"] {
        let r = Simulation::new(&tcp_dumbbell(8, "fifo", opts))
            .unwrap()
            .run();
        assert!(
            r.links[0].utilization > 0.9,
            "[{opts}] utilization {}",
            r.links[0].utilization
        );
        let drops: u64 = r.flows.iter().map(|f| f.dropped_pkts).sum();
        assert!(
            drops > 0,
            "a 64 KB drop-tail buffer must overflow under 8 TCPs"
        );
        for f in &r.flows {
            assert!(
                f.throughput_mbps > 0.3,
                "[{opts}] flow {} starved: {}",
                f.flow,
                f.throughput_mbps
            );
            assert!(f.retransmits > 0 || f.dropped_pkts == 0);
        }
        timeouts.push(r.flows.iter().map(|f| f.timeouts).sum::<u64>());
    }
    assert!(
        timeouts[1] <= timeouts[0],
        "SACK {} vs NewReno {} timeouts",
        timeouts[1],
        timeouts[0]
    );
}

/// Weighted CSFQ (Section 2.3): three UDP flows of weights 1, 2, 3, each offering 10 Mbps
/// on a 10 Mbps link, get within 10% of the weighted max-min shares 10/6 x (1, 2, 3).
#[test]
fn weighted_csfq_matches_weighted_water_filling() {
    let mut text = String::from(
        r#"
name = "weighted"
duration_s = 10.0
discipline = "csfq"
routers = ["a", "b"]
[[link]]
between = ["a", "b"]
rate_mbps = 10
"#,
    );
    for w in [1, 2, 3] {
        text += &format!(
            "[[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 10\nweight = {w}\naccess = {{ rate_mbps = 100, delay_ms = 1 }}\n"
        );
    }
    let s = scenario(&text);
    let fair = Topology::build(&s).unwrap().max_min_allocation();
    for (i, w) in [1.0, 2.0, 3.0].iter().enumerate() {
        assert!((fair[i] - 10e6 / 6.0 * w).abs() < 1.0, "oracle {fair:?}");
    }
    let r = Simulation::new(&s).unwrap().run();
    for (f, a) in r.flows.iter().zip(&fair) {
        let dev = f.throughput_mbps * 1e6 / a - 1.0;
        assert!(
            dev.abs() < 0.10,
            "flow {} (weight {}): {:.3} Mbps vs {:.3} ({:+.1}%)",
            f.flow,
            f.weight,
            f.throughput_mbps,
            a / 1e6,
            dev * 100.0
        );
    }
}

/// An ON-OFF source delivers its mean rate when nothing congests it.
#[test]
fn onoff_source_sends_its_mean_rate() {
    let s = scenario(
        r#"
name = "onoff"
duration_s = 60.0
discipline = "fifo"
routers = ["a", "b"]
[[link]]
between = ["a", "b"]
rate_mbps = 10
[[flow]]
kind = "onoff"
from = "a"
to = "b"
rate_mbps = 4
on_ms = 100
off_ms = 300
"#,
    );
    let r = Simulation::new(&s).unwrap().run();
    let got = r.flows[0].throughput_mbps;
    assert!(
        (got / 1.0 - 1.0).abs() < 0.1,
        "mean of 4 Mbps x 1/4 duty: {got}"
    );
    assert_eq!(r.flows[0].dropped_pkts, 0);
}
