//! Verdicts as computed comparisons: our number, the cited source's number or claim, and a
//! band; the verdict is whether our number falls in it. Nothing here is a fixed sentence: a
//! wrong number gives "departs". Every band has a [`Basis`], and only three kinds exist:
//! the source's own range, bound or ordering (no slack); our statistics ([`K_SD`] standard
//! deviations from the seeds, plus the published number's printed or plotted precision);
//! or a qualitative word read through the one table [`READINGS`]. [`Check::provenance`]
//! recomputes a band from its basis, so a band typed by hand is caught.

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

/// How many standard deviations wide a band from our statistics is, on each side: one
/// constant for every verdict.
pub const K_SD: f64 = 2.0;

/// Which way a claim runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Near the published number, from both sides.
    Both,
    /// At least the published number (less the band).
    AtLeast,
    /// At most the published number (plus the band).
    AtMost,
}

/// How precisely a published number can be read: the part of its band that no statistics
/// of ours can give.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Read {
    /// Printed in the text or a table, with this unit in its last digit (0.001 for
    /// "0.361"): half of it.
    Printed(f64),
    /// Read off a figure whose axis has ticks this far apart: half a tick.
    Figure(f64),
    /// Exact (an analytic value, a count the source states).
    Exact,
}

impl Read {
    /// A number as printed ("0.361"): the unit of its last digit (0.001; 1 for "5761").
    pub fn printed(text: &str) -> Read {
        let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
        Read::Printed(10f64.powi(-(decimals as i32)))
    }

    /// The half-width it adds to a band.
    pub fn half_width(self) -> f64 {
        match self {
            Read::Printed(u) | Read::Figure(u) => u / 2.0,
            Read::Exact => 0.0,
        }
    }

    fn words(self) -> String {
        match self {
            Read::Printed(u) => format!("half the last printed digit ({})", fmt_num(u / 2.0)),
            Read::Figure(t) => format!("half a tick of the figure's axis ({})", fmt_num(t / 2.0)),
            Read::Exact => "an exact value".to_string(),
        }
    }
}

/// A qualitative word of a source, read as a band on a measure: the one table
/// [`READINGS`] holds every reading, and every verdict on that word uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// "fair" (of a set of flows' throughputs over their shares).
    Fair,
    /// "not fair".
    NotFair,
    /// "proportional" (throughput to offered rate).
    Proportional,
    /// "good" (a flow's throughput over its share).
    Good,
    /// "falls" (a flow's throughput over its share).
    Falls,
    /// "effective" (a flow's throughput over its share).
    Effective,
    /// "slightly" (a difference of throughputs over the share).
    Slightly,
    /// "reasonably well" (a fraction of traffic delivered).
    ReasonablyWell,
    /// "perfectly" served (a fraction of traffic delivered).
    Perfectly,
    /// "lossless" (a fraction of traffic delivered).
    Lossless,
    /// "very close to 100%" (a utilization).
    NearFull,
    /// "almost one order of magnitude" (a ratio).
    OrderOfMagnitude,
    /// "much worse" or "far below" (a ratio).
    MuchWorse,
    /// "about" (a ratio of ours to the published number).
    About,
    /// "comparable" (the largest over the smallest).
    Comparable,
    /// "degrades sharply" (a throughput over the lower of its ends).
    Sharply,
    /// "does not degrade" (the same).
    DoesNotDegrade,
    /// "limited to its fair share" (throughput over the share).
    HeldToShare,
    /// "similar behavior" (a probability against a model's).
    Similar,
    /// "about 0", shut off (throughput over the share).
    ShutOff,
    /// "its fair share" (a flow said to get it: throughput over it).
    AtShare,
    /// "closely matches" (ours over an analysis's value).
    Closely,
    /// "quickly" (a reaction time, seconds).
    Quickly,
}

/// One reading: the word, the measure it is read on, and the band.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// The word.
    pub word: Word,
    /// As the sources write it.
    pub text: &'static str,
    /// The measure it is read on.
    pub measure: &'static str,
    /// The band's lower end.
    pub lo: f64,
    /// Its upper end.
    pub hi: f64,
    /// Why this band.
    pub why: &'static str,
}

const INF: f64 = f64::INFINITY;

