//! One descriptor per eBPF program: everything attach, detach and stats need to know of
//! it, in one place. Adding a program is a module under `programs/` (or beside the daemon
//! that runs it) with its descriptor, and one line in [`crate::programs::ALL`].

use std::path::{Path, PathBuf};

use crate::error::{DetachError, SysError};
use crate::report::InterfaceStats;
use crate::role::Role;

/// An eBPF tc program csfq attaches.
pub(crate) struct Program {
    /// Its role: its name in `csfq dp` and its pin directory.
    pub role: Role,
    /// The object it is in (`bpf/*.bpf.c`, built into this binary).
    pub object: &'static [u8],
    /// The classifier's function name in the object.
    pub function: &'static str,
    /// Its configuration map (one entry: the `abi` type `*ConfigRaw`).
    pub config: &'static str,
    /// Its flow table, if it has one (`flow_table`: sized at load).
    pub flows: Option<&'static str>,
    /// Whether it hashes flows with a `flow_seed` the loader sets (a flow table's sets, or
    /// the CS-FNE core's fingerprints).
    pub seeded: bool,
    /// The maps pinned beside its link, as (name in the object, name of the pin).
    pub pins: &'static [(&'static str, &'static str)],
    /// Reads its state from its pins into its part of the stats (its counters, if it has
    /// a `counters` pin, are read for it).
    pub read: fn(&Pinned<'_>, &mut InterfaceStats) -> Result<(), SysError>,
    /// Before `csfq dp detach` removes its pins: an error refuses the detach (a daemon
    /// that owns them still runs).
    pub before_detach: fn(&Pinned<'_>) -> Result<(), DetachError>,
    /// After `csfq dp detach` removed its pins: what else it left on the interface.
    pub after_detach: fn(dev: &str),
}

impl Program {
    /// The pin name of the map `map` (as the object names it).
    pub fn pin_of(&self, map: &str) -> &'static str {
        self.pins
            .iter()
            .find(|(m, _)| *m == map)
            .map(|(_, p)| *p)
            .unwrap_or_else(|| panic!("{} pins no map {map}", self.role.name()))
    }

    /// Where its configuration is pinned in `dir`.
    pub fn config_pin(&self, dir: &Path) -> PathBuf {
        dir.join(self.pin_of(self.config))
    }
}

/// No check before a detach.
pub(crate) fn nothing_before(_: &Pinned<'_>) -> Result<(), DetachError> {
    Ok(())
}

/// Nothing to remove after a detach.
pub(crate) fn nothing_after(_: &str) {}

/// A program's pins where stats or detach find them.
pub(crate) struct Pinned<'a> {
    /// `host` or `netns-NAME`.
    pub scope: &'a str,
    /// The interface.
    pub dev: &'a str,
    /// The program's role.
    pub role: Role,
    /// Its pin directory.
    pub dir: &'a Path,
}

impl Pinned<'_> {
    /// The pin `name` in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether this process runs in the namespace the program is in (so that interface
    /// names and qdiscs read here are the program's).
    pub fn here(&self) -> bool {
        self.scope == crate::netns::scope()
    }
}
