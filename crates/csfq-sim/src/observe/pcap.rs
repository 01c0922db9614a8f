//! Packet traces of simulated links as pcapng files, for Wireshark and tshark.
//!
//! Each traced port (one direction of a link) is an interface of the file, named
//! `from->to`, with nanosecond timestamps equal to the simulated time (the run starts at
//! the epoch). A packet is recorded when its first bit leaves the port, with real IPv4
//! and TCP or UDP headers (the payload is not captured; the original length is the
//! simulated size):
//!
//! - Flow `i` runs from `10.0.0.0 + (i + 1)` to `10.128.0.0 + (i + 1)` (modulo 2^23),
//!   source port `1024 + i mod 64511`, destination port 5001. TCP flows carry TCP: data
//!   segment `n` has sequence number `n * (segment_bytes - 40)` (the payload of a segment
//!   of `segment_bytes` on the wire), and ACKs acknowledge the next byte expected. UDP,
//!   ON-OFF and RLM flows carry UDP.
//! - Overlay loops' control (port 7000) and feedback (port 7001) packets are UDP between
//!   their routers, router `r` at `172.16.0.0 + (r + 1)`.
//! - The CSFQ label is in the IPv4 Identification field with DF set, exactly as the
//!   dataplane writes it: a 16-bit float, 5-bit exponent and 11-bit mantissa in kbit/s
//!   ([`LabelCodec::FLOAT16`]); 0 is unlabeled.
//!   `contrib/wireshark/csfq.lua` shows it as a rate.
//! - A dropped packet is recorded when it is dropped, with the packet comment
//!   `dropped: <reason>` (the reason names of `drops by reason`): `frame.comment` in
//!   Wireshark, `csfq.dropped` with the dissector.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use csfq_algo::label_codec::LabelCodec;
use csfq_algo::{DropReason, Nanos};
use etherparse::{IpNumber, Ipv4Header, TcpHeader, UdpHeader};
use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

use crate::kinds::FlowKind;
use crate::net::Topology;
use crate::observe::trace::{TraceEnd, Tracer};
use crate::packet::{Kind, SimPacket};

/// UDP destination port of overlay control packets (feedback: the next one).
pub const LOOP_CONTROL_PORT: u16 = 7000;
/// Destination port of the flows' packets.
pub const FLOW_PORT: u16 = 5001;
/// The most header bytes recorded per packet.
const SNAPLEN: u32 = 64;
/// pcapng `epb_flags`: outbound.
const OUTBOUND: u32 = 2;

/// Where the simulated hosts and routers are, and what each flow speaks.
#[derive(Debug, Clone)]
struct Addressing {
    /// Per flow: whether it is TCP.
    tcp: Vec<bool>,
    /// Per loop: ingress and egress router.
    loops: Vec<(usize, usize)>,
    segment_bytes: u32,
}

/// IPv4 of flow `i`'s source (`dst = false`) or destination host.
pub fn host_address(i: usize, dst: bool) -> [u8; 4] {
    let base: u32 = if dst { 0x0A80_0000 } else { 0x0A00_0000 };
    (base + (i as u32 % 0x7F_FFFF) + 1).to_be_bytes()
}

/// IPv4 of router `r` (overlay loops' packets).
pub fn router_address(r: usize) -> [u8; 4] {
    (0xAC10_0000u32 + (r as u32 % 0xF_FFFF) + 1).to_be_bytes()
}

impl Addressing {
    /// The headers of `p` (IPv4, then TCP or UDP) into `buf`; returns their length.
    fn headers(&self, p: &SimPacket, buf: &mut Vec<u8>) -> usize {
        buf.clear();
        let f = p.flow.index();
        let (src, dst, sport, dport, tcp) = match p.kind {
            Kind::Data | Kind::Ack => {
                let (a, b) = (host_address(f, false), host_address(f, true));
                let sport = 1024 + (f % 64511) as u16;
                let tcp = self.tcp.get(f).copied().unwrap_or(false);
                if p.kind == Kind::Data {
                    (a, b, sport, FLOW_PORT, tcp)
                } else {
                    (b, a, FLOW_PORT, sport, true)
                }
            }
            Kind::Control | Kind::Feedback => {
                let (ing, eg) = self.loops[f - self.tcp.len()];
                let (i, e) = (router_address(ing), router_address(eg));
                if p.kind == Kind::Control {
                    (i, e, LOOP_CONTROL_PORT, LOOP_CONTROL_PORT, false)
                } else {
                    (e, i, LOOP_CONTROL_PORT + 1, LOOP_CONTROL_PORT + 1, false)
                }
            }
        };
        let total = p.size.clamp(20, u16::MAX as u32) as u16;
        let proto = if tcp { IpNumber::TCP } else { IpNumber::UDP };
        let ttl = 64u8.saturating_sub(p.hop.min(63) as u8);
        let mut ip = Ipv4Header::new(total - 20, ttl, proto, src, dst).expect("length clamped");
        ip.identification = LabelCodec::FLOAT16.encode(p.label) as u16;
        ip.dont_fragment = true;
        ip.header_checksum = ip.calc_header_checksum();
        buf.extend_from_slice(&ip.to_bytes());
        if tcp {
            // Sequence numbers count payload: a segment is `segment_bytes` on the wire.
            let mss = self.segment_bytes.saturating_sub(40).max(1);
            let mut h = TcpHeader::new(sport, dport, 0, u16::MAX);
            h.ack = true;
            if p.kind == Kind::Data {
                h.sequence_number = p.seq.wrapping_mul(mss);
                h.acknowledgment_number = 1;
                h.psh = true;
            } else {
                h.sequence_number = 1;
                h.acknowledgment_number = p.seq.wrapping_mul(mss);
            }
            buf.extend_from_slice(&h.to_bytes());
        } else {
            let h = UdpHeader {
                source_port: sport,
                destination_port: dport,
                length: total - 20,
                checksum: 0,
            };
            buf.extend_from_slice(&h.to_bytes());
        }
        // A packet smaller than its headers is recorded as long as it is.
        buf.len().min(p.size as usize)
    }
}

