//! `csfq reproduce`: run a published experiment with every discipline it compares, in
//! parallel, and print our numbers beside the paper's.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use csfq_sim::experiments::{fig3b_published_udp, find, Experiment, Sweep, EXPERIMENTS};
use csfq_sim::{DisciplineKind, SimReport, Simulation, Topology};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::json;

use crate::plot::{Chart, Series};

/// `csfq reproduce --list`.
pub fn list() {
    let mut t = crate::table(vec!["id", "setup", "published result"]);
    for e in EXPERIMENTS {
        t.add_row(vec![e.id, e.setup, e.published]);
    }
    println!("{t}");
}

/// One finished run.
pub struct RunResult {
    /// Discipline.
    pub discipline: DisciplineKind,
    /// Sweep value (N for csfq-fig4; 0 otherwise).
    pub x: f64,
    /// The report.
    pub report: SimReport,
    /// Max-min fair share of each flow, bits/s.
    pub fair: Vec<f64>,
}

/// Runs every run of an experiment in parallel; results in (discipline, x) order.
pub fn run_experiment(e: &Experiment, seed: Option<u64>) -> Result<Vec<RunResult>> {
    let mut runs = Vec::new();
    for &d in e.disciplines {
        for (x, mut s) in e.runs(d) {
            if let Some(seed) = seed {
                s.seed = seed;
            }
            runs.push((d, x, s));
        }
    }
    let bar = ProgressBar::new(runs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} run {pos}/{len} [{bar:40}] {elapsed_precise}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(e.id);
    let results: Result<Vec<RunResult>> = runs
        .into_par_iter()
        .map(|(d, x, s)| {
            let fair = Topology::build(&s)?.max_min_allocation();
            let report = Simulation::new(&s)?.run();
            bar.inc(1);
            Ok(RunResult {
                discipline: d,
                x,
                report,
                fair,
            })
        })
        .collect();
    bar.finish_and_clear();
    results
}

/// Per-flow deviation from the max-min share, percent: (min, max).
fn deviation_range(r: &RunResult) -> (f64, f64) {
    let devs = r
        .report
        .flows
        .iter()
        .zip(&r.fair)
        .map(|(f, a)| (f.throughput_mbps * 1e6 / a - 1.0) * 100.0);
    devs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
        (lo.min(d), hi.max(d))
    })
}

/// `csfq reproduce ID`.
pub fn reproduce(id: &str, out: Option<PathBuf>, seed: Option<u64>) -> Result<()> {
    let Some(e) = find(id) else {
        let ids: Vec<_> = EXPERIMENTS.iter().map(|e| e.id).collect();
        bail!(
            "unknown experiment `{id}`; expected one of: {}",
            ids.join(", ")
        );
    };
    let started = std::time::Instant::now();
    let results = run_experiment(e, seed)?;
    println!("{}: {}", e.id, e.setup);
    println!("published: {}", e.published);
    println!(
        "({} runs in {:.2} s)\n",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join(e.id));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let summary = match e.sweep {
        Sweep::None if e.id == "csfq-fig3b" => fig3b(&results, &dir)?,
        Sweep::None => fig3a(&results, &dir)?,
        Sweep::Fig4Flows => fig4(&results, &dir)?,
    };
    write_csv(&results, &dir)?;
    let summary =
        json!({ "id": e.id, "setup": e.setup, "published": e.published, "results": summary });
    let path = dir.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "\nwrote {0}/results.csv, {0}/summary.json, {0}/{1}.svg",
        dir.display(),
        e.id
    );
    Ok(())
}

fn write_csv(results: &[RunResult], dir: &Path) -> Result<()> {
    let mut s = String::from("discipline,x,flow,kind,throughput_mbps,maxmin_mbps,sent_pkts,delivered_pkts,dropped_pkts\n");
    for r in results {
        for (f, a) in r.report.flows.iter().zip(&r.fair) {
            s.push_str(&format!(
                "{},{},{},{},{:.6},{:.6},{},{},{}\n",
                r.discipline,
                r.x,
                f.flow,
                f.kind,
                f.throughput_mbps,
                a / 1e6,
                f.sent_pkts,
                f.delivered_pkts,
                f.dropped_pkts
            ));
        }
    }
    let path = dir.join("results.csv");
    std::fs::write(&path, s).with_context(|| format!("writing {}", path.display()))
}

fn per_flow_chart(
    results: &[RunResult],
    dir: &Path,
    id: &str,
    title: &str,
    log_y: bool,
) -> Result<()> {
    let series = results
        .iter()
        .map(|r| Series {
            name: r.discipline.to_string(),
            points: r
                .report
                .flows
                .iter()
                .map(|f| (f.flow as f64, f.throughput_mbps))
                .collect(),
            markers: true,
        })
        .collect();
    Chart {
        title,
        x_label: "flow",
        y_label: "throughput (Mbps)",
        series,
        reference: Some((0.3125, "fair share 0.3125 Mbps")),
        log_y,
    }
    .write_svg(&dir.join(format!("{id}.svg")))
}

