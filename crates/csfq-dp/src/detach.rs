//! Detaching: whatever csfq attached to an interface, or every stale attachment, each
//! program through its descriptor's detach hooks.

use aya::programs::links::PinnedLink;

use crate::error::{DetachError, SysError};
use crate::netns::only_scope;
use crate::pins::{dir, entries, remove_pins, root, stale};
use crate::program::Pinned;
use crate::programs;
use crate::role::Role;
use crate::sys::{change_lock, require};

/// Detaches whatever csfq attached to `dev` (edge, core or both); returns what it removed.
pub fn detach(dev: &str) -> Result<Vec<Role>, DetachError> {
    require("csfq dp detach")?;
    let _lock = change_lock()?;
    let mut removed = Vec::new();
    for p in programs::ALL {
        if detach_one(dev, p)? {
            removed.push(p.role);
        }
    }
    if removed.is_empty() {
        return Err(DetachError::NotAttached(dev.to_string()));
    }
    Ok(removed)
}

/// Detaches `role` from `dev`, leaving any other program there attached.
pub fn detach_role(dev: &str, role: Role) -> Result<(), DetachError> {
    require("csfq dp detach")?;
    let _lock = change_lock()?;
    let p = programs::ALL
        .iter()
        .find(|p| p.role == role)
        .expect("every role has a program");
    if detach_one(dev, p)? {
        Ok(())
    } else {
        Err(DetachError::NotAttached(dev.to_string()))
    }
}

/// Detaches `p` from `dev` if it is attached there (the change lock held); whether it was.
fn detach_one(dev: &str, p: &crate::program::Program) -> Result<bool, DetachError> {
    let d = dir(dev, p.role);
    if !d.exists() {
        return Ok(false);
    }
    (p.before_detach)(&Pinned {
        scope: crate::netns::scope(),
        dev,
        role: p.role,
        dir: &d,
    })?;
    // Opening the pinned link first checks it is a link before unpinning it.
    if let Ok(l) = PinnedLink::from_pin(d.join("link")) {
        drop(l);
    }
    remove_pins(&d).map_err(|source| SysError::Io {
        what: "removing",
        path: d.clone(),
        source,
    })?;
    (p.after_detach)(dev);
    Ok(true)
}

/// Removes the pins of every stale attachment, in every scope (only the current one's
/// under `--netns NAME` or `ip netns exec NAME`, as [`crate::stats`] shows; see
/// [`crate::InterfaceStats::stale`]); returns what it removed as (scope, interface, role).
pub fn detach_stale() -> Result<Vec<(String, String, Role)>, SysError> {
    require("csfq dp detach --stale")?;
    let _lock = change_lock()?;
    let mut removed = Vec::new();
    for (scope, sp) in entries(&root()) {
        if only_scope().is_some_and(|o| o != scope) {
            continue;
        }
        for (dev, dp) in entries(&sp) {
            for role in Role::ALL {
                let d = dp.join(role.name());
                if d.join("link").exists() && stale(&d) {
                    remove_pins(&d).map_err(|source| SysError::Io {
                        what: "removing stale pins in",
                        path: d.clone(),
                        source,
                    })?;
                    removed.push((scope.clone(), dev.clone(), role));
                }
            }
        }
    }
    Ok(removed)
}
