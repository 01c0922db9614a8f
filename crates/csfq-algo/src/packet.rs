//! What an algorithm needs to know about a packet.
//!
//! Algorithms are generic over the packet type, so the simulator and the dataplane's
//! model can hand them their own packet structs without copying.

/// A flow's identity: dense small integers, so per-flow state can live in a `Vec`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl FlowId {
    /// The index of this flow in a dense per-flow table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The fields of a packet that queue disciplines read and write.
pub trait Packet {
    /// The flow the packet belongs to: what per-flow state is indexed by (a small, dense
    /// number where the caller keeps one per queue).
    fn flow(&self) -> FlowId;
    /// The flow as a router's hash sees it (its 5-tuple): what hashed structures key on
    /// (FQ-CoDel's buckets, MAY's table), so their hashing does not depend on how a caller
    /// numbers flows. The same as [`Packet::flow`] unless the caller numbers flows per queue.
    #[inline]
    fn flow_hash_key(&self) -> FlowId {
        self.flow()
    }
    /// Its length on the wire, bytes.
    fn size_bytes(&self) -> u32;
    /// Its CSFQ label: the (normalized) rate of its flow in bits/s; 0 means unlabeled.
    fn label(&self) -> f64;
    /// Overwrites the label.
    fn set_label(&mut self, label: f64);
}
