//! `csfq dp stats`: every attached program's counters and state, read from its pins by
//! its descriptor.

use std::path::Path;

use crate::error::SysError;
use crate::loader::read_counters;
use crate::netns::only_scope;
use crate::pins::{entries, open_pinned, root, stale};
use crate::program::{Pinned, Program};
use crate::programs;
use crate::report::InterfaceStats;
use crate::sys::require;

/// What `p` pinned in `d` (`dev` in `scope`) shows: its counters, then its own state.
fn read_one(scope: &str, dev: &str, p: &Program, d: &Path) -> Result<InterfaceStats, SysError> {
    let mut stats = empty(scope, dev, p);
    stats.stale = stale(d);
    // The loops' programs keep per-loop counts instead.
    if d.join("counters").exists() {
        stats.counters = read_counters(&open_pinned(&d.join("counters"))?)?
            .into_iter()
            .map(|(c, v)| (c.name(), v.into()))
            .collect();
    }
    (p.read)(
        &Pinned {
            scope,
            dev,
            role: p.role,
            dir: d,
        },
        &mut stats,
    )?;
    Ok(stats)
}

/// Stats with nothing read yet.
fn empty(scope: &str, dev: &str, p: &Program) -> InterfaceStats {
    InterfaceStats::empty(scope, dev, p.role)
}

/// Counters and state of every program csfq attached, in every scope (only the current
/// one's under `--netns NAME` or `ip netns exec NAME`), sorted; stale ones marked.
pub fn stats() -> Result<Vec<InterfaceStats>, SysError> {
    require("csfq dp stats")?;
    let mut out = Vec::new();
    for (scope, sp) in entries(&root()) {
        if only_scope().is_some_and(|o| o != scope) {
            continue;
        }
        for (dev, dp) in entries(&sp) {
            for p in programs::ALL {
                let d = dp.join(p.role.name());
                if !d.join("link").exists() {
                    continue;
                }
                match read_one(&scope, &dev, p, &d) {
                    Ok(one) => out.push(one),
                    // What is attached nowhere is shown as stale even if this version
                    // cannot read its maps (`detach --stale` removes it); a live one that
                    // cannot be read is an error.
                    Err(_) if stale(&d) => out.push(InterfaceStats {
                        stale: true,
                        ..empty(&scope, &dev, p)
                    }),
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(out)
}
