//! The shaper a core (or MAY) sits in front of, read over rtnetlink: the link's rate C and
//! the bytes its queue holds.
//!
//! The core cannot see the qdisc's real queue, so it drains a virtual queue at C and
//! judges overflow against a limit (core.bpf.c). That model is only as good as its two
//! numbers: with the virtual queue at 64 KB in front of a tbf that holds 256 KB, the core
//! tail-drops (as drop-tail would, which favours an unresponsive flow) long before the
//! real queue is full, and its `K_alpha`, `K_c` and threshold, which follow from the limit,
//! are a quarter of what they should be. Measured on kernel CUBIC flows, 4 TCPs and a UDP
//! at the link rate through a 100 Mbit/s tbf with a 256 KB limit: the UDP took 1.86-1.99x
//! its share with the core's limit at 64 KB, 1.11-1.25x with it at the tbf's 256 KB
//! (README, "CSFQ at the rates operators run"). So `csfq dp core attach` reads both from
//! the interface's root qdisc unless told otherwise, and `csfq dp stats` compares them
//! again with what the core was given.
//!
//! What is understood (`include/uapi/linux/pkt_sched.h`):
//! - `tbf`: its rate (`TCA_TBF_RATE64` where the rate needs it) and its `limit`, bytes;
//! - `htb`: the default class (unclassified packets go there; with no default class they
//!   leave unshaped, and nothing can be derived): its rate is the least `ceil` on its path
//!   to the root, its queue the leaf qdisc's (its own FIFO by default, `txqueuelen`
//!   packets);
//! - `bfifo` (bytes) and `pfifo` (packets, each counted as a full-size frame of the
//!   interface's MTU): a queue, no rate.
//!
//! Anything else (fq_codel, a multi-queue root, none at all) has no single byte limit the
//! virtual queue could take: the operator must give `--limit` (and `--rate`).

use netlink_packet_core::Nla;
use netlink_packet_route::tc::{TcAttribute, TcMessage, TcOption};

use crate::error::SysError;
use crate::htb::Tc;

/// `TCA_TBF_PARMS`, `TCA_TBF_RATE64`.
const TCA_TBF_PARMS: u16 = 1;
const TCA_TBF_RATE64: u16 = 4;
/// `TCA_HTB_PARMS`, `TCA_HTB_INIT`, `TCA_HTB_CEIL64`.
const TCA_HTB_PARMS: u16 = 1;
const TCA_HTB_INIT: u16 = 2;
const TCA_HTB_CEIL64: u16 = 7;
/// `TC_H_ROOT`.
const ROOT: u32 = u32::MAX;
/// Ethernet's header, added to the MTU for a full-size frame as tc counts it.
const ETH_HLEN: u64 = 14;

/// What the interface's root qdisc says of the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaper {
    /// The root qdisc as found, in words (`tbf`, `htb class 1:10, its pfifo`,
    /// `fq_codel`, `none`).
    pub what: String,
    /// The rate it shapes to, bit/s, if it is a shaper.
    pub rate_bps: Option<u64>,
    /// The bytes its queue holds, if it has one byte limit.
    pub limit_bytes: Option<u64>,
}

/// Reads the root qdisc of `dev` (an interface of this network namespace).
pub fn read_shaper(dev: &str) -> Result<Shaper, SysError> {
    let ifindex = crate::sys::ifindex(dev)?;
    let mtu = interface_mtu(dev).unwrap_or(1500);
    let mut tc = Tc::open(ifindex)?;
    let qdiscs = tc.qdiscs()?;
    let classes = if qdiscs.iter().any(|q| kind(q) == Some("htb")) {
        tc.classes()?
    } else {
        Vec::new()
    };
    Ok(shaper_of(&qdiscs, &classes, mtu))
}

