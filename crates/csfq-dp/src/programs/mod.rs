//! The programs csfq attaches, one module each with its descriptor, settings, attach and
//! stats; the overlay loops' two programs are described beside their daemons
//! ([`crate::loops`]). [`ALL`] is the one list attach, detach and stats walk.

pub(crate) mod core;
mod csfne;
mod edge;
mod may;
mod tuf;
pub(crate) mod tuf_source;

pub use self::core::{attach_core, CoreSettings, CoreTrust};
pub use csfne::{attach_csfne, CsfneSettings};
pub use edge::{attach_edge, EdgeSettings, FlowKey, Unlabelable, WeightClass};
pub use may::{attach_may, MaySettings};
pub use tuf::{attach_tuf, TufSettings};
pub use tuf_source::{attach_tuf_source, segments_per_packet, TufSourceSettings};

pub(crate) use self::core::CORE;
pub(crate) use csfne::CSFNE;
pub(crate) use edge::EDGE;
pub(crate) use may::MAY;
pub(crate) use tuf::TUF;
pub(crate) use tuf_source::TUF_SOURCE;

use crate::program::Program;
use crate::role::Role;

/// Every program, in [`Role::ALL`]'s order.
pub(crate) static ALL: [&Program; 8] = [
    &EDGE,
    &CORE,
    &MAY,
    &CSFNE,
    &TUF,
    &TUF_SOURCE,
    &crate::loops::INGRESS,
    &crate::loops::EGRESS,
];

/// The program of `role`.
pub(crate) fn of(role: Role) -> &'static Program {
    ALL.iter()
        .find(|p| p.role == role)
        .expect("a descriptor for every role")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One descriptor per role, in the roles' order; each pins its configuration and
    /// its flow table (if any) under names no other map of it takes, and every program of
    /// one object has its own function.
    #[test]
    fn the_descriptors_cover_every_role_once() {
        let roles: Vec<Role> = ALL.iter().map(|p| p.role).collect();
        assert_eq!(roles, Role::ALL);
        for p in ALL {
            let pins: Vec<&str> = p.pins.iter().map(|(_, pin)| *pin).collect();
            let mut unique = pins.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(
                unique.len(),
                pins.len(),
                "{}: a pin name twice",
                p.role.name()
            );
            assert!(!pins.contains(&"link"), "{}", p.role.name());
            p.pin_of(p.config);
            if let Some(f) = p.flows {
                p.pin_of(f);
            }
        }
        let mut functions: Vec<&str> = ALL.iter().map(|p| p.function).collect();
        functions.sort();
        functions.dedup();
        assert_eq!(functions.len(), ALL.len());
    }
}