/// Every qualitative word the sources use, read once.
pub const READINGS: &[Reading] = &[
    Reading { word: Word::Fair, text: "fair", measure: "Jain's index", lo: 0.995, hi: INF, why: "what CSFQ's published -11% .. +5% spread on csfq-fig3a gives" },
    Reading { word: Word::NotFair, text: "not fair", measure: "Jain's index", lo: -INF, hi: 0.995, why: "the complement of 'fair'" },
    Reading { word: Word::Proportional, text: "proportional", measure: "Jain's index of throughput / offered rate", lo: 0.95, hi: INF, why: "1 when every flow gets the same fraction of what it sends; 0.95 lets the log-scale figure's visible scatter through" },
    Reading { word: Word::Good, text: "good", measure: "throughput over the fair share", lo: 0.9, hi: INF, why: "within 10% of the share" },
    Reading { word: Word::Falls, text: "falls", measure: "throughput over the fair share", lo: -INF, hi: 0.75, why: "a quarter or more below the share" },
    Reading { word: Word::Effective, text: "effective", measure: "throughput over the fair share", lo: 0.5, hi: INF, why: "at least half the share" },
    Reading { word: Word::Slightly, text: "slightly", measure: "difference of throughputs over the fair share", lo: 0.0, hi: 0.15, why: "better, by at most 0.15 of the share" },
    Reading { word: Word::ReasonablyWell, text: "reasonably well", measure: "fraction of the traffic delivered", lo: 0.75, hi: 1.0, why: "three quarters or more (a fraction: at most 1)" },
    Reading { word: Word::Perfectly, text: "perfectly", measure: "fraction of the traffic delivered", lo: 0.95, hi: 1.0, why: "95% or more (a fraction: at most 1)" },
    Reading { word: Word::Lossless, text: "lossless", measure: "fraction of the traffic delivered", lo: 0.99, hi: 1.0, why: "99% or more (a fraction: at most 1)" },
    Reading { word: Word::NearFull, text: "very close to 100%", measure: "a utilization, or a rate over the rate it is said to reach", lo: 0.95, hi: INF, why: "95% or more" },
    Reading { word: Word::OrderOfMagnitude, text: "almost one order of magnitude", measure: "ratio", lo: 5.0, hi: INF, why: "at least half of ten" },
    Reading { word: Word::MuchWorse, text: "much worse, far below", measure: "ratio", lo: -INF, hi: 0.5, why: "at most half" },
    Reading { word: Word::About, text: "about", measure: "ratio of ours to the published number", lo: 0.5, hi: 2.0, why: "within a factor of 2" },
    Reading { word: Word::Comparable, text: "comparable", measure: "the largest over the smallest", lo: 1.0, hi: 1.5, why: "within a factor of 1.5" },
    Reading { word: Word::Sharply, text: "degrades sharply", measure: "throughput over the lower of its ends", lo: -INF, hi: 0.75, why: "a quarter or more below" },
    Reading { word: Word::DoesNotDegrade, text: "does not degrade", measure: "throughput over the lower of its ends", lo: 0.75, hi: INF, why: "less than a quarter below" },
    Reading { word: Word::HeldToShare, text: "limited to its fair share", measure: "throughput over the fair share", lo: 0.0, hi: 1.27, why: "at most what the CSFQ paper publishes for a UDP held by DRR on the same run, csfq-fig3b's 0.396 Mbps of a 0.3125 share" },
    Reading { word: Word::AtShare, text: "its fair share", measure: "throughput over the share it is said to get", lo: 0.9, hi: 1.1, why: "within 10% of it, as 'good' reads the lower side" },
    Reading { word: Word::Closely, text: "closely matches", measure: "ours over the analysis's value", lo: 0.8, hi: 1.25, why: "within a quarter either way" },
    Reading { word: Word::Quickly, text: "quickly", measure: "a reaction time, seconds", lo: 0.0, hi: 0.5, why: "within half a second, a few tens of the loops' 10 ms round trip" },
    Reading { word: Word::ShutOff, text: "about 0", measure: "throughput over the fair share", lo: 0.0, hi: 0.05, why: "at most a twentieth of the share" },
    Reading { word: Word::Similar, text: "similar", measure: "a probability minus the model's", lo: -0.02, hi: 0.02, why: "within a fiftieth of the 0 .. 1 scale, about the width of a plotted line" },
];

