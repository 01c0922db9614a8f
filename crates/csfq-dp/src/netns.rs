//! Which network namespace a command acts in, and so under which scope its pins go:
//! `host`, or `netns-NAME` when it runs in a named namespace (entered with `--netns NAME`,
//! or started in it by `ip netns exec NAME`).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::SysError;
use crate::sys::{is_bpffs, BPFFS};

static SCOPE: OnceLock<String> = OnceLock::new();

/// This command's scope: `host`, or `netns-NAME`.
pub(crate) fn scope() -> &'static str {
    SCOPE.get().map_or("host", String::as_str)
}

/// The scope this process acts in: `host`, or `netns-NAME` under `--netns NAME` or
/// `ip netns exec NAME` ([`crate::InterfaceStats::scope`]'s words).
pub fn current_scope() -> &'static str {
    scope()
}

/// The one scope `stats` and `detach --stale` look at, if the command runs in a named
/// namespace; `None`: every scope.
pub(crate) fn only_scope() -> Option<&'static str> {
    SCOPE.get().map(String::as_str)
}

/// The namespace inode of `path` (`/proc/PID/ns/...`, or a bind mount of one).
fn ns_id(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// Makes a command started inside a named network namespace (`ip netns exec NAME csfq dp
/// ...`, `nsenter --net=/run/netns/NAME ...`) act as `csfq dp --netns NAME ...` would: its
/// pins go under that namespace's scope, in a BPF filesystem that outlives the command.
///
/// `ip netns exec` gives its command a private mount namespace with a fresh /sys, where no
/// BPF filesystem is mounted; pins made in one mounted there vanish when the command exits,
/// and the programs with them. Then this moves the process back into the mount namespace
/// of the nearest ancestor outside that private one (the shell that ran `ip netns exec`),
/// or refuses, saying what to run instead. Call it before any other thread starts.
pub fn adopt_current_netns() -> Result<(), SysError> {
    let here = ns_id(Path::new("/proc/self/ns/net")).map_err(|source| SysError::Io {
        what: "reading",
        path: "/proc/self/ns/net".into(),
        source,
    })?;
    let Some(name) = fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .find(|e| ns_id(&e.path()).is_ok_and(|id| id == here))
        .and_then(|e| e.file_name().into_string().ok())
    else {
        // Not a named namespace: the host's, or one csfq cannot name.
        return Ok(());
    };
    if !is_bpffs(Path::new(BPFFS)) {
        let refused = |source| SysError::PrivateMounts {
            netns: name.clone(),
            source,
        };
        let mine = ns_id(Path::new("/proc/self/ns/mnt")).map_err(refused)?;
        let mut pid = std::process::id();
        let outside = loop {
            match parent_of(pid) {
                Some(p) if p > 1 => pid = p,
                _ => {
                    break Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no ancestor process outside this mount namespace",
                    ))
                }
            }
            let ns = PathBuf::from(format!("/proc/{pid}/ns/mnt"));
            if ns_id(&ns).is_ok_and(|id| id != mine) {
                break Ok(ns);
            }
        }
        .map_err(refused)?;
        let f = fs::File::open(&outside).map_err(refused)?;
        use std::os::fd::AsRawFd;
        // SAFETY: setns on a descriptor we own; the process is single-threaded here (the
        // kernel refuses a mount namespace change otherwise, which is then reported).
        if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNS) } != 0 {
            return Err(refused(std::io::Error::last_os_error()));
        }
    }
    let _ = SCOPE.set(format!("netns-{name}"));
    Ok(())
}

/// The parent of a process, from `/proc/PID/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Moves this process into the named network namespace (`ip netns add NAME`), so that
/// interface names are those of that namespace; pins go under `netns-NAME`. Call it before
/// any other thread starts.
pub fn enter_netns(name: &str) -> Result<(), SysError> {
    let err = |source| SysError::NoSuchNetns {
        name: name.to_string(),
        source,
    };
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a namespace name",
        )));
    }
    let f = fs::File::open(Path::new("/run/netns").join(name)).map_err(err)?;
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a file descriptor we own; it changes only this thread's namespace,
    // and the CLI calls this first, before any other thread exists.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EPERM) {
            return Err(SysError::NotPermitted("entering a network namespace"));
        }
        return Err(err(e));
    }
    let _ = SCOPE.set(format!("netns-{name}"));
    Ok(())
}
