//! Helpers shared by the scenario tests.

use csfq_papers::experiments::find;
use csfq_sim::{DisciplineKind, SimReport, Simulation};

/// Every run of an experiment with one discipline: (swept value, report).
pub fn runs(id: &str, d: DisciplineKind) -> Vec<(f64, SimReport)> {
    find(id)
        .unwrap()
        .runs(d)
        .into_iter()
        .map(|r| {
            (
                r.x,
                Simulation::new(&r.scenario.check().unwrap()).unwrap().run(),
            )
        })
        .collect()
}

/// The arithmetic mean.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}