/// The reading of a word.
pub fn reading(word: Word) -> &'static Reading {
    READINGS
        .iter()
        .find(|r| r.word == word)
        .expect("every word has a reading")
}

/// What a published number is, for its variance in a noise band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Published {
    /// One run of a noisy experiment like ours: our one run's variance is its.
    OneRun,
    /// A mean with this standard error, stated by the source.
    Se(f64),
    /// An analytic value: no noise.
    Analytic,
}

/// Where a verdict's band comes from. These are the only sources a band may have; none is
/// a number typed after seeing ours.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// The source states the range, bound or ordering itself (its words in `published`,
    /// each finite end of the band among them): the band is it, with no slack.
    Stated,
    /// An ordering the source states, on a difference (pivot 0) or a ratio (pivot 1),
    /// with no slack.
    Ordering {
        /// 0 or 1.
        pivot: f64,
    },
    /// Around a published number: `K_SD` standard deviations of the difference between
    /// our mean over n seeds and the published number, `sqrt(var_pub + sd^2 / n)`, plus
    /// how precisely the number is read. `var_pub` is the published number's own
    /// variance: a run of the same noisy experiment as ours (our seeds' sample variance
    /// sd^2 estimates it), a mean whose standard error the source states, or an analytic
    /// value (none). Computed when the seeds are combined; one run gives `our_se` (a
    /// standard error within the run, where the analysis computes one) in place of sd.
    Noise {
        /// The published number.
        center: f64,
        /// Which way the claim runs.
        side: Side,
        /// How precisely it is read.
        read: Read,
        /// What the published number is.
        published: Published,
        /// Our standard error within one run, where the analysis computes one.
        our_se: f64,
        /// Our seeds' sample standard deviation, once combined.
        sd: Option<f64>,
        /// How many seeds.
        n: usize,
    },
    /// A qualitative word, read through [`READINGS`].
    Reading(Word),
}

impl Basis {
    /// The band this basis gives, (lo, hi).
    pub fn band(&self) -> Option<(f64, f64)> {
        match *self {
            Basis::Stated => None,
            Basis::Ordering { .. } => None,
            Basis::Noise {
                center,
                side,
                read,
                published,
                our_se,
                sd,
                n,
            } => {
                let h = noise_half_width(read, published, our_se, sd, n);
                Some(match side {
                    Side::Both => (center - h, center + h),
                    Side::AtLeast => (center - h, INF),
                    Side::AtMost => (-INF, center + h),
                })
            }
            Basis::Reading(w) => {
                let r = reading(w);
                Some((r.lo, r.hi))
            }
        }
    }

    /// The band's provenance in words, for the report.
    pub fn words(&self) -> String {
        match *self {
            Basis::Stated => "none: the source's own range or bound".to_string(),
            Basis::Ordering { .. } => "none: an ordering".to_string(),
            Basis::Noise {
                read,
                published,
                our_se,
                sd,
                n,
                ..
            } => {
                let h = noise_half_width(read, published, our_se, sd, n);
                let pub_var = match published {
                    Published::OneRun => {
                        "the published run's variance estimated by ours".to_string()
                    }
                    Published::Se(se) => format!("the source's standard error {}", fmt_num(se)),
                    Published::Analytic => "an analytic published value".to_string(),
                };
                let ours = match sd {
                    Some(sd) => format!(
                        "sd = {} our {n} seeds' sample standard deviation",
                        fmt_num(sd)
                    ),
                    None if our_se > 0.0 => {
                        format!("our standard error within the run {}", fmt_num(our_se))
                    }
                    None => "one run: no spread of ours".to_string(),
                };
                format!(
                    "±{} ({} standard deviations of ours against the published: {pub_var}; {ours}; plus {})",
                    fmt_num(h),
                    fmt_num(K_SD),
                    read.words()
                )
            }
            Basis::Reading(w) => {
                let r = reading(w);
                format!(
                    "'{}' read as {} in {} ({})",
                    r.text,
                    r.measure,
                    band_text(r.lo, r.hi),
                    r.why
                )
            }
        }
    }

