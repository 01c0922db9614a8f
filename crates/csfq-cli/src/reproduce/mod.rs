//! `csfq reproduce`: run published experiments with every discipline they compare, in
//! parallel, and set our numbers beside the paper's: on the console, as CSV and JSON, as
//! SVG figures, and (for `--all`) as a Markdown and HTML report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use csfq_sim::experiments::{find, Experiment, Sweep, Unstated, EXPERIMENTS};
use csfq_sim::{DisciplineKind, SimReport, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value};

use crate::plot::Chart;
use check::seeds_words;
pub use check::{choose_alternatives, combine_seeds, Check, Outcome, Prefer};

mod check;
mod common;
mod csfne_thesis;
mod csfq_paper;
mod may_paper;
mod overlay_paper;
mod scale;
mod sensitivity;
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

/// The seeds every verdict is judged over by default: the mean of eight runs, with their
/// spread, so that a verdict does not rest on one seed's noise.
pub const DEFAULT_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// One finished run.
pub struct RunResult {
    /// The seed it ran with.
    pub seed: u64,
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

/// An experiment's analysis over the seeds it ran at.
pub struct Judged {
    /// The verdicts combined over the seeds; the table, figure, notes and numbers of the
    /// first seed.
    pub analysis: Analysis,
    /// The seeds, in order.
    pub seeds: Vec<u64>,
}

impl Judged {
    /// Which seeds the table and the verdicts come from, in words.
    pub fn seeds_text(&self) -> String {
        match self.seeds.as_slice() {
            [] => "no runs".to_string(),
            [one] => format!("seed {one}"),
            [first, ..] => format!(
                "the table and figure at seed {first}; each verdict the mean over {} seeds ({}), with their range and how many fall in the band",
                self.seeds.len(),
                seeds_words(&self.seeds)
            ),
        }
    }
}

/// The `--seeds` flag that gives these seeds, for the report's command line (none for the
/// default).
fn seeds_flag(seeds: &[u64]) -> String {
    if seeds.iter().copied().eq(DEFAULT_SEEDS) {
        String::new()
    } else {
        format!(" --seeds {}", seeds_words(seeds))
    }
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

/// Runs every run of the experiments, at each of `seeds` (none: each scenario's own seed),
/// in one parallel pool; results per experiment, in (seed, discipline, x) order.
pub fn run_experiments(
    es: &[&Experiment],
    seeds: &[u64],
    msg: &str,
) -> Result<Vec<Vec<RunResult>>> {
    let plans: Vec<Plan> = es
        .iter()
        .map(|&experiment| Plan {
            experiment,
            setting: None,
        })
        .collect();
    run_plans(&plans, seeds, msg)
}

/// An experiment to run as it is, or with one unstated parameter set to another value.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    /// The experiment.
    pub experiment: &'a Experiment,
    /// The parameter and its value, applied to every run.
    pub setting: Option<(&'a Unstated, f64)>,
}

/// [`run_experiments`] for plans: results per plan, in (seed, discipline, x) order.
pub fn run_plans(plans: &[Plan], seeds: &[u64], msg: &str) -> Result<Vec<Vec<RunResult>>> {
    let mut runs = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        for &d in p.experiment.disciplines {
            for mut r in p.experiment.runs(d) {
                if let Some((u, v)) = p.setting {
                    (u.apply)(&mut r.scenario, v);
                }
                for &seed in seeds {
                    let mut r = r.clone();
                    r.scenario.seed = seed;
                    runs.push((i, d, r));
                }
                if seeds.is_empty() {
                    runs.push((i, d, r));
                }
            }
        }
    }
    let es: Vec<&Experiment> = plans.iter().map(|p| p.experiment).collect();
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
                    seed: r.scenario.seed,
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
            a.seed
                .cmp(&b.seed)
                .then(order(a.discipline).cmp(&order(b.discipline)))
                .then(a.x.total_cmp(&b.x))
        });
    }
    Ok(out)
}

