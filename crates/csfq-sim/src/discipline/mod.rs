//! A port's queue discipline: the library's disciplines behind one enum, each registered
//! by one line of the list below and a module of its own here.
//!
//! A discipline's module holds what a port runs (its `Port` type: the algorithm's queue,
//! and the edge that labels or tags where it has one), its `build` for a link, and, if it
//! has parameters, its table of the scenario file (`[red]`, `[csfq]`, ...) with the
//! paper's defaults, the table's checks and its decoding into the algorithm's parameters
//! (the only place a table's milliseconds and shares become the algorithms' nanoseconds and
//! bytes). The list gives its name in files and on the command line, whether an overlay
//! loop's shaper may run it, its module and build, and its table; [`DisciplineKind`], the
//! [`Discipline`] enum and its dispatch, [`DisciplineTables`] and the scenario file's
//! table fields (`config`) all follow from it.
//!
//! Every discipline but drop-tail is boxed, so the many access ports (drop-tail, four per
//! flow) stay small: the enum is no larger than a drop-tail queue (40 bytes): the compiler
//! keeps the variant in values its capacity never takes.

use std::fmt;

use csfq_algo::may::{MayParamError, MayStats};
use csfq_algo::queue::Queued;
use csfq_algo::{Dropped, FlowId, Nanos};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::packet::SimPacket;

pub mod ared;
pub mod choke;
pub mod csfne;
pub mod csfne_fixed;
pub mod csfq;
pub mod csfq_fixed;
pub mod drr;
pub mod fifo;
pub mod fq_codel;
pub mod fred;
pub mod las;
pub mod may;
pub mod red;
pub mod tuf;
pub mod tuf_filter;

pub use csfq::EstimatorKind;
pub use drr::DrrDropFrom;
pub use may::{MayCeilingKind, MayUtilizationKind};

/// The disciplines, one line each, in the papers' order: the variant, its name in files
/// and on the command line, its module's build (`module::build` returns the module's
/// `Port`), whether an overlay loop's shaper queue may run it (it needs no edge labels and
/// keeps to the shaper's interface), and the table of the scenario file it brings, if any
/// (`table name: Type`, the type in its module). A discipline may read another's table
/// (FRED and CHOKe read `[red]`, the dataplane's models `[csfq]`, `[tuf]`, `[csfne]`).
///
/// `with_disciplines!(m)` hands the list to the macro `m`: [`DisciplineKind`] and
/// [`Discipline`] here, the scenario file's table fields in `config`.
macro_rules! with_disciplines {
    ($m:ident) => {
        $m! {
            /// Drop-tail FIFO.
            Fifo = "fifo" in fifo::build, loop_shaper: true;
            /// RED.
            Red = "red" in red::build, loop_shaper: true, table red: RedConfig;
            /// FRED-1 (Lin and Morris).
            Fred1 = "fred1" in fred::build_fred1, loop_shaper: true, table fred: FredConfig;
            /// FRED-2 (FRED with `minq` guaranteed buffers).
            Fred2 = "fred2" in fred::build_fred2, loop_shaper: true;
            /// Deficit Round Robin.
            Drr = "drr" in drr::build, loop_shaper: true, table drr: DrrConfig;
            /// CSFQ (edge labeling where a flow enters, core on every port).
            Csfq = "csfq" in csfq::build, loop_shaper: false, table csfq: CsfqConfig;
            /// TUF (tags at edges, or at TCP sources; drop-highest-tag queues).
            Tuf = "tuf" in tuf::build, loop_shaper: false, table tuf: TufConfig;
            /// CS-FNE (TSW labels; flow-number-estimating cores).
            Csfne = "csfne" in csfne::build, loop_shaper: false, table csfne: CsfneConfig;
            /// CHOKe.
            Choke = "choke" in choke::build, loop_shaper: false;
            /// CSFQ in the dataplane's integer arithmetic, labels carried as 16-bit floats.
            CsfqFixed = "csfq-fixed" in csfq_fixed::build, loop_shaper: false;
            /// CS-FNE as the dataplane computes it: integer TSW labels carried as 16-bit
            /// floats, a core that compares arrivals with a ring of the packets its virtual
            /// queue holds.
            CsfneFixed = "csfne-fixed" in csfne_fixed::build, loop_shaper: false;
            /// TUF as the dataplane runs it: integer tags at the edges, every flow's (TCPs
            /// tagged as unresponsive, as an edge router must: only the source knows a
            /// TCP's round trip), a filter that drops tags above a threshold that fills the
            /// link, not a queue that pushes the highest tag out.
            TufFilter = "tuf-filter" in tuf_filter::build, loop_shaper: false;
            /// MAY (one FIFO, drops in proportion to past drops; the `[may]` table).
            May = "may" in may::build, loop_shaper: false, table may: MayConfig;
            /// Least Attained Service (per-flow queues; serve the least-served flow).
            Las = "las" in las::build, loop_shaper: true;
            /// Adaptive RED (Floyd, Gummadi and Shenker 2001; the `[ared]` table).
            Ared = "ared" in ared::build, loop_shaper: true, table ared: AredConfig;
            /// FQ-CoDel (RFC 8290; the `[fq_codel]` table), as Linux's `fq_codel`.
            FqCodel = "fq_codel" in fq_codel::build, loop_shaper: false,
                table fq_codel: FqCodelConfig;
        }
    };
}
pub(crate) use with_disciplines;

