//! `csfq compare OLD NEW`: two reproductions' verdicts side by side. Each verdict of one
//! (an experiment's `summary.json`, matched by experiment and by what it compares) is put
//! beside the same verdict of the other: unchanged, moved within `k` standard errors of the
//! difference of the two means (computed from both runs' seeds), moved further with the
//! same outcome, or with its outcome changed. What a change of model or of event order
//! must be checked against: every moved number either within the seeds' noise or
//! explained.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// An experiment's `summary.json`, the parts compared.
#[derive(Deserialize)]
struct Summary {
    id: String,
    #[serde(default)]
    verdicts: Vec<Verdict>,
}

/// A verdict as `summary.json` holds it (`csfq_papers::Check::to_json`).
#[derive(Deserialize, Clone, PartialEq)]
struct Verdict {
    what: String,
    ours: Option<f64>,
    outcome: String,
    kind: String,
    #[serde(default)]
    per_seed: Vec<Option<f64>>,
}

/// How a verdict moved from OLD to NEW.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Move {
    /// Its outcome changed (matches <-> departs).
    OutcomeChanged,
    /// Its mean moved by more than `k` standard errors, the outcome the same.
    Beyond,
    /// Its mean moved, and one side has fewer than two seeds (or a seed without a
    /// number): no standard error to judge it by.
    NoStandardError,
    /// Its mean moved by at most `k` standard errors.
    Within,
    /// The same number at every seed, the same outcome.
    Identical,
    /// Only OLD has it.
    OnlyOld,
    /// Only NEW has it.
    OnlyNew,
}

impl Move {
    fn words(self, k: f64) -> String {
        match self {
            Move::OutcomeChanged => "outcome changed".into(),
            Move::Beyond => format!("beyond {k} SE, same outcome"),
            Move::NoStandardError => "moved, no SE (one seed)".into(),
            Move::Within => format!("within {k} SE"),
            Move::Identical => "identical".into(),
            Move::OnlyOld => "only in OLD".into(),
            Move::OnlyNew => "only in NEW".into(),
        }
    }
}

/// One verdict compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The experiment.
    pub id: String,
    /// What the verdict compares.
    pub what: String,
    /// `reproduction`, `analysis` or `set_aside`.
    pub kind: String,
    /// OLD's mean over its seeds (`None`: not a finite number, or no such verdict).
    pub old: Option<f64>,
    /// NEW's mean.
    pub new: Option<f64>,
    /// OLD's and NEW's outcomes.
    pub outcomes: (Option<String>, Option<String>),
    /// The difference over its standard error, `|new - old| / sqrt(s_old^2 / n_old +
    /// s_new^2 / n_new)` with each side's sample variance over its seeds.
    pub z: Option<f64>,
    /// How it moved.
    pub moved: Move,
}

/// The comparison of two reproductions.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The standard errors a move may span and count as noise.
    pub k: f64,
    /// Every verdict of the experiments both hold, the moved first (most standard errors
    /// first), then the identical.
    pub rows: Vec<Row>,
    /// Experiments only OLD holds (not compared).
    pub only_old: Vec<String>,
    /// Experiments only NEW holds (not compared).
    pub only_new: Vec<String>,
}

impl Comparison {
    /// How many verdicts moved each way.
    pub fn counts(&self) -> BTreeMap<Move, usize> {
        let mut c = BTreeMap::new();
        for r in &self.rows {
            *c.entry(r.moved).or_default() += 1;
        }
        c
    }

    /// Reproductions that match, in OLD and in NEW (the report's headline).
    pub fn matching(&self) -> (usize, usize) {
        let count = |side: fn(&Row) -> &Option<String>| {
            self.rows
                .iter()
                .filter(|r| r.kind == "reproduction" && side(r).as_deref() == Some("matches"))
                .count()
        };
        (count(|r| &r.outcomes.0), count(|r| &r.outcomes.1))
    }
}

/// A side's seeds: their mean, the squared standard error of that mean (the sample
/// variance, `csfq_papers::check::sample_sd` squared, over the count); `None` where a seed
/// has no number or there are fewer than two.
fn mean_se2(xs: &[Option<f64>]) -> Option<(f64, f64)> {
    let xs: Vec<f64> = xs.iter().copied().collect::<Option<_>>()?;
    let n = xs.len() as f64;
    (xs.len() >= 2).then(|| {
        (
            xs.iter().sum::<f64>() / n,
            csfq_papers::check::sample_sd(&xs).powi(2) / n,
        )
    })
}

/// `|new - old|` over the standard error of the difference of the two seeds' means;
/// `None` where a side has fewer than two seeds or a seed without a number.
fn z_of(old: &Verdict, new: &Verdict) -> Option<f64> {
    let (m0, e0) = mean_se2(&old.per_seed)?;
    let (m1, e1) = mean_se2(&new.per_seed)?;
    let d = (m1 - m0).abs();
    Some(if d == 0.0 { 0.0 } else { d / (e0 + e1).sqrt() })
}

