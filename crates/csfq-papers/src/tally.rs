//! The report's count, as a skeptic would sign it: reproductions apart from analyses, each
//! verdict counted once however many experiments repeat it, and a match counted as solid
//! only where it holds at every seed and across the unstated parameters' plausible values.

use std::collections::HashSet;

use crate::check::{Check, Kind, Outcome};

/// The count of one report's verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Reproductions that match at every seed and are not fragile.
    pub every_seed: usize,
    /// Reproductions that match on the mean but not at every seed (and are not fragile).
    pub seed_dependent: usize,
    /// Reproductions that match but flip across an unstated parameter's plausible values.
    pub fragile: usize,
    /// Reproductions that depart.
    pub departs: usize,
    /// Analyses of ours (no published number): how many match.
    pub analysis_matches: usize,
    /// Analyses of ours: how many.
    pub analyses: usize,
    /// Readings set aside (shown, not counted).
    pub set_aside: usize,
    /// Verdicts left out as repeats of one counted in another experiment (same
    /// comparison, same numbers at every seed).
    pub repeats: usize,
}

impl Tally {
    /// Counts `(experiment id, verdict)` pairs; `fragile(id, what)` says whether the
    /// sensitivity section found the verdict fragile.
    pub fn of<'a>(
        verdicts: impl IntoIterator<Item = (&'a str, &'a Check)>,
        fragile: impl Fn(&str, &str) -> bool,
    ) -> Tally {
        let mut t = Tally::default();
        let mut seen: HashSet<(String, Vec<u64>)> = HashSet::new();
        for (id, c) in verdicts {
            let numbers: Vec<u64> = if c.per_seed.is_empty() {
                vec![c.ours.to_bits()]
            } else {
                c.per_seed.iter().map(|p| p.1.to_bits()).collect()
            };
            if !seen.insert((c.what.clone(), numbers)) {
                t.repeats += 1;
                continue;
            }
            let matches = c.outcome() == Outcome::Matches;
            match c.kind {
                Kind::SetAside => t.set_aside += 1,
                Kind::Analysis => {
                    t.analyses += 1;
                    t.analysis_matches += usize::from(matches);
                }
                Kind::Reproduction if !matches => t.departs += 1,
                Kind::Reproduction if fragile(id, &c.what) => t.fragile += 1,
                Kind::Reproduction if c.flips_with_seed() => t.seed_dependent += 1,
                Kind::Reproduction => t.every_seed += 1,
            }
        }
        t
    }

    /// Reproductions counted.
    pub fn reproductions(&self) -> usize {
        self.every_seed + self.seed_dependent + self.fragile + self.departs
    }

    /// The headline sentence.
    pub fn sentence(&self) -> String {
        format!(
            "Of {} reproductions (each counted once), {} match at every seed and hold across the unstated parameters' plausible values; {} match on the mean but not at every seed (seed-dependent); {} match but are fragile (an unstated parameter's plausible value flips them); {} depart. Apart from these: {} analyses of ours with no published number behind them ({} match), {} readings of a source set aside and shown beside the one counted, and {} verdicts that repeat one counted in another experiment.",
            self.reproductions(),
            self.every_seed,
            self.seed_dependent,
            self.fragile,
            self.departs,
            self.analyses,
            self.analysis_matches,
            self.set_aside,
            self.repeats
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Read, Side};

    /// By hand: a solid match, a seed-dependent one, a fragile one, a departure, an
    /// analysis, a set-aside reading and a repeat, each counted where it belongs.
    #[test]
    fn each_verdict_is_counted_once_where_it_belongs() {
        let with_seeds = |c: Check, xs: &[f64]| {
            let mut c = c;
            c.per_seed = xs
                .iter()
                .enumerate()
                .map(|(i, &x)| (i as u64 + 1, x))
                .collect();
            c.ours = xs.iter().sum::<f64>() / xs.len() as f64;
            c
        };
        let ord = |what: &str| Check::ordering(what, "src", 0.0, "> 0", Side::AtLeast, 0.0);
        let solid = with_seeds(ord("solid"), &[1.0, 2.0]);
        let flipping = with_seeds(ord("flips"), &[-1.0, 2.0]);
        let fragile = with_seeds(ord("fragile"), &[1.0, 1.0]);
        let departs = with_seeds(ord("departs"), &[-1.0, -2.0]);
        let analysis = with_seeds(ord("analysis"), &[1.0, 1.0]).analysis();
        let aside = Check::noise("aside", "src", 5.0, 1.0, Read::Exact).set_aside();
        let repeat = solid.clone();
        let all = [
            ("a", &solid),
            ("a", &flipping),
            ("a", &fragile),
            ("a", &departs),
            ("b", &analysis),
            ("b", &aside),
            ("c", &repeat),
        ];
        let t = Tally::of(all, |_, what| what == "fragile");
        assert_eq!(
            t,
            Tally {
                every_seed: 1,
                seed_dependent: 1,
                fragile: 1,
                departs: 1,
                analysis_matches: 1,
                analyses: 1,
                set_aside: 1,
                repeats: 1,
            }
        );
        assert_eq!(t.reproductions(), 4);
    }
}
