//! What a scenario's buffers could make the simulator hold: the worst case (every buffer
//! full of the smallest packet), checked against the memory available before a run.

use super::{FlowKind, ScenarioFile};

/// What the scenario's buffers could queue at worst: every buffer full of its smallest
/// packets.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueBound {
    /// Packets, over both directions of every link.
    pub packets: u64,
    /// Memory they would take in the simulator's queues and on its wires, bytes.
    pub bytes: u64,
    /// The link with the largest share: its index, routers and buffer.
    pub link: (usize, String, String, u32),
    /// The smallest packet and what sends it.
    pub smallest: (u32, &'static str),
}

/// The scenario's buffers could hold more packets than the memory a run may use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the buffers could queue {packets} packets of {size} bytes ({what}), {gib:.1} GiB of      simulator state, more than the {budget_gib:.1} GiB available: link {link} ({a}-{b})      alone has a {buffer}-byte buffer in each direction; lower buffer_bytes or send larger      packets",
    packets = bound.packets,
    size = bound.smallest.0,
    what = bound.smallest.1,
    gib = bound.bytes as f64 / GIB,
    budget_gib = *budget as f64 / GIB,
    link = bound.link.0,
    a = bound.link.1,
    b = bound.link.2,
    buffer = bound.link.3
)]
pub struct TooLarge {
    /// The worst case.
    pub bound: QueueBound,
    /// The memory it was held against, bytes.
    pub budget: u64,
}

const GIB: f64 = (1u64 << 30) as f64;

/// The memory the kernel says is available for new allocations, bytes.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl ScenarioFile {
    /// The most packets the buffers could hold at once (each full of the smallest packet
    /// any flow or loop sends) and the memory the simulator would need for them.
    pub fn queue_bound(&self) -> QueueBound {
        let tcp = self
            .flows
            .iter()
            .any(|f| matches!(f.get_ref().kind, FlowKind::Tcp | FlowKind::Web));
        let mut smallest = (u32::MAX, "");
        let mut take = |b: u32, what: &'static str| {
            if b < smallest.0 {
                smallest = (b, what);
            }
        };
        if tcp {
            take(
                self.tcp.ack_bytes.min(self.tcp.segment_bytes),
                "[tcp] ack_bytes",
            );
        }
        for f in &self.flows {
            if !matches!(f.get_ref().kind, FlowKind::Tcp | FlowKind::Web) {
                take(f.get_ref().packet_bytes, "a flow's packet_bytes");
            }
        }
        if !self.loops.is_empty() {
            take(self.overlay.control_bytes, "[overlay] control_bytes");
        }
        let size = u64::from(smallest.0.max(1));
        let per_packet = crate::packet::QUEUED_PACKET_BYTES as u64;
        let mut packets = 0u64;
        let mut link = (0, String::new(), String::new(), 0);
        for (i, l) in self.links.iter().enumerate() {
            let l = l.get_ref();
            packets += 2 * (u64::from(l.buffer_bytes) / size);
            if l.buffer_bytes > link.3 {
                link = (
                    i,
                    l.between[0].clone(),
                    l.between[1].clone(),
                    l.buffer_bytes,
                );
            }
        }
        QueueBound {
            packets,
            bytes: packets.saturating_mul(per_packet),
            link,
            smallest,
        }
    }

    /// Refuses a scenario whose buffers could need more than `budget` bytes of queue
    /// state (the CLI passes the memory the machine has available).
    pub fn check_queue_memory(&self, budget: u64) -> Result<QueueBound, TooLarge> {
        let bound = self.queue_bound();
        if bound.bytes > budget {
            Err(TooLarge { bound, budget })
        } else {
            Ok(bound)
        }
    }

    /// [`Self::check_queue_memory`] against the memory this machine has available
    /// (`MemAvailable` in /proc/meminfo); passes where that cannot be read.
    pub fn check_fits_this_machine(&self) -> Result<(), TooLarge> {
        match available_memory() {
            Some(budget) => self.check_queue_memory(budget).map(|_| ()),
            None => Ok(()),
        }
    }
}
