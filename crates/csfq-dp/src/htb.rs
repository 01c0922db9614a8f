//! The overlay ingress's shaper: an htb root qdisc on one interface with a class per loop,
//! driven over rtnetlink (no `tc` process per change: a loop's rate changes every `tau`).
//!
//! The messages are `netlink-packet-route`'s; htb's own options (`struct tc_htb_glob`,
//! `struct tc_htb_opt`, `include/uapi/linux/pkt_sched.h`), which that crate does not model,
//! are written here as raw attributes. A class's rate and ceiling are equal (a loop never
//! borrows), its bucket holds two full-size frames, and its leaf is a packet FIFO whose
//! length is the loop's ingress queue.

use netlink_packet_core::{
    DefaultNla, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL,
    NLM_F_REQUEST,
};
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage, TcStats2};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::error::SysError;

/// `TCA_OPTIONS`.
const TCA_OPTIONS: u16 = 2;
/// htb's attributes (`TCA_HTB_*`).
const TCA_HTB_PARMS: u16 = 1;
const TCA_HTB_INIT: u16 = 2;
const TCA_HTB_RATE64: u16 = 6;
const TCA_HTB_CEIL64: u16 = 7;
/// `TC_LINKLAYER_ETHERNET`: with it the kernel needs no rate table.
const LINKLAYER_ETHERNET: u8 = 1;
/// `PSCHED_SHIFT`: htb's bucket sizes are in units of 64 ns.
const PSCHED_SHIFT: u32 = 6;
/// A class's bucket: two full-size Ethernet frames.
const BURST_BYTES: u64 = 2 * 1514;

/// One class's counters, as the kernel keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Bytes sent (left the class), Ethernet frames.
    pub bytes: u64,
    /// Packets sent.
    pub packets: u64,
    /// Bytes waiting in the class's queue.
    pub backlog_bytes: u32,
    /// Packets dropped at the class's queue.
    pub drops: u32,
}

/// An rtnetlink socket for one interface's queueing disciplines.
pub struct Tc {
    sock: Socket,
    ifindex: i32,
    seq: u32,
    buf: Vec<u8>,
}

fn kernel(what: String, e: std::io::Error) -> SysError {
    SysError::kernel(what, e)
}

impl Tc {
    /// Opens an rtnetlink socket for the interface `ifindex`.
    pub fn open(ifindex: u32) -> Result<Tc, SysError> {
        let mut sock =
            Socket::new(NETLINK_ROUTE).map_err(|e| kernel("opening rtnetlink".into(), e))?;
        sock.bind_auto()
            .map_err(|e| kernel("binding rtnetlink".into(), e))?;
        sock.connect(&SocketAddr::new(0, 0))
            .map_err(|e| kernel("connecting rtnetlink".into(), e))?;
        Ok(Tc {
            sock,
            ifindex: ifindex as i32,
            seq: 0,
            buf: vec![0; 64 * 1024],
        })
    }

    fn msg(&self, handle: u32, parent: u32, kind: &str, options: Vec<u8>) -> TcMessage {
        let mut m = TcMessage::default();
        m.header.index = self.ifindex;
        m.header.handle = TcHandle::from(handle);
        m.header.parent = TcHandle::from(parent);
        if !kind.is_empty() {
            m.attributes.push(TcAttribute::Kind(kind.to_string()));
        }
        if !options.is_empty() {
            // TCA_OPTIONS, written whole: htb's is a nest of attributes, pfifo's a struct.
            m.attributes
                .push(TcAttribute::Other(DefaultNla::new(TCA_OPTIONS, options)));
        }
        m
    }