/// What leaves a port's queue: the packet, from a queue that chooses what it sends when
/// it sends; or what an in-order queue kept of it (see [`PortQueue`]).
#[derive(Debug, Clone, Copy)]
pub enum Departure {
    /// The packet itself.
    Packet(SimPacket),
    /// An in-order queue's record of it: the packet was handed back when it was queued.
    Kept(Queued),
}

impl Departure {
    /// Its length on the wire, bytes.
    #[inline]
    pub fn size(&self) -> u32 {
        match self {
            Departure::Packet(p) => p.size,
            Departure::Kept(k) => k.size,
        }
    }
}

/// What a port needs of its queue. A queue that sends in arrival order and decides each
/// packet's fate when it arrives (`csfq_algo::queue::InOrder`: drop-tail, RED, adaptive
/// RED, FRED, CSFQ's and CS-FNE's cores, TUF's filter, MAY) hands an accepted packet back
/// as it will leave and keeps a 16-byte [`Queued`] record of it; its port puts the packet
/// on the wire at once, at the time its transmission will start. The others (DRR, LAS,
/// CHOKe, FQ-CoDel, TUF's push-out queue: `csfq_algo::QueueDisc`) hold whole packets and
/// choose what they send when they send.
pub trait PortQueue {
    /// The queue is in order (see above).
    const IN_ORDER: bool;
    /// [`PortQueue::IN_ORDER`], of a value.
    #[inline(always)]
    fn in_order(&self) -> bool {
        Self::IN_ORDER
    }
    /// A packet arrives: `Ok(Some(p))` queued by an in-order queue (`p` as it will leave),
    /// `Ok(None)` queued by one that holds it, `Err` the first packet dropped for it (the
    /// arrival, or one pushed out; the rest from [`PortQueue::take_extra_drop`]).
    fn enqueue<R: Rng + ?Sized>(
        &mut self,
        p: SimPacket,
        now: Nanos,
        rng: &mut R,
    ) -> Result<Option<SimPacket>, Dropped<SimPacket>>;
    /// One more packet the last `enqueue` or `dequeue` dropped, if any.
    fn take_extra_drop(&mut self) -> Option<Dropped<SimPacket>>;
    /// The link is free at `now`: what leaves.
    fn dequeue(&mut self, now: Nanos) -> Option<Departure>;
    /// Bytes queued.
    fn len_bytes(&self) -> u32;
    /// Packets queued.
    fn len_packets(&self) -> usize;
    /// Slots allocated by the queue.
    fn reserved_slots(&self) -> usize;
    /// Per-flow records held.
    fn flow_slots(&self) -> usize;
}

