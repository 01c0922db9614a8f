//! The receiving side of a TCP connection: cumulative ACKs, optional delayed ACKs
//! (RFC 5681 Section 4.2) and SACK blocks (RFC 2018).

use std::collections::VecDeque;
use std::sync::Arc;

use csfq_algo::{FlowId, Nanos};

use super::TcpParams;
use crate::packet::{SackBlocks, SimPacket};

/// The receiving side: cumulative ACKs, optional delayed ACKs and SACK blocks.
#[derive(Debug, Clone)]
pub struct TcpReceiver {
    flow: FlowId,
    /// Shared by every connection of a run.
    cfg: Arc<TcpParams>,
    rcv_nxt: u32,
    /// `ooo[i]`: segment `rcv_nxt + 1 + i` has arrived.
    ooo: VecDeque<bool>,
    ts_recent: Nanos,
    unacked: u32,
    delack_deadline: Option<Nanos>,
}

/// What the receiver wants done after a segment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AckAction {
    /// Send this ACK now.
    Send(SimPacket),
    /// Hold the ACK; make sure the delayed-ACK timer fires at this time.
    Delay(Nanos),
}

impl TcpReceiver {
    /// A receiver for `flow`.
    pub fn new(flow: FlowId, cfg: impl Into<Arc<TcpParams>>) -> Self {
        TcpReceiver {
            flow,
            cfg: cfg.into(),
            rcv_nxt: 0,
            // Grows with the holes it has to remember, up to the window.
            ooo: VecDeque::new(),
            ts_recent: Nanos::ZERO,
            unacked: 0,
            delack_deadline: None,
        }
    }

    /// Segments delivered in order to the application.
    pub fn delivered(&self) -> u32 {
        self.rcv_nxt
    }

    fn sack_blocks(&self, latest: u32) -> SackBlocks {
        let mut blocks = [(0, 0); 3];
        if !self.cfg.sack {
            return blocks;
        }
        let mut n = 0;
        let base = self.rcv_nxt + 1;
        // The block holding the latest arrival first (RFC 2018), then the others in order.
        let mut ranges = self.ooo_ranges(base);
        if let Some(pos) = ranges.clone().position(|(s, e)| (s..e).contains(&latest)) {
            blocks[0] = ranges.clone().nth(pos).expect("found");
            n = 1;
            for r in ranges
                .by_ref()
                .enumerate()
                .filter(|(i, _)| *i != pos)
                .map(|(_, r)| r)
            {
                if n == 3 {
                    break;
                }
                blocks[n] = r;
                n += 1;
            }
        } else {
            for r in ranges.take(3) {
                blocks[n] = r;
                n += 1;
            }
        }
        blocks
    }

    fn ooo_ranges(&self, base: u32) -> impl Iterator<Item = (u32, u32)> + Clone + '_ {
        let mut i = 0usize;
        std::iter::from_fn(move || {
            while i < self.ooo.len() && !self.ooo[i] {
                i += 1;
            }
            if i >= self.ooo.len() {
                return None;
            }
            let start = i;
            while i < self.ooo.len() && self.ooo[i] {
                i += 1;
            }
            Some((base + start as u32, base + i as u32))
        })
    }

    fn ack_now(&mut self, latest: u32) -> SimPacket {
        self.unacked = 0;
        self.delack_deadline = None;
        let sack = self.sack_blocks(latest);
        SimPacket::ack(
            self.flow,
            self.cfg.ack_bytes,
            self.rcv_nxt,
            self.ts_recent,
            sack,
        )
    }

    /// A data segment arrives; returns how many new segments reached the application and
    /// what to do about the ACK.
    pub fn on_data(&mut self, seg: &SimPacket, now: Nanos) -> (u32, AckAction) {
        let seq = seg.seq;
        if seq == self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            if self.unacked == 0 || had_holes {
                self.ts_recent = seg.ts;
            }
            self.rcv_nxt += 1;
            let mut delivered = 1;
            // ooo[0] now stands for rcv_nxt itself: pull in what had arrived out of order,
            // then drop the slot of the next hole so ooo[0] stands for rcv_nxt + 1 again.
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.rcv_nxt += 1;
                delivered += 1;
            }
            self.ooo.pop_front();
            while self.ooo.back() == Some(&false) {
                self.ooo.pop_back();
            }
            let Some(delay) = self.cfg.delayed_ack.filter(|_| !had_holes) else {
                return (delivered, AckAction::Send(self.ack_now(seq)));
            };
            self.unacked += 1;
            if self.unacked >= 2 {
                return (delivered, AckAction::Send(self.ack_now(seq)));
            }
            let deadline = now + delay;
            self.delack_deadline = Some(deadline);
            (delivered, AckAction::Delay(deadline))
        } else if seq > self.rcv_nxt {
            let i = (seq - self.rcv_nxt - 1) as usize;
            if i >= self.ooo.len() {
                self.ooo.resize(i + 1, false);
            }
            self.ooo[i] = true;
            (0, AckAction::Send(self.ack_now(seq)))
        } else {
            (0, AckAction::Send(self.ack_now(seq)))
        }
    }

    /// When a held ACK is due (the delayed-ACK timer's time), if one is held.
    pub fn delack_deadline(&self) -> Option<Nanos> {
        self.delack_deadline.filter(|_| self.unacked > 0)
    }

    /// The delayed-ACK timer fired: the held ACK, if one is still due.
    pub fn on_delack_timer(&mut self, now: Nanos) -> Option<SimPacket> {
        match self.delack_deadline {
            Some(d) if d <= now && self.unacked > 0 => Some(self.ack_now(self.rcv_nxt)),
            _ => None,
        }
    }
}
