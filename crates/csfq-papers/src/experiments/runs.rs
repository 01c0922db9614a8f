//! Each experiment's runs: its scenario with the paper's CSFQ constants, and the variant
//! each swept value stands for.

use csfq_sim::config::{DisciplineKind, FlowKind, ScenarioFile};

use super::*;

impl Experiment {
    /// The experiment's base scenario (panics for tuf-fig4, which has none). CSFQ in it is
    /// the paper's: its estimator, and 100 ms where the scenario states no constants.
    pub fn scenario(&self) -> ScenarioFile {
        crate::scenarios::shipped(self.id, self.scenario_toml.expect("a network experiment"))
    }

    /// Every run with discipline `d`, with the paper's CSFQ (as [`Experiment::scenario`]).
    pub fn runs(&self, d: DisciplineKind) -> Vec<Run> {
        let mut runs = self.generated_runs(d);
        for r in &mut runs {
            r.scenario.csfq = r.scenario.csfq.paper();
            r.scenario.may = r.scenario.may.paper();
        }
        runs
    }

    fn generated_runs(&self, d: DisciplineKind) -> Vec<Run> {
        if matches!(self.sweep, Sweep::TufFilterModel | Sweep::MayMemoryModel) {
            return Vec::new();
        }
        let run = |x: f64, label: String, scenario| Run { x, label, scenario };
        match self.sweep {
            Sweep::OverlayLinear { max } => {
                return (1..=max)
                    .map(|m| run(m as f64, format!("M = {m}"), linear(m)))
                    .collect()
            }
            Sweep::OverlayDumbbell => {
                let mut runs = Vec::new();
                for fred in [false, true] {
                    for e in DUMBBELL_LOOPS {
                        for n in DUMBBELL_FLOWS {
                            let q = if fred { "fred" } else { "fifo" };
                            runs.push(run(
                                runs.len() as f64,
                                format!("E = {e}, {q}, N = {n}"),
                                dumbbell(e, n, fred),
                            ));
                        }
                    }
                }
                return runs;
            }
            Sweep::LeasedShares => {
                return LEASED_SHARES
                    .iter()
                    .map(|&b| run(b, format!("b = {b}"), leased(b)))
                    .collect()
            }
            _ => {}
        }
        let base = self.scenario().with_discipline(d);
        match self.sweep {
            Sweep::OverlayLinear { .. } | Sweep::OverlayDumbbell | Sweep::LeasedShares => {
                Vec::new()
            }
            Sweep::LoopsOffOn => vec![
                run(0.0, "no loops".into(), without_loops(&base)),
                run(1.0, "loops".into(), base),
            ],
            Sweep::None => vec![run(0.0, String::new(), base)],
            Sweep::Table3Thresholds => {
                let mut runs = vec![run(0.0, String::new(), base.clone())];
                if matches!(d, Red | Fred1 | Fred2) {
                    let mut s = base;
                    (s.red.min_th_bytes, s.red.max_th_bytes) = TABLE3_DEFAULT_THRESHOLDS;
                    runs.push(run(1.0, "16/32 KB thresholds".into(), s));
                }
                runs
            }
            Sweep::Fig4Flows => (2..=32)
                .map(|n| run(n as f64, format!("N = {n}"), fig4_with(&base, n)))
                .collect(),
            Sweep::ChainLinks { max } => {
                let kind = base.flows[0].get_ref().kind;
                (1..=max)
                    .map(|k| {
                        let mut s = chain(k, kind, Cross::Cbr);
                        s.seed = base.seed;
                        run(k as f64, format!("K = {k}"), s.with_discipline(d))
                    })
                    .collect()
            }
            Sweep::OnOffPeriods { links } => {
                let kind = base.flows[0].get_ref().kind;
                ONOFF_PERIODS_MS
                    .iter()
                    .map(|&period_ms| {
                        let mut s = chain(links, kind, Cross::OnOff { period_ms });
                        s.seed = base.seed;
                        run(
                            period_ms,
                            format!("period {period_ms} ms"),
                            s.with_discipline(d),
                        )
                    })
                    .collect()
            }
            Sweep::TufFilterModel | Sweep::MayMemoryModel => Vec::new(),
            Sweep::CbrRates => MAY_CBR_RATES_MBPS
                .iter()
                .map(|&x| {
                    let mut s = base.clone();
                    s.flows[0].get_mut().rate_mbps = Some(x);
                    run(x, format!("CBR {x} Mbps"), s)
                })
                .collect(),
            Sweep::Table4Variants => {
                let mut tcp = base.clone();
                for f in &mut tcp.flows {
                    let f = f.get_mut();
                    f.kind = FlowKind::Tcp;
                    f.rate_mbps = None;
                }
                let mut no_relabel = base.clone();
                no_relabel.csfq.relabel = false;
                vec![
                    run(0.0, "UDP".into(), base),
                    run(1.0, "TCP".into(), tcp),
                    run(2.0, "UDP, relabeling off".into(), no_relabel),
                ]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_scenarios_parse_and_build() {
        for e in EXPERIMENTS {
            for d in e.disciplines {
                for r in e.runs(*d) {
                    csfq_sim::Topology::build(&r.scenario.check().unwrap()).unwrap();
                }
            }
        }
    }

    /// The shipped fig6 files are the generator's K = 10 chains (kept in step).
    #[test]
    fn shipped_chains_match_the_generator() {
        for (id, kind) in [("csfq-fig6a", FlowKind::Udp), ("csfq-fig6b", FlowKind::Tcp)] {
            let shipped = find(id).unwrap().scenario();
            let generated = chain(10, kind, Cross::Cbr);
            assert_eq!(shipped.to_toml(), generated.to_toml(), "{id}");
        }
    }

    #[test]
    fn chain_oracle_gives_every_flow_a_share_of_10_over_11() {
        for k in [1, 4, 10] {
            let fair =
                csfq_sim::Topology::build(&chain(k, FlowKind::Udp, Cross::Cbr).check().unwrap())
                    .unwrap()
                    .max_min_allocation();
            for a in fair {
                // UDP-0 sends 0.909 Mbps, just under 10/11: the cross flows share the rest.
                assert!((a - 10e6 / 11.0).abs() < 100.0, "{a}");
            }
        }
    }

    /// The ON/OFF reference share against a brute-force average over every on/off
    /// pattern of 3 links (2^30 patterns reduced to counts per link) and hand values.
    #[test]
    fn onoff_reference_share_is_the_mean_instantaneous_share() {
        // One link, by hand: n = 0: 10, n = 1: 6, n >= 2: 10/(n+1).
        let mut e1 = 10.0 / 1024.0 + 6.0 * 10.0 / 1024.0;
        let mut c = 10.0;
        for n in 2..=10u32 {
            c = c * (10 - n + 1) as f64 / n as f64;
            e1 += 10.0 / (n as f64 + 1.0) * c / 1024.0;
        }
        assert!((onoff_reference_share_mbps(1) - e1).abs() < 1e-12);
        // Three links: sum over (n1, n2, n3) of P * min share.
        let share = |n: u32| {
            if n <= 1 {
                10.0 - 4.0 * n as f64
            } else {
                10.0 / (n as f64 + 1.0)
            }
        };
        let p: Vec<f64> = (0..=10u32)
            .map(|n| (1..=n).fold(1.0, |c, i| c * (10 - i + 1) as f64 / i as f64) / 1024.0)
            .collect();
        let mut e3 = 0.0;
        for a in 0..=10u32 {
            for b in 0..=10u32 {
                for d in 0..=10u32 {
                    let m = share(a).min(share(b)).min(share(d));
                    e3 += p[a as usize] * p[b as usize] * p[d as usize] * m;
                }
            }
        }
        assert!((onoff_reference_share_mbps(3) - e3).abs() < 1e-12);
        assert!((onoff_reference_share_mbps(3) - 1.404).abs() < 1e-3);
    }
}
