//! From a scenario file to a network: routers, hosts, directed ports, and each flow's
//! expanded definition with its shortest path (fewest hops; ties go to the link listed
//! first, so routes are deterministic).

use std::borrow::Cow;
use std::collections::VecDeque;

use csfq_algo::maxmin::{water_fill, MaxMinFlow};
use csfq_algo::Nanos;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use csfq_algo::overlay::{LoopParams, Service};

use crate::overlay::{router_route, ServiceKind};
use crate::scenario::{
    Arrivals, DisciplineKind, FlowKind, ScenarioFile, RLM_DEFAULT_BASE_KBPS, RLM_DEFAULT_LAYERS,
};
use crate::sim::stream_seed;

/// Drop-tail buffer of access-link ports, bytes: hosts are outside the island.
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
    /// The ports from source to destination ([`FlowDef::fwd`]), then those from
    /// destination back to source ([`FlowDef::rev`]): one allocation per flow.
    hops: Box<[Hop]>,
    /// How many of `hops` are the forward path.
    fwd_len: u16,
    /// The overlay loop that carries its data packets, if any.
    pub overlay: Option<LoopHops>,
}

/// What an open-loop flow's source sends.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopDef {
    /// Offered rate (udp; onoff while ON), bits/s; `None` for rlm, whose layers have theirs.
    pub rate_bps: Option<f64>,
    /// Packet size, bytes.
    pub packet_bytes: u32,
    /// Inter-arrival jitter.
    pub jitter: f64,
    /// Mean ON and OFF periods (onoff).
    pub on_off: Option<(Nanos, Nanos)>,
    /// RLM: (layers, layer-1 rate in bits/s).
    pub rlm_layers: Option<(u8, f64)>,
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
    /// Its data path, source to destination.
    pub fn fwd(&self) -> &[Hop] {
        &self.hops[..self.fwd_len as usize]
    }

    /// Its ACK path, destination back to source.
    pub fn rev(&self) -> &[Hop] {
        &self.hops[self.fwd_len as usize..]
    }

    /// The ports of its data path.
    pub fn fwd_ports(&self) -> impl Iterator<Item = usize> + '_ {
        self.fwd().iter().map(|h| h.port as usize)
    }

    /// The ports of its ACK path.
    pub fn rev_ports(&self) -> impl Iterator<Item = usize> + '_ {
        self.rev().iter().map(|h| h.port as usize)
    }
}

/// Where a flow's data path meets its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopHops {
    /// The loop's index.
    pub id: u32,
    /// The hop (index into `fwd`) that leaves the ingress: packets wait in the shaper first.
    pub entry: u16,
    /// The hop at which a packet has reached the egress (`fwd.len()` if it ends there).
    pub exit: u16,
    /// The flow's index among the flows of the loop's shaper queue.
    pub local: u32,
}

/// An edge-to-edge overlay loop, built.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopDef {
    /// Its name.
    pub name: String,
    /// Ingress router (node index).
    pub ingress: usize,
    /// Egress router (node index).
    pub egress: usize,
    /// Ports from ingress to egress (control packets).
    pub fwd: Vec<usize>,
    /// Ports from egress back to ingress (feedback packets).
    pub rev: Vec<usize>,
    /// The loop's index among the flows each port of `fwd` carries.
    pub fwd_local: Vec<u32>,
    /// Its index among the flows each port of `rev` carries.
    pub rev_local: Vec<u32>,
    /// The controller's parameters.
    pub params: LoopParams,
    /// When it starts.
    pub start: Nanos,
    /// Its shaper queue's discipline.
    pub queue: DisciplineKind,
    /// Its shaper queue's buffer, bytes.
    pub buffer_bytes: u32,
    /// Control and feedback packet size, bytes.
    pub control_bytes: u32,
}