/// The shaper described by one interface's qdiscs and classes (as dumped), `mtu` its MTU.
pub(crate) fn shaper_of(qdiscs: &[TcMessage], classes: &[TcMessage], mtu: u64) -> Shaper {
    let Some(root) = qdiscs.iter().find(|q| handle(q, false) == ROOT) else {
        return Shaper {
            what: "none".into(),
            rate_bps: None,
            limit_bytes: None,
        };
    };
    let k = kind(root).unwrap_or("?").to_string();
    match k.as_str() {
        "htb" => htb(root, qdiscs, classes, mtu),
        _ => {
            let (rate_bps, limit_bytes) = queue_of(root, mtu);
            Shaper {
                what: k,
                rate_bps,
                limit_bytes,
            }
        }
    }
}

/// The rate and byte limit of a qdisc that is one queue (tbf, bfifo, pfifo).
fn queue_of(q: &TcMessage, mtu: u64) -> (Option<u64>, Option<u64>) {
    let opts = options(q);
    match kind(q) {
        Some("tbf") => {
            let nested = nested(&opts);
            let Some(p) = nested
                .iter()
                .find(|(t, _)| *t == TCA_TBF_PARMS)
                .map(|a| &a.1)
            else {
                return (None, None);
            };
            // struct tc_tbf_qopt: rate, peakrate (struct tc_ratespec, 12 bytes each),
            // limit, buffer, mtu.
            let rate64 = nested
                .iter()
                .find(|(t, _)| *t == TCA_TBF_RATE64)
                .and_then(|(_, v)| u64_at(v, 0));
            let rate = rate64.or_else(|| u32_at(p, 8).map(u64::from));
            (
                rate.map(|bytes_per_s| bytes_per_s * 8),
                u32_at(p, 24).map(u64::from),
            )
        }
        // struct tc_fifo_qopt: limit.
        Some("bfifo") => (None, u32_at(&opts, 0).map(u64::from)),
        Some("pfifo") => (
            None,
            u32_at(&opts, 0).map(|n| u64::from(n) * (mtu + ETH_HLEN)),
        ),
        _ => (None, None),
    }
}

/// An htb root: its default class's rate (the least ceil up to the root) and its leaf's
/// queue.
fn htb(root: &TcMessage, qdiscs: &[TcMessage], classes: &[TcMessage], mtu: u64) -> Shaper {
    let major = handle(root, true) & 0xffff_0000;
    // struct tc_htb_glob: version, rate2quantum, defcls, debug, direct_pkts.
    let defcls = nested(&options(root))
        .iter()
        .find(|(t, _)| *t == TCA_HTB_INIT)
        .and_then(|(_, v)| u32_at(v, 8))
        .unwrap_or(0);
    if defcls == 0 {
        return Shaper {
            what: "htb with no default class (unclassified packets leave unshaped)".into(),
            rate_bps: None,
            limit_bytes: None,
        };
    }
    let leaf = major | defcls;
    let name = format!("htb class {:x}:{:x}", leaf >> 16, leaf & 0xffff);
    let class = |id: u32| classes.iter().find(|c| handle(c, true) == id);
    let Some(c) = class(leaf) else {
        return Shaper {
            what: format!("{name}, the default, which does not exist"),
            rate_bps: None,
            limit_bytes: None,
        };
    };
    // The least ceil on the way to the root: a class sends no faster than any parent.
    let mut rate: Option<u64> = None;
    let mut at = Some(c);
    for _ in 0..8 {
        let Some(c) = at else { break };
        if let Some(ceil) = htb_ceil(c) {
            rate = Some(rate.map_or(ceil, |r| r.min(ceil)));
        }
        let parent = handle(c, false);
        at = if parent == ROOT || parent == major {
            None
        } else {
            class(parent)
        };
    }
    let own = qdiscs.iter().find(|q| handle(q, false) == leaf);
    let (leaf_rate, limit_bytes) = own.map_or((None, None), |q| queue_of(q, mtu));
    let what = match own.and_then(kind) {
        Some(k) => format!("{name}, its {k}"),
        None => format!("{name}, no queue of its own found"),
    };
    Shaper {
        what,
        rate_bps: match (rate, leaf_rate) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        limit_bytes,
    }
}

