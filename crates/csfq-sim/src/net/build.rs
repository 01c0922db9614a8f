//! From a checked [`crate::Scenario`] to the [`Topology`]: ports for links and access links,
//! the flows of each `[[flow]]` table (web transfers drawn from the table's own stream),
//! their routes, and the per-port flow numbering the disciplines index by.

use csfq_algo::Nanos;
use rand::Rng;

use super::loops::build_loops;
use super::ACCESS_BUFFER_BYTES;
use super::{
    BuildError, CbrDef, FlowDef, Hop, LoopDef, LoopHops, Node, OpenLoopDef, PortDef, Route,
    Topology, AHEAD_ACKS, AHEAD_DATA,
};
use crate::config::{Arrivals, FlowSpec, Scenario, RLM_DEFAULT_BASE_KBPS, RLM_DEFAULT_LAYERS};
use crate::kinds::{DisciplineKind, FlowKind};
use crate::rng::{stream, Stream};
use crate::routes::RouterRoutes;

impl Topology {
    /// Builds the network of a checked scenario.
    pub fn build(s: &Scenario) -> Result<Self, BuildError> {
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
                    private: false,
                    feeds_private: false,
                });
            }
        }
        let secs = Nanos::from_secs_f64;
        let loops = build_loops(s, &ports)?;
        let mut routes = RouterRoutes::over(
            s.routers.len(),
            ports.iter().map(|p| (p.from as usize, p.to as usize)),
        );
        let mut flows = Vec::new();
        let (mut flow_routes, mut route_hops) = (Vec::new(), Vec::new());
        for (table, spec) in s.flows.iter().enumerate() {
            let spec = spec.get_ref();
            // Web tables draw their transfers' start gaps and sizes from a stream of their own.
            let mut web_rng = stream(s.seed, Stream::WebTable, table as u64);
            let mut web_start = secs(spec.start_s);
            for j in 0..spec.count {
                let (start, size_pkts) = match spec.kind {
                    FlowKind::Web => {
                        let gap_ms =
                            required(spec.arrival_mean_ms, flows.len(), "arrival_mean_ms")?;
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
                                required(spec.size_mean_pkts, flows.len(), "size_mean_pkts")?,
                                required(spec.size_shape, flows.len(), "size_shape")?,
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
                                private: false,
                                feeds_private: false,
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
                        let lid = loops.iter().position(|l| &l.name == name).ok_or(
                            BuildError::Unvalidated {
                                flow: id,
                                field: "loop",
                            },
                        )?;
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
                    open_loop: open_loop(spec, j, id)?.map(Box::new),
                    start,
                    stop: secs(spec.stop_s.unwrap_or(s.duration_s).min(s.duration_s)),
                    weight: spec.weight,
                    size_pkts,
                    congestion_control: spec.congestion_control.unwrap_or(s.tcp.congestion_control),
                    overlay,
                });
                flow_routes.push(Route {
                    base: u32::try_from(route_hops.len())
                        .map_err(|_| BuildError::TooManyHops { flow: id })?,
                    fwd_len: fwd.len() as u16,
                    rev_len: rev.len() as u16,
                    overlay: overlay.is_some(),
                    ahead: 0,
                });
                // Numbered by assign_local_ids once every flow is known.
                route_hops.extend(fwd.iter().chain(&rev).map(|&p| Hop {
                    port: p as u32,
                    local: 0,
                }));
            }
        }
        let mut loops = loops;
        let port_flows = assign_local_ids(
            &mut flows,
            &flow_routes,
            &mut route_hops,
            &mut loops,
            ports.len(),
        );
        // Grown one element at a time; the slack would stay for the whole run.
        nodes.shrink_to_fit();
        ports.shrink_to_fit();
        flows.shrink_to_fit();
        flow_routes.shrink_to_fit();
        route_hops.shrink_to_fit();
        let mut topo = Topology {
            nodes,
            ports,
            flows,
            loops,
            port_flows,
            routes: flow_routes,
            route_hops,
        };
        topo.mark_private_hops(s.tcp.segment_bytes, s.tcp.ack_bytes);
        Ok(topo)
    }

    /// Marks the private hops ([`PortDef::private`]) and the ports that feed them. A
    /// private hop is a flow's last hop (the access port from its last router into its
    /// host) that nothing else crosses, drop-tail, at least as fast as the hop before it
    /// and with room for one of the packets it carries. Its packets come from one wire, in
    /// the order they leave the port before it, all of one size (a flow's data packets have
    /// one size, TCP segments or its source's packets, and so do its ACKs): each leaves
    /// that port at least one transmission time there after the one before it, at least
    /// the time it takes here, so it finds the one before it sent or being sent and nothing
    /// waiting. So it never holds more than the packet that arrives and never drops. A
    /// flow's data in an overlay loop meets the loop's edges on the way (at the routers):
    /// its data's last hop is not marked, its ACKs' may be.
    fn mark_private_hops(&mut self, segment_bytes: u32, ack_bytes: u32) {
        let mut users = vec![0u32; self.ports.len()];
        for f in 0..self.flows.len() {
            for h in self.fwd(f).iter().chain(self.rev(f)) {
                users[h.port as usize] += 1;
            }
        }
        for l in &self.loops {
            for &p in l.fwd.iter().chain(&l.rev) {
                users[p] += 1;
            }
        }
        let mut marks = Vec::new();
        for (f, def) in self.flows.iter().enumerate() {
            let data_bytes = def
                .open_loop
                .as_deref()
                .map_or(segment_bytes, OpenLoopDef::packet_bytes);
            let data = (!self.rides_overlay(f)).then(|| (self.fwd(f), data_bytes));
            for (path, size) in data.into_iter().chain([(self.rev(f), ack_bytes)]) {
                let [.., before, last] = path else {
                    continue;
                };
                let (x, y) = (before.port as usize, last.port as usize);
                let (dx, dy) = (&self.ports[x], &self.ports[y]);
                if users[y] == 1
                    && !dy.between_routers
                    && dy.discipline == DisciplineKind::Fifo
                    && dy.rate_bps >= dx.rate_bps
                    && dy.buffer_bytes >= size
                {
                    marks.push((x, y));
                }
            }
        }
        for (x, y) in marks {
            self.ports[x].feeds_private = true;
            self.ports[y].private = true;
        }
        // Delivered ahead: a packet handed to its private hop may reach its host's handler
        // then, if what the host sends in return goes out on its own access port (one
        // user, drop-tail, not between routers) to a router, where it arrives as an event
        // (not on to a private hop: a path of two hops would hand its packets on and take
        // them ahead again and again with no event between). TCP senders and receivers
        // answer on their first hop back; open-loop sinks answer nothing; RLM receivers
        // and loops' flows are left to their events.
        let exclusive = |p: &Hop| {
            let d = &self.ports[p.port as usize];
            users[p.port as usize] == 1
                && !d.between_routers
                && !d.feeds_private
                && d.discipline == DisciplineKind::Fifo
        };
        for f in 0..self.flows.len() {
            if self.rides_overlay(f) {
                continue;
            }
            let def = &self.flows[f];
            let (fwd, rev) = (self.fwd(f), self.rev(f));
            let ahead = match def.kind {
                FlowKind::Udp | FlowKind::Onoff => AHEAD_DATA,
                FlowKind::Tcp | FlowKind::Web => {
                    let data = rev.first().is_some_and(exclusive);
                    let acks = fwd.first().is_some_and(exclusive);
                    (if data { AHEAD_DATA } else { 0 }) | (if acks { AHEAD_ACKS } else { 0 })
                }
                FlowKind::Rlm => 0,
            };
            self.routes[f].ahead = ahead;
        }
    }
}