    /// Its kind, for JSON.
    fn kind(&self) -> &'static str {
        match self {
            Basis::Stated => "stated",
            Basis::Ordering { .. } => "ordering",
            Basis::Noise { .. } => "noise",
            Basis::Reading(_) => "reading",
        }
    }
}

fn noise_half_width(
    read: Read,
    published: Published,
    our_se: f64,
    sd: Option<f64>,
    n: usize,
) -> f64 {
    let one_run = sd.map_or(our_se * our_se, |sd| sd * sd);
    let ours = sd.map_or(our_se * our_se, |sd| sd * sd / n.max(1) as f64);
    let pub_var = match published {
        Published::OneRun => one_run,
        Published::Se(se) => se * se,
        Published::Analytic => 0.0,
    };
    K_SD * (pub_var + ours).sqrt() + read.half_width()
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
    /// Where the band comes from.
    pub basis: Basis,
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
    /// What the verdict counts as in the report's totals.
    pub kind: Kind,
}

/// What a verdict counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A reproduction: our number against a published one.
    Reproduction,
    /// An analysis of ours with no published number behind it (a growth law, a setting
    /// the paper does not run): counted apart.
    Analysis,
    /// A reading of the source that the evidence does not support, judged beside the one
    /// that is counted (a table's rows read as printed where they are very likely
    /// swapped): shown, not counted.
    SetAside,
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
    fn new(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        basis: Basis,
        (lo, hi): (f64, f64),
    ) -> Self {
        Check {
            what: what.into(),
            source,
            published: published.into(),
            basis,
            lo,
            hi,
            ours,
            note: None,
            departure_note: None,
            per_seed: Vec::new(),
            alternative: None,
            kind: Kind::Reproduction,
        }
    }

    /// Near a published number from a noisy run: the band is [`Basis::Noise`], computed
    /// from our seeds when they are combined. `.at_least()` or `.at_most()` makes the claim
    /// one-sided.
    pub fn noise(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: f64,
        read: Read,
    ) -> Self {
        let basis = Basis::Noise {
            center: published,
            side: Side::Both,
            read,
            published: Published::OneRun,
            our_se: 0.0,
            sd: None,
            n: 1,
        };
        let band = basis.band().expect("noise gives a band");
        Check::new(what, source, ours, fmt_num(published), basis, band)
    }

    /// The source's own range or bound, stated in `published` (each finite end among its
    /// numbers), with no slack.
    pub fn stated(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        band: (f64, f64),
    ) -> Self {
        Check::new(what, source, ours, published, Basis::Stated, band)
    }

    /// An ordering the source states on a difference (`pivot` 0) or a ratio (`pivot` 1):
    /// at least the pivot for `Side::AtLeast`, at most for `Side::AtMost`.
    pub fn ordering(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        side: Side,
        pivot: f64,
    ) -> Self {
        let band = match side {
            Side::AtMost => (-INF, pivot),
            _ => (pivot, INF),
        };
        Check::new(
            what,
            source,
            ours,
            published,
            Basis::Ordering { pivot },
            band,
        )
    }

    /// A qualitative word of the source, read through [`READINGS`].
    pub fn reading(
        what: impl Into<String>,
        source: &'static str,
        ours: f64,
        published: impl Into<String>,
        word: Word,
    ) -> Self {
        let r = reading(word);
        Check::new(
            what,
            source,
            ours,
            published,
            Basis::Reading(word),
            (r.lo, r.hi),
        )
    }

    /// A one-sided noise claim: at least the published number less the band.
    pub fn at_least(self) -> Self {
        self.side(Side::AtLeast)
    }

    /// A one-sided noise claim: at most the published number plus the band.
    pub fn at_most(self) -> Self {
        self.side(Side::AtMost)
    }

    fn side(self, s: Side) -> Self {
        self.map_noise(|side, _, _| *side = s)
    }

    /// The standard error the source states for its number (a mean over its runs).
    pub fn published_se(self, se: f64) -> Self {
        self.map_noise(|_, published, _| *published = Published::Se(se))
    }

    /// The published number is analytic (a model's value): it has no noise.
    pub fn analytic(self) -> Self {
        self.map_noise(|_, published, _| *published = Published::Analytic)
    }

    /// Our number's standard error within the one run it comes from (where the analysis
    /// computes one, e.g. a proportion's binomial error); used while there is one seed.
    pub fn our_se(self, se: f64) -> Self {
        self.map_noise(|_, _, our_se| *our_se = se)
    }

    /// Changes a noise basis (nothing else) and recomputes the band from it.
    fn map_noise(mut self, f: impl FnOnce(&mut Side, &mut Published, &mut f64)) -> Self {
        if let Basis::Noise {
            side,
            published,
            our_se,
            ..
        } = &mut self.basis
        {
            f(side, published, our_se);
        }
        self.rebuild()
    }

    /// Counts the verdict as an analysis of ours, apart from the reproductions.
    pub fn analysis(mut self) -> Self {
        self.kind = Kind::Analysis;
        self
    }

    /// Shows the verdict as a reading set aside, not counted.
    pub fn set_aside(mut self) -> Self {
        self.kind = Kind::SetAside;
        self
    }

    fn rebuild(mut self) -> Self {
        if let Some((lo, hi)) = self.basis.band() {
            self.lo = lo;
            self.hi = hi;
        }
        self
    }

    /// The band's provenance in words.
    pub fn tolerance(&self) -> String {
        self.basis.words()
    }

    /// Whether the band is what its basis gives: recomputed from the basis (the reading's
    /// table entry, the seeds' spread), or, for a stated band, each finite end among the
    /// published text's numbers and for an ordering the pivot 0 or 1. `Err` names what
    /// is wrong: a band typed by hand, not derived.
    pub fn provenance(&self) -> Result<(), String> {
        let close = |a: f64, b: f64| {
            (a.is_infinite() && b.is_infinite() && a.signum() == b.signum())
                || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
        };
        match &self.basis {
            Basis::Stated => {
                let nums = numbers_in(&self.published);
                for end in [self.lo, self.hi].into_iter().filter(|x| x.is_finite()) {
                    if !nums.iter().any(|&n| close(n, end) || close(n / 100.0, end)) {
                        return Err(format!(
                            "{}: band end {} is not among the published text's numbers ({:?})",
                            self.what,
                            fmt_num(end),
                            self.published
                        ));
                    }
                }
                Ok(())
            }
            Basis::Ordering { pivot } => {
                let ok = (*pivot == 0.0 || *pivot == 1.0)
                    && ((self.lo == *pivot && self.hi == INF)
                        || (self.lo == -INF && self.hi == *pivot));
                ok.then_some(()).ok_or_else(|| {
                    format!(
                        "{}: an ordering's band is not [pivot, inf) or (-inf, pivot]",
                        self.what
                    )
                })
            }
            basis => {
                let (lo, hi) = basis.band().expect("a band");
                if close(lo, self.lo) && close(hi, self.hi) {
                    Ok(())
                } else {
                    Err(format!(
                        "{}: band {} is not the {} basis's {}",
                        self.what,
                        band_text(self.lo, self.hi),
                        basis.kind(),
                        band_text(lo, hi)
                    ))
                }
            }
        }
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
    fn band_words(&self) -> String {
        band_text(self.lo, self.hi)
    }

    /// The basis as JSON: its kind and what the band was computed from.
    fn basis_json(&self) -> Value {
        let finite = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        match &self.basis {
            Basis::Stated => json!({"kind": "stated"}),
            Basis::Ordering { pivot } => json!({"kind": "ordering", "pivot": pivot}),
            Basis::Noise {
                center,
                side,
                read,
                published,
                our_se,
                sd,
                n,
            } => json!({
                "kind": "noise", "k": K_SD, "center": center,
                "side": match side { Side::Both => "both", Side::AtLeast => "at_least", Side::AtMost => "at_most" },
                "read_half_width": read.half_width(),
                "published_se": match published { Published::OneRun => Value::Null, Published::Se(se) => json!(se), Published::Analytic => json!(0.0) },
                "published": match published { Published::OneRun => "one_run", Published::Se(_) => "mean_with_se", Published::Analytic => "analytic" },
                "our_se": our_se, "sd": sd.map(finite), "n": n,
            }),
            Basis::Reading(w) => {
                let r = reading(*w);
                json!({"kind": "reading", "word": r.text, "measure": r.measure, "lo": finite(r.lo), "hi": finite(r.hi)})
            }
        }
    }

    /// As JSON, for `summary.json`.
    pub fn to_json(&self) -> Value {
        let finite = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        let notes = self.notes();
        let (in_band, seeds) = self.seeds_in_band();
        json!({
            "outcome": self.outcome().to_string(), "what": self.what, "source": self.source,
            "ours": finite(self.ours), "published": self.published, "tolerance": self.tolerance(),
            "basis": self.basis_json(),
            "kind": match self.kind { Kind::Reproduction => "reproduction", Kind::Analysis => "analysis", Kind::SetAside => "set_aside" },
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
        let seeds: Vec<u64> = self.per_seed.iter().map(|p| p.0).collect();
        if self.per_seed.len() > 1 && self.per_seed.iter().all(|p| p.1 == self.per_seed[0].1) {
            // No randomness reaches this number: one run, whatever the seed.
            write!(
                f,
                " (one run: every seed of {} gives the same number)",
                seeds_words(&seeds)
            )?;
        } else if !self.per_seed.is_empty() {
            let (lo, hi) = self
                .per_seed
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    (lo.min(p.1), hi.max(p.1))
                });
            let (k, n) = self.seeds_in_band();
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
            self.tolerance(),
            self.band_words()
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
            out.per_seed = same.iter().map(|(seed, x)| (*seed, x.ours)).collect();
            let values: Vec<f64> = out.per_seed.iter().map(|p| p.1).collect();
            if let Basis::Noise { center, sd, n, .. } = &mut out.basis {
                // The center may be computed from the runs (it moves with the seed): its
                // mean over the seeds.
                *center = mean_of(|x| match x.basis {
                    Basis::Noise { center, .. } => center,
                    _ => f64::NAN,
                });
                *n = values.len();
                *sd = (values.len() > 1).then(|| sample_sd(&values));
                let (lo, hi) = out.basis.band().expect("noise gives a band");
                out.lo = lo;
                out.hi = hi;
            } else {
                out.lo = mean_of(|x| x.lo);
                out.hi = mean_of(|x| x.hi);
            }
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

/// The sample standard deviation (n - 1 in the denominator).
pub fn sample_sd(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// A band as text: "a .. b", ">= a" or "<= b".
pub fn band_text(lo: f64, hi: f64) -> String {
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => format!("{} .. {}", fmt_num(lo), fmt_num(hi)),
        (true, false) => format!(">= {}", fmt_num(lo)),
        _ => format!("<= {}", fmt_num(hi)),
    }
}

/// The numbers written in a text ("-11% .. +5%" gives -11 and 5; "1 - 1/load = 0.5" gives
/// 1, 1 and 0.5).
fn numbers_in(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let neg = b[i] == b'-' && i + 1 < b.len() && b[i + 1].is_ascii_digit();
        let start = if neg { i + 1 } else { i };
        if start < b.len()
            && b[start].is_ascii_digit()
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
        {
            let mut j = start;
            while j < b.len()
                && (b[j].is_ascii_digit()
                    || (b[j] == b'.' && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
            {
                j += 1;
            }
            if let Ok(x) = text[start..j].parse::<f64>() {
                out.push(if neg { -x } else { x });
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
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
        let c = Check::noise("x", "src", 0.37, 0.361, Read::Figure(0.1));
        assert_eq!((c.lo, c.hi), (0.311, 0.411));
        assert_eq!(c.outcome(), Outcome::Matches);
        assert_eq!(c.judge(0.438), Outcome::Departs);
        assert_eq!(c.judge(f64::NAN), Outcome::Departs);
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
        let c = Check::stated("y", "src", 9.27, "> 8", (8.0, f64::INFINITY));
        assert_eq!(c.outcome(), Outcome::Matches);
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
        let c = Check::ordering("z", "src", -3.0, "< 0", Side::AtMost, 0.0);
        assert_eq!(c.judge(c.wrong_number()), Outcome::Departs);
    }

    /// Three seeds of two verdicts: the mean is judged, each seed's number is kept, and a
    /// departure's note shows only when the mean departs.
    #[test]
    fn seeds_combine_into_a_mean_judged_by_the_band() {
        let at = |x: f64, y: f64| {
            vec![
                Check::stated("a", "src", x, "0.9 .. 1.1", (0.9, 1.1))
                    .note_if_departs("why a departs"),
                Check::ordering("b", "src", y, "> 0", Side::AtLeast, 0.0),
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
                Check::ordering("z", "src", 1.0, "> 0", Side::AtLeast, 0.0),
                Check::noise("x", "src", x, 1.0, Read::Figure(1.0))
                    .alternative("the better of x, y", Prefer::Lower),
                Check::noise("y", "src", y, 1.0, Read::Figure(1.0))
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
            Check::noise("x", "src", 1.0, 1.0, Read::Figure(1.0)).alternative("g", Prefer::Higher),
            Check::noise("y", "src", 1.2, 1.0, Read::Figure(1.0)).alternative("g", Prefer::Higher),
        ]);
        assert_eq!(hi.len(), 1);
        assert_eq!(hi[0].ours, 1.2);
    }

    /// A noise band is computed from the seeds: K_SD sample standard deviations of one run
    /// against our mean, plus the reading; its center, where computed from the runs, is
    /// their mean. A stated band passes unchanged.
    #[test]
    fn a_noise_band_is_computed_from_the_seeds() {
        let at =
            |x: f64, center: f64| vec![Check::noise("a", "src", x, center, Read::Printed(0.1))];
        let cs = combine_seeds(vec![(1, at(1.0, 1.0)), (2, at(3.0, 2.0))]);
        // sd of (1, 3) = sqrt(2); half-width 2 sqrt(2 + 2/2) + 0.05 = 2 sqrt(3) + 0.05.
        let h = 2.0 * 3f64.sqrt() + 0.05;
        assert!((cs[0].lo - (1.5 - h)).abs() < 1e-12 && (cs[0].hi - (1.5 + h)).abs() < 1e-12);
        assert_eq!(cs[0].outcome(), Outcome::Matches);
        assert!(cs[0].provenance().is_ok());
        assert!(
            cs[0].tolerance().contains("sample standard deviation"),
            "{}",
            cs[0].tolerance()
        );
        // One-sided: only the lower end.
        let one = combine_seeds(vec![
            (
                1,
                vec![Check::noise("a", "src", 1.0, 2.0, Read::Exact).at_least()],
            ),
            (
                2,
                vec![Check::noise("a", "src", 3.0, 2.0, Read::Exact).at_least()],
            ),
        ]);
        assert!(one[0].hi.is_infinite() && (one[0].lo - (2.0 - 2.0 * 3f64.sqrt())).abs() < 1e-12);
    }

    /// A band typed by hand, not derived from its basis, fails the provenance check: a
    /// widened noise band, a reading off its table, a stated band whose end is not in the
    /// published text, an ordering with slack.
    #[test]
    fn a_typed_band_fails_its_provenance() {
        let mut c = Check::noise("a", "src", 1.0, 1.0, Read::Figure(0.1));
        assert!(c.provenance().is_ok());
        c.hi += 0.3;
        assert!(c.provenance().is_err());
        let mut c = Check::reading("b", "src", 0.99, "fair", Word::Fair);
        assert!(c.provenance().is_ok());
        c.lo = 0.95;
        assert!(c.provenance().unwrap_err().contains("reading"));
        let c = Check::stated(
            "c",
            "src",
            -12.0,
            "every flow within -11% .. +5%",
            (-11.0, 5.0),
        );
        assert!(c.provenance().is_ok());
        let c = Check::stated(
            "c",
            "src",
            -12.0,
            "every flow within -11% .. +5%",
            (-14.0, 8.0),
        );
        assert!(c.provenance().unwrap_err().contains("-14"));
        let mut c = Check::ordering("d", "src", -0.04, "CSFQ >= FRED", Side::AtLeast, 0.0);
        assert!(c.provenance().is_ok());
        c.lo = -0.05;
        assert!(c.provenance().is_err());
        // Every word of the table reads to a band with a finite end.
        for r in READINGS {
            assert!(r.lo.is_finite() || r.hi.is_finite(), "{}", r.text);
            assert_eq!(reading(r.word).text, r.text);
        }
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
