//! A port's queue discipline: the library's disciplines behind one enum. Every
//! discipline but drop-tail is boxed, edges' per-flow tables included, so the many access
//! ports (drop-tail, four per flow) stay small: the enum is no larger than a drop-tail
//! queue (40 bytes): the compiler keeps the variant in values its capacity never takes.

use csfq_algo::ared::Ared;
use csfq_algo::choke::Choke;
use csfq_algo::csfne::{CsfneCore, TswMeter};
use csfq_algo::csfne_fixed::{FixedCsfneParams, FixedCsfnePort, RING_MAX};
use csfq_algo::csfq::{CsfqCore, CsfqEdge};
use csfq_algo::drr::Drr;
use csfq_algo::fifo::DropTail;
use csfq_algo::fixed::{FixedCoreParams, FixedCsfqCore, FixedEdge, Meter};
use csfq_algo::fq_codel::FqCodel;
use csfq_algo::fred::{Fred, FredParams, FredVariant};
use csfq_algo::las::Las;
use csfq_algo::may::{May, MayParamError, MayStats};
use csfq_algo::red::Red;
use csfq_algo::tuf::{TufQueue, TufTagger};
use csfq_algo::tuf_fixed::{FixedTufParams, FixedTufPort, FixedTufTagger};
use csfq_algo::{Dropped, FlowId, Nanos, QueueDisc};
use rand::Rng;

use crate::config::DisciplineTables;
use crate::kinds::DisciplineKind;
use crate::packet::{SimPacket, NO_TAG};

/// One output port's discipline.
#[derive(Debug, Clone)]
pub enum Discipline {
    /// Drop-tail FIFO.
    Fifo(DropTail<SimPacket>),
    /// RED.
    Red(Box<Red<SimPacket>>),
    /// FRED-1 or FRED-2.
    Fred(Box<Fred<SimPacket>>),
    /// DRR.
    Drr(Box<Drr<SimPacket>>),
    /// CSFQ: the edge labels packets entering the island here; the core runs on all.
    Csfq {
        /// Per-flow labeling of packets whose first router this is.
        edge: Box<CsfqEdge>,
        /// The core algorithm of this port.
        core: Box<CsfqCore<SimPacket>>,
    },
    /// TUF: the edge tags unresponsive flows' packets (TCP sources tag their own).
    Tuf {
        /// Edge tagging.
        tagger: Box<TufTagger>,
        /// The drop-highest-tag queue.
        queue: Box<TufQueue<SimPacket>>,
    },
    /// CS-FNE: TSW labeling at the edge, flow-number-estimating core.
    Csfne {
        /// Edge meter.
        meter: Box<TswMeter>,
        /// Core.
        core: Box<CsfneCore<SimPacket>>,
    },
    /// CHOKe.
    Choke(Box<Choke<SimPacket>>),
    /// CSFQ in the dataplane's integer arithmetic.
    CsfqFixed {
        /// Integer edge.
        edge: Box<FixedEdge>,
        /// Integer core.
        core: Box<FixedCsfqCore<SimPacket>>,
    },
    /// CS-FNE in the dataplane's integer arithmetic.
    CsfneFixed {
        /// Integer edge with the TSW meter.
        edge: Box<FixedEdge>,
        /// Integer core with its ring.
        core: Box<FixedCsfnePort<SimPacket>>,
    },
    /// TUF in the dataplane's integer arithmetic: a filter, not a push-out queue.
    TufFilter {
        /// Integer tagging of unresponsive flows at the edge.
        tagger: Box<FixedTufTagger>,
        /// The filter in front of a FIFO.
        core: Box<FixedTufPort<SimPacket>>,
    },
    /// MAY.
    May(Box<May<SimPacket>>),
    /// Least Attained Service.
    Las(Box<Las<SimPacket>>),
    /// Adaptive RED.
    Ared(Box<Ared<SimPacket>>),
    /// FQ-CoDel.
    FqCodel(Box<FqCodel<SimPacket>>),
}

/// Dispatches a `QueueDisc` method over the variants.
macro_rules! each {
    ($self:expr, $q:ident => $e:expr) => {
        match $self {
            Discipline::Fifo($q) => $e,
            Discipline::Red($q) => $e,
            Discipline::Fred($q) => $e,
            Discipline::Drr($q) => $e,
            Discipline::Csfq { core: $q, .. } => $e,
            Discipline::Tuf { queue: $q, .. } => $e,
            Discipline::Csfne { core: $q, .. } => $e,
            Discipline::Choke($q) => $e,
            Discipline::CsfqFixed { core: $q, .. } => $e,
            Discipline::CsfneFixed { core: $q, .. } => $e,
            Discipline::TufFilter { core: $q, .. } => $e,
            Discipline::May($q) => $e,
            Discipline::Las($q) => $e,
            Discipline::Ared($q) => $e,
            Discipline::FqCodel($q) => $e,
        }
    };
}

