//! The network a scenario describes, built once before the run: routers, hosts, directed
//! ports, each flow's expanded definition with its shortest path (fewest hops; ties go to
//! the link listed first, so routes are deterministic), and the overlay loops. Everything
//! here is typed and in simulator units (`Nanos`, bits/s). The engine reads this plan, and
//! of the checked [`crate::Scenario`] only what is not the network's: the disciplines'
//! tables, TCP's, the run's length, sampling and seed.
//!
//! [`Topology::build`] is in `build`; loops are planned in `loops`.

use std::borrow::Cow;

use csfq_algo::maxmin::{water_fill, MaxMinFlow};
use csfq_algo::Nanos;

use crate::kinds::{DisciplineKind, FlowKind};

mod build;
mod estimate;
mod loops;

pub use build::pareto;
pub use estimate::{
    events_per_second, human_duration, millions, TcpSizes, TooLong, WorkEstimate, CACHED_FLOWS,
    EVENTS_PER_SECOND, LONG_RUN_S,
};
pub use loops::{LoopDef, LoopHops};

pub const ACCESS_BUFFER_BYTES: u32 = 1 << 20;

/// A node: a router of the scenario, or a host made for a flow's access links. Hosts are
/// two per flow and carry no name of their own (a million flows would hold two million
/// strings): [`Node::name`] makes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A router, named in the scenario. Routers are in the island; the first router a
    /// packet meets is its edge.
    Router(String),
    /// A host of flow `flow`: its source (`sender`) or its destination.
    Host {
        /// The flow it belongs to.
        flow: u32,
        /// Whether it is the flow's source.
        sender: bool,
    },
}

impl Node {
    /// Its name: the router's, or `f3.src` / `f3.dst` for flow 3's hosts.
    pub fn name(&self) -> Cow<'_, str> {
        match self {
            Node::Router(name) => Cow::Borrowed(name),
            Node::Host { flow, sender } => {
                Cow::Owned(format!("f{flow}.{}", if *sender { "src" } else { "dst" }))
            }
        }
    }

    /// Whether it is a router (in the island).
    pub fn is_router(&self) -> bool {
        matches!(self, Node::Router(_))
    }
}

/// One direction of a link.
#[derive(Debug, Clone, PartialEq)]
pub struct PortDef {
    /// Sending node (an index into [`Topology::nodes`]; u32 keeps the four ports of each
    /// flow's hosts small).
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    /// Capacity, bits/s.
    pub rate_bps: f64,
    /// Propagation delay.
    pub delay: Nanos,
    /// Buffer, bytes.
    pub buffer_bytes: u32,
    /// Discipline.
    pub discipline: DisciplineKind,
    /// Whether it joins two routers (reported), or is an access link.
    pub between_routers: bool,
    /// A private hop: the last hop of one flow's data or ACK path, into its host, that
    /// nothing else crosses and that never holds more than the packet arriving nor drops
    /// (drop-tail, at least as fast as the hop before it, room for a packet); the engine
    /// hands a packet to it when it leaves the hop before, with no arrival event between
    /// (the canonical event order says so).
    pub private: bool,
    /// The hop before a private hop on its flow's path.
    pub feeds_private: bool,
}

/// One flow, expanded from its `[[flow]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowDef {
    /// Kind.
    pub kind: FlowKind,
    /// Source router (an index into [`Topology::nodes`]).
    pub src: usize,
    /// Destination router.
    pub dst: usize,
    /// What an open-loop source (udp, onoff, rlm) sends; `None` for TCP and web flows,
    /// whose senders need none of it (boxed, so a million TCP flows do not carry it).
    pub open_loop: Option<Box<OpenLoopDef>>,
    /// Start.
    pub start: Nanos,
    /// Stop.
    pub stop: Nanos,
    /// CSFQ weight.
    pub weight: f64,
    /// Segments of a finite TCP transfer.
    pub size_pkts: Option<u32>,
    /// A TCP sender's congestion control.
    pub congestion_control: crate::config::CongestionControl,
    /// The overlay loop that carries its data packets, if any.
    pub overlay: Option<LoopHops>,
}

/// A constant-rate source: what a UDP flow sends, and an ON-OFF flow while ON.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CbrDef {
    /// Rate, bits/s.
    pub rate_bps: f64,
    /// Packet size, bytes.
    pub packet_bytes: u32,
    /// Inter-arrival jitter.
    pub jitter: f64,
}

