//! What a loop daemon attaches and pins, and what `csfq dp stats` reads back.

use std::path::Path;

use aya::maps::{Array, LpmTrie, MapData};

use super::{LoopSpec, HTB_MAJOR};
use crate::abi::{LoopConfigRaw, LoopCountRaw, LoopStateRaw, LOOP_MAX};
use crate::error::{AttachError, DetachError, SysError};
use crate::htb::Tc;
use crate::loader::{self, configure};
use crate::pins::{attach, dir, existing, open_pinned, read_entry, remove_pins, typed};
use crate::program::{nothing_after, Pinned, Program};
use crate::report::{InterfaceStats, LoopStats};
use crate::role::Role;
use crate::sys::{change_lock, ifindex, monotonic_ns};

/// The object of both loop programs.
const OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/loop.bpf.o"));

/// The maps both loop programs pin.
const PINS: &[(&str, &str)] = &[
    ("loop_config", "config"),
    ("loop_prefixes", "prefixes"),
    ("loop_counts", "counts"),
    ("loop_state", "state"),
];

/// The overlay loops' ingress edge: classifies each loop's packets into its htb class.
pub(crate) static INGRESS: Program = Program {
    role: Role::LoopIngress,
    object: OBJECT,
    function: "csfq_loop_in",
    config: "loop_config",
    flows: None,
    seeded: false,
    pins: PINS,
    read,
    before_detach: refuse_while_running,
    after_detach: remove_shaper,
};

/// The overlay loops' egress edge: counts each loop's bytes, stamps control messages.
pub(crate) static EGRESS: Program = Program {
    role: Role::LoopEgress,
    object: OBJECT,
    function: "csfq_loop_out",
    config: "loop_config",
    flows: None,
    seeded: false,
    pins: PINS,
    read,
    before_detach: refuse_while_running,
    after_detach: nothing_after,
};

/// The descriptor of a loop role.
pub(super) fn program(role: Role) -> &'static Program {
    if role == Role::LoopIngress {
        &INGRESS
    } else {
        &EGRESS
    }
}

/// A running loop daemon owns its pins: pulled from under it, it would stop anyway, and
/// its exit would remove what a new daemon had made meanwhile.
fn refuse_while_running(p: &Pinned<'_>) -> Result<(), DetachError> {
    if let Some(l) = read_stats(p.dir)
        .ok()
        .and_then(|v| v.into_iter().find(|l| l.daemon_running))
    {
        return Err(DetachError::DaemonRunning {
            role: p.role.name(),
            pid: l.pid,
            dev: p.dev.to_string(),
        });
    }
    Ok(())
}

/// The shaper a loop ingress left (it removes it itself when it stops).
fn remove_shaper(dev: &str) {
    if let Ok(mut tc) = ifindex(dev).and_then(Tc::open) {
        let _ = tc.del_root(HTB_MAJOR);
    }
}

/// The loops a daemon published, for stats.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    stats.loops = Some(read_stats(p.dir)?);
    Ok(())
}

/// What a daemon made, removed when it stops (also on an error or a panic).
pub(super) struct Made {
    pub(super) dev: String,
    pub(super) role: Role,
    pub(super) htb: Option<Tc>,
}

impl Drop for Made {
    fn drop(&mut self) {
        let _lock = change_lock();
        let _ = remove_pins(&dir(&self.dev, self.role));
        if let Some(tc) = &mut self.htb {
            let _ = tc.del_root(HTB_MAJOR);
        }
    }
}

/// Refuses if a daemon of `role` has its program on `dev` (stale pins are removed).
pub(super) fn refuse_running(dev: &str, role: Role) -> Result<(), AttachError> {
    let d = dir(dev, role);
    if existing(dev, &d)? {
        let st = read_states(&d).ok().and_then(|s| s.first().copied());
        let running =
            st.is_some_and(|s| monotonic_ns().saturating_sub(s.updated_ns) < 1_000_000_000);
        return Err(AttachError::invalid(
            "dev",
            format!(
                "a {} daemon {} on {dev}{}; {}",
                role.name(),
                if running {
                    "runs"
                } else {
                    "was stopped without cleaning up"
                },
                st.map(|s| format!(" (pid {})", s.pid)).unwrap_or_default(),
                if running {
                    "stop it first".to_string()
                } else {
                    format!("remove what it left with `csfq dp detach --dev {dev}`")
                }
            ),
        ));
    }
    Ok(())
}