impl Discipline {
    /// Builds a discipline for a port of `rate_bps` with `buffer_bytes`, from the
    /// scenario's tables decoded for that link (`config`'s `decode`). The scenario's checks
    /// pass every table it holds, so an error here is a gap between them and the
    /// algorithm's own range, returned rather than a panic.
    pub fn build(
        kind: DisciplineKind,
        s: &DisciplineTables,
        rate_bps: f64,
        buffer_bytes: u32,
    ) -> Result<Self, MayParamError> {
        let red = || s.red.params(rate_bps, buffer_bytes);
        let fred = |variant| {
            Discipline::Fred(Box::new(Fred::new(FredParams {
                red: red(),
                min_q_packets: s.fred.min_q_packets,
                variant,
            })))
        };
        Ok(match kind {
            DisciplineKind::Fifo => Discipline::Fifo(DropTail::new(buffer_bytes)),
            DisciplineKind::Red => Discipline::Red(Box::new(Red::new(red()))),
            DisciplineKind::Fred1 => fred(FredVariant::Fred1),
            DisciplineKind::Fred2 => fred(FredVariant::Fred2),
            DisciplineKind::Drr => Discipline::Drr(Box::new(Drr::new(s.drr.params(buffer_bytes)))),
            DisciplineKind::Csfq => Discipline::Csfq {
                edge: Box::new(CsfqEdge::new(s.csfq.edge_k())),
                core: Box::new(CsfqCore::new(s.csfq.core_params(rate_bps, buffer_bytes))),
            },
            DisciplineKind::Tuf => Discipline::Tuf {
                tagger: Box::new(TufTagger::new(s.tuf.k())),
                queue: Box::new(TufQueue::new(s.tuf.params(buffer_bytes))),
            },
            DisciplineKind::Csfne => Discipline::Csfne {
                meter: Box::new(TswMeter::new(s.csfne.win())),
                core: Box::new(CsfneCore::new(s.csfne.params(rate_bps, buffer_bytes))),
            },
            DisciplineKind::Choke => Discipline::Choke(Box::new(Choke::new(red()))),
            DisciplineKind::CsfqFixed => {
                let core = s.csfq.core_params(rate_bps, buffer_bytes);
                Discipline::CsfqFixed {
                    edge: Box::new(FixedEdge::new(s.csfq.edge_k())),
                    core: Box::new(FixedCsfqCore::new(
                        FixedCoreParams {
                            capacity_bps: rate_bps as u64,
                            k_alpha_ns: core.k_alpha.0,
                            k_c_ns: core.k_c.0,
                            threshold_bytes: core.threshold_bytes,
                            overflow_budget: core.overflow_budget,
                            estimator: core.estimator,
                        },
                        buffer_bytes,
                    )),
                }
            }
            DisciplineKind::CsfneFixed => Discipline::CsfneFixed {
                edge: Box::new(FixedEdge::with_meter(s.csfne.win(), Meter::Tsw)),
                core: Box::new(FixedCsfnePort::new(FixedCsfneParams {
                    capacity_bps: rate_bps as u64,
                    k_ns: s.csfne.k().0,
                    target_bytes: s.csfne.target_bytes(buffer_bytes),
                    limit_bytes: buffer_bytes,
                    ring: RING_MAX,
                })),
            },
            DisciplineKind::TufFilter => {
                let window = s.csfq.core_params(rate_bps, buffer_bytes).k_c;
                Discipline::TufFilter {
                    tagger: Box::new(FixedTufTagger::new(s.tuf.k().0)),
                    core: Box::new(FixedTufPort::new(FixedTufParams {
                        capacity_bps: rate_bps as u64,
                        limit_bytes: buffer_bytes,
                        window_ns: window.0,
                        k_ns: s.tuf.k().0,
                    })),
                }
            }
            DisciplineKind::May => {
                let params = s.may.params(rate_bps, buffer_bytes, s.segment_bytes);
                Discipline::May(Box::new(May::new(params)?))
            }
            DisciplineKind::Las => Discipline::Las(Box::new(Las::new(buffer_bytes))),
            DisciplineKind::Ared => Discipline::Ared(Box::new(Ared::new(s.ared.params(
                rate_bps,
                buffer_bytes,
                s.segment_bytes,
            )))),
            // The hash perturbation follows the scenario's seed: runs stay reproducible.
            DisciplineKind::FqCodel => Discipline::FqCodel(Box::new(FqCodel::new(
                s.fq_codel.params(buffer_bytes),
                s.seed,
            ))),
        })
    }

