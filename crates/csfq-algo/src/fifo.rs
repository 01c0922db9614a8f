//! FIFO with drop-tail: the status quo every paper compares against.

use rand::Rng;

use crate::packet::Packet;
use crate::queue::{ByteFifo, Held, InOrder, Keep};
use crate::time::Nanos;
use crate::verdict::{DropReason, Dropped};

/// First in, first out; an arrival that does not fit is dropped. `K` is what the queue
/// keeps of each packet: the packet itself, or a [`crate::queue::Queued`] record.
#[derive(Debug, Clone)]
pub struct DropTail<K> {
    fifo: ByteFifo<K>,
}

impl<K: Held> DropTail<K> {
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

impl<P: Packet, K: Keep<P>> InOrder<P> for DropTail<K> {
    type Kept = K;
    fn admit<R: Rng + ?Sized>(&mut self, p: P, now: Nanos, _rng: &mut R) -> Result<P, Dropped<P>> {
        self.fifo
            .admit(p, now)
            .map_err(|p| Dropped::new(p, DropReason::BufferOverflow))
    }
    fn depart(&mut self, _now: Nanos) -> Option<K> {
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