/// A field validation guarantees, or the error that says it is missing.
fn required<T>(v: Option<T>, flow: usize, field: &'static str) -> Result<T, BuildError> {
    v.ok_or(BuildError::Unvalidated { flow, field })
}

/// What flow `j` of an open-loop table sends (`None` for TCP and web flows).
fn open_loop(spec: &FlowSpec, j: u32, flow: usize) -> Result<Option<OpenLoopDef>, BuildError> {
    let secs = |ms: f64| Nanos::from_secs_f64(ms / 1e3);
    let cbr = || {
        let rate_mbps = required(spec.rate_mbps, flow, "rate_mbps")?;
        Ok(CbrDef {
            rate_bps: (rate_mbps + spec.rate_step_mbps * j as f64) * 1e6,
            packet_bytes: spec.packet_bytes,
            jitter: spec.jitter,
        })
    };
    Ok(match spec.kind {
        FlowKind::Tcp | FlowKind::Web => None,
        FlowKind::Udp => Some(OpenLoopDef::Cbr(cbr()?)),
        FlowKind::Onoff => Some(OpenLoopDef::OnOff {
            cbr: cbr()?,
            on: secs(required(spec.on_ms, flow, "on_ms")?),
            off: secs(required(spec.off_ms, flow, "off_ms")?),
        }),
        FlowKind::Rlm => Some(OpenLoopDef::Rlm {
            layers: spec.layers.unwrap_or(RLM_DEFAULT_LAYERS),
            base_bps: spec.layer_base_kbps.unwrap_or(RLM_DEFAULT_BASE_KBPS) * 1e3,
            packet_bytes: spec.packet_bytes,
            jitter: spec.jitter,
        }),
    })
}

