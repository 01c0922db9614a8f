//! `csfq reproduce`: run published experiments with every discipline they compare, in
//! parallel, and set our numbers beside the paper's: on the console, as CSV and JSON, as
//! SVG figures, and (for `--all`) as a Markdown and HTML report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use csfq_sim::experiments::{find, Experiment, Sweep, EXPERIMENTS};
use csfq_sim::{DisciplineKind, SimReport, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::plot::Chart;
pub use check::{Check, Outcome};

mod check;
mod common;
mod csfne_thesis;
mod csfq_paper;
mod may_paper;
mod overlay_paper;
mod scale;
mod tuf_report;

use csfne_thesis::csfne_table;
use csfq_paper::{fig3a, fig3b, fig4, fig6, fig7, table1, table2, table3, table4, weighted};
use tuf_report::{onoff_periods, tuf_checks, tuf_fig4};

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
    /// Sweep value (N, K, variant index; 0 otherwise).
    pub x: f64,
    /// The run's label ("K = 3", "TCP").
    pub label: String,
    /// The report.
    pub report: SimReport,
    /// Max-min fair share of each flow, bits/s.
    pub fair: Vec<f64>,
}

/// What an experiment's results say: a table beside the paper's numbers, one-line
/// verdicts, a figure, and the numbers as JSON.
pub struct Analysis {
    /// Table header.
    pub header: Vec<String>,
    /// Table rows.
    pub rows: Vec<Vec<String>>,
    /// The verdicts: our numbers against the cited source's, each with its tolerance.
    pub checks: Vec<Check>,
    /// What a reader needs besides the verdicts: modeling choices, caveats.
    pub notes: Vec<String>,
    /// The figure.
    pub chart: Chart,
    /// More figures, each written as `ID-SUFFIX.svg`.
    pub extra_charts: Vec<(String, Chart)>,
    /// The numbers behind the table.
    pub json: Value,
}

fn progress(len: usize, msg: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} run {pos}/{len} [{bar:40}] {elapsed_precise} (eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(msg.to_string());
    bar
}

/// Runs every run of the experiments in one parallel pool; results per experiment, in
/// (discipline, x) order.
pub fn run_experiments(
    es: &[&Experiment],
    seed: Option<u64>,
    msg: &str,
) -> Result<Vec<Vec<RunResult>>> {
    let mut runs = Vec::new();
    for (i, e) in es.iter().enumerate() {
        for &d in e.disciplines {
            for mut r in e.runs(d) {
                if let Some(seed) = seed {
                    r.scenario.seed = seed;
                }
                runs.push((i, d, r));
            }
        }
    }
    // Longest runs first, so the pool does not end waiting on one straggler.
    runs.sort_by(|a, b| {
        let cost =
            |r: &csfq_sim::experiments::Run| r.scenario.duration_s * r.scenario.flows.len() as f64;
        cost(&b.2).total_cmp(&cost(&a.2))
    });
    let bar = progress(runs.len(), msg);
    let done: Result<Vec<(usize, RunResult)>> = runs
        .into_par_iter()
        .map(|(i, d, r)| {
            let sim = Simulation::new(&r.scenario)?;
            let fair = sim.topology().max_min_allocation();
            let report = sim.run();
            bar.inc(1);
            Ok((
                i,
                RunResult {
                    discipline: d,
                    x: r.x,
                    label: r.label,
                    report,
                    fair,
                },
            ))
        })
        .collect();
    bar.finish_and_clear();
    let mut out: Vec<Vec<RunResult>> = es.iter().map(|_| Vec::new()).collect();
    for (i, r) in done? {
        out[i].push(r);
    }
    for (e, rs) in es.iter().zip(&mut out) {
        let order = |d: DisciplineKind| e.disciplines.iter().position(|&x| x == d);
        rs.sort_by(|a, b| {
            order(a.discipline)
                .cmp(&order(b.discipline))
                .then(a.x.total_cmp(&b.x))
        });
    }
    Ok(out)
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
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join(e.id));
    crate::prepare_out_dir(&dir)?;
    let started = std::time::Instant::now();
    let results = run_experiments(&[e], seed, e.id)?.remove(0);
    let a = analyze(e, &results);
    write_experiment(e, &results, &a, &dir)?;
    println!("{}: {}", e.id, e.setup);
    println!("published: {}", e.published);
    println!(
        "({} runs in {:.2} s)\n",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    let mut t = crate::table(a.header.clone());
    for r in &a.rows {
        t.add_row(r.clone());
    }
    println!("{t}");
    for c in &a.checks {
        println!("verdict: {c}");
    }
    for n in &a.notes {
        println!("note: {n}");
    }
    println!(
        "\nwrote {0}/results.csv, {0}/summary.json, {0}/{1}.svg",
        dir.display(),
        e.id
    );
    Ok(())
}