/// Loads `program` with the loops' configuration and prefixes, attaches it to `dev`
/// (egress side for the ingress edge) and pins its maps; refuses if a daemon of this role
/// runs on `dev` already.
pub(super) fn attach_loop(
    dev: &str,
    role: Role,
    loops: &[LoopSpec],
    cfg: &LoopConfigRaw,
) -> Result<(), AttachError> {
    refuse_running(dev, role)?;
    let p = program(role);
    let mut ebpf = loader::load(p, None)?;
    configure(&mut ebpf, p, cfg)?;
    {
        let mut trie: LpmTrie<&mut MapData, [u8; 16], u32> =
            LpmTrie::try_from(loader::map(&mut ebpf, "loop_prefixes")).expect("lpm trie");
        for (i, l) in loops.iter().enumerate() {
            let k = l.key();
            trie.insert(
                &aya::maps::lpm_trie::Key::new(k.prefixlen, k.addr),
                i as u32,
                0,
            )
            .map_err(|e| SysError::kernel("writing a loop's prefix", e))?;
        }
    }
    Ok(attach(dev, p, role == Role::LoopEgress, ebpf)?)
}

pub(super) fn publish(d: &Path, states: &[LoopStateRaw]) -> Result<(), SysError> {
    let gone = |_| {
        SysError::Gone(format!(
            "this daemon's pins in {} are gone (csfq dp detach?); stopping",
            d.display()
        ))
    };
    let mut m = open_pinned(&d.join("state")).map_err(gone)?;
    let mut a = typed::<_, Array<&mut MapData, LoopStateRaw>>(&mut m, &d.join("state"))?;
    for (i, s) in states.iter().enumerate() {
        a.set(i as u32, s, 0)
            .map_err(|e| SysError::kernel("publishing a loop's state", e))?;
    }
    Ok(())
}

/// The states a daemon published (one per configured loop).
pub(crate) fn read_states(d: &Path) -> Result<Vec<LoopStateRaw>, SysError> {
    let n = read_entry::<LoopConfigRaw>(&d.join("config"), 0, "the loops' configuration")?.loops;
    let st = open_pinned(&d.join("state"))?;
    let s: Array<&MapData, LoopStateRaw> = typed(&st, &d.join("state"))?;
    (0..n.min(LOOP_MAX as u32))
        .map(|i| {
            s.get(&i, 0)
                .map_err(|e| SysError::kernel("reading a loop's state", e))
        })
        .collect()
}

pub(crate) fn read_stats(d: &Path) -> Result<Vec<LoopStats>, SysError> {
    let states = read_states(d)?;
    let counts = read_counts(d, states.len())?;
    let now = monotonic_ns();
    Ok(states
        .iter()
        .zip(counts)
        .enumerate()
        .map(|(i, (s, c))| LoopStats {
            index: i as u32,
            lambda_bps: s.lambda_bps,
            mu_bps: s.mu_bps,
            accumulation_bytes: s.accumulation_bytes,
            epochs: s.epochs,
            in_epoch: s.in_epoch != 0,
            feedbacks: s.feedbacks,
            controls: s.controls,
            lost_bytes: s.lost_bytes,
            packets: c.packets,
            bytes: c.bytes,
            pid: s.pid,
            daemon_running: s.pid != 0 && now.saturating_sub(s.updated_ns) < 1_000_000_000,
        })
        .collect())
}

/// The loops' byte counts at this edge.
pub(super) fn read_counts(d: &Path, n: usize) -> Result<Vec<LoopCountRaw>, SysError> {
    let m = open_pinned(&d.join("counts"))?;
    let a: Array<&MapData, LoopCountRaw> = typed(&m, &d.join("counts"))?;
    (0..n as u32)
        .map(|i| {
            a.get(&i, 0)
                .map_err(|e| SysError::kernel("reading a loop's count", e))
        })
        .collect()
}