fn fig3a(results: &[RunResult], dir: &Path) -> Result<serde_json::Value> {
    let mut t = crate::table(vec![
        "discipline",
        "worst flow vs fair",
        "best flow vs fair",
        "Jain index",
        "paper",
    ]);
    let mut rows = Vec::new();
    for r in results {
        let (lo, hi) = deviation_range(r);
        let paper = match r.discipline {
            DisciplineKind::Fifo | DisciplineKind::Red | DisciplineKind::Fred1 => {
                "proportional to rate"
            }
            DisciplineKind::Drr => "fair",
            DisciplineKind::Fred2 => "less precise than DRR",
            DisciplineKind::Csfq => "-11% .. +5%",
        };
        t.add_row(vec![
            r.discipline.to_string(),
            format!("{lo:+.1}%"),
            format!("{hi:+.1}%"),
            format!("{:.4}", r.report.jain_index),
            paper.to_string(),
        ]);
        rows.push(json!({"discipline": r.discipline.name(), "min_dev_pct": lo, "max_dev_pct": hi, "jain": r.report.jain_index, "paper": paper}));
    }
    println!("{t}");
    if let Some(c) = results
        .iter()
        .find(|r| r.discipline == DisciplineKind::Csfq)
    {
        let (lo, hi) = deviation_range(c);
        let verdict = if lo >= -15.0 && hi <= 10.0 {
            "matches"
        } else {
            "departs"
        };
        println!("verdict: CSFQ flows within {lo:+.1}% .. {hi:+.1}% of the fair share (paper -11% .. +5%): {verdict}");
    }
    per_flow_chart(
        results,
        dir,
        "csfq-fig3a",
        "csfq-fig3a: 32 UDP flows, flow i at (i+1) x fair share",
        false,
    )?;
    Ok(json!(rows))
}

fn fig3b(results: &[RunResult], dir: &Path) -> Result<serde_json::Value> {
    let mut t = crate::table(vec![
        "discipline",
        "UDP Mbps",
        "paper UDP Mbps",
        "mean TCP Mbps",
        "min TCP Mbps",
        "Jain index",
    ]);
    let mut rows = Vec::new();
    for r in results {
        let udp = r.report.flows[0].throughput_mbps;
        let tcp: Vec<f64> = r.report.flows[1..]
            .iter()
            .map(|f| f.throughput_mbps)
            .collect();
        let mean = tcp.iter().sum::<f64>() / tcp.len() as f64;
        let min = tcp.iter().cloned().fold(f64::INFINITY, f64::min);
        let paper = match fig3b_published_udp(r.discipline) {
            Some((v, true)) => format!("> {v}"),
            Some((v, false)) => format!("{v}"),
            None => "-".into(),
        };
        t.add_row(vec![
            r.discipline.to_string(),
            format!("{udp:.3}"),
            paper.clone(),
            format!("{mean:.3}"),
            format!("{min:.3}"),
            format!("{:.4}", r.report.jain_index),
        ]);
        rows.push(json!({"discipline": r.discipline.name(), "udp_mbps": udp, "paper_udp_mbps": paper, "mean_tcp_mbps": mean, "min_tcp_mbps": min, "jain": r.report.jain_index}));
    }
    println!("{t}");
    per_flow_chart(
        results,
        dir,
        "csfq-fig3b",
        "csfq-fig3b: UDP (flow 0) at 10 Mbps vs 31 TCP",
        true,
    )?;
    Ok(json!(rows))
}

fn fig4(results: &[RunResult], dir: &Path) -> Result<serde_json::Value> {
    let shown = [2.0, 4.0, 8.0, 12.0, 16.0, 22.0, 27.0, 32.0];
    let mut header = vec!["discipline".to_string()];
    header.extend(shown.iter().map(|n| format!("N={n}")));
    header.push("min".into());
    let mut t = crate::table(header);
    let mut series = Vec::new();
    let mut rows = Vec::new();
    let mut by_d: Vec<(DisciplineKind, Vec<(f64, f64)>)> = Vec::new();
    for r in results {
        let norm = r.report.flows[0].throughput_mbps / (10.0 / r.x);
        match by_d.last_mut() {
            Some((d, pts)) if *d == r.discipline => pts.push((r.x, norm)),
            _ => by_d.push((r.discipline, vec![(r.x, norm)])),
        }
    }
    for (d, pts) in &by_d {
        let mut row = vec![d.to_string()];
        for n in shown {
            row.push(
                pts.iter()
                    .find(|p| p.0 == n)
                    .map_or("-".into(), |p| format!("{:.2}", p.1)),
            );
        }
        let min = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        row.push(format!("{min:.2}"));
        t.add_row(row);
        rows.push(json!({"discipline": d.name(), "normalized_tcp": pts}));
        series.push(Series {
            name: d.to_string(),
            points: pts.clone(),
            markers: true,
        });
    }
    println!("normalized TCP throughput (throughput / (10/N Mbps)):");
    println!("{t}");
    let get = |d: DisciplineKind| by_d.iter().find(|x| x.0 == d).map(|x| &x.1);
    if let (Some(c), Some(r)) = (get(DisciplineKind::Csfq), get(DisciplineKind::Drr)) {
        let cmin = c.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let cmax = c.iter().map(|p| p.1).fold(0.0, f64::max);
        let beats: Vec<String> = c
            .iter()
            .zip(r)
            .filter(|(a, b)| a.1 > b.1)
            .map(|(a, _)| format!("{}", a.0))
            .collect();
        println!("verdict: CSFQ keeps {cmin:.2}..{cmax:.2} of the fair share (TUF paper: 0.55..0.90); above half for every N: {}", if cmin > 0.5 { "yes" } else { "no" });
        println!(
            "         CSFQ above DRR at N = {}",
            if beats.is_empty() {
                "none".into()
            } else {
                beats.join(", ")
            }
        );
    }
    Chart {
        title: "csfq-fig4: one TCP against N-1 UDP flows at twice their share",
        x_label: "total flows N",
        y_label: "TCP throughput / fair share",
        series,
        reference: Some((1.0, "fair share")),
        log_y: false,
    }
    .write_svg(&dir.join("csfq-fig4.svg"))?;
    Ok(json!(rows))
}
