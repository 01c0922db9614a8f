//! The published experiments of core-stateless fair bandwidth allocation, reproduced: per
//! paper, its scenarios, its published numbers, and the analysis that sets our numbers
//! beside them as verdicts.
//!
//! - [`experiments`]: the catalogue ([`EXPERIMENTS`]): each experiment's setup, scenario,
//!   the disciplines it compares, what varies between its runs, and its own analysis;
//!   the unstated parameters and their plausible ranges;
//! - one module per source, holding its published numbers beside its analysis:
//!   [`csfq_paper`] (Stoica, Shenker, Zhang, SIGCOMM'98), [`tuf_report`] (Clerget and
//!   Dabbous), [`csfne_thesis`] (Kim), [`may_paper`] (the MAY paper), [`overlay_paper`]
//!   (edge-to-edge overlay loops);
//! - [`check`]: a verdict ([`Check`]): our number, the source's, the band's basis, and the
//!   band the verdict is computed from; [`chart`]: what each figure shows;
//! - the runner ([`run_experiments`]) and [`analyze_seeds`], which judges each verdict on
//!   the mean over seeds.
//!
//! The `csfq` command writes what this computes (tables, CSV, JSON, SVG, the report); the
//! Python package reads it.

use csfq_sim::{BuildError, DisciplineKind, ScenarioError, SimReport, Simulation};
use rayon::prelude::*;
use serde_json::Value;

pub mod chart;
pub mod check;
mod common;
pub mod csfne_thesis;
pub mod csfq_paper;
pub mod experiments;
pub mod may_paper;
pub mod overlay_paper;
pub mod scenarios;
pub mod tally;
pub mod tuf_report;

use chart::Chart;
use check::seeds_words;
pub use check::{
    choose_alternatives, combine_seeds, Basis, Check, Kind, Outcome, Prefer, Read, Side, Word,
};
pub use experiments::{find, Experiment, Sweep, Unstated, EXPERIMENTS};
pub use tally::Tally;

/// The seeds every verdict is judged over by default: the mean of eight runs, with their
/// spread, so that a verdict does not rest on one seed's noise.
pub const DEFAULT_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// One finished run. Serializable, so a campaign can keep finished runs and resume
/// ([`RunStore`]); the links' per-packet sojourn histograms are not kept (no analysis
/// reads them).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// The verdicts: our numbers against the cited source's, each with its band's basis.
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
    /// Across the seeds, each point of the figure's series: the lowest and highest value
    /// the seeds give it (`spread[series][point]`; `None` for a time series, a point not
    /// every seed has, or a single seed). The figure draws them as error bars.
    pub spread: Vec<Vec<Option<(f64, f64)>>>,
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

/// Told how the runs progress (the command draws a bar; tests and Python say nothing).
pub struct Progress<'a> {
    on_start: Box<dyn Fn(usize) + Sync + 'a>,
    on_done: Box<dyn Fn() + Sync + 'a>,
    on_finish: Box<dyn Fn() + Sync + 'a>,
}

impl<'a> Progress<'a> {
    /// Calls `start(n)` before `n` runs, `done()` after each (from any thread), `finish()`
    /// at the end.
    pub fn new(
        start: impl Fn(usize) + Sync + 'a,
        done: impl Fn() + Sync + 'a,
        finish: impl Fn() + Sync + 'a,
    ) -> Self {
        Progress {
            on_start: Box::new(start),
            on_done: Box::new(done),
            on_finish: Box::new(finish),
        }
    }

    /// Says nothing.
    pub fn none() -> Self {
        Progress::new(|_| {}, || {}, || {})
    }

    fn start(&self, n: usize) {
        (self.on_start)(n)
    }

    fn done_one(&self) {
        (self.on_done)()
    }

    fn finish(&self) {
        (self.on_finish)()
    }
}