impl FlowDef {
    /// The rate it would send if unconstrained, bits/s (TCP: unbounded; onoff: the mean).
    /// Finite transfers (web, tcp with `size_pkts`) are not constant-rate flows: 0, so the
    /// max-min oracle leaves them out.
    pub fn demand_bps(&self) -> f64 {
        if self.size_pkts.is_some() {
            return 0.0;
        }
        let Some(o) = self.open_loop.as_deref() else {
            return f64::INFINITY;
        };
        match (self.kind, o.rate_bps, o.on_off) {
            // Adaptive: TCP and RLM take what the network gives them.
            (FlowKind::Tcp | FlowKind::Web | FlowKind::Rlm, _, _) => f64::INFINITY,
            (FlowKind::Onoff, Some(r), Some((on, off))) => r * on.0 as f64 / (on.0 + off.0) as f64,
            (_, Some(r), _) => r,
            _ => f64::INFINITY,
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
    /// A path longer than a packet's hop counter holds.
    #[error("flow {flow}: path of {hops} hops is longer than 65535")]
    PathTooLong {
        /// Flow index.
        flow: usize,
        /// Hops.
        hops: usize,
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
}

impl Topology {
    /// Builds the network of a validated scenario.
    pub fn build(s: &ScenarioFile) -> Result<Self, BuildError> {
        let mut nodes: Vec<Node> = s.routers.iter().map(|n| Node::Router(n.clone())).collect();
        let routers = s.router_index();
        let index = |name: &str| routers[name];
        let mut ports = Vec::new();
        for l in &s.links {
            let l = l.get_ref();
            let (a, b) = (index(&l.between[0]), index(&l.between[1]));
            for (from, to) in [(a, b), (b, a)] {
                ports.push(PortDef {
                    from: from as u32,
                    to: to as u32,
                    rate_bps: l.rate_mbps * 1e6,
                    delay: Nanos::from_secs_f64(l.delay_ms / 1e3),
                    buffer_bytes: l.buffer_bytes,
                    discipline: l.discipline.unwrap_or(s.discipline),
                    between_routers: true,
                });
            }
        }
        let secs = Nanos::from_secs_f64;
        let loops = build_loops(s, &ports);
        let mut routes = RouterRoutes::new(s.routers.len(), &ports);
        let mut flows = Vec::new();
        for (table, spec) in s.flows.iter().enumerate() {
            let spec = spec.get_ref();
            // Web tables draw their transfers' start gaps and sizes from a stream of their own.
            let mut web_rng = Pcg64Mcg::seed_from_u64(stream_seed(s.seed, 3, table as u64));
            let mut web_start = secs(spec.start_s);
            for j in 0..spec.count {
                let (start, size_pkts) = match spec.kind {
                    FlowKind::Web => {
                        let gap_ms = spec.arrival_mean_ms.expect("validated");
                        match spec.arrivals {
                            Arrivals::Exponential => {
                                let u = 1.0 - web_rng.random::<f64>(); // (0, 1]
                                web_start += secs(-gap_ms * u.ln() / 1e3);
                            }
                            // The first transfer starts at start_s, the next gap_ms later.
                            Arrivals::Periodic if j > 0 => web_start += secs(gap_ms / 1e3),
                            Arrivals::Periodic => {}
                        }
                        let size = match (spec.size_min_pkts, spec.size_max_pkts) {
                            (Some(lo), Some(hi)) => web_rng.random_range(lo..=hi),
                            _ => pareto(
                                spec.size_mean_pkts.expect("validated"),
                                spec.size_shape.expect("validated"),
                                &mut web_rng,
                            ),
                        };
                        (web_start, Some(size))
                    }
                    _ => (secs(spec.start_s), spec.size_pkts),
                };
                let id = flows.len();
                let (src_router, dst_router) = (index(&spec.from), index(&spec.to));
                // Ports to and from the flow's hosts: (out of the source, into it) and
                // (out of the destination, into it).
                let mut ends = None;
                if let Some(a) = spec.access {
                    let delay_ms = a.delay_ms + a.delay_step_ms * j as f64;
                    // A host of its own on each side, joined by drop-tail access links.
                    // A host and its two ports; returns the first port's index.
                    let mut host = |sender: bool, router: usize| {
                        let h = nodes.len();
                        let first = ports.len();
                        nodes.push(Node::Host {
                            flow: id as u32,
                            sender,
                        });
                        for (from, to) in [(h, router), (router, h)] {
                            ports.push(PortDef {
                                // At most MAX_FLOWS flows, two hosts each.
                                from: from as u32,
                                to: to as u32,
                                rate_bps: a.rate_mbps * 1e6,
                                delay: secs(delay_ms / 1e3),
                                buffer_bytes: ACCESS_BUFFER_BYTES,
                                discipline: DisciplineKind::Fifo,
                                between_routers: false,
                            });
                        }
                        first
                    };
                    // host() adds (host -> router) and then (router -> host).
                    let src_port = host(true, src_router);
                    let dst_port = host(false, dst_router);
                    ends = Some(((src_port, src_port + 1), (dst_port, dst_port + 1)));
                }
                let no_route = || BuildError::NoRoute {
                    flow: id,
                    from: spec.from.clone(),
                    to: spec.to.clone(),
                };
                let there = routes.path(src_router, dst_router).ok_or_else(no_route)?;
                let back = routes.path(dst_router, src_router).ok_or_else(no_route)?;
                // Hosts relay nothing: a flow's path is its own access ports around the
                // shortest path between its routers.
                let (fwd, rev) = match ends {
                    None => (there, back),
                    Some(((src_out, src_in), (dst_out, dst_in))) => (
                        [&[src_out][..], &there, &[dst_in]].concat(),
                        [&[dst_out][..], &back, &[src_in]].concat(),
                    ),
                };
                if fwd.len().max(rev.len()) > u16::MAX as usize {
                    return Err(BuildError::PathTooLong {
                        flow: id,
                        hops: fwd.len(),
                    });
                }
                let overlay = match &spec.overlay_loop {
                    None => None,
                    Some(name) => {
                        let lid = loops
                            .iter()
                            .position(|l| &l.name == name)
                            .expect("validated");
                        let l = &loops[lid];
                        let entry = fwd
                            .iter()
                            .position(|&p| ports[p].from as usize == l.ingress);
                        let exit = fwd
                            .iter()
                            .position(|&p| ports[p].from as usize == l.egress)
                            .unwrap_or(fwd.len());
                        match entry {
                            Some(e) if fwd[e..exit] == l.fwd[..] => Some(LoopHops {
                                id: lid as u32,
                                entry: e as u16,
                                exit: exit as u16,
                                local: 0, // set by assign_local_ids
                            }),
                            _ => {
                                return Err(BuildError::OffLoopRoute {
                                    flow: id,
                                    ingress: nodes[l.ingress].name().into_owned(),
                                    egress: nodes[l.egress].name().into_owned(),
                                })
                            }
                        }
                    }
                };
                flows.push(FlowDef {
                    kind: spec.kind,
                    src: src_router,
                    dst: dst_router,
                    open_loop: matches!(spec.kind, FlowKind::Udp | FlowKind::Onoff | FlowKind::Rlm)
                        .then(|| {
                            Box::new(OpenLoopDef {
                                rate_bps: spec
                                    .rate_mbps
                                    .map(|r| (r + spec.rate_step_mbps * j as f64) * 1e6),
                                packet_bytes: spec.packet_bytes,
                                jitter: spec.jitter,
                                on_off: spec
                                    .on_ms
                                    .zip(spec.off_ms)
                                    .map(|(on, off)| (secs(on / 1e3), secs(off / 1e3))),
                                rlm_layers: (spec.kind == FlowKind::Rlm).then(|| {
                                    (
                                        spec.layers.unwrap_or(RLM_DEFAULT_LAYERS),
                                        spec.layer_base_kbps.unwrap_or(RLM_DEFAULT_BASE_KBPS) * 1e3,
                                    )
                                }),
                            })
                        }),
                    start,
                    stop: secs(spec.stop_s.unwrap_or(s.duration_s).min(s.duration_s)),
                    weight: spec.weight,
                    size_pkts,
                    fwd_len: fwd.len() as u16,
                    // Numbered by assign_local_ids once every flow is known.
                    hops: fwd
                        .iter()
                        .chain(&rev)
                        .map(|&p| Hop {
                            port: p as u32,
                            local: 0,
                        })
                        .collect(),
                    overlay,
                });
            }
        }
        let mut loops = loops;
        let port_flows = assign_local_ids(&mut flows, &mut loops, ports.len());
        // Grown one element at a time; the slack would stay for the whole run.
        nodes.shrink_to_fit();
        ports.shrink_to_fit();
        flows.shrink_to_fit();
        Ok(Topology {
            nodes,
            ports,
            flows,
            loops,
            port_flows,
        })
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
            .map(|f| MaxMinFlow {
                demand: f.demand_bps(),
                weight: f.weight,
                links: f.fwd_ports().collect(),
            })
            .collect();
        (caps, flows)
    }
}

/// The loops of a validated scenario over its router ports (the first `2 x links` ports).
fn build_loops(s: &ScenarioFile, ports: &[PortDef]) -> Vec<LoopDef> {
    let links: Vec<_> = s.links.iter().map(|l| l.get_ref()).collect();
    let routers = s.router_index();
    let index = |name: &str| routers[name];
    let routes: Vec<(Vec<usize>, Vec<usize>)> = s
        .loops
        .iter()
        .map(|l| {
            let l = l.get_ref();
            let route =
                |a: &str, b: &str| router_route(&s.routers, &links, a, b).expect("validated");
            (route(&l.ingress, &l.egress), route(&l.egress, &l.ingress))
        })
        .collect();
    let o = &s.overlay;
    // T = tau = the largest edge-to-edge propagation delay (Section 6.2), at least 1 ms.
    let tau = o.tau_ms.map_or_else(
        || {
            routes
                .iter()
                .map(|(f, _)| Nanos(f.iter().map(|&p| ports[p].delay.0).sum()))
                .max()
                .unwrap_or(Nanos::ZERO)
                .max(Nanos::from_millis(1))
        },
        |ms| Nanos::from_secs_f64(ms / 1e3),
    );
    s.loops
        .iter()
        .zip(routes)
        .map(|(l, (fwd, rev))| {
            let l = l.get_ref();
            let first = ports[fwd[0]].rate_bps;
            let per_tau = o.packet_bytes as f64 * 8.0 / tau.as_secs_f64();
            let service = match (l.service, l.rate_mbps) {
                (ServiceKind::Assured, Some(r)) => Service::Assured {
                    rate_bps: r * 1e6,
                    gamma: o.gamma,
                    on_ingress_rate: o.assured_on_ingress_rate,
                },
                (ServiceKind::QuasiLeased, Some(r)) => Service::QuasiLeased { rate_bps: r * 1e6 },
                _ => Service::BestEffort,
            };
            let start = o
                .start_rate_mbps
                .map_or(o.alpha_pkts * per_tau, |r| r * 1e6);
            let params = LoopParams {
                packet_bytes: o.packet_bytes,
                tau,
                interval: tau,
                alpha_bps: o.alpha_pkts * per_tau,
                beta: o.beta,
                h_thresh_pkts: o.h_thresh_pkts,
                l_thresh_pkts: o.l_thresh_pkts,
                w_max_pkts: o.w_max_pkts,
                initial_rate_bps: start.min(first),
                min_rate_bps: per_tau.min(first),
                max_rate_bps: first,
                service,
            };
            LoopDef {
                name: l.name.clone(),
                ingress: index(&l.ingress),
                egress: index(&l.egress),
                fwd,
                rev,
                fwd_local: Vec::new(),
                rev_local: Vec::new(),
                params,
                start: Nanos::from_secs_f64(l.start_s),
                queue: l.queue,
                buffer_bytes: l.buffer_bytes,
                control_bytes: o.control_bytes,
            }
        })
        .collect()
}

/// Numbers the flows at each port densely, in flow order (then the loops), so a port's
/// per-flow state is as large as the flows that cross it, whatever the network's size; a
/// flow whose data and ACKs cross one port has one number there. Each overlay loop's
/// shaper numbers its flows likewise. Returns the count at each port.
fn assign_local_ids(flows: &mut [FlowDef], loops: &mut [LoopDef], ports: usize) -> Vec<u32> {
    let mut count = vec![0u32; ports];
    let mut shaper = vec![0u32; loops.len()];
    let mut number = |p: usize| {
        let n = count[p];
        count[p] += 1;
        n
    };
    for f in flows.iter_mut() {
        let n = f.fwd_len as usize;
        for i in 0..f.hops.len() {
            let p = f.hops[i].port;
            // A port the data and the ACKs both cross numbers the flow once.
            let seen = (i >= n).then(|| f.hops[..n].iter().find(|h| h.port == p));
            f.hops[i].local = match seen.flatten() {
                Some(h) => h.local,
                None => number(p as usize),
            };
        }
        if let Some(o) = &mut f.overlay {
            o.local = shaper[o.id as usize];
            shaper[o.id as usize] += 1;
        }
    }
    for l in loops.iter_mut() {
        l.fwd_local = l.fwd.iter().map(|&p| number(p)).collect();
        l.rev_local = l.rev.iter().map(|&p| number(p)).collect();
    }
    count
}

/// A Pareto-distributed transfer size in whole segments (at least 1) with the given mean
/// and shape `a > 1`: scale `x_m = mean (a - 1) / a`, size `ceil(x_m / U^(1/a))`, capped at
/// 10^7 segments so one draw from the heavy tail cannot outlast any run.
pub(crate) fn pareto<R: Rng + ?Sized>(mean: f64, shape: f64, rng: &mut R) -> u32 {
    let scale = mean * (shape - 1.0) / shape;
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    (scale / u.powf(1.0 / shape)).ceil().clamp(1.0, 1e7) as u32
}

/// Shortest paths between routers over the links: breadth first, each router's ports in
/// index order (so ties go to the link written first), computed once per pair of routers
/// however many flows join them.
pub(crate) struct RouterRoutes {
    /// Per router: its ports to other routers, in index order.
    out: Vec<Vec<usize>>,
    /// Per port: the router it leads to.
    to: Vec<usize>,
    /// Per port: the router it leaves.
    from: Vec<usize>,
    cache: std::collections::HashMap<(usize, usize), Option<Vec<usize>>>,
}

impl RouterRoutes {
    /// Over the router-to-router ports of `ports` (all of them, at this point of the build).
    fn new(routers: usize, ports: &[PortDef]) -> Self {
        Self::over(
            routers,
            ports.iter().map(|p| (p.from as usize, p.to as usize)),
        )
    }

    /// Over ports given as (from, to) router indices, in index order.
    pub(crate) fn over(routers: usize, ports: impl Iterator<Item = (usize, usize)>) -> Self {
        let (from, to): (Vec<usize>, Vec<usize>) = ports.unzip();
        let mut out = vec![Vec::new(); routers];
        for (i, &f) in from.iter().enumerate() {
            out[f].push(i);
        }
        RouterRoutes {
            out,
            to,
            from,
            cache: std::collections::HashMap::new(),
        }
    }

    /// The ports from router `a` to router `b` (empty if they are the same).
    fn path(&mut self, a: usize, b: usize) -> Option<Vec<usize>> {
        if let Some(p) = self.cache.get(&(a, b)) {
            return p.clone();
        }
        let p = self.search(a, b);
        self.cache.insert((a, b), p.clone());
        p
    }

    pub(crate) fn search(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let n = self.out.len();
        let mut via: Vec<Option<usize>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[from] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(r) = queue.pop_front() {
            if r == to {
                break;
            }
            for &pi in &self.out[r] {
                let next = self.to[pi];
                if !seen[next] {
                    seen[next] = true;
                    via[next] = Some(pi);
                    queue.push_back(next);
                }
            }
        }
        if !seen[to] {
            return None;
        }
        let mut path = Vec::new();
        let mut r = to;
        while r != from {
            let pi = via[r].expect("reached routers have a predecessor");
            path.push(pi);
            r = self.from[pi];
        }
        path.reverse();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Breadth first over every node and port, each node's ports in index order, hosts
    /// relaying nothing: the definition the per-router-pair routes must agree with.
    fn reference_path(t: &Topology, from: usize, to: usize) -> Vec<usize> {
        let mut via = vec![None; t.nodes.len()];
        let mut seen = vec![false; t.nodes.len()];
        seen[from] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            for (pi, p) in t.ports.iter().enumerate() {
                let (from_n, to_n) = (p.from as usize, p.to as usize);
                if from_n == n && !seen[to_n] && (t.nodes[to_n].is_router() || to_n == to) {
                    seen[to_n] = true;
                    via[to_n] = Some(pi);
                    queue.push_back(to_n);
                }
            }
        }
        let mut path = Vec::new();
        let mut n = to;
        while n != from {
            let pi = via[n].expect("connected");
            path.push(pi);
            n = t.ports[pi].from as usize;
        }
        path.reverse();
        path
    }

    /// Routes computed once per pair of routers equal a breadth-first search over the
    /// whole network for every flow: random connected networks of 12 routers, flows with
    /// and without access hosts.
    #[test]
    fn routes_per_router_pair_equal_a_search_over_all_nodes() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        for _ in 0..20 {
            let n = 12;
            let mut text = format!(
                "name = \"r\"\nduration_s = 1.0\ndiscipline = \"fifo\"\nrouters = [{}]\n",
                (0..n)
                    .map(|i| format!("\"r{i}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            // A chain keeps it connected; extra links make ties and shortcuts.
            let mut links: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
            for _ in 0..10 {
                let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
                if a != b {
                    links.push((a, b));
                }
            }
            for (a, b) in &links {
                text += &format!("[[link]]\nbetween = [\"r{a}\", \"r{b}\"]\nrate_mbps = 10\n");
            }
            for i in 0..30 {
                let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
                let access = if a == b || i % 2 == 0 {
                    "access = { rate_mbps = 100, delay_ms = 1 }\n"
                } else {
                    ""
                };
                text += &format!(
                    "[[flow]]\nkind = \"udp\"\nfrom = \"r{a}\"\nto = \"r{b}\"\nrate_mbps = 1\n{access}"
                );
            }
            let s = ScenarioFile::parse(&text, std::path::Path::new("r.toml")).unwrap();
            let t = Topology::build(&s).unwrap();
            for f in &t.flows {
                let fwd: Vec<usize> = f.fwd_ports().collect();
                let (src, dst) = (t.ports[fwd[0]].from, t.ports[*fwd.last().unwrap()].to);
                let (src, dst) = (src as usize, dst as usize);
                assert_eq!(fwd, reference_path(&t, src, dst));
                assert_eq!(
                    f.rev_ports().collect::<Vec<_>>(),
                    reference_path(&t, dst, src)
                );
            }
        }
    }

    /// The Pareto sampler's mean matches the requested mean for a light tail (shape 2.5),
    /// and its median matches `x_m 2^(1/a)` (rounded up to whole segments) for the CSFQ
    /// paper's heavy tail (shape 1.06), whose sample mean converges too slowly to test.
    #[test]
    fn pareto_sizes_follow_the_distribution() {
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let n = 200_000;
        let mean = (0..n)
            .map(|_| pareto(20.0, 2.5, &mut rng) as f64)
            .sum::<f64>()
            / n as f64;
        // ceil() adds about half a segment to the continuous mean of 20.
        assert!((mean - 20.5).abs() < 0.5, "mean {mean}");
        let mut v: Vec<u32> = (0..n).map(|_| pareto(20.0, 1.06, &mut rng)).collect();
        v.sort_unstable();
        let median = v[n / 2] as f64;
        let want = (20.0 * 0.06 / 1.06 * 2f64.powf(1.0 / 1.06)).ceil();
        assert_eq!(median, want);
    }
}