    /// Entries in the discipline's per-flow table, for the stateless-with-a-small-table
    /// disciplines whose table size is the point (MAY).
    pub fn table_entries(&self) -> Option<usize> {
        match self {
            Discipline::May(m) => Some(m.entries()),
            _ => None,
        }
    }

    /// MAY's table counters.
    pub fn may_stats(&self) -> Option<MayStats> {
        match self {
            Discipline::May(m) => Some(m.stats()),
            _ => None,
        }
    }

    /// Edge duty for a packet entering the island at this port: CSFQ and CS-FNE label it,
    /// TUF tags it unless its source already did.
    #[inline]
    pub fn label_at_edge<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R) {
        match self {
            Discipline::Csfq { edge, .. } => edge.label(p, now),
            Discipline::Csfne { meter, .. } => meter.label(p, now),
            Discipline::CsfqFixed { edge, .. } => edge.label(p, now),
            Discipline::CsfneFixed { edge, .. } => edge.label(p, now),
            Discipline::Tuf { tagger, .. } if p.tag == NO_TAG => p.tag = tagger.tag(p, now, rng),
            Discipline::TufFilter { tagger, .. } if p.tag == NO_TAG => {
                let (flow, bytes) = (csfq_algo::Packet::flow(p), csfq_algo::Packet::size_bytes(p));
                p.tag = tagger.tag_with(flow, now.0, bytes, rng)
            }
            _ => {}
        }
    }

    /// Sets a flow's weight at this port's edge (CSFQ, TUF and the dataplane's models).
    pub fn set_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, rng: &mut R) {
        match self {
            Discipline::Csfq { edge, .. } => edge.set_weight(flow, weight),
            Discipline::Tuf { tagger, .. } => tagger.set_weight(flow, weight, rng),
            Discipline::CsfqFixed { edge, .. } => edge.set_weight(flow, weight),
            Discipline::TufFilter { tagger, .. } => tagger.set_weight(flow, weight),
            Discipline::CsfneFixed { edge, .. } => edge.set_weight(flow, weight),
            _ => {}
        }
    }

    /// Sets a flow's weight at a scheduler that keeps per-flow queues (DRR: a quantum
    /// proportional to it), at every port the flow crosses.
    pub fn set_scheduling_weight(&mut self, flow: FlowId, weight: f64) {
        if let Discipline::Drr(q) = self {
            q.set_weight(flow, weight);
        }
    }

    /// Puts a flow in a hash bucket at a scheduler that keeps per-flow queues (DRR): it
    /// shares the bucket's queue with every flow put there.
    pub fn set_bucket(&mut self, flow: FlowId, bucket: u32) {
        if let Discipline::Drr(q) = self {
            q.set_queue(flow, bucket);
        }
    }

    /// The fair-share estimate, if the discipline keeps one: CSFQ's `alpha`, CS-FNE's
    /// threshold rate `C / N_act`, the TUF filter's threshold tag's rate, MAY's `1/v` (0
    /// while `v` is 0).
    pub fn alpha(&self) -> Option<f64> {
        match self {
            Discipline::Csfq { core, .. } => Some(core.estimator().alpha()),
            Discipline::Csfne { core, .. } => Some(core.threshold_rate()),
            Discipline::CsfqFixed { core, .. } => Some(core.alpha_bps() as f64),
            Discipline::CsfneFixed { core, .. } => Some(core.threshold_rate()),
            Discipline::TufFilter { core, .. } => Some(core.threshold_rate()),
            Discipline::May(m) => Some(m.fair_share_bps().unwrap_or(0.0)),
            _ => None,
        }
    }

    /// Whether this is TUF with its push-out queue, whose TCP sources tag their own packets
    /// (under the dataplane's filter, `tuf-filter`, the edge tags every flow, as a Linux
    /// edge does).
    pub fn is_tuf(&self) -> bool {
        matches!(self, Discipline::Tuf { .. })
    }

    /// Whether this is an empty drop-tail FIFO that would take a packet of `size` bytes:
    /// a port that is also idle can then send it at once, as enqueueing and dequeueing it
    /// would, without its queue holding a slot (hosts' access ports mostly never queue).
    pub fn passes_through(&self, size: u32) -> bool {
        match self {
            Discipline::Fifo(q) => q.would_pass(size),
            _ => false,
        }
    }

    /// Enqueues `p`, as a qdisc's `enqueue(skb, sch, to_free)` does: every packet the
    /// discipline drops for it (the arrival, or packets pushed out to make room, CHOKe's
    /// matched victim) is handed to `drop`, in the order they were dropped. Returns whether
    /// it dropped any; a discipline that departs in order only ever drops the arrival.
    #[inline]
    pub fn enqueue<R: Rng + ?Sized>(
        &mut self,
        p: SimPacket,
        now: Nanos,
        rng: &mut R,
        drop: &mut dyn FnMut(Dropped<SimPacket>),
    ) -> bool {
        // The drain is a second dispatch, taken only after a drop: inside the first it
        // made FQ-CoDel's runs 4-7% slower (the inlining of its paths changed).
        let Some(d) = each!(self, q => q.enqueue(p, now, rng)) else {
            return false;
        };
        drop(d);
        while let Some(d) = each!(self, q => q.take_extra_drop()) {
            drop(d);
        }
        true
    }

    /// Whether the discipline sends in arrival order and decides only on arrival (see
    /// `QueueDisc::last_queued`), so that its port fixes each packet's departure when the
    /// packet is queued: FIFO, RED, adaptive RED, FRED, CSFQ's and CS-FNE's cores, TUF's
    /// filter and MAY. DRR, FQ-CoDel, LAS, CHOKe and TUF's push-out queue decide when they
    /// send, or drop what is queued.
    pub fn departs_in_order(&self) -> bool {
        each!(self, q => q.departs_in_order())
    }

    /// The packet the last accepted enqueue queued, as it will leave (disciplines that
    /// depart in order; `None` for the others).
    #[inline]
    pub fn last_queued(&self) -> Option<&SimPacket> {
        each!(self, q => q.last_queued())
    }

    /// Dequeues the next packet to send, as a qdisc's `dequeue(sch)` does; the packets a
    /// discipline that manages its queue at the head drops on the way (CoDel) are handed to
    /// `drop`, in order.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Nanos,
        mut drop: impl FnMut(Dropped<SimPacket>),
    ) -> Option<SimPacket> {
        each!(self, q => {
            let p = q.dequeue(now);
            while let Some(d) = q.take_extra_drop() {
                drop(d);
            }
            p
        })
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len_bytes() == 0
    }

    /// Packets queued.
    pub fn len_packets(&self) -> usize {
        each!(self, q => q.len_packets())
    }

    /// Packet slots allocated by the discipline's queues.
    pub fn reserved_slots(&self) -> usize {
        each!(self, q => q.reserved_slots())
    }

    /// Per-flow records held, the edge's and the queue's.
    pub fn flow_slots(&self) -> usize {
        let edge = match self {
            Discipline::Csfq { edge, .. } => edge.flow_slots(),
            Discipline::Tuf { tagger, .. } => tagger.flow_slots(),
            Discipline::Csfne { meter, .. } => meter.flow_slots(),
            Discipline::CsfqFixed { edge, .. } => edge.flow_slots(),
            Discipline::CsfneFixed { edge, .. } => edge.flow_slots(),
            Discipline::TufFilter { tagger, .. } => tagger.flow_slots(),
            _ => 0,
        };
        edge + each!(self, q => q.flow_slots())
    }

    /// Bytes queued.
    pub fn len_bytes(&self) -> u32 {
        each!(self, q => q.len_bytes())
    }
}

