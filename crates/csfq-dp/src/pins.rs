//! The pin layer everything rests on: each program's link and maps pinned in the BPF
//! filesystem, so they outlive the command that attached them:
//!
//! ```text
//! /sys/fs/bpf/csfq/<scope>/<interface>/<role>/{link, <the descriptor's pins>}
//! ```
//!
//! `<scope>` is `host` or `netns-<name>` ([`crate::netns`]). Each program is attached with
//! a tcx link (Linux 6.6 and later) ahead of the interface's qdisc. Removing the pins
//! removes the link; nothing else on the interface is touched (its qdiscs, tc filters and
//! other tcx programs stay).

use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};

use aya::maps::{Map, MapData};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::tc::TcAttachOptions;
use aya::programs::{LinkOrder, SchedClassifier, TcAttachType};

use crate::error::{AttachError, SysError};
use crate::program::Program;
use crate::role::Role;
use crate::sys::{ifindex, is_bpffs, link_ifindex, BPFFS};

/// `BPF_F_LOCK`: read a spin-locked value consistently.
pub(crate) const BPF_F_LOCK: u64 = 4;

/// Where csfq's pins start.
pub(crate) fn root() -> PathBuf {
    Path::new(BPFFS).join("csfq")
}

/// The pin directory of `role` on `dev`, in this command's scope.
pub(crate) fn dir(dev: &str, role: Role) -> PathBuf {
    root()
        .join(crate::netns::scope())
        .join(dev)
        .join(role.name())
}

/// Before attaching: root, the interface exists, the BPF filesystem is mounted.
pub(crate) fn preflight(what: &'static str, dev: &str) -> Result<(), SysError> {
    crate::sys::require(what)?;
    ifindex(dev)?;
    ensure_bpffs()
}

