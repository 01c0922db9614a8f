//! The published experiments: their scenarios (the files under `scenarios/`), the
//! variations each runs, and the numbers the papers report, so results can be printed
//! beside them.

use std::path::Path;

use crate::scenario::{DisciplineKind, ScenarioFile};

/// An experiment of the papers.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    /// Identifier, as in EXPERIMENTS.md (`csfq-fig3a`).
    pub id: &'static str,
    /// One sentence on the setup.
    pub setup: &'static str,
    /// What the paper reports.
    pub published: &'static str,
    /// The scenario file's text.
    pub scenario_toml: &'static str,
    /// The disciplines it compares.
    pub disciplines: &'static [DisciplineKind],
    /// What varies between runs.
    pub sweep: Sweep,
}

/// The runs of an experiment besides the discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// One run per discipline.
    None,
    /// csfq-fig4: N = 2..=32 flows, one TCP and N-1 UDP at twice 10/N Mbps.
    Fig4Flows,
}

use DisciplineKind::*;

const ALL_SIX: &[DisciplineKind] = &[Fifo, Red, Fred1, Fred2, Drr, Csfq];

/// Every experiment reproduced so far.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        id: "csfq-fig3a",
        setup: "32 UDP flows on one 10 Mbps link; flow i sends (i+1) x its 0.3125 Mbps fair share",
        published: "FIFO, RED, FRED-1: share proportional to rate; DRR fair; CSFQ every flow within -11%..+5% of 0.3125 Mbps; FRED-2 less precise than DRR",
        scenario_toml: include_str!("../../../scenarios/csfq-fig3a.toml"),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
    },
    Experiment {
        id: "csfq-fig3b",
        setup: "one UDP flow at 10 Mbps against 31 TCP flows on one 10 Mbps link",
        published: "UDP throughput: FIFO > 8, RED > 8, FRED ~1.8, DRR 0.396, CSFQ 0.361 Mbps",
        scenario_toml: include_str!("../../../scenarios/csfq-fig3b.toml"),
        disciplines: ALL_SIX,
        sweep: Sweep::None,
    },
    Experiment {
        id: "csfq-fig4",
        setup: "one TCP flow against N-1 UDP flows each sending twice the 10/N Mbps fair share, N = 2..32",
        published: "DRR good up to N ~ 22 then falls; CSFQ beats DRR for large N and is >= FRED throughout; CSFQ keeps 55-90% of the fair share (TUF paper)",
        scenario_toml: include_str!("../../../scenarios/csfq-fig4.toml"),
        disciplines: ALL_SIX,
        sweep: Sweep::Fig4Flows,
    },
];

/// The UDP throughput (Mbit/s) the CSFQ paper reports for csfq-fig3b, per discipline;
/// `(value, is_lower_bound)`.
pub fn fig3b_published_udp(d: DisciplineKind) -> Option<(f64, bool)> {
    match d {
        Fifo | Red => Some((8.0, true)),
        Fred1 | Fred2 => Some((1.8, false)),
        Drr => Some((0.396, false)),
        Csfq => Some((0.361, false)),
    }
}

/// Looks an experiment up by id.
pub fn find(id: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.id == id)
}

impl Experiment {
    /// The experiment's base scenario.
    pub fn scenario(&self) -> ScenarioFile {
        ScenarioFile::parse(
            self.scenario_toml,
            Path::new(&format!("scenarios/{}.toml", self.id)),
        )
        .expect("shipped scenarios are valid")
    }

    /// Every run: `(label of the sweep point, x value, scenario)`, per discipline.
    pub fn runs(&self, d: DisciplineKind) -> Vec<(f64, ScenarioFile)> {
        let base = self.scenario().with_discipline(d);
        match self.sweep {
            Sweep::None => vec![(0.0, base)],
            Sweep::Fig4Flows => (2..=32).map(|n| (n as f64, fig4_with(&base, n))).collect(),
        }
    }
}

/// csfq-fig4 with `n` flows: one TCP and `n - 1` UDP flows at `2 * 10 / n` Mbps.
pub fn fig4_with(base: &ScenarioFile, n: u32) -> ScenarioFile {
    let mut s = base.clone();
    let udp = s.flows[1].get_mut();
    udp.count = n - 1;
    udp.rate_mbps = Some(2.0 * 10.0 / n as f64);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_scenarios_parse_and_build() {
        for e in EXPERIMENTS {
            for d in e.disciplines {
                for (_, s) in e.runs(*d) {
                    crate::Topology::build(&s).unwrap();
                }
            }
        }
    }
}