    /// Sends `msg` and returns the replies up to its acknowledgement or the dump's end.
    fn request(
        &mut self,
        msg: RouteNetlinkMessage,
        flags: u16,
        what: &str,
    ) -> Result<Vec<RouteNetlinkMessage>, SysError> {
        self.seq = self.seq.wrapping_add(1);
        let mut nl = NetlinkMessage::from(msg);
        nl.header.flags = NLM_F_REQUEST | flags;
        nl.header.sequence_number = self.seq;
        nl.finalize();
        let mut out = vec![0; nl.buffer_len()];
        nl.serialize(&mut out);
        self.sock
            .send(&out, 0)
            .map_err(|e| kernel(format!("{what} (sending)"), e))?;
        let mut replies = Vec::new();
        loop {
            let n = self
                .sock
                .recv(&mut &mut self.buf[..], 0)
                .map_err(|e| kernel(format!("{what} (receiving)"), e))?;
            let mut at = 0;
            while at < n {
                let m = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buf[at..n])
                    .map_err(|e| {
                        kernel(
                            format!("{what} (decoding the reply)"),
                            std::io::Error::other(e.to_string()),
                        )
                    })?;
                let len = m.header.length as usize;
                if m.header.sequence_number == self.seq {
                    match m.payload {
                        NetlinkPayload::Error(e) => {
                            return match e.code {
                                None => Ok(replies),
                                Some(code) => Err(kernel(
                                    what.to_string(),
                                    std::io::Error::from_raw_os_error(-code.get()),
                                )),
                            };
                        }
                        NetlinkPayload::Done(_) => return Ok(replies),
                        NetlinkPayload::InnerMessage(r) => replies.push(r),
                        _ => {}
                    }
                }
                if len == 0 {
                    break;
                }
                at += (len + 3) & !3;
            }
        }
    }

    /// Adds an htb root qdisc `major:` that sends unclassified packets unshaped. Fails if
    /// the interface has a root qdisc of its own already (it is never replaced).
    pub fn add_root(&mut self, major: u16) -> Result<(), SysError> {
        // struct tc_htb_glob: version 3, rate2quantum 10, defcls 0 (unclassified packets
        // go straight through), debug 0, direct_pkts 0.
        let mut glob = Vec::with_capacity(20);
        for v in [3u32, 10, 0, 0, 0] {
            glob.extend_from_slice(&v.to_ne_bytes());
        }
        let opts = nla(TCA_HTB_INIT, &glob);
        let m = self.msg(u32::from(major) << 16, u32::MAX, "htb", opts);
        self.request(
            RouteNetlinkMessage::NewQueueDiscipline(m),
            NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
            "adding the htb root qdisc (does the interface have a root qdisc already? \
             see `tc qdisc show`)",
        )
        .map(drop)
    }

    /// Removes the root qdisc `major:` (and every class under it).
    pub fn del_root(&mut self, major: u16) -> Result<(), SysError> {
        let m = self.msg(u32::from(major) << 16, u32::MAX, "", Vec::new());
        self.request(
            RouteNetlinkMessage::DelQueueDiscipline(m),
            NLM_F_ACK,
            "removing the htb root qdisc",
        )
        .map(drop)
    }

    /// Creates (`create`) or changes the class `classid` under the root, at `rate_bps`.
    pub fn set_class(&mut self, classid: u32, rate_bps: u64, create: bool) -> Result<(), SysError> {
        let bytes_per_s = (rate_bps / 8).max(1);
        let low = bytes_per_s.min(u32::MAX as u64) as u32;
        // struct tc_ratespec: cell_log, linklayer, overhead, cell_align, mpu, rate.
        let mut spec = Vec::with_capacity(12);
        spec.push(0u8);
        spec.push(LINKLAYER_ETHERNET);
        spec.extend_from_slice(&0u16.to_ne_bytes());
        spec.extend_from_slice(&0i16.to_ne_bytes());
        spec.extend_from_slice(&0u16.to_ne_bytes());
        spec.extend_from_slice(&low.to_ne_bytes());
        // The bucket, as the time to send it at the rate, in 64 ns units.
        let ns = BURST_BYTES * 1_000_000_000 / bytes_per_s;
        let ticks = (ns >> PSCHED_SHIFT).min(u32::MAX as u64) as u32;
        let mut opt = Vec::with_capacity(44);
        opt.extend_from_slice(&spec); // rate
        opt.extend_from_slice(&spec); // ceil
        for v in [ticks, ticks, 1514, 0, 0] {
            // buffer, cbuffer, quantum, level, prio
            opt.extend_from_slice(&v.to_ne_bytes());
        }
        let mut opts = nla(TCA_HTB_PARMS, &opt);
        if bytes_per_s > u32::MAX as u64 {
            opts.extend(nla(TCA_HTB_RATE64, &bytes_per_s.to_ne_bytes()));
            opts.extend(nla(TCA_HTB_CEIL64, &bytes_per_s.to_ne_bytes()));
        }
        let root = classid & 0xffff_0000;
        let m = self.msg(classid, root, "htb", opts);
        let flags = if create {
            NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
        } else {
            NLM_F_ACK
        };
        self.request(
            RouteNetlinkMessage::NewTrafficClass(m),
            flags,
            &format!(
                "setting htb class {:x}:{:x}",
                classid >> 16,
                classid & 0xffff
            ),
        )
        .map(drop)
    }

    /// Gives class `classid` a packet FIFO of `limit` packets as its queue.
    pub fn set_fifo(&mut self, classid: u32, limit: u32) -> Result<(), SysError> {
        let handle = (0x100 + (classid & 0xffff)) << 16;
        let m = self.msg(handle, classid, "pfifo", limit.to_ne_bytes().to_vec());
        self.request(
            RouteNetlinkMessage::NewQueueDiscipline(m),
            NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
            "adding a class's queue",
        )
        .map(drop)
    }

    /// Every queueing discipline on the interface, the hidden default ones (an htb class's
    /// own FIFO) included.
    pub(crate) fn qdiscs(&mut self) -> Result<Vec<TcMessage>, SysError> {
        let mut m = self.msg(0, 0, "", Vec::new());
        m.attributes.push(TcAttribute::DumpInvisible(true));
        let replies = self.request(
            RouteNetlinkMessage::GetQueueDiscipline(m),
            NLM_F_DUMP,
            "reading the interface's queueing disciplines",
        )?;
        Ok(self.of_this_interface(replies, |r| match r {
            RouteNetlinkMessage::NewQueueDiscipline(q) => Some(q),
            _ => None,
        }))
    }

    /// Every traffic class on the interface.
    pub(crate) fn classes(&mut self) -> Result<Vec<TcMessage>, SysError> {
        let m = self.msg(0, 0, "", Vec::new());
        let replies = self.request(
            RouteNetlinkMessage::GetTrafficClass(m),
            NLM_F_DUMP,
            "reading the interface's traffic classes",
        )?;
        Ok(self.of_this_interface(replies, |r| match r {
            RouteNetlinkMessage::NewTrafficClass(c) => Some(c),
            _ => None,
        }))
    }

    fn of_this_interface(
        &self,
        replies: Vec<RouteNetlinkMessage>,
        pick: impl Fn(RouteNetlinkMessage) -> Option<TcMessage>,
    ) -> Vec<TcMessage> {
        replies
            .into_iter()
            .filter_map(pick)
            .filter(|m| m.header.index == self.ifindex)
            .collect()
    }

    /// The counters of every class on the interface, by class id.
    pub fn class_stats(&mut self) -> Result<Vec<(u32, ClassStats)>, SysError> {
        let m = self.msg(0, 0, "", Vec::new());
        let replies = self.request(
            RouteNetlinkMessage::GetTrafficClass(m),
            NLM_F_DUMP,
            "reading the htb classes' counters",
        )?;
        let mut out = Vec::new();
        for r in replies {
            let RouteNetlinkMessage::NewTrafficClass(c) = r else {
                continue;
            };
            if c.header.index != self.ifindex {
                continue;
            }
            let id = (u32::from(c.header.handle.major) << 16) | u32::from(c.header.handle.minor);
            let mut s = ClassStats::default();
            for a in &c.attributes {
                if let TcAttribute::Stats2(v) = a {
                    for x in v {
                        match x {
                            TcStats2::Basic(b) => {
                                s.bytes = b.bytes;
                                s.packets = b.packets as u64;
                            }
                            TcStats2::Queue(q) => {
                                s.backlog_bytes = q.backlog;
                                s.drops = q.drops;
                            }
                            _ => {}
                        }
                    }
                }
            }
            out.push((id, s));
        }
        Ok(out)
    }
}

/// One netlink attribute: length, type, value, padded to 4 bytes.
fn nla(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = 4 + value.len();
    let mut v = Vec::with_capacity((len + 3) & !3);
    v.extend_from_slice(&(len as u16).to_ne_bytes());
    v.extend_from_slice(&kind.to_ne_bytes());
    v.extend_from_slice(value);
    v.resize((len + 3) & !3, 0);
    v
}
