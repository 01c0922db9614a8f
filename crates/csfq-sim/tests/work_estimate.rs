//! The work estimate against the work done: every shipped scenario, under its own
//! discipline, handles within a factor of three of the events estimated before it ran.

use std::path::Path;

use csfq_sim::{ScenarioFile, Simulation};

#[test]
fn estimates_are_within_a_factor_of_three_of_the_events_handled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    let mut worst: (f64, String) = (1.0, String::new());
    for path in files {
        let s = ScenarioFile::load(&path).unwrap();
        let sim = Simulation::new(&s).unwrap();
        let est = sim.topology().work_estimate_of(&s);
        let r = sim.run();
        let ratio = est.events / r.events as f64;
        println!(
            "{:>22} {:>12.0} {:>12} {ratio:.2}",
            s.name, est.events, r.events
        );
        let off = ratio.max(1.0 / ratio);
        if off > worst.0.max(1.0 / worst.0) {
            worst = (ratio, s.name.clone());
        }
    }
    assert!(
        (1.0 / 3.0..=3.0).contains(&worst.0),
        "{}: estimated / handled = {:.2}",
        worst.1,
        worst.0
    );
}
