//! Verdicts as computed comparisons: our number, the cited source's number or claim, and a
//! stated tolerance, which together give a band; the verdict is whether our number falls
//! in it. Nothing here is a fixed sentence: a wrong number gives "departs".

use std::fmt;

use serde_json::{json, Value};

/// Whether our number falls in the band.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Within the band.
    Matches,
    /// Outside it.
    Departs,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Matches => "matches",
            Outcome::Departs => "departs",
        })
    }
}

/// One comparison of our number with a published one.
#[derive(Debug, Clone)]
pub struct Check {
    /// What is compared, with its unit ("CSFQ: the UDP's throughput, Mbps").
    pub what: String,
    /// Where the published number or claim comes from ("CSFQ paper, Fig. 3(b)").
    pub source: &'static str,
    /// The published number or claim as the source states it ("0.361", "> 8").
    pub published: String,
    /// The tolerance, and why that much ("±10% of the published value").
    pub tolerance: String,
    /// The band our number must fall in, the tolerance included; either end may be
    /// infinite, never both.
    pub lo: f64,
    /// Upper end of the band.
    pub hi: f64,
    /// Our number.
    pub ours: f64,
    /// A caveat shown whatever the outcome.
    pub note: Option<String>,
    /// What we found about a departure: shown only while the check departs, so it follows
    /// the outcome once the seeds are combined.
    pub departure_note: Option<String>,
    /// Our number at each seed, when the verdict is judged over several (then `ours` is
    /// their mean); empty for a single run.
    pub per_seed: Vec<(u64, f64)>,
    /// One of several alternatives judged as one verdict (the paper's "version of FRED
    /// which performed better"): the group's name, the verdict's text once chosen, and
    /// which is better. The better one, by its number over all the seeds, is kept.
    pub alternative: Option<Alternative>,
}

/// See [`Check::alternative`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alternative {
    /// What the chosen verdict compares ("FRED, the better of FRED-1 and FRED-2: ...").
    pub group: &'static str,
    /// Which of the alternatives' numbers is the better.
    pub prefer: Prefer,
}

/// The better of two numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    /// The lower.
    Lower,
    /// The higher.
    Higher,
}

impl Check {
    /// `ours` within `tol` of `published` (same units).
    pub fn near(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: f64,
        tol: f64,
    ) -> Self {
        Check {
            what: what.into(),
            source,
            published: fmt_num(published),
            tolerance: format!("±{}", fmt_num(tol)),
            lo: published - tol,
            hi: published + tol,
            ours,
            note: None,
            departure_note: None,
            per_seed: Vec::new(),
            alternative: None,
        }
    }

    /// `ours` within a fraction `rel` of `published`.
    pub fn relative(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: f64,
        rel: f64,
    ) -> Self {
        Check {
            tolerance: format!("±{}% of the published value", fmt_num(rel * 100.0)),
            ..Check::near(what, source, ours, published, published.abs() * rel)
        }
    }

    /// `ours` in `[lo, hi]`, a published range widened by a stated tolerance.
    pub fn within(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        (lo, hi): (f64, f64),
        tolerance: impl Into<String>,
    ) -> Self {
        Check {
            what: what.into(),
            source,
            published: published.into(),
            tolerance: tolerance.into(),
            lo,
            hi,
            ours,
            note: None,
            departure_note: None,
            per_seed: Vec::new(),
            alternative: None,
        }
    }

    /// `ours` at least `bound` (a published lower bound or an ordering, tolerance
    /// included).
    pub fn at_least(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        bound: f64,
        tolerance: impl Into<String>,
    ) -> Self {
        Check::within(
            what,
            source,
            ours,
            published,
            (bound, f64::INFINITY),
            tolerance,
        )
    }

    /// `ours` at most `bound`.
    pub fn at_most(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        bound: f64,
        tolerance: impl Into<String>,
    ) -> Self {
        Check::within(
            what,
            source,
            ours,
            published,
            (f64::NEG_INFINITY, bound),
            tolerance,
        )
    }

    /// Adds what we found (why it departs, or a caveat).
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Replaces the published text (for a claim compared as a number, e.g. "close to").
    pub fn with_published(mut self, published: impl Into<String>) -> Self {
        self.published = published.into();
        self
    }

    /// Makes this verdict one of a group of alternatives of which only the better is
    /// judged (see [`choose_alternatives`]).
    pub fn alternative(mut self, group: &'static str, prefer: Prefer) -> Self {
        self.alternative = Some(Alternative { group, prefer });
        self
    }

    /// Replaces the tolerance's text (the band stays).
    pub fn with_tolerance(mut self, tolerance: impl Into<String>) -> Self {
        self.tolerance = tolerance.into();
        self
    }