/// `csfq reproduce --all`: every experiment, one report.
pub fn reproduce_all(out: Option<PathBuf>, seed: Option<u64>) -> Result<()> {
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join("report"));
    crate::prepare_out_dir(&dir)?;
    let started = std::time::Instant::now();
    let es: Vec<&Experiment> = EXPERIMENTS.iter().collect();
    let all = run_experiments(&es, seed, "all experiments")?;
    let wall = started.elapsed().as_secs_f64();
    let mut md = String::new();
    writeln!(md, "# csfq: the published experiments, reproduced\n")?;
    writeln!(
        md,
        "Generated by `csfq reproduce --all --out {}`{}: {} runs of 10-300 simulated seconds in {:.0} s of wall time on {} cores. \
         Each section gives the setup, our numbers beside the paper's, the figure, and a verdict. \
         Per-run numbers are in each experiment's `results.csv` and `summary.json`.\n",
        dir.display(),
        seed.map_or(String::new(), |s| format!(" --seed {s}")),
        all.iter().map(Vec::len).sum::<usize>(),
        wall,
        rayon::current_num_threads()
    )?;
    writeln!(
        md,
        "Every verdict compares one of our numbers with the cited source's number or claim; the \
         tolerance beside it gives the band ours must fall in, and the verdict is computed from \
         that band: **matches** inside it, **departs** outside. A departure comes with what we \
         found about it.\n"
    )?;
    writeln!(md, "| experiment | verdicts | departs |\n|---|---|---|")?;
    let analyses: Vec<Analysis> = es.iter().zip(&all).map(|(e, rs)| analyze(e, rs)).collect();
    for (e, a) in es.iter().zip(&analyses) {
        let departs: Vec<&str> = a
            .checks
            .iter()
            .filter(|c| c.outcome() == Outcome::Departs)
            .map(|c| c.what.as_str())
            .collect();
        writeln!(
            md,
            "| [{0}](#{0}) | {1} match of {2} | {3} |",
            e.id,
            a.checks.len() - departs.len(),
            a.checks.len(),
            departs.join("; ").replace('|', "/")
        )?;
    }
    writeln!(
        md,
        "\nBeyond the papers, the last section, [CSFQ at scale](#csfq-at-scale-beside-drr-fq-codel-and-fifo), \
         runs a thousand flows on 1 Gbit/s and step changes under both CSFQ estimators, DRR, \
         FQ-CoDel and FIFO."
    )?;
    for ((e, rs), a) in es.iter().zip(&all).zip(&analyses) {
        write_experiment(e, rs, a, &dir.join(e.id))?;
        writeln!(md, "\n## {}\n", e.id)?;
        writeln!(md, "**Setup.** {}.\n", e.setup)?;
        writeln!(md, "**Published.** {}.\n", e.published)?;
        writeln!(md, "| {} |", a.header.join(" | "))?;
        writeln!(md, "|{}", "---|".repeat(a.header.len()))?;
        for r in &a.rows {
            writeln!(md, "| {} |", r.join(" | "))?;
        }
        writeln!(md, "\n![{0}]({0}/{0}.svg)\n", e.id)?;
        for (suffix, _) in &a.extra_charts {
            writeln!(md, "![{0} {1}]({0}/{0}-{1}.svg)\n", e.id, suffix)?;
        }
        for c in &a.checks {
            writeln!(md, "- **Verdict:** {}", c.to_string().replace('|', "/"))?;
        }
        for n in &a.notes {
            writeln!(md, "- *Note:* {n}")?;
        }
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let (scale_md, scale_runs) = scale::section(&dir)?;
    md.push_str(&scale_md);
    let md_path = dir.join("report.md");
    std::fs::write(&md_path, &md).with_context(|| format!("writing {}", md_path.display()))?;
    let mut body = String::new();
    let parser = pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::ENABLE_TABLES);
    pulldown_cmark::html::push_html(&mut body, parser);
    let html = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>csfq: experiments reproduced</title>\n<style>\
         body{{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;line-height:1.4}}\
         table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}\
         td:first-child,th:first-child{{text-align:left}}img{{max-width:100%}}</style></head><body>\n{body}</body></html>\n"
    );
    let html_path = dir.join("report.html");
    std::fs::write(&html_path, html).with_context(|| format!("writing {}", html_path.display()))?;
    for (e, a) in es.iter().zip(&analyses) {
        let departs = a
            .checks
            .iter()
            .filter(|c| c.outcome() == Outcome::Departs)
            .count();
        println!(
            "{:16} {} of {} verdicts match{}",
            e.id,
            a.checks.len() - departs,
            a.checks.len(),
            if departs > 0 {
                format!(" ({departs} departs)")
            } else {
                String::new()
            }
        );
    }
    println!(
        "\n{} runs ({scale_runs} of them for the scale section) in {:.1} s; wrote {} and {}",
        all.iter().map(Vec::len).sum::<usize>() + scale_runs,
        started.elapsed().as_secs_f64(),
        md_path.display(),
        html_path.display()
    );
    Ok(())
}