fn compare_one(id: &str, old: Option<&Verdict>, new: Option<&Verdict>, k: f64) -> Row {
    let any = old.or(new).expect("one side has the verdict");
    let (moved, z) = match (old, new) {
        (Some(_), None) => (Move::OnlyOld, None),
        (None, Some(_)) => (Move::OnlyNew, None),
        (Some(o), Some(n)) if o == n => (Move::Identical, Some(0.0)),
        (Some(o), Some(n)) => {
            let z = z_of(o, n);
            let moved = if o.outcome != n.outcome {
                Move::OutcomeChanged
            } else {
                match z {
                    None => Move::NoStandardError,
                    Some(z) if z <= k => Move::Within,
                    Some(_) => Move::Beyond,
                }
            };
            (moved, z)
        }
        (None, None) => unreachable!("one side has the verdict"),
    };
    Row {
        id: id.to_string(),
        what: any.what.clone(),
        kind: any.kind.clone(),
        old: old.and_then(|v| v.ours),
        new: new.and_then(|v| v.ours),
        outcomes: (
            old.map(|v| v.outcome.clone()),
            new.map(|v| v.outcome.clone()),
        ),
        z,
        moved,
    }
}

/// The `summary.json` files of a reproduction: `dir/summary.json` (one experiment's
/// directory) and `dir/*/summary.json` (a report's), by experiment id.
fn read_dir(dir: &Path) -> Result<BTreeMap<String, Vec<Verdict>>> {
    if !dir.is_dir() {
        anyhow::bail!("{} is not a directory", dir.display());
    }
    let mut files: Vec<PathBuf> = vec![dir.join("summary.json")];
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        files.push(e.path().join("summary.json"));
    }
    files.sort();
    let mut out = BTreeMap::new();
    for f in files.iter().filter(|f| f.is_file()) {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let s: Summary = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a reproduction's summary.json", f.display()))?;
        if out.insert(s.id.clone(), s.verdicts).is_some() {
            anyhow::bail!(
                "{}: experiment {} appears twice in {}",
                f.display(),
                s.id,
                dir.display()
            );
        }
    }
    if out.is_empty() {
        anyhow::bail!(
            "no summary.json in {} or its subdirectories (give what `csfq reproduce` wrote)",
            dir.display()
        );
    }
    Ok(out)
}

/// Compares the verdicts of two reproductions' directories.
pub fn compare(old: &Path, new: &Path, k: f64) -> Result<Comparison> {
    let (a, b) = (read_dir(old)?, read_dir(new)?);
    Ok(compare_sets(&a, &b, k))
}

fn compare_sets(
    a: &BTreeMap<String, Vec<Verdict>>,
    b: &BTreeMap<String, Vec<Verdict>>,
    k: f64,
) -> Comparison {
    let mut rows = Vec::new();
    let only = |x: &BTreeMap<String, Vec<Verdict>>, y: &BTreeMap<String, Vec<Verdict>>| {
        x.keys()
            .filter(|id| !y.contains_key(*id))
            .cloned()
            .collect()
    };
    for (id, va) in a {
        let Some(vb) = b.get(id) else {
            continue;
        };
        for o in va {
            rows.push(compare_one(
                id,
                Some(o),
                vb.iter().find(|n| n.what == o.what),
                k,
            ));
        }
        for n in vb.iter().filter(|n| !va.iter().any(|o| o.what == n.what)) {
            rows.push(compare_one(id, None, Some(n), k));
        }
    }
    // The moved first, by kind of move, then the most standard errors first.
    rows.sort_by(|x, y| {
        x.moved.cmp(&y.moved).then(
            y.z.unwrap_or(f64::INFINITY)
                .total_cmp(&x.z.unwrap_or(f64::INFINITY)),
        )
    });
    Comparison {
        k,
        rows,
        only_old: only(a, b),
        only_new: only(b, a),
    }
}

