//! `csfq reproduce`: run published experiments with every discipline they compare, in
//! parallel, and set our numbers beside the paper's: on the console, as CSV and JSON, as
//! SVG figures, and (for `--all`) as a Markdown and HTML report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use csfq_papers::check::seeds_words;
use csfq_papers::{
    analyze_seeds, find, Analysis, Check, Experiment, Judged, Outcome, Progress, RunResult,
    RunStore, Tally, DEFAULT_SEEDS, EXPERIMENTS,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::plot::Draw;
use crate::STAGE_PREFIX;

mod losses;
mod scale;
mod sensitivity;
mod store;

/// `csfq reproduce --list`.
pub fn list() {
    let mut t = crate::table(vec!["id", "setup", "published result"]);
    for e in EXPERIMENTS {
        t.add_row(vec![e.id, e.setup, e.published]);
    }
    println!("{t}");
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

/// A progress bar over the runs, labelled `msg`, drawn on standard error.
fn progress(msg: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
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

/// The runs of `es` at `seeds` (see [`csfq_papers::run_experiments`]), with a progress bar;
/// each taken from `store` if kept there, and kept there when made.
pub fn run_experiments(
    es: &[&Experiment],
    seeds: &[u64],
    msg: &str,
    store: &dyn RunStore,
) -> Result<Vec<Vec<RunResult>>> {
    let plans: Vec<csfq_papers::Plan> = es
        .iter()
        .map(|&experiment| csfq_papers::Plan {
            experiment,
            setting: None,
        })
        .collect();
    run_plans(&plans, seeds, msg, store)
}

/// [`run_experiments`] for plans.
pub fn run_plans(
    plans: &[csfq_papers::Plan],
    seeds: &[u64],
    msg: &str,
    store: &dyn RunStore,
) -> Result<Vec<Vec<RunResult>>> {
    let bar = progress(msg);
    let p = Progress::new(
        |n| bar.set_length(n as u64),
        || bar.inc(1),
        || bar.finish_and_clear(),
    );
    Ok(csfq_papers::run_plans_stored(plans, seeds, &p, store)?)
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
    // Not out/ID: `csfq run scenarios/ID.toml` writes out/NAME, and the scenario of an
    // experiment bears its id; the two sets of files would share a directory.
    let dir = out.unwrap_or_else(|| PathBuf::from("out").join("reproduce").join(e.id));
    crate::prepare_out_dir(&dir)?;
    let started = std::time::Instant::now();
    let results = run_experiments(&[e], seeds, e.id, &csfq_papers::NoStore)?.remove(0);
    let judged = analyze_seeds(e, &results);
    // One set: results.csv, summary.json and the experiment's charts (ID.svg, ID-*.svg
    // and their PNGs).
    let member = |name: &str| {
        ["results.csv", "summary.json"].contains(&name)
            || (name.starts_with(e.id)
                && (name.ends_with(".svg") || name.ends_with(".png"))
                && matches!(name.as_bytes().get(e.id.len()), Some(b'.' | b'-')))
    };
    crate::write_set(&dir, member, |stage| {
        write_experiment(e, &results, &judged, stage)
    })?;
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
    // Everything is written into a hidden staging directory inside `dir` and published at
    // the end (see `publish`): a run interrupted before that leaves `dir` as it was, not
    // experiment directories that look complete beside no report, or an old one.
    crate::remove_abandoned_stages(&dir);
    let stage = dir.join(format!("{STAGE_PREFIX}{}", std::process::id()));
    std::fs::create_dir_all(&stage).with_context(|| format!("creating {}", stage.display()))?;
    // Runs an interrupted earlier invocation finished are taken, not simulated again.
    let store = store::FileStore::open(&dir)
        .with_context(|| format!("opening {}", dir.join(store::RUNS_DIR).display()))?;
    let kept = store.kept();
    if kept > 0 {
        eprintln!(
            "resuming: {kept} runs an interrupted `reproduce --all` finished are kept in {}",
            dir.join(store::RUNS_DIR).display()
        );
    }
    let started = std::time::Instant::now();
    let es: Vec<&Experiment> = EXPERIMENTS.iter().collect();
    let all = run_experiments(&es, seeds, "all experiments", &store)?;
    let judged: Vec<Judged> = es
        .iter()
        .zip(&all)
        .map(|(e, rs)| analyze_seeds(e, rs))
        .collect();
    let analyses: Vec<&Analysis> = judged.iter().map(|j| &j.analysis).collect();
    let sens = sensitivity::section(&es, &judged, seeds, &store)?;
    let held_out = held_out(&es, &judged, seeds, &store)?;
    let wall = started.elapsed().as_secs_f64();
    let mut md = String::new();
    writeln!(md, "# csfq: the published experiments, reproduced\n")?;
    writeln!(
        md,
        "Generated by `csfq reproduce --all --out {}`{}: {} runs of 10-300 simulated seconds, {} more for the sensitivity section and {} at held-out seeds, in {:.0} s of wall time on {} cores. \
         Each section gives the setup, our numbers beside the paper's, the figure, and a verdict. \
         Per-run numbers are in each experiment's `results.csv` and `summary.json`.\n",
        dir.display(),
        seeds_flag(seeds),
        all.iter().map(Vec::len).sum::<usize>(),
        sens.runs,
        held_out.runs,
        wall,
        rayon::current_num_threads()
    )?;
    writeln!(
        md,
        "Every verdict compares one of our numbers with the cited source's number or claim; the \
         tolerance beside it gives the band ours must fall in, and the verdict is computed from \
         that band: **matches** inside it, **departs** outside. A departure comes with what we \
         found about it. A band comes from one of four sources, named in each verdict: the \
         source's own range, bound or ordering, with no slack; our statistics, two standard \
         deviations of the difference between our mean over the seeds and the published \
         number (whose variance our seeds estimate where it is one run, or its stated standard \
         error), plus how precisely the number is printed or read off its figure; or a \
         qualitative word read through one table applied everywhere ('fair': Jain's index >= \
         0.995, and so on). No tolerance is typed after seeing our number.\n"
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
        "| experiment | verdicts (reproductions and analyses; readings set aside apart) | of \
         them flip with the seed | departs |\n|---|---|---|---|"
    )?;
    for (e, a) in es.iter().zip(&analyses) {
        // A reading of the source set aside is shown beside the one counted, never counted.
        let counted: Vec<_> = a
            .checks
            .iter()
            .filter(|c| c.kind != csfq_papers::check::Kind::SetAside)
            .collect();
        let aside = a.checks.len() - counted.len();
        let departs: Vec<&str> = counted
            .iter()
            .filter(|c| c.outcome() == Outcome::Departs)
            .map(|c| c.what.as_str())
            .collect();
        let flips = counted.iter().filter(|c| c.flips_with_seed()).count();
        writeln!(
            md,
            "| [{0}](#{0}) | {1} match of {2}{3} | {4} | {5} |",
            e.id,
            counted.len() - departs.len(),
            counted.len(),
            if aside > 0 {
                format!(" ({aside} set aside)")
            } else {
                String::new()
            },
            flips,
            departs.join("; ").replace('|', "/")
        )?;
    }
    let is_fragile = |id: &str, what: &str| {
        sens.verdicts
            .iter()
            .any(|v| v.fragile && v.id == id && v.what == what)
    };
    let tally = Tally::of(
        es.iter()
            .zip(&analyses)
            .flat_map(|(e, a)| a.checks.iter().map(move |c| (e.id, c))),
        is_fragile,
    );
    writeln!(md, "\nIn all: {}", tally.sentence())?;
    writeln!(md, "\n{}", held_out.markdown)?;
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
         FQ-CoDel and FIFO; after it, [CSFQ's TCPs traced](#csfqs-tcps-drops-and-timeouts-traced) \
         counts each TCP's drops, timeouts and window on csfq-fig3b at three round trips, \
         csfq-table2 and a parking lot of 10 000 TCPs."
    )?;
    for ((e, rs), j) in es.iter().zip(&all).zip(&judged) {
        let a = &j.analysis;
        write_experiment(e, rs, j, &stage.join(e.id))?;
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
    md.push_str(&sens.markdown);
    let (scale_md, scale_runs) = scale::section(&stage)?;
    md.push_str(&scale_md);
    let (losses_md, losses_runs) = losses::section(&stage, seeds)?;
    md.push_str(&losses_md);
    let md_path = dir.join("report.md");
    crate::write_atomic(&stage.join("report.md"), &md)?;
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
    crate::write_atomic(&stage.join("report.html"), html)?;
    publish(&stage, &dir)?;
    let reused = store.reused.load(std::sync::atomic::Ordering::Relaxed);
    let made = store.made.load(std::sync::atomic::Ordering::Relaxed);
    store
        .remove()
        .with_context(|| format!("removing {}", dir.join(store::RUNS_DIR).display()))?;
    if reused > 0 {
        eprintln!(
            "{reused} runs were taken from the interrupted invocation, not simulated again \
             ({made} simulated)"
        );
    }
    for (e, a) in es.iter().zip(&analyses) {
        let counted: Vec<_> = a
            .checks
            .iter()
            .filter(|c| c.kind != csfq_papers::check::Kind::SetAside)
            .collect();
        let departs = counted
            .iter()
            .filter(|c| c.outcome() == Outcome::Departs)
            .count();
        let aside = a.checks.len() - counted.len();
        println!(
            "{:16} {} of {} verdicts match{}{}",
            e.id,
            counted.len() - departs,
            counted.len(),
            if departs > 0 {
                format!(" ({departs} departs)")
            } else {
                String::new()
            },
            if aside > 0 {
                format!(", {aside} readings set aside")
            } else {
                String::new()
            }
        );
    }
    println!(
        "\n{} runs ({} of them for the sensitivity section, {} at held-out seeds, {scale_runs} for the scale section, {losses_runs} for the losses traced) in {:.1} s; wrote {} and {}",
        all.iter().map(Vec::len).sum::<usize>()
            + sens.runs
            + held_out.runs
            + scale_runs
            + losses_runs,
        sens.runs,
        held_out.runs,
        started.elapsed().as_secs_f64(),
        md_path.display(),
        html_path.display()
    );
    Ok(())
}

/// A directory's entries as (name, path); none if it cannot be read.
fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect()
}

/// Moves what `stage` holds into `dir`, replacing what is there under the same names.
/// The old report is removed first and the new one moved in last, so that a report in
/// `dir` always stands beside the experiments it describes: an interruption in between
/// leaves no report at all.
fn publish(stage: &Path, dir: &Path) -> Result<()> {
    const REPORT: [&str; 2] = ["report.md", "report.html"];
    for f in REPORT {
        match std::fs::remove_file(dir.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", dir.join(f).display()));
            }
            _ => {}
        }
    }
    for (name, from) in entries(stage) {
        if REPORT.contains(&name.as_str()) {
            continue;
        }
        let to = dir.join(&name);
        if to.is_dir() {
            std::fs::remove_dir_all(&to).with_context(|| format!("removing {}", to.display()))?;
        } else if to.exists() {
            std::fs::remove_file(&to).with_context(|| format!("removing {}", to.display()))?;
        }
        std::fs::rename(&from, &to)
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
    }
    for f in REPORT.iter().rev() {
        let (from, to) = (stage.join(f), dir.join(f));
        std::fs::rename(&from, &to)
            .with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
    }
    std::fs::remove_dir(stage).with_context(|| format!("removing {}", stage.display()))
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
    a.chart
        .write_svg_spread(&dir.join(format!("{}.svg", e.id)), &j.spread)
}

/// The held-out replication: every experiment run again at as many fresh seeds (9-16
/// beside 1-8), its verdicts judged there, and how many keep their outcome.
struct HeldOut {
    runs: usize,
    markdown: String,
}

fn held_out(
    es: &[&Experiment],
    judged: &[Judged],
    seeds: &[u64],
    store: &store::FileStore,
) -> Result<HeldOut> {
    let top = seeds.iter().copied().max().unwrap_or(0);
    let fresh: Vec<u64> = (top + 1..=top + seeds.len() as u64).collect();
    let all = run_experiments(es, &fresh, "held-out seeds", store)?;
    let mut same = 0;
    let mut total = 0;
    let mut changed = Vec::new();
    for ((e, rs), j) in es.iter().zip(&all).zip(judged) {
        // A model without a network runs once at its own seed: nothing is held out.
        if rs.is_empty() {
            continue;
        }
        let again = analyze_seeds(e, rs).analysis.checks;
        for c in &j.analysis.checks {
            let Some(h) = again.iter().find(|h| h.what == c.what) else {
                continue;
            };
            total += 1;
            if h.outcome() == c.outcome() {
                same += 1;
            } else {
                changed.push(format!(
                    "{} ({}: {} at seeds {}, {} at {})",
                    c.what,
                    e.id,
                    c.outcome(),
                    seeds_words(seeds),
                    h.outcome(),
                    seeds_words(&fresh)
                ));
            }
        }
    }
    let markdown = format!(
        "Held out: every experiment with runs was run again at seeds {} and its verdicts judged there; {same} of {total} keep their outcome{}",
        seeds_words(&fresh),
        if changed.is_empty() {
            ".".to_string()
        } else {
            format!(", these change: {}.", changed.join("; ").replace('|', "/"))
        }
    );
    Ok(HeldOut {
        runs: all.iter().map(Vec::len).sum(),
        markdown,
    })
}
