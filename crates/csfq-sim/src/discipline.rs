//! A port's queue discipline: the library's disciplines behind one enum (no boxing).

use csfq_algo::csfq::{CsfqCore, CsfqEdge, CsfqParams};
use csfq_algo::drr::{Drr, DrrParams};
use csfq_algo::fifo::DropTail;
use csfq_algo::fred::{Fred, FredParams, FredVariant};
use csfq_algo::red::{Red, RedParams};
use csfq_algo::{Dropped, Nanos, QueueDisc};
use rand::Rng;

use crate::packet::SimPacket;
use crate::scenario::{DisciplineKind, ScenarioFile};

/// One output port's discipline.
#[derive(Debug, Clone)]
pub enum Discipline {
    /// Drop-tail FIFO.
    Fifo(DropTail<SimPacket>),
    /// RED.
    Red(Red<SimPacket>),
    /// FRED-1 or FRED-2.
    Fred(Fred<SimPacket>),
    /// DRR.
    Drr(Drr<SimPacket>),
    /// CSFQ: the edge labels packets entering the island here; the core runs on all.
    Csfq {
        /// Per-flow labeling of packets whose first router this is.
        edge: CsfqEdge,
        /// The core algorithm of this port.
        core: CsfqCore<SimPacket>,
    },
}

impl Discipline {
    /// Builds a discipline for a port of `rate_bps` with `buffer_bytes`.
    pub fn build(kind: DisciplineKind, s: &ScenarioFile, rate_bps: f64, buffer_bytes: u32) -> Self {
        let red = || RedParams {
            min_th_bytes: s.red.min_th_bytes as f64,
            max_th_bytes: s.red.max_th_bytes as f64,
            w_q: s.red.w_q,
            max_p: s.red.max_p,
            ..RedParams::new(rate_bps, buffer_bytes)
        };
        let fred = |variant| {
            Discipline::Fred(Fred::new(FredParams {
                red: red(),
                min_q_packets: s.fred.min_q_packets,
                variant,
            }))
        };
        match kind {
            DisciplineKind::Fifo => Discipline::Fifo(DropTail::new(buffer_bytes)),
            DisciplineKind::Red => Discipline::Red(Red::new(red())),
            DisciplineKind::Fred1 => fred(FredVariant::Fred1),
            DisciplineKind::Fred2 => fred(FredVariant::Fred2),
            DisciplineKind::Drr => Discipline::Drr(Drr::new(DrrParams {
                buffer_bytes,
                quantum_bytes: s.drr.quantum_bytes,
            })),
            DisciplineKind::Csfq => {
                let ms = |x: f64| Nanos::from_secs_f64(x / 1e3);
                let params = CsfqParams {
                    k_alpha: ms(s.csfq.k_alpha_ms),
                    k_c: ms(s.csfq.k_c_ms),
                    relabel: s.csfq.relabel,
                    ..CsfqParams::new(rate_bps, buffer_bytes)
                };
                Discipline::Csfq {
                    edge: CsfqEdge::new(ms(s.csfq.k_ms)),
                    core: CsfqCore::new(params),
                }
            }
        }
    }

    /// Edge duty: label a packet entering the island at this port (CSFQ only).
    #[inline]
    pub fn label_at_edge(&mut self, p: &mut SimPacket, now: Nanos) {
        if let Discipline::Csfq { edge, .. } = self {
            edge.label(p, now);
        }
    }

    /// Sets a flow's weight at this port's edge (CSFQ only).
    pub fn set_weight(&mut self, flow: csfq_algo::FlowId, weight: f64) {
        if let Discipline::Csfq { edge, .. } = self {
            edge.set_weight(flow, weight);
        }
    }

    /// The CSFQ fair-share estimate, if this is a CSFQ port.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            Discipline::Csfq { core, .. } => Some(core.estimator().alpha()),
            _ => None,
        }
    }

    /// Enqueues; returns the packet dropped, if any.
    #[inline]
    pub fn enqueue<R: Rng + ?Sized>(
        &mut self,
        p: SimPacket,
        now: Nanos,
        rng: &mut R,
    ) -> Option<Dropped<SimPacket>> {
        match self {
            Discipline::Fifo(q) => q.enqueue(p, now, rng),
            Discipline::Red(q) => q.enqueue(p, now, rng),
            Discipline::Fred(q) => q.enqueue(p, now, rng),
            Discipline::Drr(q) => q.enqueue(p, now, rng),
            Discipline::Csfq { core, .. } => core.enqueue(p, now, rng),
        }
    }

    /// Dequeues the next packet to send.
    #[inline]
    pub fn dequeue(&mut self, now: Nanos) -> Option<SimPacket> {
        match self {
            Discipline::Fifo(q) => q.dequeue(now),
            Discipline::Red(q) => q.dequeue(now),
            Discipline::Fred(q) => q.dequeue(now),
            Discipline::Drr(q) => q.dequeue(now),
            Discipline::Csfq { core, .. } => core.dequeue(now),
        }
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len_bytes() == 0
    }

    /// Bytes queued.
    pub fn len_bytes(&self) -> u32 {
        match self {
            Discipline::Fifo(q) => q.len_bytes(),
            Discipline::Red(q) => q.len_bytes(),
            Discipline::Fred(q) => q.len_bytes(),
            Discipline::Drr(q) => q.len_bytes(),
            Discipline::Csfq { core, .. } => core.len_bytes(),
        }
    }
}
