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
    /// What we found about a departure (or about a match that needs a caveat).
    pub note: Option<String>,
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

    /// Adds what we found about a departure, only if the check departs.
    pub fn note_if_departs(self, note: impl Into<String>) -> Self {
        if self.outcome() == Outcome::Departs {
            self.note(note)
        } else {
            self
        }
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
        json!({
            "outcome": self.outcome().to_string(), "what": self.what, "source": self.source,
            "ours": finite(self.ours), "published": self.published, "tolerance": self.tolerance,
            "lo": finite(self.lo), "hi": finite(self.hi), "note": self.note,
        })
    }
}

impl fmt::Display for Check {
    /// `matches: CSFQ: the UDP's throughput, Mbps = 0.438; CSFQ paper, Fig. 3(b): 0.361,
    /// tolerance ±0.05 (band 0.311 .. 0.411). Note.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} = {}; {}: {}, tolerance {} (band {})",
            self.outcome(),
            self.what,
            fmt_num(self.ours),
            self.source,
            self.published,
            self.tolerance,
            self.band()
        )?;
        if let Some(n) = &self.note {
            write!(f, ". {n}")?;
        }
        Ok(())
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

    #[test]
    fn numbers_print_with_three_significant_digits() {
        assert_eq!(fmt_num(0.3614), "0.361");
        assert_eq!(fmt_num(5761.0), "5761");
        assert_eq!(fmt_num(-11.0), "-11");
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(12.34), "12.3");
    }
}