/// `csfq reproduce ID`.
pub fn reproduce(id: &str, out: Option<PathBuf>, seeds: &[u64], json: bool) -> Result<()> {
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
    let results = run_experiments(&[e], seeds, e.id)?.remove(0);
    let judged = analyze_seeds(e, &results);
    write_experiment(e, &results, &judged, &dir)?;
    if json {
        let path = dir.join("summary.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        print!("{text}");
        return Ok(());
    }
    let a = &judged.analysis;
    println!("{}: {}", e.id, e.setup);
    println!("published: {}", e.published);
    println!(
        "({} runs in {:.2} s; {})\n",
        results.len(),
        started.elapsed().as_secs_f64(),
        judged.seeds_text()
    );
    let mut t = crate::table(a.header.clone());
    for r in &a.rows {
        t.add_row(r.clone());
    }
    println!("{t}");
    for c in &a.checks {
        println!("{}", crate::paragraph("verdict: ", &c.to_string()));
    }
    for n in &a.notes {
        println!("{}", crate::paragraph("note: ", n));
    }
    println!(
        "\nwrote {0}/results.csv, {0}/summary.json, {0}/{1}.svg",
        dir.display(),
        e.id
    );
    Ok(())
}

/// `csfq reproduce --all`: every experiment, one report.
pub fn reproduce_all(out: Option<PathBuf>, seeds: &[u64]) -> Result<()> {
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join("report"));
    crate::prepare_out_dir(&dir)?;
    let started = std::time::Instant::now();
    let es: Vec<&Experiment> = EXPERIMENTS.iter().collect();
    let all = run_experiments(&es, seeds, "all experiments")?;
    let judged: Vec<Judged> = es
        .iter()
        .zip(&all)
        .map(|(e, rs)| analyze_seeds(e, rs))
        .collect();
    let analyses: Vec<&Analysis> = judged.iter().map(|j| &j.analysis).collect();
    let sens = sensitivity::section(&es, &judged, seeds)?;
    let wall = started.elapsed().as_secs_f64();
    let mut md = String::new();
    writeln!(md, "# csfq: the published experiments, reproduced\n")?;
    writeln!(
        md,
        "Generated by `csfq reproduce --all --out {}`{}: {} runs of 10-300 simulated seconds, and {} more for the sensitivity section, in {:.0} s of wall time on {} cores. \
         Each section gives the setup, our numbers beside the paper's, the figure, and a verdict. \
         Per-run numbers are in each experiment's `results.csv` and `summary.json`.\n",
        dir.display(),
        seeds_flag(seeds),
        all.iter().map(Vec::len).sum::<usize>(),
        sens.runs,
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
    if seeds.len() > 1 {
        writeln!(
            md,
            "Each verdict is judged on the mean of our number over {} seeds ({}), so that none \
             rests on one run's noise; beside it stand the seeds' range and how many seeds fall \
             in the band on their own. A verdict that **flips with the seed** (some seeds in the \
             band, some outside) is counted apart below: a match of that kind is seed-dependent, \
             a departure of that kind is close. Tables and figures show the first seed. The two \
             models without a network (tuf-fig4, may-fig2) run once, at their own fixed seeds.\n",
            seeds.len(),
            seeds_words(seeds)
        )?;
    }
    writeln!(
        md,
        "| experiment | verdicts | of them flip with the seed | departs |\n|---|---|---|---|"
    )?;
    for (e, a) in es.iter().zip(&analyses) {
        let departs: Vec<&str> = a
            .checks
            .iter()
            .filter(|c| c.outcome() == Outcome::Departs)
            .map(|c| c.what.as_str())
            .collect();
        let flips = a.checks.iter().filter(|c| c.flips_with_seed()).count();
        writeln!(
            md,
            "| [{0}](#{0}) | {1} match of {2} | {3} | {4} |",
            e.id,
            a.checks.len() - departs.len(),
            a.checks.len(),
            flips,
            departs.join("; ").replace('|', "/")
        )?;
    }
    let (total, departing, flipping_matches, flipping_departs) =
        analyses.iter().fold((0, 0, 0, 0), |(t, d, fm, fd), a| {
            let dep = |c: &&Check| c.outcome() == Outcome::Departs;
            (
                t + a.checks.len(),
                d + a.checks.iter().filter(dep).count(),
                fm + a
                    .checks
                    .iter()
                    .filter(|c| !dep(c) && c.flips_with_seed())
                    .count(),
                fd + a
                    .checks
                    .iter()
                    .filter(|c| dep(c) && c.flips_with_seed())
                    .count(),
            )
        });
    writeln!(
        md,
        "\nIn all: {} of {total} verdicts match, {} of them at every seed and {flipping_matches} on the mean but not at every seed (seed-dependent); {departing} depart, {flipping_departs} of them with some seeds in the band.",
        total - departing,
        total - departing - flipping_matches,
    )?;
    let fragile: Vec<String> = sens
        .verdicts
        .iter()
        .filter(|v| v.fragile)
        .map(|v| format!("{} ({}: {})", v.what, v.id, v.ours))
        .collect();
    writeln!(
        md,
        "\n[Sensitivity](#sensitivity-to-unstated-parameters): {} verdicts of experiments with unstated parameters were judged again across those parameters' plausible values: {} robust (of them {} match), {} fragile{}",
        sens.verdicts.len(),
        sens.verdicts.len() - fragile.len(),
        sens.verdicts.iter().filter(|v| !v.fragile && v.ours == Outcome::Matches).count(),
        fragile.len(),
        if fragile.is_empty() {
            ".".to_string()
        } else {
            format!(": {}.", fragile.join("; ").replace('|', "/"))
        }
    )?;
    writeln!(
        md,
        "\nBeyond the papers, the last section, [CSFQ at scale](#csfq-at-scale-beside-drr-fq-codel-and-fifo), \
         runs a thousand flows on 1 Gbit/s and step changes under both CSFQ estimators, DRR, \
         FQ-CoDel and FIFO."
    )?;
    for ((e, rs), j) in es.iter().zip(&all).zip(&judged) {
        let a = &j.analysis;
        write_experiment(e, rs, j, &dir.join(e.id))?;
        writeln!(md, "\n## {}\n", e.id)?;
        writeln!(md, "**Setup.** {}.\n", e.setup)?;
        writeln!(md, "**Published.** {}.\n", e.published)?;
        if !rs.is_empty() {
            writeln!(md, "**Seeds.** {}.\n", j.seeds_text())?;
        }
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
    md.push_str(&sens.markdown);
    let (scale_md, scale_runs) = scale::section(&dir)?;
    md.push_str(&scale_md);
    let md_path = dir.join("report.md");
    crate::write_atomic(&md_path, &md)?;
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
    crate::write_atomic(&html_path, html)?;
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
        "\n{} runs ({} of them for the sensitivity section, {scale_runs} for the scale section) in {:.1} s; wrote {} and {}",
        all.iter().map(Vec::len).sum::<usize>() + sens.runs + scale_runs,
        sens.runs,
        started.elapsed().as_secs_f64(),
        md_path.display(),
        html_path.display()
    );
    Ok(())
}

fn write_experiment(e: &Experiment, results: &[RunResult], j: &Judged, dir: &Path) -> Result<()> {
    let a = &j.analysis;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut s = String::from("seed,discipline,x,run,flow,kind,throughput_mbps,maxmin_mbps,sent_pkts,delivered_pkts,dropped_pkts\n");
    for r in results {
        for (f, fair) in r.report.flows.iter().zip(&r.fair) {
            writeln!(
                s,
                "{},{},{},{},{},{},{:.6},{:.6},{},{},{}",
                r.seed,
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
    crate::write_atomic(&path, s)?;
    let summary = json!({
        "id": e.id, "setup": e.setup, "published": e.published,
        "seeds": j.seeds, "table_seed": j.seeds.first(),
        "verdicts": a.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        "notes": a.notes, "results": a.json,
    });
    let path = dir.join("summary.json");
    crate::write_atomic(&path, serde_json::to_string_pretty(&summary)? + "\n")?;
    for (suffix, chart) in &a.extra_charts {
        chart.write_svg(&dir.join(format!("{}-{suffix}.svg", e.id)))?;
    }
    a.chart.write_svg(&dir.join(format!("{}.svg", e.id)))
}

/// The analysis of an experiment's runs at several seeds: each seed's runs analyzed on
/// their own, the verdicts combined into the mean over the seeds ([`combine_seeds`]), and
/// the table, figure and numbers of the first seed.
pub fn analyze_seeds(e: &Experiment, results: &[RunResult]) -> Judged {
    let mut seeds: Vec<u64> = results.iter().map(|r| r.seed).collect();
    seeds.dedup();
    // Runs are in seed order: each seed's are one contiguous slice. A model with no runs
    // (tuf-fig4, may-fig2) is analyzed once.
    let groups: Vec<(u64, &[RunResult])> = if seeds.is_empty() {
        vec![(0, results)]
    } else {
        seeds
            .iter()
            .map(|&seed| {
                let from = results.partition_point(|r| r.seed < seed);
                let to = results.partition_point(|r| r.seed <= seed);
                (seed, &results[from..to])
            })
            .collect()
    };
    let mut first: Option<Analysis> = None;
    let per_seed: Vec<(u64, Vec<Check>)> = groups
        .into_iter()
        .map(|(seed, runs)| {
            let mut a = analyze(e, runs);
            let checks = std::mem::take(&mut a.checks);
            first.get_or_insert(a);
            (seed, checks)
        })
        .collect();
    let mut analysis = first.expect("one analysis at least");
    analysis.checks = combine_seeds(per_seed);
    Judged { analysis, seeds }
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
        let all = run_experiments(&es, &[], "test").unwrap();
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
                            seed: r.seed,
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
