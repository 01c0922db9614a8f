//! Overlay loops planned over the router ports: each loop's routes both ways, its
//! controller's parameters in simulator units (`tau` the largest edge-to-edge propagation
//! delay unless given), and its shaper queue.

use csfq_algo::overlay::{LoopParams, Service};
use csfq_algo::Nanos;

use super::{BuildError, PortDef};
use crate::config::overlay::{router_route, ServiceKind};
use crate::config::Scenario;
use crate::kinds::DisciplineKind;

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

/// A loop's edges (router indices) and its routes between them, both ways (port indices).
struct LoopRoute {
    ingress: usize,
    egress: usize,
    fwd: Vec<usize>,
    rev: Vec<usize>,
}

/// The loops of a validated scenario over its router ports (the first `2 x links` ports).
/// The checks have joined each loop's edges by a route; a loop they did not is an error
/// of the build, not a panic.
pub(super) fn build_loops(s: &Scenario, ports: &[PortDef]) -> Result<Vec<LoopDef>, BuildError> {
    let links: Vec<_> = s.links.iter().map(|l| l.get_ref()).collect();
    let routers = s.router_index();
    // Each loop's edges as router indices and its routes between them, both ways.
    let routes: Vec<LoopRoute> = s
        .loops
        .iter()
        .map(|l| {
            let l = l.get_ref();
            let none = |from: &str, to: &str| BuildError::NoLoopRoute {
                name: l.name.clone(),
                from: from.to_string(),
                to: to.to_string(),
            };
            let route = |a: &str, b: &str| {
                router_route(&s.routers, &links, a, b)
                    .filter(|r| !r.is_empty())
                    .ok_or_else(|| none(a, b))
            };
            let index = |name: &str| {
                routers
                    .get(name)
                    .copied()
                    .ok_or_else(|| none(&l.ingress, &l.egress))
            };
            Ok(LoopRoute {
                ingress: index(&l.ingress)?,
                egress: index(&l.egress)?,
                fwd: route(&l.ingress, &l.egress)?,
                rev: route(&l.egress, &l.ingress)?,
            })
        })
        .collect::<Result<_, BuildError>>()?;
    let o = &s.overlay;
    // T = tau = the largest edge-to-edge propagation delay (Section 6.2), at least 1 ms.
    let tau = o.tau_ms.map_or_else(
        || {
            routes
                .iter()
                .map(|r| Nanos(r.fwd.iter().map(|&p| ports[p].delay.0).sum()))
                .max()
                .unwrap_or(Nanos::ZERO)
                .max(Nanos::from_millis(1))
        },
        |ms| Nanos::from_secs_f64(ms / 1e3),
    );
    s.loops
        .iter()
        .zip(routes)
        .map(|(l, r)| {
            let l = l.get_ref();
            let first = ports[r.fwd[0]].rate_bps;
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
            Ok(LoopDef {
                name: l.name.clone(),
                ingress: r.ingress,
                egress: r.egress,
                fwd: r.fwd,
                rev: r.rev,
                fwd_local: Vec::new(),
                rev_local: Vec::new(),
                params,
                start: Nanos::from_secs_f64(l.start_s),
                queue: l.queue,
                buffer_bytes: l.buffer_bytes,
                control_bytes: o.control_bytes,
            })
        })
        .collect()
}
