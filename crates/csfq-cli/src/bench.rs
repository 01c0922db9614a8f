//! `csfq bench`: simulator speed on csfq-fig3b and csfq-fig3a for every discipline, as events and packet
//! hops per wall-clock second, with each discipline's time as a ratio to FIFO's in the
//! same run.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use csfq_sim::experiments::find;
use csfq_sim::{DisciplineKind, ScenarioFile, SimReport, Simulation};

fn fastest(s: &ScenarioFile, repeat: u32) -> Result<(Duration, SimReport)> {
    let mut best: Option<(Duration, SimReport)> = None;
    for _ in 0..repeat {
        let sim = Simulation::new(s)?;
        let t = Instant::now();
        let r = sim.run();
        let e = t.elapsed();
        if best.as_ref().is_none_or(|b| e < b.0) {
            best = Some((e, r));
        }
    }
    Ok(best.expect("repeat >= 1"))
}

/// The scale scenario: one UDP at 1 Gbps and 999 TCP flows over a 1 Gbps link, 10 s.
pub fn large_scenario(d: DisciplineKind) -> ScenarioFile {
    let text = format!(
        r#"
name = "udp1-tcp999-1g"
description = "1 UDP at 1 Gbps and 999 TCP flows over a 1 Gbps link"
duration_s = 10.0
discipline = "{d}"
routers = ["r1", "r2"]

[[link]]
between = ["r1", "r2"]
rate_mbps = 1000
delay_ms = 1
buffer_bytes = 1000000

[[flow]]
kind = "udp"
from = "r1"
to = "r2"
rate_mbps = 1000
access = {{ rate_mbps = 10000, delay_ms = 1 }}

[[flow]]
kind = "tcp"
from = "r1"
to = "r2"
count = 999
access = {{ rate_mbps = 10000, delay_ms = 1 }}
"#
    );
    ScenarioFile::parse(&text, Path::new("udp1-tcp999-1g")).expect("valid built-in scenario")
}

/// `csfq bench`.
pub fn bench(repeat: u32, large: bool) -> Result<()> {
    let mut cases: Vec<(String, ScenarioFile)> = Vec::new();
    for id in ["csfq-fig3b", "csfq-fig3a"] {
        let base = find(id).expect("shipped experiment").scenario();
        for d in DisciplineKind::ALL {
            cases.push((format!("{id}/{d}"), base.with_discipline(d)));
        }
    }
    if large {
        for d in [DisciplineKind::Fifo, DisciplineKind::Csfq] {
            cases.push((format!("udp1-tcp999-1g/{d}"), large_scenario(d)));
        }
    }
    let mut t = crate::table(vec![
        "case",
        "wall s",
        "events",
        "Mevents/s",
        "Mpacket-hops/s",
        "simulated s per wall s",
        "time vs fifo",
    ]);
    let mut baseline: Option<f64> = None;
    for (name, s) in &cases {
        let (wall, r) = fastest(s, repeat)?;
        let w = wall.as_secs_f64();
        if name.ends_with("/fifo") {
            baseline = Some(w); // each scenario's FIFO comes first: ratios within a scenario
        }
        t.add_row(vec![
            name.clone(),
            format!("{w:.4}"),
            r.events.to_string(),
            format!("{:.2}", r.events as f64 / w / 1e6),
            format!("{:.2}", r.packet_hops as f64 / w / 1e6),
            format!("{:.1}", s.duration_s / w),
            baseline.map_or("-".into(), |b| format!("{:.2}x", w / b)),
        ]);
    }
    println!("fastest of {repeat} runs each, one core:");
    println!("{t}");
    Ok(())
}
