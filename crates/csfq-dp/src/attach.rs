//! What the programs' attaches share: the outcome, and the checks against what is attached
//! already. Each program's own attach is in its module under `programs/`.

use std::path::Path;

use aya::maps::MapData;

use crate::abi::FLOW_WAYS;
use crate::error::DpError;
use crate::flow_table;
use crate::pins::{dir, existing};
use crate::role::Role;

/// What an attach did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachOutcome {
    /// Loaded and attached the program.
    Attached,
    /// It was attached already: its settings were updated in place, state kept.
    Updated,
}

/// The programs that judge a bottleneck's queue: one per interface.
const BOTTLENECK: [Role; 4] = [Role::Core, Role::May, Role::Csfne, Role::Tuf];

/// Refuses `role` on `dev` while another program that judges the bottleneck's queue runs
/// there: two on one egress would each drop on its own, by rules that ignore the other's.
pub(crate) fn refuse_beside_another(dev: &str, role: Role) -> Result<(), DpError> {
    for other in BOTTLENECK {
        if other != role {
            refuse_beside(dev, role, other)?;
        }
    }
    Ok(())
}

/// Refuses `role` on `dev` while `other` runs there.
fn refuse_beside(dev: &str, role: Role, other: Role) -> Result<(), DpError> {
    if existing(dev, &dir(dev, other))? {
        return Err(DpError::Invalid {
            field: "dev",
            why: format!(
                "{dev} runs csfq's {} already; one queue is judged by one scheme: detach it \
                 first (csfq dp detach --dev {dev}) to attach the {}",
                other.name(),
                role.name()
            ),
        });
    }
    Ok(())
}

/// The flow table pinned in `d` (the edge's, or MAY's: `who`) is this version's (an array
/// of sets) and, if the operator asked for a size (`--{field} N`), of that size: a table
/// cannot be resized in place.
pub(crate) fn check_pinned_table(
    dev: &str,
    d: &Path,
    who: &str,
    field: &'static str,
    asked: Option<u32>,
) -> Result<(), DpError> {
    let info = MapData::from_pin(d.join("flows"))
        .and_then(|m| m.info())
        .map_err(|e| DpError::kernel("reading the flow table's size", e))?;
    if !matches!(info.map_type(), Ok(aya::maps::MapType::Array)) {
        return Err(DpError::Invalid {
            field,
            why: format!(
                "{who} on {dev} was attached by another version of csfq (its flow table is \
                 not this version's); detach it first (csfq dp detach --dev {dev}) and \
                 attach again"
            ),
        });
    }
    let table = info.max_entries();
    if let Some(n) = asked {
        let want = flow_table::sets_for(n) * FLOW_WAYS;
        if table != want {
            return Err(DpError::Invalid {
                field,
                why: format!(
                    "{who} on {dev} has a flow table of {table} entries (--{field} {n} asks \
                     for {want}, whole sets of {FLOW_WAYS}), which cannot be resized in \
                     place; detach it first (csfq dp detach --dev {dev}), which forgets its \
                     flows, or leave out --{field}"
                ),
            });
        }
    }
    Ok(())
}
