//! The ground floor: what the dataplane asks of the system directly (privileges, interface
//! names and indexes, clocks, the BPF link information aya does not give, the host-wide
//! change lock). Nothing here knows a program.

use std::ffi::CString;
use std::fs;
use std::path::Path;

use crate::error::SysError;

/// Whether this build carries the eBPF programs (clang and libbpf's headers were found).
pub const AVAILABLE: bool = cfg!(csfq_bpf);

/// Where the BPF filesystem is mounted.
pub(crate) const BPFFS: &str = "/sys/fs/bpf";

/// The BPF filesystem's magic number (`statfs`'s `f_type`).
const BPF_FS_MAGIC: i64 = 0xcafe4a11;

/// Why the dataplane cannot run here, if it cannot: no programs in this build, or not
/// root. Tests use it to report a skip.
pub fn unavailable_reason() -> Option<&'static str> {
    if !AVAILABLE {
        Some("this build has no eBPF programs (clang or libbpf-dev missing at build time)")
    } else if !is_root() {
        Some("needs root (CAP_BPF, CAP_NET_ADMIN)")
    } else {
        None
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Checks that `what` can run: the programs are built in and we are root.
pub(crate) fn require(what: &'static str) -> Result<(), SysError> {
    if !AVAILABLE {
        return Err(SysError::Unavailable);
    }
    if !is_root() {
        return Err(SysError::NotPermitted(what));
    }
    Ok(())
}

/// The index of interface `dev` in the current network namespace.
pub fn ifindex(dev: &str) -> Result<u32, SysError> {
    let c = CString::new(dev).map_err(|_| SysError::NoSuchInterface(dev.to_string()))?;
    // SAFETY: a valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 || dev.contains('/') {
        return Err(SysError::NoSuchInterface(dev.to_string()));
    }
    Ok(i)
}

/// `ip -o -d link show dev DEV`'s line (the details: a veth's peer, `gso_max_segs`), or
/// `None` if `ip` cannot run.
pub(crate) fn ip_link_details(dev: &str) -> Option<String> {
    let out = std::process::Command::new("ip")
        .args(["-o", "-d", "link", "show", "dev", dev])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The name of the interface with this index in the current namespace, if there is one.
pub(crate) fn ifname(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` holds IF_NAMESIZE bytes, as if_indextoname requires.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success if_indextoname wrote a NUL-terminated name into `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// `CLOCK_MONOTONIC`, ns: the programs' fine clock (`bpf_ktime_get_ns`).
pub(crate) fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime into a zeroed struct we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The kernel's tick (a jiffy: 4 ms at 250 Hz), ns: the coarse clock's resolution, as
/// `clock_getres(CLOCK_MONOTONIC_COARSE)` gives it.
pub fn tick_ns() -> u64 {
    // SAFETY: clock_getres into a zeroed struct we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if r != 0 {
        return 0; // the programs then read the fine clock
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Whether a BPF filesystem is mounted at `path`.
pub(crate) fn is_bpffs(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs into a zeroed struct we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type as i64 == BPF_FS_MAGIC }
}

/// One `csfq dp` change at a time on this host. Attaching, updating and detaching read
/// the pins and then write them; two at once could each find nothing attached, and the
/// loser's clean-up would remove the winner's pins (and so its program) after the winner
/// had reported success. Held until the returned file is dropped.
pub(crate) fn change_lock() -> Result<fs::File, SysError> {
    let dir = Path::new("/run/lock");
    let path = if dir.is_dir() {
        dir.join("csfq-dp.lock")
    } else {
        std::env::temp_dir().join("csfq-dp.lock")
    };
    let io = |what, source| SysError::Io {
        what,
        path: path.clone(),
        source,
    };
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io("opening the lock file", e))?;
    f.lock().map_err(|e| io("locking", e))?;
    Ok(f)
}

/// The interface index a pinned tcx link is attached to, as the kernel reports it: 0
/// once the interface is gone (deleted, or its namespace deleted), when the link stays
/// pinned but runs nowhere. `None` if the pin is not a readable tcx link.
///
/// aya does not give a link's type-specific information, so this asks the kernel
/// directly: `BPF_OBJ_GET` on the pin, then `BPF_OBJ_GET_INFO_BY_FD`, whose
/// `struct bpf_link_info` holds `type`, `id`, `prog_id`, then a union aligned to 8 bytes
/// (it has 64-bit members) whose tcx member starts with `ifindex`: byte 16.
pub(crate) fn link_ifindex(pin: &Path) -> Option<u32> {
    link_tcx(pin).map(|(ifindex, _)| ifindex)
}

/// `BPF_TCX_INGRESS` and `BPF_TCX_EGRESS`: a tcx link's attach type at an interface's
/// ingress and egress (`enum bpf_attach_type`).
pub(crate) const BPF_TCX_INGRESS: u32 = 46;
pub(crate) const BPF_TCX_EGRESS: u32 = 47;

/// A pinned tcx link's interface index and attach type ([`BPF_TCX_EGRESS`] or
/// `BPF_TCX_INGRESS`): the tcx member of the union is `{ ifindex, attach_type }`, bytes
/// 16 and 20 (see [`link_ifindex`]).
pub(crate) fn link_tcx(pin: &Path) -> Option<(u32, u32)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    const BPF_OBJ_GET: libc::c_long = 7;
    const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
    const BPF_LINK_TYPE_TCX: u32 = 11;
    #[repr(C)]
    struct ObjGet {
        pathname: u64,
        bpf_fd: u32,
        file_flags: u32,
    }
    #[repr(C)]
    struct InfoByFd {
        bpf_fd: u32,
        info_len: u32,
        info: u64,
    }
    let path = CString::new(pin.as_os_str().as_encoded_bytes()).ok()?;
    let get = ObjGet {
        pathname: path.as_ptr() as u64,
        bpf_fd: 0,
        file_flags: 0,
    };
    // SAFETY: `get` and the path it points to outlive the call; the kernel reads
    // `size_of::<ObjGet>()` bytes of it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET,
            &get as *const ObjGet,
            std::mem::size_of::<ObjGet>(),
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // Room for the whole of struct bpf_link_info in any kernel; what the kernel does not
    // fill stays zero, as it requires.
    let mut info = [0u8; 256];
    let by_fd = InfoByFd {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: info.len() as u32,
        info: info.as_mut_ptr() as u64,
    };
    // SAFETY: `info` is writable for `info_len` bytes and outlives the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET_INFO_BY_FD,
            &by_fd as *const InfoByFd,
            std::mem::size_of::<InfoByFd>(),
        )
    };
    let word = |i: usize| u32::from_ne_bytes(info[i..i + 4].try_into().expect("4 bytes"));
    (r == 0 && word(0) == BPF_LINK_TYPE_TCX).then(|| (word(16), word(20)))
}