    /// Adds what we found about a departure, shown only if the check departs (judged
    /// again when the seeds are combined).
    pub fn note_if_departs(mut self, note: impl Into<String>) -> Self {
        self.departure_note = Some(note.into());
        self
    }

    /// The notes shown with the verdict: the caveat, and the departure's note if it
    /// departs.
    pub fn notes(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.note.iter().map(String::as_str).collect();
        if self.outcome() == Outcome::Departs {
            v.extend(self.departure_note.as_deref());
        }
        v
    }

    /// Seeds whose own number falls in the band, and how many seeds there are (1, 1 or
    /// 0, 1 for a single run).
    pub fn seeds_in_band(&self) -> (usize, usize) {
        if self.per_seed.is_empty() {
            return (usize::from(self.outcome() == Outcome::Matches), 1);
        }
        let k = self
            .per_seed
            .iter()
            .filter(|(_, x)| self.judge(*x) == Outcome::Matches)
            .count();
        (k, self.per_seed.len())
    }

    /// A verdict whose outcome differs from some seed's own: the mean matches while a seed
    /// departs, or the other way round.
    pub fn flips_with_seed(&self) -> bool {
        let (k, n) = self.seeds_in_band();
        k != 0 && k != n
    }

    /// The verdict on a number: in the band or not (NaN departs).
    pub fn judge(&self, x: f64) -> Outcome {
        if x >= self.lo && x <= self.hi {
            Outcome::Matches
        } else {
            Outcome::Departs
        }
    }

    /// The verdict on our number.
    pub fn outcome(&self) -> Outcome {
        self.judge(self.ours)
    }

    /// A number outside the band, for tests that show the check can fail.
    #[cfg(test)]
    pub fn wrong_number(&self) -> f64 {
        if self.hi.is_finite() {
            self.hi + self.hi.abs().max(1.0)
        } else {
            self.lo - self.lo.abs().max(1.0)
        }
    }

    /// The band as text.
    fn band(&self) -> String {
        match (self.lo.is_finite(), self.hi.is_finite()) {
            (true, true) => format!("{} .. {}", fmt_num(self.lo), fmt_num(self.hi)),
            (true, false) => format!(">= {}", fmt_num(self.lo)),
            _ => format!("<= {}", fmt_num(self.hi)),
        }
    }

    /// As JSON, for `summary.json`.
    pub fn to_json(&self) -> Value {
        let finite = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        let notes = self.notes();
        let (in_band, seeds) = self.seeds_in_band();
        json!({
            "outcome": self.outcome().to_string(), "what": self.what, "source": self.source,
            "ours": finite(self.ours), "published": self.published, "tolerance": self.tolerance,
            "lo": finite(self.lo), "hi": finite(self.hi),
            "note": (!notes.is_empty()).then(|| notes.join(". ")),
            "seeds": self.per_seed.iter().map(|p| p.0).collect::<Vec<_>>(),
            "per_seed": self.per_seed.iter().map(|p| finite(p.1)).collect::<Vec<_>>(),
            "seeds_in_band": in_band, "seeds_judged": seeds,
        })
    }
}

impl fmt::Display for Check {
    /// `matches: CSFQ: the UDP's throughput, Mbps = 0.438; CSFQ paper, Fig. 3(b): 0.361,
    /// tolerance ±0.05 (band 0.311 .. 0.411). Note.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} = {}",
            self.outcome(),
            self.what,
            fmt_num(self.ours)
        )?;
        if !self.per_seed.is_empty() {
            let (lo, hi) = self
                .per_seed
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    (lo.min(p.1), hi.max(p.1))
                });
            let (k, n) = self.seeds_in_band();
            let seeds: Vec<u64> = self.per_seed.iter().map(|p| p.0).collect();
            write!(
                f,
                " (mean of seeds {}: range {} .. {}, in the band at {k} of {n}{})",
                seeds_words(&seeds),
                fmt_num(lo),
                fmt_num(hi),
                if self.flips_with_seed() {
                    "; flips with the seed"
                } else {
                    ""
                }
            )?;
        }
        write!(
            f,
            "; {}: {}, tolerance {} (band {})",
            self.source,
            self.published,
            self.tolerance,
            self.band()
        )?;
        for n in self.notes() {
            write!(f, ". {n}")?;
        }
        Ok(())
    }
}

