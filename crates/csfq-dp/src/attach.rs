//! What the programs' attaches share: the outcome, and the checks against what is attached
//! already. Each program's own attach is in its module under `programs/`.

use std::path::Path;

use aya::maps::MapData;

use crate::abi::FLOW_WAYS;
use crate::error::{AttachError, SysError};
use crate::flow_table;
use crate::loader::{configure, load, load_flows, reconfigure};
use crate::pins::{attach, confirm_live, dir, existing, preflight};
use crate::program::Program;
use crate::role::Role;
use crate::sys::change_lock;

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

/// The attach of a program that judges a bottleneck's queue (the CSFQ, CS-FNE and TUF
/// cores, MAY) at `dev`'s egress, its configuration `raw` already checked: `command`'s
/// checks on the interface, the change lock, none of the others beside it. Attached
/// already, `update` checks `raw` against (or completes it from) what is pinned in the
/// program's directory and the settings are replaced in place, its state kept; otherwise
/// it is loaded (a table of `flows` entries if it has one, a hash seed drawn if it hashes
/// flows), configured, attached and confirmed live.
pub(crate) fn attach_bottleneck<T: aya::Pod>(
    p: &'static Program,
    command: &'static str,
    dev: &str,
    mut raw: T,
    flows: Option<u32>,
    update: impl FnOnce(&Path, &mut T) -> Result<(), AttachError>,
) -> Result<AttachOutcome, AttachError> {
    preflight(command, dev)?;
    let _lock = change_lock()?;
    refuse_beside_another(dev, p.role)?;
    let d = dir(dev, p.role);
    if existing(dev, &d)? {
        update(&d, &mut raw)?;
        reconfigure(p, &d, &raw)?;
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = if p.seeded {
        load_flows(p, flows)?
    } else {
        load(p, flows)?
    };
    configure(&mut ebpf, p, &raw)?;
    attach(dev, p, false, ebpf)?;
    confirm_live(dev, p.role)?;
    Ok(AttachOutcome::Attached)
}

/// Refuses `role` on `dev` while another program that judges the bottleneck's queue runs
/// there: two on one egress would each drop on its own, by rules that ignore the other's.
pub(crate) fn refuse_beside_another(dev: &str, role: Role) -> Result<(), AttachError> {
    for other in BOTTLENECK {
        if other != role {
            refuse_beside(dev, role, other)?;
        }
    }
    Ok(())
}

/// Refuses `role` on `dev` while `other` runs there.
fn refuse_beside(dev: &str, role: Role, other: Role) -> Result<(), AttachError> {
    if existing(dev, &dir(dev, other))? {
        return Err(AttachError::invalid(
            "dev",
            format!(
                "{dev} runs csfq's {} already; one queue is judged by one scheme: detach it \
                 first (csfq dp detach --dev {dev}) to attach the {}",
                other.name(),
                role.name()
            ),
        ));
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
) -> Result<(), AttachError> {
    let info = MapData::from_pin(d.join("flows"))
        .and_then(|m| m.info())
        .map_err(|e| SysError::kernel("reading the flow table's size", e))?;
    if !matches!(info.map_type(), Ok(aya::maps::MapType::Array)) {
        return Err(AttachError::invalid(
            field,
            format!(
                "{who} on {dev} was attached by another version of csfq (its flow table is \
                 not this version's); detach it first (csfq dp detach --dev {dev}) and \
                 attach again"
            ),
        ));
    }
    let table = info.max_entries();
    if let Some(n) = asked {
        let want = flow_table::sets_for(n) * FLOW_WAYS;
        if table != want {
            return Err(AttachError::invalid(
                field,
                format!(
                    "{who} on {dev} has a flow table of {table} entries (--{field} {n} asks \
                     for {want}, whole sets of {FLOW_WAYS}), which cannot be resized in \
                     place; detach it first (csfq dp detach --dev {dev}), which forgets its \
                     flows, or leave out --{field}"
                ),
            ));
        }
    }
    Ok(())
}