/// What an open-loop flow's source sends, decoded once from its `[[flow]]` table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OpenLoopDef {
    /// `udp`: constant rate.
    Cbr(CbrDef),
    /// `onoff`: constant rate during exponential ON periods of mean `on`, silent during
    /// OFF periods of mean `off`.
    OnOff {
        /// While ON.
        cbr: CbrDef,
        /// Mean ON period.
        on: Nanos,
        /// Mean OFF period.
        off: Nanos,
    },
    /// `rlm`: `layers` cumulative layers, layer i at `base_bps x 2^(i-1)`.
    Rlm {
        /// Layers.
        layers: u8,
        /// Layer 1's rate, bits/s.
        base_bps: f64,
        /// Packet size, bytes.
        packet_bytes: u32,
        /// Inter-arrival jitter.
        jitter: f64,
    },
}

impl OpenLoopDef {
    /// The offered rate (udp; onoff while ON), bits/s; `None` for rlm, whose layers have
    /// theirs.
    pub fn rate_bps(&self) -> Option<f64> {
        match self {
            OpenLoopDef::Cbr(c) | OpenLoopDef::OnOff { cbr: c, .. } => Some(c.rate_bps),
            OpenLoopDef::Rlm { .. } => None,
        }
    }

    /// Its packets' size, bytes.
    pub fn packet_bytes(&self) -> u32 {
        match self {
            OpenLoopDef::Cbr(c) | OpenLoopDef::OnOff { cbr: c, .. } => c.packet_bytes,
            OpenLoopDef::Rlm { packet_bytes, .. } => *packet_bytes,
        }
    }
}

/// One hop of a flow's path: the port, and the flow's index among the flows that port
/// carries (see [`Topology::port_flows`]), which is how its disciplines know the flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    /// The port (an index into [`Topology::ports`]).
    pub port: u32,
    /// The flow's index at that port.
    pub local: u32,
}

impl FlowDef {
    /// The rate it would send if unconstrained, bits/s (TCP: unbounded; onoff: the mean).
    /// Finite transfers (web, tcp with `size_pkts`) are not constant-rate flows: 0, so the
    /// max-min oracle leaves them out.
    pub fn demand_bps(&self) -> f64 {
        if self.size_pkts.is_some() {
            return 0.0;
        }
        match self.open_loop.as_deref() {
            // TCP takes what the network gives it; so do RLM's receivers.
            None | Some(OpenLoopDef::Rlm { .. }) => f64::INFINITY,
            Some(OpenLoopDef::Cbr(c)) => c.rate_bps,
            Some(OpenLoopDef::OnOff { cbr, on, off }) => {
                cbr.rate_bps * on.0 as f64 / (on.0 + off.0) as f64
            }
        }
    }
}

/// A scenario that cannot be built into a network.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// No path joins a flow's endpoints.
    #[error("flow {flow}: no route from `{from}` to `{to}`")]
    NoRoute {
        /// Flow index.
        flow: usize,
        /// Source.
        from: String,
        /// Destination.
        to: String,
    },
    /// No path joins a loop's edges (the checks require one: a gap between them and the
    /// build).
    #[error("loop `{name}`: no route from `{from}` to `{to}`")]
    NoLoopRoute {
        /// The loop.
        name: String,
        /// From this edge.
        from: String,
        /// To this one.
        to: String,
    },
    /// A loop's flow does not follow the loop's own route between its edges.
    #[error("flow {flow}: its route between `{ingress}` and `{egress}` is not its loop's")]
    OffLoopRoute {
        /// Flow index.
        flow: usize,
        /// Ingress router.
        ingress: String,
        /// Egress router.
        egress: String,
    },
    /// A field the checks require is absent. A [`crate::Scenario`] has passed them, so
    /// this is a gap between the checks and the build: an error, not a panic.
    #[error("flow {flow}: `{field}` is required (a gap between the checks and the build)")]
    Unvalidated {
        /// Flow index.
        flow: usize,
        /// The field.
        field: &'static str,
    },
    /// A discipline's parameters for a link are out of its algorithm's range. A
    /// [`crate::Scenario`] has passed the checks, so this is a gap between them and the
    /// build: an error, not a panic.
    #[error("link {from}->{to}: {source} (a gap between the checks and the build)")]
    Parameters {
        /// The link's first router (or host).
        from: String,
        /// Its second.
        to: String,
        /// What the algorithm refused.
        #[source]
        source: crate::discipline::ParamError,
    },
    /// A path longer than a packet's hop counter holds.
    #[error("flow {flow}: path of {hops} hops is longer than 65535")]
    PathTooLong {
        /// Flow index.
        flow: usize,
        /// Hops.
        hops: usize,
    },
    /// More hops in all the flows' paths than a route's 32-bit index reaches.
    #[error("flow {flow}: the flows' paths hold more than 2^32 hops in all")]
    TooManyHops {
        /// Flow index.
        flow: usize,
    },
}