/// Runs every run of the experiments, at each of `seeds` (none: each scenario's own seed),
/// in one parallel pool; results per experiment, in (seed, discipline, x) order.
pub fn run_experiments(
    es: &[&Experiment],
    seeds: &[u64],
    progress: &Progress,
) -> Result<Vec<Vec<RunResult>>, RunError> {
    let plans: Vec<Plan> = es
        .iter()
        .map(|&experiment| Plan {
            experiment,
            setting: None,
        })
        .collect();
    run_plans(&plans, seeds, progress)
}

/// An experiment to run as it is, or with one unstated parameter set to another value.
#[derive(Clone, Copy)]
pub struct Plan<'a> {
    /// The experiment.
    pub experiment: &'a Experiment,
    /// The parameter and its value, applied to every run.
    pub setting: Option<(&'a Unstated, f64)>,
}

/// Where finished runs are kept between invocations, so that a campaign interrupted
/// halfway resumes where it stopped ([`run_plans_stored`]). Keys identify a run: its
/// scenario (seed included), discipline, sweep value and label.
pub trait RunStore: Sync {
    /// The run kept under `key`, if any.
    fn get(&self, key: u64) -> Option<RunResult>;
    /// Keeps a finished run under `key`.
    fn put(&self, key: u64, run: &RunResult);
}

/// Why a run of an experiment could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The run's scenario, as the experiment and its setting made it, is one no file could
    /// hold (the experiments' variants are tested to be valid: `tests/variants.rs`).
    #[error("an experiment's run is not a valid scenario: {0}")]
    Invalid(#[from] ScenarioError),
    /// Its network could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Keeps nothing.
pub struct NoStore;

impl RunStore for NoStore {
    fn get(&self, _key: u64) -> Option<RunResult> {
        None
    }
    fn put(&self, _key: u64, _run: &RunResult) {}
}

/// A run's key in a [`RunStore`]: a hash of its whole scenario as written, its discipline,
/// sweep value and label.
fn run_key(d: DisciplineKind, r: &experiments::Run) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    r.scenario.to_toml().hash(&mut h);
    d.name().hash(&mut h);
    r.x.to_bits().hash(&mut h);
    r.label.hash(&mut h);
    h.finish()
}

/// [`run_experiments`] for plans: results per plan, in (seed, discipline, x) order.
pub fn run_plans(
    plans: &[Plan],
    seeds: &[u64],
    progress: &Progress,
) -> Result<Vec<Vec<RunResult>>, RunError> {
    run_plans_stored(plans, seeds, progress, &NoStore)
}

/// [`run_plans`], taking each run from `store` if it is kept there and keeping each run
/// it makes.
pub fn run_plans_stored(
    plans: &[Plan],
    seeds: &[u64],
    progress: &Progress,
    store: &dyn RunStore,
) -> Result<Vec<Vec<RunResult>>, RunError> {
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
        let cost = |r: &experiments::Run| r.scenario.duration_s * r.scenario.flows.len() as f64;
        cost(&b.2).total_cmp(&cost(&a.2))
    });
    progress.start(runs.len());
    let done: Result<Vec<(usize, RunResult)>, RunError> = runs
        .into_par_iter()
        .map(|(i, d, r)| {
            let key = run_key(d, &r);
            if let Some(kept) = store.get(key) {
                progress.done_one();
                return Ok((i, kept));
            }
            let sim = Simulation::new(&r.scenario.check()?)?;
            let fair = sim.topology().max_min_allocation();
            let report = sim.run();
            let run = RunResult {
                seed: r.scenario.seed,
                discipline: d,
                x: r.x,
                label: r.label,
                report,
                fair,
            };
            store.put(key, &run);
            progress.done_one();
            Ok((i, run))
        })
        .collect();
    progress.finish();
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
    let mut charts: Vec<chart::Chart> = Vec::new();
    let per_seed: Vec<(u64, Vec<Check>)> = groups
        .into_iter()
        .map(|(seed, runs)| {
            let mut a = analyze(e, runs);
            let checks = std::mem::take(&mut a.checks);
            if first.is_none() {
                first = Some(a);
            } else {
                charts.push(a.chart);
            }
            (seed, checks)
        })
        .collect();
    let mut analysis = first.expect("one analysis at least");
    analysis.checks = combine_seeds(per_seed);
    let spread = chart_spread(&analysis.chart, &charts);
    Judged {
        analysis,
        seeds,
        spread,
    }
}