/// One experiment's verdicts at several seeds combined into one verdict each: our number is
/// the mean over the seeds, judged by the band, with each seed's number kept beside it.
/// Verdicts are paired by what they compare, in the first seed's order; a verdict absent
/// at some seed is judged over the seeds that have it. A band computed from the runs (it
/// moves with the seed) is replaced by its mean over the seeds, and the verdict says so.
/// One seed gives its verdicts unchanged.
pub fn combine_seeds(mut runs: Vec<(u64, Vec<Check>)>) -> Vec<Check> {
    if runs.len() <= 1 {
        return choose_alternatives(runs.pop().map(|r| r.1).unwrap_or_default());
    }
    let (_, first) = &runs[0];
    let combined = first
        .iter()
        .map(|c| {
            let same: Vec<(u64, &Check)> = runs
                .iter()
                .filter_map(|(seed, cs)| cs.iter().find(|x| x.what == c.what).map(|x| (*seed, x)))
                .collect();
            let mean_of = |f: fn(&Check) -> f64| {
                let v = f(same[0].1);
                if same.iter().all(|(_, x)| f(x) == v) {
                    v
                } else {
                    same.iter().map(|(_, x)| f(x)).sum::<f64>() / same.len() as f64
                }
            };
            let mut out = c.clone();
            out.lo = mean_of(|x| x.lo);
            out.hi = mean_of(|x| x.hi);
            if out.lo != c.lo || out.hi != c.hi {
                out.tolerance = format!(
                    "{}; the band is computed from each seed's runs, and its mean over the seeds is shown",
                    c.tolerance
                );
            }
            out.per_seed = same.iter().map(|(seed, x)| (*seed, x.ours)).collect();
            out.ours = out.per_seed.iter().map(|p| p.1).sum::<f64>() / out.per_seed.len() as f64;
            out
        })
        .collect();
    choose_alternatives(combined)
}

/// Of each group of alternatives ([`Check::alternative`]), keeps the better by our number
/// (over all the seeds, once they are combined), in the place of the group's first, as
/// the group's verdict: it says which alternative it is. Other verdicts pass unchanged.
pub fn choose_alternatives(checks: Vec<Check>) -> Vec<Check> {
    let better = |a: &Check, b: &Check, prefer: Prefer| match prefer {
        Prefer::Lower => b.ours < a.ours,
        Prefer::Higher => b.ours > a.ours,
    };
    let mut out: Vec<Check> = Vec::with_capacity(checks.len());
    for c in checks {
        let Some(alt) = c.alternative else {
            out.push(c);
            continue;
        };
        match out
            .iter_mut()
            .find(|x| x.alternative.is_some_and(|a| a.group == alt.group))
        {
            Some(kept) if better(kept, &c, alt.prefer) => *kept = named(c, alt),
            Some(_) => {}
            None => out.push(named(c, alt)),
        }
    }
    out
}

/// An alternative as its group's verdict: the group's text, saying which it is.
fn named(mut c: Check, alt: Alternative) -> Check {
    let chosen = std::mem::replace(&mut c.what, alt.group.to_string());
    let which = format!("the better here: {chosen}");
    c.note = Some(match c.note.take() {
        Some(n) => format!("{which}. {n}"),
        None => which,
    });
    c
}