/// `csfq compare`.
pub fn run(old: &Path, new: &Path, k: f64, json: bool) -> Result<()> {
    let c = compare(old, new, k)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(());
    }
    let num = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
    let mut t = crate::table(vec![
        "experiment",
        "verdict",
        "old",
        "new",
        "SE apart",
        "outcome",
        "moved",
    ]);
    for r in c.rows.iter().filter(|r| r.moved != Move::Identical) {
        let outcome = match &r.outcomes {
            (Some(o), Some(n)) if o == n => o.clone(),
            (o, n) => format!(
                "{} -> {}",
                o.as_deref().unwrap_or("-"),
                n.as_deref().unwrap_or("-")
            ),
        };
        t.add_row(vec![
            r.id.clone(),
            r.what.clone(),
            num(r.old),
            num(r.new),
            r.z.map_or("-".to_string(), |z| format!("{z:.2}")),
            outcome,
            r.moved.words(k),
        ]);
    }
    // On a narrow terminal the verdict's words wrap, never an experiment's id (the
    // width counts the cell's padding).
    let id_width = c.rows.iter().map(|r| r.id.len()).max().unwrap_or(0) + 2;
    if let Some(col) = t.column_mut(0) {
        col.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
            comfy_table::Width::Fixed(id_width.min(u16::MAX as usize) as u16),
        ));
    }
    if c.rows.iter().any(|r| r.moved != Move::Identical) {
        println!("{t}");
    }
    let counts = c.counts();
    let parts: Vec<String> = counts
        .iter()
        .map(|(m, n)| format!("{n} {}", m.words(k)))
        .collect();
    let (m0, m1) = c.matching();
    let experiments = c
        .rows
        .iter()
        .map(|r| &r.id)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    println!(
        "{} verdicts of {experiments} experiment{}: {}; reproductions matching {m0} -> {m1}",
        c.rows.len(),
        if experiments == 1 { "" } else { "s" },
        parts.join(", ")
    );
    for (side, ids) in [("OLD", &c.only_old), ("NEW", &c.only_new)] {
        if !ids.is_empty() {
            println!(
                "only in {side}, not compared: {} experiment{} ({})",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", ")
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(what: &str, outcome: &str, seeds: &[f64]) -> Verdict {
        Verdict {
            what: what.into(),
            ours: Some(seeds.iter().sum::<f64>() / seeds.len() as f64),
            outcome: outcome.into(),
            kind: "reproduction".into(),
            per_seed: seeds.iter().map(|&x| Some(x)).collect(),
        }
    }

    /// By hand: seeds 1, 2, 3 against 2, 3, 4 (each variance 1, three seeds): the means
    /// differ by 1, the standard error of the difference is sqrt(1/3 + 1/3) = 0.8165, so
    /// 1.2247 standard errors; against 3, 4, 5, by 2, 2.4495.
    #[test]
    fn moves_are_counted_in_standard_errors_of_the_difference() {
        let old = BTreeMap::from([(
            "e".to_string(),
            vec![
                v("a", "matches", &[1.0, 2.0, 3.0]),
                v("b", "matches", &[1.0, 2.0, 3.0]),
                v("c", "matches", &[1.0, 2.0, 3.0]),
                v("d", "matches", &[1.0, 2.0, 3.0]),
                v("e", "matches", &[1.0]),
                v("gone", "departs", &[1.0, 2.0]),
            ],
        )]);
        let mut old = old;
        old.insert("x".to_string(), vec![v("x", "matches", &[1.0])]);
        let new = BTreeMap::from([(
            "e".to_string(),
            vec![
                v("a", "matches", &[2.0, 3.0, 4.0]),
                v("b", "matches", &[3.0, 4.0, 5.0]),
                v("c", "departs", &[2.0, 3.0, 4.0]),
                v("d", "matches", &[1.0, 2.0, 3.0]),
                v("e", "matches", &[1.5]),
                v("added", "matches", &[1.0, 2.0]),
            ],
        )]);
        let c = compare_sets(&old, &new, 2.0);
        let row = |w: &str| c.rows.iter().find(|r| r.what == w).unwrap();
        assert_eq!(row("a").moved, Move::Within);
        assert!((row("a").z.unwrap() - 1.224_744_871).abs() < 1e-9);
        assert_eq!(row("b").moved, Move::Beyond);
        assert!((row("b").z.unwrap() - 2.449_489_743).abs() < 1e-9);
        assert_eq!(row("c").moved, Move::OutcomeChanged);
        assert_eq!(row("d").moved, Move::Identical);
        assert_eq!(row("e").moved, Move::NoStandardError);
        assert_eq!(row("gone").moved, Move::OnlyOld);
        assert_eq!(row("added").moved, Move::OnlyNew);
        assert_eq!(c.matching(), (5, 5));
        assert_eq!(
            (c.only_old.as_slice(), c.only_new.len()),
            (&["x".to_string()][..], 0)
        );
        // The outcome change first, then the most standard errors.
        let order: Vec<&str> = c.rows.iter().map(|r| r.what.as_str()).collect();
        assert_eq!(order, ["c", "b", "e", "a", "d", "gone", "added"]);
        // At k = 3 the second is within.
        let c3 = compare_sets(&old, &new, 3.0);
        assert_eq!(
            c3.rows.iter().find(|r| r.what == "b").unwrap().moved,
            Move::Within
        );
    }

    /// The committed report against itself: every verdict identical.
    #[test]
    fn a_report_compared_with_itself_is_identical() {
        let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/report");
        let c = compare(&report, &report, 2.0).unwrap();
        assert!(c.rows.len() > 100, "{}", c.rows.len());
        assert!(c.rows.iter().all(|r| r.moved == Move::Identical));
    }

    #[test]
    fn a_directory_without_summaries_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("csfq-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = compare(&dir, &dir, 2.0).unwrap_err().to_string();
        assert!(
            e.contains("no summary.json") && e.contains(&*dir.to_string_lossy()),
            "{e}"
        );
        std::fs::write(dir.join("summary.json"), "{\"id\": 3}").unwrap();
        let e = format!("{:#}", compare(&dir, &dir, 2.0).unwrap_err());
        assert!(e.contains("summary.json: not a reproduction's"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
