//! Opening the embedded objects: a program's object loaded into the kernel (not attached),
//! its flow table sized and seeded; writing its configuration and reading its counters.

use aya::maps::{Array, LpmTrie, MapData, PerCpuArray};
use aya::programs::SchedClassifier;
use aya::{Ebpf, EbpfLoader};
use std::path::Path;

use crate::abi::{Count, Counter, WeightKey, FLOW_WAYS};
use crate::error::SysError;
use crate::flow_table;
use crate::pins::{open_pinned, typed};
use crate::program::Program;
use crate::sys::AVAILABLE;

static EMPTY_OBJ: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/empty.bpf.o"));

/// Loads `p`'s object and its program into the kernel (not attached anywhere).
/// `flows`: the size of its flow table, if it has one. The table hashes with seed 0
/// (the tests'); [`load_flows`] draws one.
pub(crate) fn load(p: &Program, flows: Option<u32>) -> Result<Ebpf, SysError> {
    load_seeded(p, flows, 0)
}

/// Loads `p` (the edge, MAY, the CS-FNE core) with its table of `flows` entries, if it has
/// one (rounded up to whole sets), and a hash seed drawn from the system's random source,
/// so no one who does not know it can choose flows that share a set, or a fingerprint.
pub(crate) fn load_flows(p: &Program, flows: Option<u32>) -> Result<Ebpf, SysError> {
    let seed = getrandom::u64().map_err(|e| SysError::kernel("drawing the flows' hash seed", e))?;
    load_seeded(p, flows, seed)
}

pub(crate) fn load_seeded(p: &Program, flows: Option<u32>, seed: u64) -> Result<Ebpf, SysError> {
    let mut loader = EbpfLoader::new();
    let sets = flows.map(flow_table::sets_for);
    if p.seeded {
        loader.override_global("flow_seed", &seed, true);
    }
    if let Some(name) = p.flows {
        if let Some(sets) = &sets {
            loader.map_max_entries(name, sets * FLOW_WAYS);
            loader.override_global("flow_sets", sets, true);
        }
    }
    load_classifier(
        loader,
        p.object,
        p.function,
        &format!("{} program", p.role.name()),
    )
}

/// The empty program's name (`bpf/empty.bpf.c`).
pub(crate) const EMPTY_PROGRAM: &str = "csfq_empty";

/// Loads the empty program (`csfq dp bench`'s floor) into the kernel, not attached.
pub(crate) fn load_empty() -> Result<Ebpf, SysError> {
    load_classifier(EbpfLoader::new(), EMPTY_OBJ, EMPTY_PROGRAM, "empty program")
}

/// Loads `obj` and its tc classifier `program` (which errors call `what`).
fn load_classifier(
    mut loader: EbpfLoader,
    obj: &[u8],
    program: &str,
    what: &str,
) -> Result<Ebpf, SysError> {
    if !AVAILABLE {
        return Err(SysError::Unavailable);
    }
    let mut ebpf = loader.load(obj).map_err(|e| {
        if is_eperm(&e) {
            SysError::NotPermitted("loading eBPF programs")
        } else {
            SysError::kernel(format!("loading the {what}'s object"), e)
        }
    })?;
    let prog: &mut SchedClassifier = ebpf
        .program_mut(program)
        .expect("program in object")
        .try_into()
        .expect("a tc classifier");
    prog.load().map_err(|e| {
        if is_eperm(&e) {
            SysError::NotPermitted("loading eBPF programs")
        } else {
            SysError::kernel(format!("the kernel refused the {what}"), e)
        }
    })?;
    Ok(ebpf)
}

fn is_eperm(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.raw_os_error() == Some(libc::EPERM) {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

pub(crate) fn map<'a>(ebpf: &'a mut Ebpf, name: &str) -> &'a mut aya::maps::Map {
    ebpf.map_mut(name).expect("map in object")
}

/// Writes `c` into `p`'s configuration map `m`, seen through its layout (`path` names it
/// in errors).
fn write_config<T: aya::Pod>(
    m: &mut aya::maps::Map,
    p: &Program,
    path: &Path,
    c: &T,
) -> Result<(), SysError> {
    let mut a: Array<&mut MapData, T> = typed(m, path)?;
    a.set(0, c, 0)
        .map_err(|e| SysError::kernel(format!("writing the {} configuration", p.role.name()), e))
}

/// Writes `c` into the configuration map of `p`, freshly loaded as `ebpf`.
pub(crate) fn configure<T: aya::Pod>(ebpf: &mut Ebpf, p: &Program, c: &T) -> Result<(), SysError> {
    write_config(map(ebpf, p.config), p, Path::new(p.config), c)
}

/// Writes `c` into `p`'s configuration pinned in `dir` (an attached program: updated in
/// place, its layout checked).
pub(crate) fn reconfigure<T: aya::Pod>(p: &Program, dir: &Path, c: &T) -> Result<(), SysError> {
    let path = p.config_pin(dir);
    write_config(&mut open_pinned(&path)?, p, &path, c)
}

/// Adds `key` to a prefix trie (an edge's weight classes, a loop's destinations).
pub(crate) fn insert_prefix(
    trie: &mut LpmTrie<&mut MapData, [u8; 16], u32>,
    key: &WeightKey,
    value: u32,
    what: &'static str,
) -> Result<(), SysError> {
    let k = aya::maps::lpm_trie::Key::new(key.prefixlen, key.addr);
    trie.insert(&k, value, 0)
        .map_err(|e| SysError::kernel(what, e))
}

pub(crate) fn read_counters(map: &aya::maps::Map) -> Result<Vec<(Counter, Count)>, SysError> {
    let a: PerCpuArray<&MapData, Count> = PerCpuArray::try_from(map).map_err(|e| {
        SysError::kernel(
            "reading the counters (pinned by another version of csfq? `csfq dp detach --dev \
             IF` it, with `--netns NAME` if it is in one, and attach again)",
            e,
        )
    })?;
    Counter::ALL
        .iter()
        .map(|&c| {
            let per_cpu = a.get(&(c as u32), 0).map_err(|e| {
                SysError::kernel(
                    "reading the counters (pinned by another version of csfq, with fewer? \
                     `csfq dp detach --dev IF` it, with `--netns NAME` if it is in one, and \
                     attach again)",
                    e,
                )
            })?;
            let total = per_cpu.iter().fold(Count::default(), |acc, v| Count {
                packets: acc.packets + v.packets,
                bytes: acc.bytes + v.bytes,
            });
            Ok((c, total))
        })
        .collect()
}