/// An htb class's ceil, bit/s.
fn htb_ceil(c: &TcMessage) -> Option<u64> {
    let nested = nested(&options(c));
    let ceil64 = nested
        .iter()
        .find(|(t, _)| *t == TCA_HTB_CEIL64)
        .and_then(|(_, v)| u64_at(v, 0));
    // struct tc_htb_opt: rate, ceil (struct tc_ratespec, 12 bytes each), ...
    let p = nested.iter().find(|(t, _)| *t == TCA_HTB_PARMS)?;
    ceil64
        .or_else(|| u32_at(&p.1, 12 + 8).map(u64::from))
        .map(|bytes_per_s| bytes_per_s * 8)
}

fn kind(m: &TcMessage) -> Option<&str> {
    m.attributes.iter().find_map(|a| match a {
        TcAttribute::Kind(k) => Some(k.as_str()),
        _ => None,
    })
}

/// The message's own handle (`own`) or its parent's, as one number.
fn handle(m: &TcMessage, own: bool) -> u32 {
    let h = if own {
        m.header.handle
    } else {
        m.header.parent
    };
    (u32::from(h.major) << 16) | u32::from(h.minor)
}

/// `TCA_OPTIONS`' payload, whole (the crate keeps an unknown kind's as one attribute).
fn options(m: &TcMessage) -> Vec<u8> {
    for a in &m.attributes {
        match a {
            TcAttribute::Options(o) => {
                if let [TcOption::Other(nla)] = o.as_slice() {
                    let mut v = vec![0; nla.value_len()];
                    nla.emit_value(&mut v);
                    return v;
                }
            }
            TcAttribute::Other(nla) if nla.kind() == 2 => {
                let mut v = vec![0; nla.value_len()];
                nla.emit_value(&mut v);
                return v;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// The attributes nested in `buf`: (type, value).
fn nested(buf: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= buf.len() {
        let len = usize::from(u16::from_ne_bytes([buf[at], buf[at + 1]]));
        let t = u16::from_ne_bytes([buf[at + 2], buf[at + 3]]) & 0x3fff;
        if len < 4 || at + len > buf.len() {
            break;
        }
        out.push((t, buf[at + 4..at + len].to_vec()));
        at += (len + 3) & !3;
    }
    out
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_ne_bytes(s.try_into().expect("4 bytes")))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8)
        .map(|s| u64::from_ne_bytes(s.try_into().expect("8 bytes")))
}

/// The interface's MTU (`SIOCGIFMTU`).
fn interface_mtu(dev: &str) -> Option<u64> {
    if dev.len() >= libc::IFNAMSIZ {
        return None;
    }
    // SAFETY: a datagram socket, closed below; `ifreq` is zeroed and its name NUL-ended.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            return None;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, s) in req.ifr_name.iter_mut().zip(dev.bytes()) {
            *d = s as libc::c_char;
        }
        let r = libc::ioctl(fd, libc::SIOCGIFMTU, &mut req);
        libc::close(fd);
        (r == 0).then(|| u64::try_from(req.ifr_ifru.ifru_mtu).unwrap_or(1500))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::DefaultNla;
    use netlink_packet_route::tc::TcHandle;

    fn nla(t: u16, v: &[u8]) -> Vec<u8> {
        let len = 4 + v.len();
        let mut o = (len as u16).to_ne_bytes().to_vec();
        o.extend_from_slice(&t.to_ne_bytes());
        o.extend_from_slice(v);
        o.resize((len + 3) & !3, 0);
        o
    }

    fn ratespec(bytes_per_s: u32) -> Vec<u8> {
        let mut v = vec![0u8; 8];
        v.extend_from_slice(&bytes_per_s.to_ne_bytes());
        v
    }

    fn msg(handle: u32, parent: u32, kind: &str, options: Vec<u8>) -> TcMessage {
        let mut m = TcMessage::default();
        m.header.handle = TcHandle::from(handle);
        m.header.parent = TcHandle::from(parent);
        m.attributes.push(TcAttribute::Kind(kind.into()));
        m.attributes.push(TcAttribute::Options(vec![TcOption::Other(
            DefaultNla::new(2, options),
        )]));
        m
    }

    /// `tc qdisc add dev X root tbf rate 100mbit burst 32kb limit 256kb`: 12.5 MB/s and
    /// 262 144 bytes, as tc writes them.
    #[test]
    fn tbf_rate_and_limit() {
        let mut qopt = ratespec(12_500_000);
        qopt.extend(ratespec(0));
        for v in [262_144u32, 1000, 0] {
            qopt.extend_from_slice(&v.to_ne_bytes());
        }
        let s = shaper_of(
            &[msg(0x8001_0000, ROOT, "tbf", nla(TCA_TBF_PARMS, &qopt))],
            &[],
            1500,
        );
        assert_eq!(s.rate_bps, Some(100_000_000));
        assert_eq!(s.limit_bytes, Some(262_144));
        assert_eq!(s.what, "tbf");
    }

    /// Above 4 GB/s tc sends the rate in TCA_TBF_RATE64 and saturates the 32-bit field.
    #[test]
    fn tbf_rate64() {
        let mut qopt = ratespec(u32::MAX);
        qopt.extend(ratespec(0));
        for v in [1u32 << 24, 1000, 0] {
            qopt.extend_from_slice(&v.to_ne_bytes());
        }
        let mut o = nla(TCA_TBF_PARMS, &qopt);
        o.extend(nla(TCA_TBF_RATE64, &5_000_000_000u64.to_ne_bytes()));
        let s = shaper_of(&[msg(0x8001_0000, ROOT, "tbf", o)], &[], 1500);
        assert_eq!(s.rate_bps, Some(40_000_000_000));
        assert_eq!(s.limit_bytes, Some(1 << 24));
    }

    /// htb root `1:` with default class 10; `1:1` ceil 50 Mbit/s above `1:10` ceil 100:
    /// the default class sends at most 50; its pfifo of 100 packets at MTU 1500 holds
    /// 151 400 bytes.
    #[test]
    fn htb_default_class_least_ceil_and_its_fifo() {
        let mut glob = Vec::new();
        for v in [3u32, 10, 0x10, 0, 0] {
            glob.extend_from_slice(&v.to_ne_bytes());
        }
        let class = |id: u32, parent: u32, ceil: u32| {
            let mut opt = ratespec(ceil / 2);
            opt.extend(ratespec(ceil));
            opt.extend(vec![0u8; 20]);
            msg(id, parent, "htb", nla(TCA_HTB_PARMS, &opt))
        };
        let qdiscs = [
            msg(0x0001_0000, ROOT, "htb", nla(TCA_HTB_INIT, &glob)),
            msg(
                0x8002_0000,
                0x0001_0010,
                "pfifo",
                100u32.to_ne_bytes().to_vec(),
            ),
        ];
        let classes = [
            class(0x0001_0001, 0x0001_0000, 6_250_000),
            class(0x0001_0010, 0x0001_0001, 12_500_000),
        ];
        let s = shaper_of(&qdiscs, &classes, 1500);
        assert_eq!(s.rate_bps, Some(50_000_000));
        assert_eq!(s.limit_bytes, Some(100 * 1514));
        assert_eq!(s.what, "htb class 1:10, its pfifo");
        // With no default class nothing is derived.
        let mut none = Vec::new();
        for v in [3u32, 10, 0, 0, 0] {
            none.extend_from_slice(&v.to_ne_bytes());
        }
        let s = shaper_of(
            &[msg(0x0001_0000, ROOT, "htb", nla(TCA_HTB_INIT, &none))],
            &classes,
            1500,
        );
        assert_eq!((s.rate_bps, s.limit_bytes), (None, None));
    }

    #[test]
    fn bfifo_is_a_queue_without_a_rate_and_other_kinds_are_neither() {
        let s = shaper_of(
            &[msg(
                0x0001_0000,
                ROOT,
                "bfifo",
                30_000u32.to_ne_bytes().to_vec(),
            )],
            &[],
            1500,
        );
        assert_eq!((s.rate_bps, s.limit_bytes), (None, Some(30_000)));
        let s = shaper_of(&[msg(0x0001_0000, ROOT, "fq_codel", Vec::new())], &[], 1500);
        assert_eq!((s.rate_bps, s.limit_bytes), (None, None));
        assert_eq!(s.what, "fq_codel");
        assert_eq!(shaper_of(&[], &[], 1500).what, "none");
    }
}
