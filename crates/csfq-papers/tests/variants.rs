//! Every scenario the experiments run is one a file could hold: the runs each experiment
//! makes from its scenario (sweeps, generated networks, another discipline on every link)
//! and the variants its unstated parameters make in the sensitivity section pass the
//! checks a scenario file passes. They are made in code, so nothing else checks them.

use csfq_papers::experiments::unstated;
use csfq_papers::EXPERIMENTS;

#[test]
fn every_run_and_every_sensitivity_variant_is_a_valid_scenario() {
    let (mut runs, mut variants) = (0, 0);
    for e in EXPERIMENTS {
        let before = runs;
        for &d in e.disciplines {
            for r in e.runs(d) {
                r.scenario
                    .check()
                    .unwrap_or_else(|err| panic!("{} {d} {}: {err}", e.id, r.label));
                runs += 1;
                for u in unstated(e.id) {
                    for &v in u.others {
                        let mut s = r.scenario.clone();
                        (u.apply)(&mut s, v);
                        s.check().unwrap_or_else(|err| {
                            panic!("{} {d} {} with {} = {v}: {err}", e.id, r.label, u.name)
                        });
                        variants += 1;
                    }
                }
            }
        }
        // An experiment with a network runs it: a catalogue that stopped making runs
        // would otherwise pass here.
        assert!(
            e.scenario_toml.is_none() || runs > before,
            "{} has a scenario but made no run",
            e.id
        );
    }
    eprintln!("{runs} runs and {variants} sensitivity variants checked");
}
