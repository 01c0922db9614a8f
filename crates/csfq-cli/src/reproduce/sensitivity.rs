//! The report's sensitivity section: each experiment whose paper leaves a parameter out
//! ([`csfq_papers::experiments::unstated`]) runs again at every other plausible value of it,
//! at the same seeds, and each verdict is judged again. A verdict whose outcome is the
//! same across every value is robust; one that flips is fragile.

use std::fmt::Write as _;

use anyhow::Result;
use csfq_papers::experiments::{inert, unstated, Experiment, Unstated};

use csfq_papers::check::fmt_num;
use csfq_papers::{analyze_seeds, Check, Judged, Outcome, Plan};

use super::run_plans;

/// One verdict across the values of one experiment's unstated parameters.
pub struct Sensitivity {
    /// The experiment's id.
    pub id: &'static str,
    /// The verdict, as judged with our values.
    pub what: String,
    /// Its outcome with our values.
    pub ours: Outcome,
    /// Whether some other value gives the other outcome.
    pub fragile: bool,
}

/// What the section found: its Markdown, the verdicts' robustness, and the runs it took.
pub struct Section {
    /// The section, from its heading.
    pub markdown: String,
    /// Every verdict of the experiments with unstated parameters.
    pub verdicts: Vec<Sensitivity>,
    /// Simulations run for it.
    pub runs: usize,
}

/// Runs the experiments' unstated parameters at their other values and writes the section;
/// `judged[i]` is `es[i]` judged with our values.
pub fn section(
    es: &[&Experiment],
    judged: &[Judged],
    seeds: &[u64],
    store: &dyn csfq_papers::RunStore,
) -> Result<Section> {
    let mut plans = Vec::new();
    for e in es {
        for u in unstated(e.id) {
            for &v in u.others {
                plans.push(Plan {
                    experiment: e,
                    setting: Some((u, v)),
                });
            }
        }
    }
    let results = run_plans(&plans, seeds, "sensitivity", store)?;
    let runs = results.iter().map(Vec::len).sum();
    let variants: Vec<(&Plan, Judged)> = plans
        .iter()
        .zip(&results)
        .map(|(p, rs)| (p, analyze_seeds(p.experiment, rs)))
        .collect();
    let mut md = String::new();
    let mut verdicts = Vec::new();
    writeln!(md, "\n## Sensitivity to unstated parameters\n")?;
    writeln!(
        md,
        "Where a paper leaves a parameter out, we choose it by a stated rule (the paper's own rule \
         of thumb, or what its text implies), never because the scheme under test then matches. \
         Each experiment below runs again with each parameter at its other plausible values, \
         one at a time and at the same seeds, and every verdict is judged again. A verdict is \
         **robust** if its outcome is the same at every value, **fragile** if some value flips \
         it. Each cell is our number (the mean over the seeds) and its outcome.\n"
    )?;
    for (e, base) in es.iter().zip(judged) {
        let params = unstated(e.id);
        if params.is_empty() {
            continue;
        }
        writeln!(md, "### {}\n", e.id)?;
        writeln!(
            md,
            "| parameter | ours | chosen by | also tried |\n|---|---|---|---|"
        )?;
        for u in params {
            writeln!(
                md,
                "| {} | {} | {} | {} |",
                u.name,
                fmt_num(u.ours),
                u.rule,
                u.others
                    .iter()
                    .map(|v| fmt_num(*v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
        }
        let columns: Vec<(&Unstated, f64, &Judged)> = variants
            .iter()
            .filter(|(p, _)| p.experiment.id == e.id)
            .map(|(p, j)| {
                let (u, v) = p.setting.expect("every plan here sets a parameter");
                (u, v, j)
            })
            .collect();
        write!(md, "\n| verdict | ours |")?;
        for (u, v, _) in &columns {
            write!(md, " {} = {} |", u.name, fmt_num(*v))?;
        }
        writeln!(md, " |\n|---|---|{}---|", "---|".repeat(columns.len()))?;
        for c in &base.analysis.checks {
            let mut fragile = false;
            write!(md, "| {} | {} |", c.what.replace('|', "/"), cell(c))?;
            for (_, _, j) in &columns {
                match j.analysis.checks.iter().find(|x| x.what == c.what) {
                    Some(x) => {
                        fragile |= x.outcome() != c.outcome();
                        write!(md, " {} |", cell(x))?;
                    }
                    None => write!(md, " - |")?,
                }
            }
            writeln!(md, " {} |", if fragile { "**fragile**" } else { "robust" })?;
            verdicts.push(Sensitivity {
                id: e.id,
                what: c.what.clone(),
                ours: c.outcome(),
                fragile,
            });
        }
        writeln!(md)?;
        for (u, v, _) in &columns {
            if let Some(why) = inert(e.id, u.name, *v) {
                writeln!(
                    md,
                    "{} = {} changes no run at any seed (checked by the test suite): {why}.\n",
                    u.name,
                    fmt_num(*v)
                )?;
            }
        }
    }
    Ok(Section {
        markdown: md,
        verdicts,
        runs,
    })
}

/// "0.44 departs".
fn cell(c: &Check) -> String {
    format!("{} {}", fmt_num(c.ours), c.outcome())
}