/// Each point of `first`'s series against the same series (by name) and the same x in the
/// other seeds' charts: the lowest and highest y of all of them. Time series (x is time)
/// get none: their seeds differ in when things happen, not in one number per point.
fn chart_spread(first: &chart::Chart, others: &[chart::Chart]) -> Vec<Vec<Option<(f64, f64)>>> {
    let over_time = first.x_label.starts_with("time");
    first
        .series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .map(|&(x, y)| {
                    if over_time || others.is_empty() {
                        return None;
                    }
                    let mut range = (y, y);
                    for c in others {
                        let same = c.series.iter().find(|o| o.name == s.name)?;
                        let &(_, oy) = same.points.iter().find(|p| p.0 == x)?;
                        range = (range.0.min(oy), range.1.max(oy));
                    }
                    (range.0.is_finite() && range.1.is_finite()).then_some(range)
                })
                .collect()
        })
        .collect()
}

/// The analysis of an experiment's runs at one seed: the experiment's own.
pub fn analyze(e: &Experiment, results: &[RunResult]) -> Analysis {
    (e.analyze)(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every experiment's verdicts are computed comparisons that can fail: each has a band
    /// with at least one finite end, our number is judged by it, and a number outside it is
    /// judged "departs". Fed wrong runs (every flow's throughput, packets and time series
    /// scaled by 3 or 0.3 alternating between runs, between disciplines or between flows,
    /// or by a ramp over the runs), every experiment with runs has a verdict that departs.
    #[test]
    fn every_verdict_is_computed_and_can_fail() {
        let es: Vec<&Experiment> = EXPERIMENTS.iter().collect();
        let all = run_experiments(&es, &[], &Progress::none()).unwrap();
        for (e, results) in es.iter().zip(&all) {
            let a = analyze(e, results);
            assert!(!a.checks.is_empty(), "{}: no verdict", e.id);
            for c in &a.checks {
                assert!(c.lo.is_finite() || c.hi.is_finite(), "{}: {c}", e.id);
                assert!(c.ours.is_finite(), "{}: {c}", e.id);
                assert!(
                    !c.source.is_empty() && !c.tolerance().is_empty(),
                    "{}: {c}",
                    e.id
                );
                assert_eq!(c.judge(c.wrong_number()), Outcome::Departs, "{}: {c}", e.id);
                // Every band comes from its basis (the source's own range, our seeds'
                // spread, or the one table of readings), none typed by hand.
                if let Err(why) = c.provenance() {
                    panic!("{}: {why}", e.id);
                }
            }
            if results.is_empty() {
                continue;
            }
            // Three kinds of wrong runs: scaled alternately by run (breaks levels over a
            // sweep), by discipline (breaks comparisons between disciplines), and by a ramp
            // over the runs (breaks shapes, such as a dip in the middle of a sweep).
            let order = |d: DisciplineKind| e.disciplines.iter().position(|&x| x == d).unwrap_or(0);
            // A fourth scales alternate flows of every run (breaks fairness between flows,
            // which no uniform scaling of a run moves).
            let caught = [
                |i: usize, _: usize, _: usize| if i.is_multiple_of(2) { 3.0 } else { 0.3 },
                |_: usize, d: usize, _: usize| if d.is_multiple_of(2) { 3.0 } else { 0.3 },
                |i: usize, _: usize, _: usize| (i + 1) as f64,
                |_: usize, _: usize, f: usize| if f.is_multiple_of(2) { 3.0 } else { 0.3 },
            ]
            .iter()
            .any(|scale| {
                let wrong: Vec<RunResult> = results
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let mut report = r.report.clone();
                        for (j, f) in report.flows.iter_mut().enumerate() {
                            let k = scale(i, order(r.discipline), j);
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
