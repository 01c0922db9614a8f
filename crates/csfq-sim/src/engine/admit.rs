//! The one guard every front-end runs before a simulation (`csfq run`, the Python
//! package's `run` and so its sweeps): a scenario is admitted when its buffers could fit
//! the memory this machine has available, its network builds, and its work is estimated
//! at no more than a day ([`crate::net::LONG_RUN_S`]) unless the caller asked for a long
//! run. Refused, nothing has run and nothing is written. `csfq bench --scale`, whose runs
//! are child processes, runs the same checks through [`Simulation::guard`].

use crate::config::{Scenario, TooLarge};
use crate::net::{BuildError, TooLong, Topology, WorkEstimate};

use super::Simulation;

/// Why a scenario was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Its buffers could need more memory than this machine has available.
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    /// Its network cannot be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// It is estimated at more than a day and no long run was asked for.
    #[error(transparent)]
    TooLong(#[from] TooLong),
}

/// An admitted scenario: its simulation, built and not yet run, and the work it is
/// expected to take.
#[derive(Debug)]
pub struct Admitted {
    /// The simulation.
    pub sim: Simulation,
    /// Its events and expected wall time.
    pub estimate: WorkEstimate,
}

impl Simulation {
    /// Builds `s`'s simulation if the guard admits it (see the module's comment); `long`
    /// lifts the one-day limit, not the memory one.
    pub fn admit(s: &Scenario, long: bool) -> Result<Admitted, Refused> {
        let (topo, estimate) = guard(s, long)?;
        Ok(Admitted {
            sim: Simulation::on(topo, s)?,
            estimate,
        })
    }

    /// The guard alone, for a front-end that runs `s` elsewhere (`csfq bench --scale`
    /// runs it in child processes): the work it is expected to take if it is admitted,
    /// nothing built but its network.
    pub fn guard(s: &Scenario, long: bool) -> Result<WorkEstimate, Refused> {
        guard(s, long).map(|(_, estimate)| estimate)
    }
}

/// The guard's three checks, in their order: memory, the network, a day's work.
fn guard(s: &Scenario, long: bool) -> Result<(Topology, WorkEstimate), Refused> {
    s.check_fits_this_machine()?;
    let topo = Topology::build(s)?;
    let estimate = topo.work_estimate_of(s);
    if !long {
        estimate.refuse_if_too_long()?;
    }
    Ok((topo, estimate))
}