/// [`PortQueue`] for queues of either kind: `in_order` ones (`csfq_algo::queue::InOrder`,
/// keeping [`Queued`] records) and `scheduled` ones (`csfq_algo::QueueDisc` of
/// [`SimPacket`]s).
macro_rules! port_queue {
    (in_order $($t:ty),+) => {
        $(impl $crate::discipline::PortQueue for $t {
            const IN_ORDER: bool = true;
            #[inline(always)]
            fn enqueue<R: rand::Rng + ?Sized>(
                &mut self,
                p: $crate::packet::SimPacket,
                now: csfq_algo::Nanos,
                rng: &mut R,
            ) -> Result<Option<$crate::packet::SimPacket>, csfq_algo::Dropped<$crate::packet::SimPacket>> {
                csfq_algo::queue::InOrder::admit(self, p, now, rng).map(Some)
            }
            #[inline(always)]
            fn take_extra_drop(&mut self) -> Option<csfq_algo::Dropped<$crate::packet::SimPacket>> {
                None
            }
            #[inline(always)]
            fn dequeue(&mut self, now: csfq_algo::Nanos) -> Option<$crate::discipline::Departure> {
                csfq_algo::queue::InOrder::<$crate::packet::SimPacket>::depart(self, now)
                    .map($crate::discipline::Departure::Kept)
            }
            fn len_bytes(&self) -> u32 {
                csfq_algo::queue::InOrder::<$crate::packet::SimPacket>::len_bytes(self)
            }
            fn len_packets(&self) -> usize {
                csfq_algo::queue::InOrder::<$crate::packet::SimPacket>::len_packets(self)
            }
            fn reserved_slots(&self) -> usize {
                csfq_algo::queue::InOrder::<$crate::packet::SimPacket>::reserved_slots(self)
            }
            fn flow_slots(&self) -> usize {
                csfq_algo::queue::InOrder::<$crate::packet::SimPacket>::flow_slots(self)
            }
        })+
    };
    (scheduled $($t:ty),+) => {
        $(impl $crate::discipline::PortQueue for $t {
            const IN_ORDER: bool = false;
            #[inline(always)]
            fn enqueue<R: rand::Rng + ?Sized>(
                &mut self,
                p: $crate::packet::SimPacket,
                now: csfq_algo::Nanos,
                rng: &mut R,
            ) -> Result<Option<$crate::packet::SimPacket>, csfq_algo::Dropped<$crate::packet::SimPacket>> {
                match csfq_algo::QueueDisc::enqueue(self, p, now, rng) {
                    None => Ok(None),
                    Some(d) => Err(d),
                }
            }
            #[inline(always)]
            fn take_extra_drop(&mut self) -> Option<csfq_algo::Dropped<$crate::packet::SimPacket>> {
                csfq_algo::QueueDisc::take_extra_drop(self)
            }
            #[inline(always)]
            fn dequeue(&mut self, now: csfq_algo::Nanos) -> Option<$crate::discipline::Departure> {
                csfq_algo::QueueDisc::dequeue(self, now).map($crate::discipline::Departure::Packet)
            }
            fn len_bytes(&self) -> u32 {
                csfq_algo::QueueDisc::len_bytes(self)
            }
            fn len_packets(&self) -> usize {
                csfq_algo::QueueDisc::len_packets(self)
            }
            fn reserved_slots(&self) -> usize {
                csfq_algo::QueueDisc::reserved_slots(self)
            }
            fn flow_slots(&self) -> usize {
                csfq_algo::QueueDisc::flow_slots(self)
            }
        })+
    };
}
pub(crate) use port_queue;

/// What a port runs besides its queue: the edge's duties where a flow enters, and the
/// fair-share estimate it reports. Every method but the queue's has a default that does
/// nothing, for the disciplines that are a queue alone.
pub trait PortDiscipline {
    /// The queue every packet through the port goes through.
    type Queue: PortQueue;

    /// The queue.
    fn queue(&self) -> &Self::Queue;

    /// The queue, to change.
    fn queue_mut(&mut self) -> &mut Self::Queue;

    /// Edge duty for a packet entering the island at this port: label or tag it.
    #[inline]
    fn label_at_edge<R: Rng + ?Sized>(&mut self, _p: &mut SimPacket, _now: Nanos, _rng: &mut R) {}

    /// Sets a flow's weight at this port's edge.
    fn set_edge_weight<R: Rng + ?Sized>(&mut self, _flow: FlowId, _weight: f64, _rng: &mut R) {}

    /// Per-flow records the edge holds.
    fn edge_flow_slots(&self) -> usize {
        0
    }

    /// The fair-share estimate, if the discipline keeps one.
    fn alpha(&self) -> Option<f64> {
        None
    }
}

/// A discipline that labels or tags at the edge where a flow enters and queues every
/// packet with a core (CSFQ, TUF, CS-FNE and the dataplane's models of them): the edge's
/// duties go to `edge`, the queue is `core`.
#[derive(Debug, Clone)]
pub struct EdgeCore<E, Q> {
    /// Per-flow labeling or tagging of the packets whose first router this is.
    pub edge: E,
    /// The queue every packet through the port goes through.
    pub core: Q,
}