/// Numbers the flows at each port densely, in flow order (then the loops), so a port's
/// per-flow state is as large as the flows that cross it, whatever the network's size; a
/// flow whose data and ACKs cross one port has one number there. Each overlay loop's
/// shaper numbers its flows likewise. Returns the count at each port.
fn assign_local_ids(
    flows: &mut [FlowDef],
    routes: &[Route],
    route_hops: &mut [Hop],
    loops: &mut [LoopDef],
    ports: usize,
) -> Vec<u32> {
    let mut count = vec![0u32; ports];
    let mut shaper = vec![0u32; loops.len()];
    let mut number = |p: usize| {
        let n = count[p];
        count[p] += 1;
        n
    };
    for (f, r) in flows.iter_mut().zip(routes) {
        let n = r.fwd_len as usize;
        let hops = &mut route_hops[r.base as usize..][..n + r.rev_len as usize];
        for i in 0..hops.len() {
            let p = hops[i].port;
            // A port the data and the ACKs both cross numbers the flow once.
            let seen = (i >= n).then(|| hops[..n].iter().find(|h| h.port == p));
            hops[i].local = match seen.flatten() {
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
pub fn pareto<R: Rng + ?Sized>(mean: f64, shape: f64, rng: &mut R) -> u32 {
    let scale = mean * (shape - 1.0) / shape;
    let u = 1.0 - rng.random::<f64>(); // (0, 1]
    (scale / u.powf(1.0 / shape)).ceil().clamp(1.0, 1e7) as u32
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    use super::*;
    use crate::config::{FlowSpec, LinkSpec, LoopSpec, ScenarioBuilder};

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
            let s = crate::ScenarioFile::parse(&text, std::path::Path::new("r.toml")).unwrap();
            let t = Topology::build(&s).unwrap();
            for f in 0..t.flows.len() {
                let fwd: Vec<usize> = t.fwd_ports(f).collect();
                let (src, dst) = (t.ports[fwd[0]].from, t.ports[*fwd.last().unwrap()].to);
                let (src, dst) = (src as usize, dst as usize);
                assert_eq!(fwd, reference_path(&t, src, dst));
                assert_eq!(
                    t.rev_ports(f).collect::<Vec<_>>(),
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

    /// The private hops of `s` and the ports marked as feeding them, each sorted.
    fn private_hops(s: &Scenario) -> (Topology, [Vec<usize>; 2]) {
        let topo = Topology::build(s).unwrap();
        let marked = |f: fn(&PortDef) -> bool| -> Vec<usize> {
            (0..topo.ports.len())
                .filter(|&i| f(&topo.ports[i]))
                .collect()
        };
        let hops = [marked(|p| p.private), marked(|p| p.feeds_private)];
        (topo, hops)
    }

    /// The last ports of `paths` and the ones before them, each sorted.
    fn last_two(paths: &[&[Hop]]) -> [Vec<usize>; 2] {
        let mut two = [Vec::new(), Vec::new()];
        for path in paths {
            let [.., before, last] = path else {
                panic!("a path of one hop: {path:?}")
            };
            two[0].push(last.port as usize);
            two[1].push(before.port as usize);
        }
        two.iter_mut().for_each(|v| v.sort_unstable());
        two
    }

    /// A TCP flow with access links at `access_mbps` over a 10 Mbit/s link, beside a UDP
    /// flow without access links (its last hop is the link itself, reported).
    fn dumbbell(access_mbps: f64) -> Scenario {
        ScenarioBuilder::new("private", 1.0, DisciplineKind::Csfq)
            .routers(["r1", "r2"])
            .link(LinkSpec::new("r1", "r2", 10.0))
            .flow(FlowSpec::tcp("r1", "r2").access(access_mbps, 1.0))
            .flow(FlowSpec::udp("r1", "r2", 1.0))
            .build()
            .unwrap()
    }

    /// A flow's last access port (data: into its receiver; ACKs: into its sender) is a
    /// private hop, fed by the link before it (marked too), when it is at least as fast as
    /// that link; a slower one may queue, and is not. A flow without access links has none.
    #[test]
    fn a_last_access_port_as_fast_as_the_link_before_it_is_private() {
        for (access, private) in [(100.0, true), (10.0, true), (9.99, false)] {
            let (topo, got) = private_hops(&dumbbell(access));
            let want = match private {
                true => last_two(&[topo.fwd(0), topo.rev(0)]),
                false => Default::default(),
            };
            assert_eq!(got, want, "access at {access} Mbit/s");
        }
    }

    /// A flow whose data rides an overlay loop meets the loop's egress on the way: its
    /// data's last hop is not private, its ACKs' is.
    #[test]
    fn a_flow_in_an_overlay_loop_has_only_its_acks_last_hop_private() {
        let s = ScenarioBuilder::new("private-loop", 1.0, DisciplineKind::Fifo)
            .routers(["i", "e"])
            .link(LinkSpec::new("i", "e", 10.0))
            .overlay_loop(LoopSpec::new("be", "i", "e"))
            .flow(FlowSpec::tcp("i", "e").access(100.0, 1.0).via_loop("be"))
            .build()
            .unwrap();
        let (topo, got) = private_hops(&s);
        assert_eq!(got, last_two(&[topo.rev(0)]));
    }
}
