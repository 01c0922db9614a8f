//! Why a dataplane operation failed, in two layers. At the bottom, what was refused:
//! [`SysError`], by the system (privileges, an interface, a namespace, the kernel, the BPF
//! filesystem), and [`InvalidSetting`], a setting checked before anything is touched. On
//! top, one type per operation, holding only what that operation can meet:
//! [`AttachError`] (the system or a setting) and [`DetachError`] (the system, nothing
//! there to detach, or a loop's daemon that owns it); the benchmark's is
//! [`crate::bench::BenchError`]. Reading stats and running crafted packets meet only the
//! system, so they return a `SysError`. Each wrapper is transparent: a message reads the
//! same whichever operation hands it back.

use thiserror::Error;

/// What the system refused: privileges, an interface or namespace, the kernel, the BPF
/// filesystem.
#[derive(Debug, Error)]
pub enum SysError {
    /// The programs were not built into this binary.
    #[error(
        "this csfq was built without the eBPF dataplane (clang or libbpf's headers were \
         missing); on Debian: apt-get install clang libbpf-dev, then rebuild"
    )]
    Unavailable,
    /// Not root (or without CAP_BPF and CAP_NET_ADMIN).
    #[error("{0} needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")]
    NotPermitted(&'static str),
    /// No such interface in this network namespace.
    #[error("no interface `{0}` in this network namespace (see `ip link`)")]
    NoSuchInterface(String),
    /// No such named network namespace.
    #[error("no network namespace `{name}` (see `ip netns list`)")]
    NoSuchNetns {
        /// The name given.
        name: String,
        /// What opening or entering it said.
        source: std::io::Error,
    },
    /// This process runs in a network namespace with a private mount of /sys (as under
    /// `ip netns exec`), and cannot reach the BPF filesystem that outlives it.
    #[error(
        "pins made here would vanish when this command exits (`ip netns exec` gives it a \
         private /sys), and the programs with them; run `csfq dp --netns {netns} ...` instead"
    )]
    PrivateMounts {
        /// The namespace's name.
        netns: String,
        /// Why the shared mount namespace could not be entered.
        source: std::io::Error,
    },
    /// Something this operation relies on was removed from under it (a pin, a class), by
    /// a detach or by hand.
    #[error("{0}")]
    Gone(String),
    /// The kernel refused to load, attach or pin something.
    #[error("{what}")]
    Kernel {
        /// What was being done.
        what: String,
        /// The loader's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A filesystem operation on the BPF filesystem failed.
    #[error("{what} {}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl SysError {
    pub(crate) fn kernel(
        what: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SysError::Kernel {
            what: what.into(),
            source: Box::new(e),
        }
    }
}

/// Why attaching a program (or starting a loop's daemon, which attaches one) failed.
#[derive(Debug, Error)]
pub enum AttachError {
    /// The system refused.
    #[error(transparent)]
    System(#[from] SysError),
    /// A setting refused: out of range, or at odds with what is attached there.
    #[error(transparent)]
    Invalid(#[from] InvalidSetting),
}

impl AttachError {
    pub(crate) fn invalid(field: &'static str, why: impl Into<String>) -> Self {
        AttachError::Invalid(InvalidSetting::new(field, why))
    }
}

/// Why detaching failed.
#[derive(Debug, Error)]
pub enum DetachError {
    /// The system refused.
    #[error(transparent)]
    System(#[from] SysError),
    /// Nothing of csfq's is attached there.
    #[error("csfq has nothing attached to `{0}`")]
    NotAttached(String),
    /// A loop's daemon runs there and owns what it attached: pulled from under it, it
    /// would stop anyway, and its exit would remove what a new daemon had made meanwhile.
    #[error(
        "a {role} daemon (pid {pid}) runs on {dev}: stop it (Ctrl-C, or kill {pid}); it \
         removes what it made"
    )]
    DaemonRunning {
        /// The daemon's role.
        role: &'static str,
        /// Its process.
        pid: u32,
        /// The interface.
        dev: String,
    },
}

/// A setting refused (out of range, or at odds with what is attached): the one error of
/// checking a program's settings, naming the command's field (`--rate`, a `[[core]]`
/// table's `rate`, ...).
#[derive(Debug, Error)]
#[error("invalid {field}: {why}")]
pub struct InvalidSetting {
    /// The setting.
    pub field: &'static str,
    /// What is wrong with it.
    pub why: String,
}

impl InvalidSetting {
    /// `field` is refused because `why`.
    pub fn new(field: &'static str, why: impl Into<String>) -> Self {
        InvalidSetting {
            field,
            why: why.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused setting reads the same whether it comes alone (from a settings check) or
    /// wrapped by an operation.
    #[test]
    fn a_refused_setting_names_its_field_either_way() {
        let alone = InvalidSetting::new("rate", "0 bit/s is out of range");
        assert_eq!(alone.to_string(), "invalid rate: 0 bit/s is out of range");
        let wrapped = AttachError::from(alone);
        assert_eq!(wrapped.to_string(), "invalid rate: 0 bit/s is out of range");
        assert!(matches!(
            wrapped,
            AttachError::Invalid(InvalidSetting { field: "rate", .. })
        ));
    }
}