/// An edge's duties at a port where flows enter the island.
pub trait Edge {
    /// Labels or tags a packet entering the island here.
    fn on_entry<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R);

    /// Sets a flow's weight (an edge that keeps none ignores it).
    fn set_flow_weight<R: Rng + ?Sized>(&mut self, _flow: FlowId, _weight: f64, _rng: &mut R) {}

    /// Per-flow records held.
    fn flow_records(&self) -> usize;
}

/// A core's fair-share estimate, if it keeps one.
pub trait Estimate {
    /// The estimate, bit/s.
    fn fair_share(&self) -> Option<f64> {
        None
    }
}

impl<E: Edge, Q: PortQueue + Estimate> PortDiscipline for EdgeCore<E, Q> {
    type Queue = Q;

    #[inline(always)]
    fn queue(&self) -> &Q {
        &self.core
    }

    #[inline(always)]
    fn queue_mut(&mut self) -> &mut Q {
        &mut self.core
    }

    #[inline]
    fn label_at_edge<R: Rng + ?Sized>(&mut self, p: &mut SimPacket, now: Nanos, rng: &mut R) {
        self.edge.on_entry(p, now, rng)
    }

    fn set_edge_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, rng: &mut R) {
        self.edge.set_flow_weight(flow, weight, rng)
    }

    fn edge_flow_slots(&self) -> usize {
        self.edge.flow_records()
    }

    fn alpha(&self) -> Option<f64> {
        self.core.fair_share()
    }
}

/// A discipline that is its queue alone: no edge, no estimate; `in_order` or `scheduled`
/// as in [`port_queue!`].
macro_rules! queue_alone {
    ($kind:ident $($t:ty),+) => {
        $crate::discipline::port_queue!($kind $($t),+);
        $(impl $crate::discipline::PortDiscipline for $t {
            type Queue = Self;
            #[inline(always)]
            fn queue(&self) -> &Self {
                self
            }
            #[inline(always)]
            fn queue_mut(&mut self) -> &mut Self {
                self
            }
        })+
    };
}
pub(crate) use queue_alone;

/// A table's value out of its algorithm's range: the table and the key within it (to find
/// its line), the field as the error names it and what it must be.
#[derive(Debug, Clone, PartialEq)]
pub struct TableError {
    /// The table (`red`, `csfq`, ...).
    pub table: &'static str,
    /// The key whose line the error points at.
    pub key: &'static str,
    /// The field (or fields) the error names.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl TableError {
    /// An error at `key` of `table`, naming it `table.key`.
    pub fn at(table: &'static str, key: &'static str, message: impl Into<String>) -> Self {
        TableError {
            table,
            key,
            field: format!("{table}.{key}"),
            message: message.into(),
        }
    }
}

/// Parameters a discipline's algorithm refused when a port was built (the scenario's
/// checks keep every table of a checked scenario in range, so this is a gap between them
/// and the algorithm's own).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// MAY's.
    #[error(transparent)]
    May(#[from] MayParamError),
}

/// The link a port's discipline is built for.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// Its rate, bit/s.
    pub rate_bps: f64,
    /// Its buffer, bytes.
    pub buffer_bytes: u32,
}