/// Mounts the BPF filesystem at /sys/fs/bpf unless it is there.
fn ensure_bpffs() -> Result<(), SysError> {
    if is_bpffs(Path::new(BPFFS)) {
        return Ok(());
    }
    let path = CString::new(BPFFS).expect("path");
    let bpf = CString::new("bpf").expect("fstype");
    // SAFETY: mount with valid NUL-terminated strings and no data.
    let r = unsafe {
        libc::mount(
            bpf.as_ptr(),
            path.as_ptr(),
            bpf.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(SysError::Io {
            what: "mounting the BPF filesystem at",
            path: BPFFS.into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// A pinned map seen as the type this csfq reads it as, or an error: a pin whose layout
/// differs (made by another version of csfq, still attached across an upgrade) is refused,
/// never read.
pub(crate) fn typed<M, T>(m: M, path: &Path) -> Result<T, SysError>
where
    T: TryFrom<M, Error = aya::maps::MapError>,
{
    T::try_from(m).map_err(|e| {
        SysError::kernel(
            format!(
                "reading {} (pinned by another version of csfq? `csfq dp detach --dev IF` \
                 it, with `--netns NAME` if it is in one, and attach again)",
                path.display()
            ),
            e,
        )
    })
}

/// The map pinned at `path`.
pub(crate) fn open_pinned(path: &Path) -> Result<Map, SysError> {
    let data = MapData::from_pin(path)
        .map_err(|e| SysError::kernel(format!("opening {}", path.display()), e))?;
    Map::from_map_data(data).map_err(|e| SysError::kernel(format!("opening {}", path.display()), e))
}

/// Entry 0 of the single-entry array pinned at `path` (a configuration, a state; `flags`:
/// [`BPF_F_LOCK`] for a spin-locked value), as the type this csfq reads it as.
pub(crate) fn read_entry<T: aya::Pod>(path: &Path, flags: u64, what: &str) -> Result<T, SysError> {
    let m = open_pinned(path)?;
    let a: aya::maps::Array<&MapData, T> = typed(&m, path)?;
    a.get(&0, flags)
        .map_err(|e| SysError::kernel(format!("reading {what}"), e))
}

/// Attaches `p`'s loaded program to `dev` (at its ingress if `ingress`) and pins its link
/// and maps, or removes everything it made on failure.
pub(crate) fn attach(
    dev: &str,
    p: &Program,
    ingress: bool,
    mut ebpf: aya::Ebpf,
) -> Result<(), SysError> {
    let d = dir(dev, p.role);
    fs::create_dir_all(&d).map_err(|source| SysError::Io {
        what: "creating",
        path: d.clone(),
        source,
    })?;
    let result = (|| {
        for (map, pin) in p.pins {
            let path = d.join(pin);
            ebpf.map_mut(map)
                .expect("map in object")
                .pin(&path)
                .map_err(|e| SysError::kernel(format!("pinning {}", path.display()), e))?;
        }
        let prog: &mut SchedClassifier = ebpf
            .program_mut(p.function)
            .expect("program")
            .try_into()
            .expect("classifier");
        let at = if ingress {
            TcAttachType::Ingress
        } else {
            TcAttachType::Egress
        };
        let id = prog
            .attach_with_options(dev, at, TcAttachOptions::TcxOrder(LinkOrder::default()))
            .map_err(|e| {
                SysError::kernel(
                    format!(
                        "attaching the {} to {dev} (tcx needs Linux 6.6 or later)",
                        p.role.name()
                    ),
                    e,
                )
            })?;
        let link = prog
            .take_link(id)
            .map_err(|e| SysError::kernel("taking the link", e))?;
        let fd: FdLink = link
            .try_into()
            .map_err(|e| SysError::kernel("the link is not a tcx link", e))?;
        let path = d.join("link");
        fd.pin(&path)
            .map_err(|e| SysError::kernel(format!("pinning {}", path.display()), e))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = remove_pins(&d);
    }
    result
}

/// After an attach: the program must be running on `dev`, or the command must not say
/// it attached it.
pub(crate) fn confirm_live(dev: &str, role: Role) -> Result<(), AttachError> {
    if live(dev, &dir(dev, role)) {
        Ok(())
    } else {
        Err(AttachError::invalid(
            "dev",
            format!(
                "the {} was attached to {dev} but is not running there (was the interface \
                 removed meanwhile?)",
                role.name()
            ),
        ))
    }
}

/// Whether the pins in `d` are stale: their link is attached nowhere, because its
/// interface or its namespace was deleted without `csfq dp detach`.
pub(crate) fn stale(d: &Path) -> bool {
    link_ifindex(&d.join("link")) == Some(0)
}

/// Whether the link pinned in `d` still runs on `dev`: a namespace or interface deleted
/// under it leaves the pins of a link that is attached nowhere.
fn live(dev: &str, d: &Path) -> bool {
    let Ok(pinned) = PinnedLink::from_pin(d.join("link")) else {
        return false;
    };
    let Ok(info) = FdLink::from(pinned).info() else {
        return false;
    };
    [TcAttachType::Ingress, TcAttachType::Egress]
        .iter()
        .any(|&at| {
            SchedClassifier::query_tcx(dev, at)
                .map(|(_, progs)| progs.iter().any(|p| p.id() == info.program_id()))
                .unwrap_or(false)
        })
}

/// Whether `role` runs on `dev` in this process's namespace (its pins hold a live link).
pub fn is_attached(dev: &str, role: Role) -> bool {
    let d = dir(dev, role);
    d.exists() && live(dev, &d)
}

/// Whether `d` holds the pins of a live link on `dev`; stale pins are removed.
pub(crate) fn existing(dev: &str, d: &Path) -> Result<bool, SysError> {
    if !d.exists() {
        return Ok(false);
    }
    if live(dev, d) {
        return Ok(true);
    }
    remove_pins(d).map_err(|source| SysError::Io {
        what: "removing stale pins in",
        path: d.to_path_buf(),
        source,
    })?;
    Ok(false)
}

/// Removes the pins in `d`, the link first (which detaches the program), then `d` and
/// the interface's and scope's directories when nothing else is in them.
pub(crate) fn remove_pins(d: &Path) -> std::io::Result<()> {
    let link = d.join("link");
    if link.exists() {
        fs::remove_file(&link)?;
    }
    if let Ok(entries) = fs::read_dir(d) {
        for e in entries.flatten() {
            fs::remove_file(e.path())?;
        }
    }
    fs::remove_dir(d)?;
    for parent in d.ancestors().skip(1).take(2) {
        if fs::remove_dir(parent).is_err() {
            break;
        }
    }
    Ok(())
}

/// A directory's entries as (name, path), sorted; none if it cannot be read.
pub(crate) fn entries(p: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<_> = fs::read_dir(p)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    v.sort();
    v
}
