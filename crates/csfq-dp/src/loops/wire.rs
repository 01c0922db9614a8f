//! The daemons' messages on the wire, and their sockets.

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use csfq_algo::overlay::{Control, Feedback};

use crate::error::SysError;
use crate::sys::monotonic_ns;

/// A message's length: the 48 bytes `bpf/csfq_shared.h` lays out (the program's part),
/// then the sender's `tau`, ns.
pub(super) const MSG_LEN: usize = 56;
pub(super) const MAGIC: u32 = 0x4353_464c;
pub(super) const KIND_CONTROL: u8 = 1;
pub(super) const KIND_FEEDBACK: u8 = 2;

/// A message between the daemons (`struct` layout in `bpf/csfq_shared.h`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Message {
    /// Ingress to egress, through the loop.
    Control {
        /// The loop.
        loop_index: u16,
        /// What the ingress sent.
        control: Control,
        /// The ingress's `tau`, ns: the egress's interval must be the same.
        tau_ns: u64,
        /// [`LoopSpec::tag`](super::LoopSpec::tag) of the loop's prefix at the ingress: the
        /// egress must list the same loop at this index.
        tag: u8,
        /// Written by the egress program: the loop's bytes received before it (0: not
        /// stamped).
        rx_bytes: u64,
        /// Written by the egress program: when it arrived, `CLOCK_MONOTONIC` ns.
        rx_ns: u64,
    },
    /// Egress to ingress.
    Feedback {
        /// The loop.
        loop_index: u16,
        /// The measurement.
        feedback: Feedback,
    },
}

impl Message {
    /// The UDP payload.
    pub fn encode(&self) -> [u8; MSG_LEN] {
        let mut b = [0u8; MSG_LEN];
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        let words: [u64; 5] = match *self {
            Message::Control {
                loop_index,
                control,
                tau_ns,
                tag,
                rx_bytes,
                rx_ns,
            } => {
                b[4] = KIND_CONTROL;
                b[5] = tag;
                b[6..8].copy_from_slice(&loop_index.to_be_bytes());
                b[48..56].copy_from_slice(&tau_ns.to_be_bytes());
                [
                    control.k,
                    control.sent_bytes,
                    control.lambda_bps.max(0.0).round() as u64,
                    rx_bytes,
                    rx_ns,
                ]
            }
            Message::Feedback {
                loop_index,
                feedback,
            } => {
                b[4] = KIND_FEEDBACK;
                b[6..8].copy_from_slice(&loop_index.to_be_bytes());
                [
                    feedback.k,
                    feedback.accumulation_bytes.max(0.0).round() as u64,
                    feedback.mu_bps.max(0.0).round() as u64,
                    0,
                    0,
                ]
            }
        };
        for (i, w) in words.iter().enumerate() {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&w.to_be_bytes());
        }
        b
    }

    /// Reads a UDP payload; `None` if it is not one of ours.
    pub fn decode(b: &[u8]) -> Option<Message> {
        if b.len() < MSG_LEN || b[0..4] != MAGIC.to_be_bytes() {
            return None;
        }
        let loop_index = u16::from_be_bytes([b[6], b[7]]);
        let w = |i: usize| u64::from_be_bytes(b[8 + 8 * i..16 + 8 * i].try_into().expect("8"));
        match b[4] {
            KIND_CONTROL => Some(Message::Control {
                loop_index,
                control: Control {
                    k: w(0),
                    sent_bytes: w(1),
                    lambda_bps: w(2) as f64,
                },
                tau_ns: w(5),
                tag: b[5],
                rx_bytes: w(3),
                rx_ns: w(4),
            }),
            KIND_FEEDBACK => Some(Message::Feedback {
                loop_index,
                feedback: Feedback {
                    k: w(0),
                    accumulation_bytes: w(1) as f64,
                    mu_bps: w(2) as f64,
                },
            }),
            _ => None,
        }
    }
}