macro_rules! declare {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident = $name:literal in $module:ident :: $build:ident,
        loop_shaper: $shaper:literal $(, table $table:ident: $ty:ident)?;
    )+) => {
        $($(pub use $module::$ty;)?)+

        /// A queue discipline by name.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Hash, PartialOrd, Ord,
        )]
        pub enum DisciplineKind {
            $($(#[doc = $doc])+ #[serde(rename = $name)] $variant,)+
        }

        impl DisciplineKind {
            /// Every discipline, in the papers' order.
            pub const ALL: [DisciplineKind; [$($name),+].len()] = [$(DisciplineKind::$variant),+];

            /// The name used in files and on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(DisciplineKind::$variant => $name,)+
                }
            }

            /// Whether an overlay loop's shaper queue may run it (`[[loop]] queue`).
            pub fn shapes_loops(self) -> bool {
                match self {
                    $(DisciplineKind::$variant => $shaper,)+
                }
            }
        }

        /// What the queue disciplines read of a scenario, and nothing else: their tables,
        /// the TCP segment size (MAY and adaptive RED count in it) and the seed (FQ-CoDel's
        /// hash).
        #[derive(Debug, Clone, Copy)]
        pub struct DisciplineTables<'a> {
            $($(
                #[doc = concat!("`[", stringify!($table), "]`.")]
                pub $table: &'a $ty,
            )?)+
            /// `[tcp] segment_bytes`.
            pub segment_bytes: u32,
            /// The scenario's seed.
            pub seed: u64,
        }

        /// One output port's discipline.
        #[derive(Debug, Clone)]
        pub enum Discipline {
            $($(#[doc = $doc])+ $variant($module::Port),)+
        }

        impl Discipline {
            /// Builds a discipline for a port of `rate_bps` with `buffer_bytes`, from the
            /// scenario's tables (each decoded for that link in its discipline's module).
            /// The scenario's checks pass every table it holds, so an error here is a gap
            /// between them and the algorithm's own range, returned rather than a panic.
            pub fn build(
                kind: DisciplineKind,
                tables: &DisciplineTables,
                rate_bps: f64,
                buffer_bytes: u32,
            ) -> Result<Self, ParamError> {
                let link = Link { rate_bps, buffer_bytes };
                Ok(match kind {
                    $(DisciplineKind::$variant => Discipline::$variant($module::$build(tables, link)?),)+
                })
            }

            /// Edge duty for a packet entering the island at this port: CSFQ and CS-FNE
            /// label it, TUF tags it unless its source already did.
            #[inline]
            pub fn label_at_edge<R: Rng + ?Sized>(
                &mut self,
                p: &mut SimPacket,
                now: Nanos,
                rng: &mut R,
            ) {
                match self {
                    $(Discipline::$variant(d) => d.label_at_edge(p, now, rng),)+
                }
            }

            /// Sets a flow's weight at this port's edge (CSFQ, TUF and the dataplane's
            /// models).
            pub fn set_weight<R: Rng + ?Sized>(&mut self, flow: FlowId, weight: f64, rng: &mut R) {
                match self {
                    $(Discipline::$variant(d) => d.set_edge_weight(flow, weight, rng),)+
                }
            }

            /// The fair-share estimate, if the discipline keeps one: CSFQ's `alpha`,
            /// CS-FNE's threshold rate `C / N_act`, the TUF filter's threshold tag's rate,
            /// MAY's `1/v` (0 while `v` is 0).
            pub fn alpha(&self) -> Option<f64> {
                match self {
                    $(Discipline::$variant(d) => d.alpha(),)+
                }
            }

            /// Enqueues `p`, as a qdisc's `enqueue(skb, sch, to_free)` does: every packet
            /// the discipline drops for it (the arrival, or packets pushed out to make
            /// room, CHOKe's matched victim) is handed to `drop`, in the order they were
            /// dropped. A discipline that departs in order hands the packet back if it
            /// queued it, as it will leave (its queue keeps only a record); it only ever
            /// drops the arrival.
            #[inline]
            pub fn enqueue<R: Rng + ?Sized>(
                &mut self,
                p: SimPacket,
                now: Nanos,
                rng: &mut R,
                drop: &mut dyn FnMut(Dropped<SimPacket>),
            ) -> Option<SimPacket> {
                // The drain is a second dispatch, taken only after a drop: inside the first
                // it made FQ-CoDel's runs 4-7% slower (the inlining of its paths changed).
                let first = match self {
                    $(Discipline::$variant(d) => d.queue_mut().enqueue(p, now, rng),)+
                };
                let d = match first {
                    Ok(leaves) => return leaves,
                    Err(d) => d,
                };
                drop(d);
                while let Some(d) = match self {
                    $(Discipline::$variant(d) => d.queue_mut().take_extra_drop(),)+
                } {
                    drop(d);
                }
                None
            }

            /// Whether the discipline sends in arrival order and decides only on arrival
            /// (see [`PortQueue`]), so that its port fixes each packet's departure when
            /// the packet is queued: FIFO, RED, adaptive RED, FRED, CSFQ's and CS-FNE's
            /// cores, TUF's filter and MAY. DRR, FQ-CoDel, LAS, CHOKe and TUF's push-out
            /// queue decide when they send, or drop what is queued.
            pub fn departs_in_order(&self) -> bool {
                match self {
                    $(Discipline::$variant(d) => d.queue().in_order(),)+
                }
            }

            /// Dequeues what leaves next, as a qdisc's `dequeue(sch)` does: the packet, or
            /// an in-order queue's record of it. The packets a discipline that manages its
            /// queue at the head drops on the way (CoDel) are handed to `drop`, in order.
            #[inline]
            pub fn dequeue(
                &mut self,
                now: Nanos,
                mut drop: impl FnMut(Dropped<SimPacket>),
            ) -> Option<Departure> {
                match self {
                    $(Discipline::$variant(d) => {
                        let q = d.queue_mut();
                        let p = q.dequeue(now);
                        while let Some(d) = q.take_extra_drop() {
                            drop(d);
                        }
                        p
                    })+
                }
            }

            /// Packets queued.
            pub fn len_packets(&self) -> usize {
                match self {
                    $(Discipline::$variant(d) => d.queue().len_packets(),)+
                }
            }

            /// Packet slots allocated by the discipline's queues.
            pub fn reserved_slots(&self) -> usize {
                match self {
                    $(Discipline::$variant(d) => d.queue().reserved_slots(),)+
                }
            }

            /// Per-flow records held, the edge's and the queue's.
            pub fn flow_slots(&self) -> usize {
                match self {
                    $(Discipline::$variant(d) => d.edge_flow_slots() + d.queue().flow_slots(),)+
                }
            }

            /// Bytes queued.
            pub fn len_bytes(&self) -> u32 {
                match self {
                    $(Discipline::$variant(d) => d.queue().len_bytes(),)+
                }
            }
        }
    };
}

