//! The benchmark's senders: one thread sending 64-byte datagrams as fast as it can, or
//! one per CPU, each pinned to its own, counted at the far end's receive counter.

use std::ffi::CString;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::error::SysError;

/// Moves the calling thread into network namespace `name`.
pub(super) fn setns(name: &str) -> Result<(), SysError> {
    let path = CString::new(format!("/run/netns/{name}")).expect("path");
    // SAFETY: open and setns with a valid path and our own descriptor, closed after.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        let ok = fd >= 0 && libc::setns(fd, libc::CLONE_NEWNET) == 0;
        if fd >= 0 {
            libc::close(fd);
        }
        if !ok {
            return Err(SysError::NoSuchNetns {
                name: name.to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
    }
    Ok(())
}

/// Sends for `secs` and returns datagrams received per second.
pub(super) fn blast(tx: &UdpSocket, rx: &UdpSocket, secs: f64) -> f64 {
    let stop = Instant::now() + Duration::from_secs_f64(secs);
    let counter = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut buf = [0u8; 256];
            let mut n = 0u64;
            while rx.recv(&mut buf).is_ok() {
                n += 1;
            }
            n
        });
        let payload = [0x5au8; 64];
        while Instant::now() < stop {
            for _ in 0..64 {
                let _ = tx.send(&payload);
            }
        }
        h.join().expect("receiver")
    });
    counter as f64 / secs
}

/// Pins the calling thread to `cpu`.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays within it for cpu <
    // CPU_SETSIZE; sched_setaffinity(0) acts on the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Packets `dev` has received in namespace `ns`, from that namespace's /proc/net/dev
/// (read by a thread that enters it: /proc/thread-self/net is the thread's namespace's).
fn rx_packets(ns: &str, dev: &str) -> Result<u64, SysError> {
    let (ns, dev) = (ns.to_string(), dev.to_string());
    std::thread::spawn(move || -> Result<u64, SysError> {
        setns(&ns)?;
        let path = "/proc/thread-self/net/dev";
        let text = std::fs::read_to_string(path).map_err(|source| SysError::Io {
            what: "reading",
            path: path.into(),
            source,
        })?;
        text.lines()
            .find_map(|l| {
                l.trim_start()
                    .strip_prefix(&format!("{dev}:"))
                    .map(str::to_string)
            })
            .and_then(|rest| rest.split_whitespace().nth(1)?.parse().ok())
            .ok_or_else(|| SysError::Gone(format!("no receive counter for {dev} in {path}")))
    })
    .join()
    .expect("counter thread")
}

/// One sender per socket, each pinned to its own CPU, for `secs`; returns datagrams per
/// second that `dev` in namespace `ns` received.
pub(super) fn blast_parallel(
    txs: &[UdpSocket],
    ns: &str,
    dev: &str,
    secs: f64,
) -> Result<f64, SysError> {
    let before = rx_packets(ns, dev)?;
    let t0 = Instant::now();
    let stop = t0 + Duration::from_secs_f64(secs);
    std::thread::scope(|s| {
        for (cpu, tx) in txs.iter().enumerate() {
            s.spawn(move || {
                pin_to(cpu);
                let payload = [0x5au8; 64];
                while Instant::now() < stop {
                    for _ in 0..64 {
                        let _ = tx.send(&payload);
                    }
                }
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    Ok((rx_packets(ns, dev)? - before) as f64 / secs)
}

/// Asks for a receive buffer of `bytes` on `s`.
pub(super) fn set_rcvbuf(s: &UdpSocket, bytes: i32) {
    // SAFETY: setsockopt with a valid int on our own socket; failure only means a smaller
    // buffer.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &bytes as *const i32 as *const libc::c_void,
            size_of::<i32>() as libc::socklen_t,
        );
    }
}