/// Seeds as `--seeds` takes them: "1-8" for a run of consecutive ones, else "1,3,5".
pub fn seeds_words(seeds: &[u64]) -> String {
    match seeds {
        [first, .., last] if seeds.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("{first}-{last}")
        }
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// A number with three significant digits (at least), no trailing zeros.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let digits = if x == 0.0 {
        0
    } else {
        (2 - x.abs().log10().floor() as i32).clamp(0, 4) as usize
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_judge_and_can_fail() {
        let c = Check::relative("x", "src", 0.37, 0.361, 0.1);
        assert_eq!(c.outcome(), Outcome::Matches);
        assert_eq!(c.judge(0.438), Outcome::Departs);
        assert_eq!(c.judge(f64::NAN), Outcome::Departs);
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
        let c = Check::at_least("y", "src", 9.27, "> 8", 8.0, "none");
        assert_eq!(c.outcome(), Outcome::Matches);
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
        let c = Check::at_most("z", "src", -3.0, "< 0", 0.0, "none");
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
    }

    /// Three seeds of two verdicts: the mean is judged, each seed's number is kept, and a
    /// departure's note shows only when the mean departs.
    #[test]
    fn seeds_combine_into_a_mean_judged_by_the_band() {
        let at = |x: f64, y: f64| {
            vec![
                Check::near("a", "src", x, 1.0, 0.1).note_if_departs("why a departs"),
                Check::at_least("b", "src", y, "> 0", 0.0, "none"),
            ]
        };
        // a: 0.95, 1.05, 1.2 -> mean 1.0667, in the band at 2 of 3 seeds.
        // b: -1, 2, 2 -> mean 1, in the band at 2 of 3.
        let cs = combine_seeds(vec![
            (1, at(0.95, -1.0)),
            (2, at(1.05, 2.0)),
            (3, at(1.2, 2.0)),
        ]);
        assert_eq!(cs.len(), 2);
        assert!((cs[0].ours - 3.2 / 3.0).abs() < 1e-12);
        assert_eq!(cs[0].outcome(), Outcome::Matches);
        assert_eq!(cs[0].seeds_in_band(), (2, 3));
        assert!(cs[0].flips_with_seed());
        assert!(cs[0].notes().is_empty(), "{:?}", cs[0].notes());
        assert_eq!(cs[1].ours, 1.0);
        assert_eq!(cs[1].per_seed, vec![(1, -1.0), (2, 2.0), (3, 2.0)]);
        let text = cs[0].to_string();
        assert!(
            text.contains(
                "mean of seeds 1-3: range 0.95 .. 1.2, in the band at 2 of 3; flips with the seed"
            ),
            "{text}"
        );
        // All three seeds far off: the mean departs and the note shows.
        let cs = combine_seeds(vec![
            (1, at(2.0, 1.0)),
            (2, at(3.0, 1.0)),
            (3, at(2.5, 1.0)),
        ]);
        assert_eq!(cs[0].outcome(), Outcome::Departs);
        assert_eq!(cs[0].notes(), vec!["why a departs"]);
        assert!(!cs[0].flips_with_seed() && !cs[1].flips_with_seed());
        // One seed: unchanged.
        let one = combine_seeds(vec![(4, at(0.5, 1.0))]);
        assert!(one[0].per_seed.is_empty() && one[0].ours == 0.5);
    }

    /// Of a group of alternatives the better by the mean over the seeds is kept, in the
    /// group's first place and under the group's name, whatever each seed prefers: here
    /// "x" is lower at seed 1 (1.0 against 1.2) but "y" over both (1.5 against 2.0 .. ).
    #[test]
    fn alternatives_are_chosen_on_the_mean_over_the_seeds() {
        let at = |x: f64, y: f64| {
            vec![
                Check::at_least("z", "src", 1.0, "> 0", 0.0, "none"),
                Check::near("x", "src", x, 1.0, 0.5)
                    .alternative("the better of x, y", Prefer::Lower),
                Check::near("y", "src", y, 1.0, 0.5)
                    .alternative("the better of x, y", Prefer::Lower),
            ]
        };
        let cs = combine_seeds(vec![(1, at(1.0, 1.2)), (2, at(3.0, 1.8))]);
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[1].what, "the better of x, y");
        assert_eq!(cs[1].per_seed, vec![(1, 1.2), (2, 1.8)]);
        assert!((cs[1].ours - 1.5).abs() < 1e-12);
        assert_eq!(cs[1].note.as_deref(), Some("the better here: y"));
        // One seed: its own better one.
        let one = combine_seeds(vec![(1, at(1.0, 1.2))]);
        assert_eq!(
            (one[1].what.as_str(), one[1].ours),
            ("the better of x, y", 1.0)
        );
        assert_eq!(one[1].note.as_deref(), Some("the better here: x"));
        // Prefer::Higher picks the other way.
        let hi = choose_alternatives(vec![
            Check::near("x", "src", 1.0, 1.0, 0.5).alternative("g", Prefer::Higher),
            Check::near("y", "src", 1.2, 1.0, 0.5).alternative("g", Prefer::Higher),
        ]);
        assert_eq!(hi.len(), 1);
        assert_eq!(hi[0].ours, 1.2);
    }

    /// A band computed from the runs is replaced by its mean, and the tolerance says so.
    #[test]
    fn a_band_that_moves_with_the_seed_is_averaged() {
        let cs = combine_seeds(vec![
            (1, vec![Check::near("a", "src", 1.0, 1.0, 0.1)]),
            (2, vec![Check::near("a", "src", 1.0, 2.0, 0.1)]),
        ]);
        assert!((cs[0].lo - 1.4).abs() < 1e-12 && (cs[0].hi - 1.6).abs() < 1e-12);
        assert_eq!(cs[0].outcome(), Outcome::Departs);
        assert!(cs[0].tolerance.contains("computed from each seed's runs"));
    }

    #[test]
    fn numbers_print_with_three_significant_digits() {
        assert_eq!(fmt_num(0.3614), "0.361");
        assert_eq!(fmt_num(5761.0), "5761");
        assert_eq!(fmt_num(-11.0), "-11");
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(12.34), "12.3");
    }
}