#[cfg(test)]
mod tests {
    /// Four access ports a flow hold a drop-tail queue each: the enum adds nothing to it
    /// (BENCHMARKS.md, "Memory": 8 bytes a port, 32 a flow, when it did).
    #[test]
    fn the_enum_is_no_larger_than_a_drop_tail_queue() {
        use std::mem::size_of;
        assert_eq!(
            size_of::<super::Discipline>(),
            size_of::<csfq_algo::fifo::DropTail<crate::packet::SimPacket>>()
        );
    }

    /// MAY's parameters out of its algorithm's range are an error of the build, not a
    /// panic (the scenario's checks keep them out of a checked scenario; these tables skip
    /// the checks): a gain of 0 names the field.
    #[test]
    fn mays_parameters_out_of_range_are_an_error_not_a_panic() {
        use crate::config::{FlowSpec, LinkSpec, ScenarioBuilder};
        use crate::kinds::DisciplineKind;
        let mut file = ScenarioBuilder::new("t", 1.0, DisciplineKind::May)
            .routers(["a", "b"])
            .link(LinkSpec::new("a", "b", 10.0))
            .flow(FlowSpec::udp("a", "b", 1.0))
            .build()
            .unwrap()
            .into_file();
        let tables = file.discipline_tables();
        assert!(super::Discipline::build(DisciplineKind::May, &tables, 10e6, 64_000).is_ok());
        file.may.gain = 0.0;
        let tables = file.discipline_tables();
        let Err(e) = super::Discipline::build(DisciplineKind::May, &tables, 10e6, 64_000) else {
            panic!("a gain of 0 is refused");
        };
        assert_eq!(e.field, "gain");
    }
}