/// The network a scenario describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Nodes: routers first, in file order, then access hosts.
    pub nodes: Vec<Node>,
    /// Ports.
    pub ports: Vec<PortDef>,
    /// Flows.
    pub flows: Vec<FlowDef>,
    /// Edge-to-edge overlay loops.
    pub loops: Vec<LoopDef>,
    /// Flows each port carries.
    port_flows: Vec<u32>,
    /// Where each flow's hops are in `route_hops` (12 bytes a flow): what a packet's next
    /// hop is looked up by, so a hop reads a dense array and one hop, not the flow's record.
    routes: Vec<Route>,
    /// Every flow's ports from source to destination, then back (its data path, then its
    /// ACK path), flow after flow: one allocation for all of them.
    route_hops: Vec<Hop>,
}

/// Where a flow's hops are in [`Topology`]'s `route_hops`, and how many are forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) base: u32,
    pub(crate) fwd_len: u16,
    pub(crate) rev_len: u16,
    /// The flow's data rides an overlay loop (see [`FlowDef::overlay`]).
    pub(crate) overlay: bool,
    /// Which of the flow's packets may be delivered ahead of their arrival at its host,
    /// as they are handed to the private hop before it ([`Topology::delivers_ahead`]):
    /// [`AHEAD_DATA`], [`AHEAD_ACKS`].
    pub(crate) ahead: u8,
}

/// [`Route::ahead`]: the flow's data packets.
pub(crate) const AHEAD_DATA: u8 = 1;
/// [`Route::ahead`]: the flow's ACKs.
pub(crate) const AHEAD_ACKS: u8 = 2;

impl Topology {
    /// Flow `f`'s data path, source to destination.
    pub fn fwd(&self, f: usize) -> &[Hop] {
        let r = self.routes[f];
        &self.route_hops[r.base as usize..][..r.fwd_len as usize]
    }

    /// Flow `f`'s ACK path, destination back to source.
    pub fn rev(&self, f: usize) -> &[Hop] {
        let r = self.routes[f];
        &self.route_hops[r.base as usize + r.fwd_len as usize..][..r.rev_len as usize]
    }

