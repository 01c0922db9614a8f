//! The simulator's packet: small and `Copy`, carried by value through queues and events.

use csfq_algo::{FlowId, Nanos, Packet};

/// Data or acknowledgment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Data: a UDP datagram or a TCP segment.
    Data,
    /// A TCP acknowledgment.
    Ack,
    /// An overlay loop's control packet, ingress to egress (`flow` is the loop's id after
    /// the flows', `seq` the control's number).
    Control,
    /// An overlay loop's feedback packet, egress to ingress.
    Feedback,
}

/// The `tag` of a packet that carries no TUF tag.
pub const NO_TAG: u16 = u16::MAX;

/// Up to three SACK blocks `[start, end)` in segment numbers (RFC 2018 allows 3 with
/// timestamps); `end == start` marks an unused block.
pub type SackBlocks = [(u32, u32); 3];

/// A simulated packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimPacket {
    /// Its flow.
    pub flow: FlowId,
    /// Its flow's index among the flows of the queue it is in (set at each hop from
    /// [`crate::net::Hop::local`]): what the disciplines' per-flow state is
    /// indexed by, so that state is as large as the flows that cross a port.
    pub local: u32,
    /// Wire size, bytes.
    pub size: u32,
    /// CSFQ label, bits/s (0: unlabeled).
    pub label: f64,
    /// TUF tag, 0..=2047, or [`NO_TAG`].
    pub tag: u16,
    /// Data or ACK.
    pub kind: Kind,
    /// Next hop: index into the flow's forward (data) or reverse (ACK) path.
    pub hop: u16,
    /// Whether it has reached its first router (its CSFQ edge) yet.
    pub entered: bool,
    /// Whether it has left its overlay loop's shaper.
    pub shaped: bool,
    /// Data: segment number. ACK: the next segment expected (cumulative).
    pub seq: u32,
    /// Data: when it was sent. ACK: the echoed send time (RFC 7323 TSecr).
    pub ts: Nanos,
    /// When it entered the queue it is in (for the queue's sojourn times).
    pub enq: Nanos,
    /// ACK: selective acknowledgment blocks.
    pub sack: SackBlocks,
}

impl SimPacket {
    /// A data packet of `flow`.
    pub fn data(flow: FlowId, size: u32, seq: u32, now: Nanos) -> Self {
        SimPacket {
            flow,
            local: 0,
            size,
            label: 0.0,
            tag: NO_TAG,
            kind: Kind::Data,
            hop: 0,
            entered: false,
            shaped: false,
            seq,
            ts: now,
            enq: now,
            sack: [(0, 0); 3],
        }
    }

    /// An ACK of `flow` acknowledging everything below `next`.
    pub fn ack(flow: FlowId, size: u32, next: u32, echo: Nanos, sack: SackBlocks) -> Self {
        SimPacket {
            flow,
            local: 0,
            size,
            label: 0.0,
            tag: NO_TAG,
            kind: Kind::Ack,
            hop: 0,
            entered: false,
            shaped: false,
            seq: next,
            ts: echo,
            enq: Nanos::ZERO,
            sack,
        }
    }
}

impl SimPacket {
    /// An overlay loop's control or feedback packet: no label, never at an edge.
    pub fn loop_message(id: FlowId, kind: Kind, size: u32, k: u32, now: Nanos) -> Self {
        SimPacket {
            kind,
            entered: true,
            ..SimPacket::data(id, size, k, now)
        }
    }
}

impl csfq_algo::tuf::Tagged for SimPacket {
    #[inline]
    fn tag(&self) -> Option<u16> {
        (self.tag != NO_TAG).then_some(self.tag)
    }
}

impl Packet for SimPacket {
    /// The flow's index at the packet's current queue (dense; see `local`).
    #[inline]
    fn flow(&self) -> FlowId {
        FlowId(self.local)
    }
    /// The flow itself, as a hash keyed on the 5-tuple sees it.
    #[inline]
    fn flow_hash_key(&self) -> FlowId {
        self.flow
    }
    #[inline]
    fn size_bytes(&self) -> u32 {
        self.size
    }
    #[inline]
    fn label(&self) -> f64 {
        self.label
    }
    #[inline]
    fn set_label(&mut self, label: f64) {
        self.label = label;
    }
}

/// A packet on a wire. A link's packets arrive in the order they were sent, so they wait
/// in a list in that order and only the first one's `Arrive` event is in the heap; each
/// keeps the scheduling order it was given when sent, so the heap takes every `Arrive`
/// exactly when it would if all were in it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFlight {
    pub(crate) packet: SimPacket,
    /// When it arrives.
    pub(crate) at: Nanos,
    /// Its scheduling order.
    pub(crate) seq: u64,
    /// The next packet on the same wire (`u32::MAX` if none).
    pub(crate) next: u32,
    /// The port that sent it; `u32::MAX` once it has arrived and the slot is free.
    pub(crate) port: u32,
}

/// The most memory one queued packet takes: at a port that sends in arrival order, its
/// queue's record and its slot on the wire (it is put there when it is queued); at one
/// that chooses what it sends, the packet in its queue.
pub(crate) const QUEUED_PACKET_BYTES: usize = {
    let in_order =
        std::mem::size_of::<csfq_algo::queue::Queued>() + std::mem::size_of::<InFlight>();
    let held = std::mem::size_of::<SimPacket>();
    if in_order > held {
        in_order
    } else {
        held
    }
};