/// Writes the packets of traced ports to a pcapng file.
pub struct PcapTrace {
    writer: PcapNgWriter<BufWriter<File>>,
    addressing: Addressing,
    /// Traced ports and their interface ids.
    interfaces: Vec<(usize, u32)>,
    buf: Vec<u8>,
    error: Option<io::Error>,
    /// Packets recorded (sent and dropped).
    pub packets: u64,
    /// Bytes written so far, and the most to write: past it, recording stops (the file
    /// stays a whole pcapng file, its last block complete).
    written: u64,
    limit_bytes: u64,
    stopped_at: Option<Nanos>,
}

impl PcapTrace {
    /// Creates `path` with one interface per port of `ports` (indices into
    /// `topo.ports`); TCP segments are `segment_bytes` on the wire. Once the file holds
    /// `limit_bytes`, recording stops (see [`TraceEnd::stopped_at`]).
    pub fn create(
        path: &Path,
        topo: &Topology,
        ports: &[usize],
        segment_bytes: u32,
        limit_bytes: u64,
    ) -> io::Result<Self> {
        let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let mut writer = PcapNgWriter::new(file).map_err(into_io)?;
        let mut interfaces = Vec::new();
        for (i, &port) in ports.iter().enumerate() {
            let def = &topo.ports[port];
            let (from, to) = (
                topo.nodes[def.from as usize].name(),
                topo.nodes[def.to as usize].name(),
            );
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::IPV4,
                snaplen: SNAPLEN,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(format!("{from}->{to}"))),
                    InterfaceDescriptionOption::IfDescription(Cow::Owned(format!(
                        "simulated port {port}: {from} to {to}, {} Mbit/s, {}, buffer {} bytes",
                        def.rate_bps / 1e6,
                        def.discipline,
                        def.buffer_bytes
                    ))),
                    InterfaceDescriptionOption::IfSpeed(def.rate_bps as u64),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            writer.write_pcapng_block(idb).map_err(into_io)?;
            interfaces.push((port, i as u32));
        }
        let addressing = Addressing {
            tcp: topo
                .flows
                .iter()
                .map(|f| matches!(f.kind, FlowKind::Tcp | FlowKind::Web))
                .collect(),
            loops: topo.loops.iter().map(|l| (l.ingress, l.egress)).collect(),
            segment_bytes,
        };
        // The header and interface blocks count toward the limit too.
        let header = io::Seek::stream_position(writer.get_mut())?;
        Ok(PcapTrace {
            writer,
            addressing,
            interfaces,
            buf: Vec::with_capacity(128),
            error: None,
            packets: 0,
            written: header,
            limit_bytes,
            stopped_at: None,
        })
    }

    fn record(&mut self, now: Nanos, port: usize, p: &SimPacket, drop: Option<DropReason>) {
        if self.error.is_some() || self.stopped_at.is_some() {
            return;
        }
        if self.written >= self.limit_bytes {
            self.stopped_at = Some(now);
            return;
        }
        let Some(&(_, interface_id)) = self.interfaces.iter().find(|(q, _)| *q == port) else {
            return;
        };
        let len = self.addressing.headers(p, &mut self.buf);
        let mut options = vec![EnhancedPacketOption::Flags(OUTBOUND)];
        if let Some(reason) = drop {
            options.push(EnhancedPacketOption::Comment(Cow::Owned(format!(
                "dropped: {}",
                reason.name()
            ))));
        }
        let epb = EnhancedPacketBlock {
            interface_id,
            timestamp: Duration::from_nanos(now.0),
            original_len: p.size,
            data: Cow::Borrowed(&self.buf[..len]),
            options,
        };
        match self.writer.write_pcapng_block(epb) {
            Ok(n) => {
                self.packets += 1;
                self.written += n as u64;
            }
            Err(e) => self.error = Some(into_io(e)),
        }
    }
}

impl std::fmt::Debug for PcapTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapTrace")
            .field("interfaces", &self.interfaces)
            .field("packets", &self.packets)
            .finish_non_exhaustive()
    }
}

fn into_io(e: pcap_file::PcapError) -> io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => io::Error::other(e),
    }
}

impl Tracer for PcapTrace {
    fn sent(&mut self, now: Nanos, port: usize, p: &SimPacket) {
        self.record(now, port, p, None);
    }

    fn dropped(&mut self, now: Nanos, port: usize, p: &SimPacket, reason: DropReason) {
        self.record(now, port, p, Some(reason));
    }

    fn finish(&mut self) -> io::Result<TraceEnd> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.writer.get_mut().flush()?;
        Ok(TraceEnd {
            packets: self.packets,
            stopped_at: self.stopped_at,
        })
    }
}
