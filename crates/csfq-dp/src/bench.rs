//! The dataplane's per-packet cost on a real path: UDP packets per second through a veth
//! pair between two network namespaces, without a program, with the edge, with the core,
//! and with both, each reported as a ratio to the path without, measured in the same run.
//!
//! The sender is one thread sending 64-byte datagrams as fast as it can; the cost of the
//! programs shows as the rate they take off that. The core runs uncongested (`C` = 100
//! Gbit/s): every packet pays for parsing, the lock and two rate updates, and none is
//! dropped, so every configuration delivers all it is handed.

use std::ffi::CString;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::dataplane::{attach_core, attach_edge, detach, enter_netns, CoreSettings, EdgeSettings};
use crate::DpError;

/// One measured configuration.
#[derive(Debug, Clone, Serialize)]
pub struct PathResult {
    /// `none`, `edge`, `core` or `edge+core`.
    pub case: &'static str,
    /// Datagrams received per second (the best of the repeats).
    pub pps: f64,
    /// `pps` over the `none` case's.
    pub ratio: f64,
}

struct Namespaces {
    a: String,
    b: String,
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        let _ = detach("va");
        for n in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

fn ip(args: &[&str]) -> Result<(), DpError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|source| DpError::Io {
            what: "running ip (iproute2) for",
            path: "the benchmark's namespaces".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(DpError::Invalid {
            field: "benchmark setup",
            why: format!(
                "ip {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(())
}

fn setns(name: &str) -> Result<(), DpError> {
    let path = CString::new(format!("/run/netns/{name}")).expect("path");
    // SAFETY: open and setns with a valid path and our own descriptor, closed after.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        let ok = fd >= 0 && libc::setns(fd, libc::CLONE_NEWNET) == 0;
        if fd >= 0 {
            libc::close(fd);
        }
        if !ok {
            return Err(DpError::NoSuchNetns {
                name: name.to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
    }
    Ok(())
}

/// Sends for `secs` and returns datagrams received per second.
fn blast(tx: &UdpSocket, rx: &UdpSocket, secs: f64) -> f64 {
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

/// Runs the benchmark: `secs` per measurement, the best of `repeat`. Needs root; makes and
/// removes two namespaces, and leaves the calling thread in the first of them.
pub fn veth_path(secs: f64, repeat: u32) -> Result<Vec<PathResult>, DpError> {
    crate::require("csfq dp bench")?;
    let tag = std::process::id();
    let ns = Namespaces {
        a: format!("csfqbench{tag}a"),
        b: format!("csfqbench{tag}b"),
    };
    for n in [&ns.a, &ns.b] {
        ip(&["netns", "add", n])?;
    }
    ip(&[
        "link", "add", "va", "netns", &ns.a, "type", "veth", "peer", "name", "vb", "netns", &ns.b,
    ])?;
    ip(&["-n", &ns.a, "addr", "add", "10.98.0.1/24", "dev", "va"])?;
    ip(&["-n", &ns.b, "addr", "add", "10.98.0.2/24", "dev", "vb"])?;
    ip(&["-n", &ns.a, "link", "set", "va", "up"])?;
    ip(&["-n", &ns.b, "link", "set", "vb", "up"])?;
    // The receiver's socket lives in b, the sender's in a; this thread stays in a.
    setns(&ns.b)?;
    let rx = UdpSocket::bind("10.98.0.2:9999");
    enter_netns(&ns.a)?;
    let io = |source| DpError::Io {
        what: "opening a benchmark socket in",
        path: "/run/netns".into(),
        source,
    };
    let rx = rx.map_err(io)?;
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .map_err(io)?;
    set_rcvbuf(&rx, 8 << 20);
    let tx = UdpSocket::bind("10.98.0.1:0").map_err(io)?;
    tx.connect("10.98.0.2:9999").map_err(io)?;
    // Resolve the neighbour before measuring.
    blast(&tx, &rx, 0.2);

    let cases: [(&'static str, bool, bool); 4] = [
        ("none", false, false),
        ("edge", true, false),
        ("core", false, true),
        ("edge+core", true, true),
    ];
    let mut best = [0f64; 4];
    for _ in 0..repeat {
        for (i, &(_, edge, core)) in cases.iter().enumerate() {
            if edge {
                attach_edge(
                    "va",
                    &EdgeSettings {
                        ingress: false,
                        ..Default::default()
                    },
                )?;
            }
            if core {
                attach_core("va", &CoreSettings::new(100_000_000_000))?;
            }
            best[i] = best[i].max(blast(&tx, &rx, secs));
            if edge || core {
                detach("va")?;
            }
        }
    }
    drop(ns);
    Ok(cases
        .iter()
        .zip(best)
        .map(|(&(case, _, _), pps)| PathResult {
            case,
            pps,
            ratio: pps / best[0],
        })
        .collect())
}

fn set_rcvbuf(s: &UdpSocket, bytes: i32) {
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
