//! A run's outcome does not depend on how its caller steps it: hosts take packets handed
//! to their private hops ahead of their arrival, up to bounds of the run's own (its end,
//! its samples, the hosts' timers), never up to where a caller stops.

use std::path::Path;

use csfq_algo::Nanos;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, Simulation};

fn scenario(name: &str, duration_s: f64, d: DisciplineKind) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    ScenarioFile::load(&path)
        .unwrap()
        .variant(|s| {
            s.duration_s = duration_s;
            s.discipline = d;
        })
        .unwrap()
}

/// csfq-fig3b (a UDP and 31 TCPs, each flow with access links at both ends, so every
/// packet's last hop is private) for 2 s under a scheduler and two in-order disciplines,
/// run at once and in steps of 1.37 ms (neither a divisor of a sample nor of any delay):
/// the same report, every flow's series, delays and drops included.
#[test]
fn a_run_stepped_by_its_caller_reports_what_one_run_does() {
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Csfq,
        DisciplineKind::Drr,
    ] {
        let s = scenario("csfq-fig3b.toml", 2.0, d);
        let whole = Simulation::new(&s).unwrap().run();
        let mut sim = Simulation::new(&s).unwrap();
        let step = Nanos(1_370_000);
        while sim.now() < sim.end() {
            sim.run_until(sim.now() + step);
        }
        let stepped = sim.report();
        assert!(whole.events > 0);
        assert_eq!(whole, stepped, "{d}");
    }
}
