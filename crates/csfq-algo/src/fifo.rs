//! FIFO with drop-tail: the status quo every paper compares against.

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{ByteFifo, QueueDisc};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// First in, first out; an arrival that does not fit is dropped.
#[derive(Debug, Clone)]
pub struct DropTail<P> {
    fifo: ByteFifo<P>,
}

impl<P: Packet> DropTail<P> {
    /// A drop-tail FIFO of `buffer_bytes`.
    pub fn new(buffer_bytes: u32) -> Self {
        DropTail {
            fifo: ByteFifo::new(buffer_bytes),
        }
    }

    /// Whether it is empty and would take a packet of `size` bytes: then enqueueing it and
    /// dequeueing it at once is the same as passing it on.
    pub fn would_pass(&self, size: u32) -> bool {
        self.fifo.is_empty() && self.fifo.fits(size)
    }
}

impl<P: Packet> QueueDisc<P> for DropTail<P> {
    fn enqueue<R: Rng + ?Sized>(&mut self, p: P, _now: Nanos, _rng: &mut R) -> Option<Dropped<P>> {
        self.fifo
            .push(p)
            .err()
            .map(|p| Dropped::new(p, DropReason::BufferOverflow))
    }
    fn last_queued(&self) -> Option<&P> {
        self.fifo.back()
    }
    fn departs_in_order(&self) -> bool {
        true
    }
    fn dequeue(&mut self, _now: Nanos) -> Option<P> {
        self.fifo.pop()
    }
    fn len_bytes(&self) -> u32 {
        self.fifo.bytes()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len()
    }
    fn reserved_slots(&self) -> usize {
        self.fifo.reserved_slots()
    }
}