fn write_experiment(e: &Experiment, results: &[RunResult], a: &Analysis, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut s = String::from("discipline,x,run,flow,kind,throughput_mbps,maxmin_mbps,sent_pkts,delivered_pkts,dropped_pkts\n");
    for r in results {
        for (f, fair) in r.report.flows.iter().zip(&r.fair) {
            writeln!(
                s,
                "{},{},{},{},{},{:.6},{:.6},{},{},{}",
                r.discipline,
                r.x,
                r.label,
                f.flow,
                f.kind,
                f.throughput_mbps,
                fair / 1e6,
                f.sent_pkts,
                f.delivered_pkts,
                f.dropped_pkts
            )?;
        }
    }
    let path = dir.join("results.csv");
    std::fs::write(&path, s).with_context(|| format!("writing {}", path.display()))?;
    let summary = json!({
        "id": e.id, "setup": e.setup, "published": e.published,
        "verdicts": a.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        "notes": a.notes, "results": a.json,
    });
    let path = dir.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    for (suffix, chart) in &a.extra_charts {
        chart.write_svg(&dir.join(format!("{}-{suffix}.svg", e.id)))?;
    }
    a.chart.write_svg(&dir.join(format!("{}.svg", e.id)))
}

/// The analysis of each experiment.
pub fn analyze(e: &Experiment, results: &[RunResult]) -> Analysis {
    let mut a = match (e.id, e.sweep) {
        ("csfq-fig3a" | "tuf-fig9a", _) => fig3a(results),
        ("csfq-fig3b" | "tuf-fig9b", _) => fig3b(results),
        (id, _) if id.starts_with("csfne-") => csfne_table(id, e.sweep, results),
        (_, Sweep::Fig4Flows) => fig4(results),
        (id, Sweep::ChainLinks { .. }) => fig6(id, results),
        (id, Sweep::OnOffPeriods { links }) => onoff_periods(id, links, results),
        (_, Sweep::TufFilterModel) => tuf_fig4(),
        (_, Sweep::MayMemoryModel) => may_paper::fig2(),
        (_, Sweep::CbrRates) => may_paper::fig8(results),
        (_, Sweep::OverlayLinear { .. }) => overlay_paper::fig6(results),
        (_, Sweep::OverlayDumbbell) => overlay_paper::fig7(results),
        (id, Sweep::LoopsOffOn) => overlay_paper::fig8_9(id, results),
        (_, Sweep::LeasedShares) => overlay_paper::fig10(results),
        ("may-fig5" | "may-fig7", _) => may_paper::fairness(e.id, results),
        ("may-fig9", _) => may_paper::fig9(results),
        ("csfq-fig7", _) => fig7(results),
        ("csfq-table1", _) => table1(results),
        ("csfq-table2", _) => table2(results),
        ("csfq-table3", _) => table3(results),
        (_, Sweep::Table4Variants) => table4(results),
        (id, _) => weighted(id, results),
    };
    // The TUF report's experiments reuse the CSFQ paper's tables and figures, but are
    // judged against the TUF report's claims.
    if e.id.starts_with("tuf-fig")
        && !matches!(e.sweep, Sweep::TufFilterModel | Sweep::OnOffPeriods { .. })
    {
        a.checks = tuf_checks(e.id, results);
        a.notes.clear();
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every experiment's verdicts are computed comparisons that can fail: each has a band
    /// with at least one finite end, our number is judged by it, and a number outside it is
    /// judged "departs". Fed wrong runs (every flow's throughput, packets and time series
    /// scaled by 3 or 0.3 alternating between runs or between disciplines, or by a ramp
    /// over the runs), every experiment with runs has a verdict that departs.
    #[test]
    fn every_verdict_is_computed_and_can_fail() {
        let es: Vec<&Experiment> = EXPERIMENTS.iter().collect();
        let all = run_experiments(&es, None, "test").unwrap();
        for (e, results) in es.iter().zip(&all) {
            let a = analyze(e, results);
            assert!(!a.checks.is_empty(), "{}: no verdict", e.id);
            for c in &a.checks {
                assert!(c.lo.is_finite() || c.hi.is_finite(), "{}: {c}", e.id);
                assert!(c.ours.is_finite(), "{}: {c}", e.id);
                assert!(
                    !c.source.is_empty() && !c.tolerance.is_empty(),
                    "{}: {c}",
                    e.id
                );
                assert_eq!(c.judge(c.wrong_number()), Outcome::Departs, "{}: {c}", e.id);
            }
            if results.is_empty() {
                continue;
            }
            // Three kinds of wrong runs: scaled alternately by run (breaks levels over a
            // sweep), by discipline (breaks comparisons between disciplines), and by a ramp
            // over the runs (breaks shapes, such as a dip in the middle of a sweep).
            let order = |d: DisciplineKind| e.disciplines.iter().position(|&x| x == d).unwrap_or(0);
            let caught = [
                |i: usize, _: usize| if i.is_multiple_of(2) { 3.0 } else { 0.3 },
                |_: usize, d: usize| if d.is_multiple_of(2) { 3.0 } else { 0.3 },
                |i: usize, _: usize| (i + 1) as f64,
            ]
            .iter()
            .any(|scale| {
                let wrong: Vec<RunResult> = results
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let k = scale(i, order(r.discipline));
                        let mut report = r.report.clone();
                        for f in &mut report.flows {
                            f.throughput_mbps *= k;
                            f.delivered_pkts = (f.delivered_pkts as f64 * k) as u64;
                            f.dropped_pkts = (f.dropped_pkts as f64 * k) as u64;
                            f.fct_s = f.fct_s.map(|t| t / k);
                            f.series_mbps.iter_mut().for_each(|x| *x *= k);
                        }
                        RunResult {
                            discipline: r.discipline,
                            x: r.x,
                            label: r.label.clone(),
                            report,
                            fair: r.fair.clone(),
                        }
                    })
                    .collect();
                analyze(e, &wrong)
                    .checks
                    .iter()
                    .any(|c| c.outcome() == Outcome::Departs)
            });
            assert!(caught, "{}: wrong runs pass every verdict", e.id);
        }
    }
}
