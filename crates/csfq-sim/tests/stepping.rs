//! A run's outcome does not depend on how its caller steps it: hosts take packets handed
//! to their private hops ahead of their arrival, up to bounds of the run's own (its end,
//! its samples, the hosts' timers), never up to where a caller stops.

use std::path::{Path, PathBuf};

use csfq_algo::Nanos;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, Simulation};

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

fn scenario(name: &str, duration_s: f64, d: DisciplineKind, seed: u64) -> Scenario {
    ScenarioFile::load(&shipped(name))
        .unwrap()
        .variant(|s| {
            s.duration_s = duration_s;
            s.discipline = d;
            s.seed = seed;
        })
        .unwrap()
}

/// Steps a caller might take: shorter than every link's delay here (0.29 ms; the least is
/// 1 ms), longer than a packet's time on the slowest bottleneck (1.37 ms; 0.8 ms at
/// 10 Mbit/s), and many packets' times but short of a sample (97 ms); none divides a
/// sample interval or any delay.
const STEPS: [Nanos; 3] = [Nanos(290_000), Nanos(1_370_000), Nanos(97_000_000)];

/// Runs `s` at once, then stepped by each of [`STEPS`], and asserts the same report: every
/// flow's series, delays and drops, and the count of events.
fn stepped_alike(s: &Scenario, what: &str) {
    let whole = Simulation::new(s).unwrap().run();
    assert!(whole.events > 0);
    for step in STEPS {
        let mut sim = Simulation::new(s).unwrap();
        while sim.now() < sim.end() {
            sim.run_until(sim.now() + step);
        }
        assert_eq!(whole, sim.report(), "{what}, step {} ns", step.0);
    }
}

/// csfq-fig3b (a UDP and 31 TCPs, each flow with access links at both ends, so every
/// packet's last hop is private) for 2 s under a scheduler and two in-order disciplines,
/// at three seeds (each seed draws the TCP senders' timer phases, as ns-2 does: another
/// run at each).
#[test]
fn a_run_stepped_by_its_caller_reports_what_one_run_does() {
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Csfq,
        DisciplineKind::Drr,
    ] {
        for seed in 1..=3 {
            let s = scenario("csfq-fig3b.toml", 2.0, d, seed);
            stepped_alike(&s, &format!("csfq-fig3b, {d}, seed {seed}"));
        }
    }
}

/// The hosts' timers bound what is taken ahead: may-fig5's 100 TCPs acknowledge every
/// other segment or at a delayed-ACK timer's expiry (RTTs 40-440 ms), and csfq-table2's
/// 60 web transfers (Pareto sizes) start within its first milliseconds and end over the
/// run, against a UDP at the link's rate. Each under its own discipline and DRR, at three
/// seeds.
#[test]
fn delayed_acks_and_short_transfers_step_alike() {
    for (name, secs) in [("may-fig5.toml", 3.0), ("csfq-table2.toml", 4.0)] {
        let own = ScenarioFile::load(&shipped(name)).unwrap().discipline;
        for d in [own, DisciplineKind::Drr] {
            for seed in 1..=3 {
                let s = scenario(name, secs, d, seed);
                stepped_alike(&s, &format!("{name}, {d}, seed {seed}"));
            }
        }
    }
}