pub(super) fn setsockopt(
    s: &UdpSocket,
    level: i32,
    name: i32,
    v: i32,
    what: &str,
) -> Result<(), SysError> {
    // SAFETY: setsockopt on an open socket with a pointer to an int we own.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as u32,
        )
    };
    if r != 0 {
        return Err(SysError::kernel(
            format!("setting {what} on a control socket"),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// UDP without a checksum (the egress program writes into the message): `SO_NO_CHECK`
/// for IPv4; for IPv6, `UDP_NO_CHECK6_TX` and `UDP_NO_CHECK6_RX` (RFC 6936).
pub(super) fn no_checksum(s: &UdpSocket, v6: bool) -> Result<(), SysError> {
    const UDP_NO_CHECK6_TX: i32 = 101;
    const UDP_NO_CHECK6_RX: i32 = 102;
    if v6 {
        setsockopt(
            s,
            libc::IPPROTO_UDP,
            UDP_NO_CHECK6_TX,
            1,
            "UDP_NO_CHECK6_TX",
        )?;
        setsockopt(
            s,
            libc::IPPROTO_UDP,
            UDP_NO_CHECK6_RX,
            1,
            "UDP_NO_CHECK6_RX",
        )
    } else {
        setsockopt(s, libc::SOL_SOCKET, libc::SO_NO_CHECK, 1, "SO_NO_CHECK")
    }
}

/// Asks the kernel to wake this thread's timers within 1 us of their time (the default
/// slack is 50 us): interval ends are read when the daemon wakes.
pub(super) fn precise_timers() {
    // SAFETY: prctl with integer arguments; a failure only leaves the default slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
}

/// Waits until one of `socks` is readable or `deadline` (monotonic ns) passes.
pub(super) fn wait(socks: &[&UdpSocket], deadline: u64) {
    let now = monotonic_ns();
    let left = deadline.saturating_sub(now);
    let ts = libc::timespec {
        tv_sec: (left / 1_000_000_000) as libc::time_t,
        tv_nsec: (left % 1_000_000_000) as libc::c_long,
    };
    let mut fds: Vec<libc::pollfd> = socks
        .iter()
        .map(|s| libc::pollfd {
            fd: s.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: ppoll on fds we own, a timespec we own and no signal mask.
    unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
}

pub(super) fn udp(bind: SocketAddr, what: &'static str) -> Result<UdpSocket, SysError> {
    let s = UdpSocket::bind(bind).map_err(|e| SysError::kernel(format!("{what} {bind}"), e))?;
    s.set_nonblocking(true)
        .map_err(|e| SysError::kernel("a non-blocking control socket", e))?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let c = Message::Control {
            loop_index: 3,
            control: Control {
                k: 7,
                sent_bytes: 123_456,
                lambda_bps: 4_000_000.0,
            },
            tau_ns: 10_000_000,
            tag: 0xa5,
            rx_bytes: 99,
            rx_ns: 1_000,
        };
        assert_eq!(Message::decode(&c.encode()), Some(c));
        let f = Message::Feedback {
            loop_index: 15,
            feedback: Feedback {
                k: 8,
                accumulation_bytes: 3028.0,
                mu_bps: 6e6,
            },
        };
        assert_eq!(Message::decode(&f.encode()), Some(f));
        let mut bad = f.encode();
        bad[0] = 0;
        assert_eq!(Message::decode(&bad), None);
        assert_eq!(Message::decode(&f.encode()[..40]), None);
    }

    /// The stamps' offsets are the ones `bpf/csfq_shared.h` gives the program.
    #[test]
    fn the_program_writes_where_the_message_keeps_its_stamps() {
        let m = Message::Control {
            loop_index: 0,
            control: Control {
                k: 0,
                sent_bytes: 0,
                lambda_bps: 0.0,
            },
            tau_ns: 0,
            tag: 0,
            rx_bytes: 0x0102_0304_0506_0708,
            rx_ns: 0x1112_1314_1516_1718,
        }
        .encode();
        assert_eq!(m[32..40], 0x0102_0304_0506_0708u64.to_be_bytes());
        assert_eq!(m[40..48], 0x1112_1314_1516_1718u64.to_be_bytes());
        assert_eq!(MSG_LEN, 48 + 8);
    }
}
