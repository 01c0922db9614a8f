//! MAY under an unresponsive flow at once and five times the link, on the dataplane's
//! namespace setup (`csfq dp twin`'s graph: four CUBIC TCPs and a UDP through a 20 Mbit/s
//! bottleneck with a 64 KiB buffer, microsecond links).
//!
//! The paper's controller (`v += kappa (utilization - u0)`) winds up in the UDP's first
//! intervals, before its `delta` has grown: at five times the link it reaches about 0.8 in
//! two, and takes some fifteen intervals to come down, while every TCP in the table is
//! dropped with probability `v delta`. `v`'s ceiling (`csfq_algo::may`, "v's ceiling", the
//! default) holds `v` at the value that drops every packet of the flow with the most past
//! drops. Judged over seconds 10-18 of 20, after MAY's warm-up, as the namespace test
//! judges it: the link at least 90% used and each TCP at least half its max-min share (the
//! suite's floor for a TCP beside a hog; 4 Mbit/s of 20 among five flows). The paper's
//! controller on the same runs is the contrast: at 5x it must leave the link under half
//! used, or this test no longer exercises the windup it guards against.

use std::path::Path;

use csfq_sim::{Scenario, ScenarioFile, Simulation};

const LINK_MBPS: f64 = 20.0;

fn scenario(udp_times_link: f64, ceiling: &str, seed: u64) -> Scenario {
    let text = format!(
        r#"name = "may-hog"
duration_s = 20
seed = {seed}
discipline = "may"
sample_interval_ms = 1000
routers = ["edge", "core"]

[may]
ceiling = "{ceiling}"

[tcp]
segment_bytes = 1514
ack_bytes = 66
max_window_segments = 4096
initial_window_segments = 10
min_rto_ms = 200
initial_rto_ms = 1000
sack = true
congestion_control = "cubic"

[[link]]
between = ["edge", "core"]
rate_mbps = {LINK_MBPS}
delay_ms = 0.01
buffer_bytes = 65536

[[flow]]
kind = "udp"
from = "edge"
to = "core"
rate_mbps = {udp}
packet_bytes = 1490
access = {{ rate_mbps = 10000, delay_ms = 0.01 }}

[[flow]]
kind = "tcp"
from = "edge"
to = "core"
count = 4
packet_bytes = 1000
access = {{ rate_mbps = 10000, delay_ms = 0.01 }}
"#,
        udp = LINK_MBPS * udp_times_link
    );
    ScenarioFile::parse(&text, Path::new("may-hog.toml")).unwrap()
}

/// Each flow's mean throughput over seconds 10-18, Mbit/s (the UDP first).
fn late_mbps(s: &Scenario) -> Vec<f64> {
    let r = Simulation::new(s).unwrap().run();
    r.flows
        .iter()
        .map(|f| f.series_mbps[10..18].iter().sum::<f64>() / 8.0)
        .collect()
}

#[test]
fn the_ceiling_keeps_the_link_full_and_the_tcps_served_beside_a_hog() {
    let share = LINK_MBPS / 5.0;
    for times in [1.0, 5.0] {
        for seed in 1..=3 {
            let x = late_mbps(&scenario(times, "heaviest", seed));
            let link: f64 = x.iter().sum();
            assert!(
                link >= 0.9 * LINK_MBPS,
                "{times}x, seed {seed}: the link carried {link:.2} Mbit/s: {x:?}"
            );
            for (i, tcp) in x[1..].iter().enumerate() {
                assert!(
                    *tcp >= 0.5 * share,
                    "{times}x, seed {seed}: TCP {i} at {tcp:.2} Mbit/s: {x:?}"
                );
            }
            let paper = late_mbps(&scenario(times, "none", seed));
            let paper_link: f64 = paper.iter().sum();
            eprintln!(
                "{times}x, seed {seed}: with the ceiling {x:.2?} (link {link:.2}), the \
                 paper's controller {paper:.2?} (link {paper_link:.2})"
            );
            if times == 5.0 {
                assert!(
                    paper_link < 0.5 * LINK_MBPS,
                    "5x, seed {seed}: the paper's controller left the link {paper_link:.2} \
                     used: the windup this test guards against did not happen: {paper:?}"
                );
            }
        }
    }
}