with_disciplines!(declare);

impl DisciplineKind {
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for DisciplineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Discipline {
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

    /// Whether this is TUF with its push-out queue, whose TCP sources tag their own packets
    /// (under the dataplane's filter, `tuf-filter`, the edge tags every flow, as a Linux
    /// edge does).
    pub fn is_tuf(&self) -> bool {
        matches!(self, Discipline::Tuf(_))
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

    /// True when nothing is queued. Asked at each packet a port sends; the drop-tail FIFO
    /// of every host's access port answered here without the match over every kind.
    #[inline]
    pub fn is_empty(&self) -> bool {
        if let Discipline::Fifo(d) = self {
            return d.queue().len_bytes() == 0;
        }
        self.len_bytes() == 0
    }
}

/// Milliseconds as the algorithms' time.
fn ms(x: f64) -> Nanos {
    Nanos::from_secs_f64(x / 1e3)
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
            size_of::<csfq_algo::fifo::DropTail<csfq_algo::queue::Queued>>()
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
        let Err(super::ParamError::May(e)) =
            super::Discipline::build(DisciplineKind::May, &tables, 10e6, 64_000)
        else {
            panic!("a gain of 0 is refused");
        };
        assert_eq!(e.field, "gain");
    }

    /// The tables' defaults decode to the papers' values in the algorithms' units, worked
    /// by hand: MAY's `Delta` 1 s and `T0` 64 s (Section IV), FQ-CoDel's 5 ms and 100 ms
    /// (RFC 8290), CSFQ's and TUF's `K` 100 ms, TUF's untagged queue a quarter of the
    /// buffer, CS-FNE's 16 000-byte target held to a smaller buffer.
    #[test]
    fn defaults_decode_to_the_papers_values() {
        use super::*;
        use csfq_algo::Nanos;
        let may = MayConfig::default().params(10e6, 64_000, 1000);
        assert_eq!(may.update_interval, Nanos(1_000_000_000));
        assert_eq!(may.timeout, Nanos(64_000_000_000));
        assert_eq!(
            (may.s0, may.packet_bytes, may.buffer_bytes),
            (1000.0, 1000, 64_000)
        );
        let fq = FqCodelConfig::default().params(64_000);
        assert_eq!(
            (fq.target, fq.interval),
            (Nanos(5_000_000), Nanos(100_000_000))
        );
        assert_eq!(CsfqConfig::default().edge_k(), Nanos(100_000_000));
        let tuf = TufConfig::default();
        assert_eq!(tuf.k(), Nanos(100_000_000));
        assert_eq!(tuf.params(64_000).untagged_buffer_bytes, 16_000);
        let csfne = CsfneConfig::default();
        assert_eq!(csfne.params(10e6, 8_000).target_bytes, 8_000);
        assert_eq!(csfne.params(10e6, 64_000).target_bytes, 16_000);
        assert_eq!(csfne.win(), Nanos(100_000_000));
    }
}