    /// The ports of flow `f`'s data path.
    pub fn fwd_ports(&self, f: usize) -> impl Iterator<Item = usize> + '_ {
        self.fwd(f).iter().map(|h| h.port as usize)
    }

    /// The ports of flow `f`'s ACK path.
    pub fn rev_ports(&self, f: usize) -> impl Iterator<Item = usize> + '_ {
        self.rev(f).iter().map(|h| h.port as usize)
    }

    /// Flow `f`'s data (`fwd`) or ACK hop number `hop`, if its path has one.
    #[inline]
    pub(crate) fn hop(&self, f: usize, fwd: bool, hop: usize) -> Option<Hop> {
        let r = self.routes[f];
        let (start, end) = if fwd {
            (0, r.fwd_len as usize)
        } else {
            (r.fwd_len as usize, r.fwd_len as usize + r.rev_len as usize)
        };
        let i = start + hop;
        (i < end).then(|| self.route_hops[r.base as usize + i])
    }

    /// Flow `f`'s data rides an overlay loop.
    #[inline]
    pub(crate) fn rides_overlay(&self, f: usize) -> bool {
        self.routes[f].overlay
    }

    /// Whether flow `f`'s data packets (`data`) or ACKs, handed to the private hop into
    /// their host, may be delivered there ahead of their arrival: what the host does with
    /// one touches only the flow's own state and sends only on an access port that no
    /// other path crosses, a drop-tail one (see `engine`, "delivered ahead").
    #[inline]
    pub(crate) fn delivers_ahead(&self, f: usize, data: bool) -> bool {
        let bit = if data { AHEAD_DATA } else { AHEAD_ACKS };
        self.routes[f].ahead & bit != 0
    }

    /// How many flows each port carries (data, ACKs or loop messages): the size of the
    /// per-flow state a stateful discipline there may hold, as packets name flows by their
    /// index among these (`Hop::local`; a loop's `fwd_local`, `rev_local`).
    pub fn port_flows(&self) -> &[u32] {
        &self.port_flows
    }

    /// The alpha-fair allocation of the flows' demands (bits/s): `a = 1` proportional
    /// fairness, `a = 2` minimum potential delay (see `csfq_algo::alpha_fair`).
    pub fn alpha_fair_allocation(&self, a: f64) -> Vec<f64> {
        let (caps, flows) = self.allocation_problem();
        csfq_algo::alpha_fair::alpha_fair(&caps, &flows, a)
            .expect("topology paths name existing ports")
    }

    /// The weighted max-min fair allocation of the flows' demands (bits/s): TCP flows are
    /// greedy, UDP flows want their rate, ON-OFF flows their mean rate.
    pub fn max_min_allocation(&self) -> Vec<f64> {
        let (caps, flows) = self.allocation_problem();
        water_fill(&caps, &flows).expect("topology paths name existing ports")
    }

    /// The per-hop fair allocation (bits/s): every link shares weighted max-min among the
    /// rates that reach it, as no per-link scheme can do better for flows that do not
    /// react to loss (see `csfq_algo::maxmin::per_hop`). `None` if the rates do not settle
    /// (links that feed each other in a cycle).
    pub fn per_hop_allocation(&self) -> Option<Vec<f64>> {
        let (caps, flows) = self.allocation_problem();
        csfq_algo::maxmin::per_hop(&caps, &flows).ok()
    }

    /// The allocation each flow is judged by (bits/s): per hop for open-loop flows (`udp`,
    /// `onoff`), end-to-end max-min for responsive ones (`tcp`, `web`, `rlm`), which can
    /// reach it.
    pub fn reference_allocation(&self) -> Vec<f64> {
        let e2e = self.max_min_allocation();
        match self.per_hop_allocation() {
            Some(hop) => self
                .flows
                .iter()
                .zip(e2e.iter().zip(hop))
                .map(|(f, (&e, h))| if f.kind.is_open_loop() { h } else { e })
                .collect(),
            None => e2e,
        }
    }

    /// Every port's capacity and every flow's demand, weight and ports: the problem the
    /// reference allocations solve.
    fn allocation_problem(&self) -> (Vec<f64>, Vec<MaxMinFlow>) {
        let caps = self.ports.iter().map(|p| p.rate_bps).collect();
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| MaxMinFlow {
                demand: f.demand_bps(),
                weight: f.weight,
                links: self.fwd_ports(i).collect(),
            })
            .collect();
        (caps, flows)
    }
}

/// The allocations a run is judged by (bits/s per flow).
pub struct References {
    /// End-to-end max-min.
    pub max_min: Vec<f64>,
    /// Per hop (`None` if it does not settle).
    pub per_hop: Option<Vec<f64>>,
    /// Per hop for open-loop flows, max-min for responsive ones.
    pub reference: Vec<f64>,
}

impl References {
    /// The allocations of a built network's flows.
    pub fn of(topo: &Topology) -> Self {
        References {
            max_min: topo.max_min_allocation(),
            per_hop: topo.per_hop_allocation(),
            reference: topo.reference_allocation(),
        }
    }

    /// flows.csv's share columns: name and one value per flow, bits/s (per hop empty
    /// where it does not settle).
    pub fn columns(&self) -> [(&'static str, &[f64]); 3] {
        [
            ("max_min_mbps", &self.max_min),
            ("per_hop_mbps", self.per_hop.as_deref().unwrap_or(&[])),
            ("reference_mbps", &self.reference),
        ]
    }

    /// The per-hop allocation where it differs from max-min for some flow (by more than
    /// 0.1%), else `None`: on one link they are the same.
    pub fn per_hop_if_different(&self) -> Option<&[f64]> {
        let hop = self.per_hop.as_deref()?;
        hop.iter()
            .zip(&self.max_min)
            .any(|(h, m)| (h - m).abs() > 1e-3 * m.abs().max(1.0))
            .then_some(hop)
    }
}
