//! The programs by role: the names `csfq dp` shows and the pin directories use.

/// Which program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Labels packets entering the island.
    Edge,
    /// Drops and relabels at a bottleneck.
    Core,
    /// MAY at a bottleneck: drops in proportion to each flow's past drops, no labels.
    May,
    /// A CS-FNE core at a bottleneck: drops above `C / N_act`, the flows estimated from
    /// the queue.
    Csfne,
    /// A TUF core at a bottleneck: drops tags above a threshold that fills the link.
    Tuf,
    /// TUF's TCP tagger on a sending host's egress: tags from the kernel's own TCP state.
    TufSource,
    /// An overlay loop's ingress edge: classifies into the loops' shapers.
    LoopIngress,
    /// An overlay loop's egress edge: counts each loop's bytes, stamps control messages.
    LoopEgress,
}

impl Role {
    /// Every role, in the order stats list them (and `crate::programs::ALL` holds their
    /// descriptors).
    pub const ALL: [Role; 8] = [
        Role::Edge,
        Role::Core,
        Role::May,
        Role::Csfne,
        Role::Tuf,
        Role::TufSource,
        Role::LoopIngress,
        Role::LoopEgress,
    ];

    /// `edge`, `core`, `may`, `csfne`, `tuf`, `tuf-source`, `loop-ingress` or
    /// `loop-egress`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Edge => "edge",
            Role::Core => "core",
            Role::May => "may",
            Role::Csfne => "csfne",
            Role::Tuf => "tuf",
            Role::TufSource => "tuf-source",
            Role::LoopIngress => "loop-ingress",
            Role::LoopEgress => "loop-egress",
        }
    }
}
