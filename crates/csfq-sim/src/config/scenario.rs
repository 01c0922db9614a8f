//! [`Scenario`]: a scenario that passed every check its file gets, and the only form of one
//! the engine, the network's build, the hosts, the overlay and the observers take.
//!
//! A [`ScenarioFile`] is what serde reads and writes, and may hold anything a file can
//! say; a `Scenario` is one of them checked ([`ScenarioFile::parse`], [`ScenarioFile::load`],
//! [`ScenarioFile::check`], [`super::ScenarioBuilder::build`]) and read-only since: it
//! reads as its file (`Deref`), and a variant is made from the file
//! ([`Scenario::into_file`]), changed, and checked again. The only changes it makes itself
//! are the two no check depends on: the seed and every link's discipline (what `csfq run
//! --seed --discipline` and the experiments' schemes set).

use std::ops::Deref;

use super::{DisciplineKind, ScenarioError, ScenarioFile};

/// A checked scenario; see the module's documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario(ScenarioFile);

impl Scenario {
    /// Wraps a file that has just passed `validate` (the config module's checks only).
    pub(super) fn checked(file: ScenarioFile) -> Self {
        Scenario(file)
    }

    /// The scenario as its file, to change and check again.
    pub fn into_file(self) -> ScenarioFile {
        self.0
    }

    /// A variant: its file changed by `change` and checked again ([`ScenarioFile::check`]).
    pub fn variant(self, change: impl FnOnce(&mut ScenarioFile)) -> Result<Self, ScenarioError> {
        let mut file = self.0;
        change(&mut file);
        file.check()
    }

    /// The scenario with a run's overrides: another seed, every link on one discipline.
    pub fn with_run_options(self, seed: Option<u64>, d: Option<DisciplineKind>) -> Self {
        let mut s = match d {
            Some(d) => self.with_discipline(d),
            None => self,
        };
        if let Some(seed) = seed {
            s = s.with_seed(seed);
        }
        s
    }

    /// The same scenario with every link's discipline set to `d`
    /// ([`ScenarioFile::with_discipline`]; no check reads a link's discipline: each table
    /// is checked whichever runs).
    pub fn with_discipline(&self, d: DisciplineKind) -> Self {
        Scenario(self.0.with_discipline(d))
    }

    /// The same scenario with another seed (every seed is valid).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
}

impl Deref for Scenario {
    type Target = ScenarioFile;

    fn deref(&self) -> &ScenarioFile {
        &self.0
    }
}
