//! The run's results so far, from the hosts' per-flow counts, the ports' link records and
//! the loops, beside each flow's reference share.

use csfq_algo::maxmin::jain_index;
use csfq_algo::DropReason;

use super::Simulation;
use crate::hosts::Endpoint;
use crate::observe::report::{FlowReport, LinkReport, MayTableReport, SimReport};

impl Simulation {
    /// The results so far.
    pub fn report(&self) -> SimReport {
        let now = self.events.now();
        let dur = now.as_secs_f64();
        let interval = self.sample_interval.as_secs_f64();
        let topo = &self.topo;
        let fair = topo.reference_allocation();
        let mut flows = Vec::with_capacity(self.hosts.flows.len());
        for (i, (rt, def)) in self.hosts.flows.iter().zip(&topo.flows).enumerate() {
            let active = (def.stop.min(now).saturating_sub(def.start)).as_secs_f64();
            let st = &rt.stats;
            let (retransmits, timeouts) = match &rt.endpoint {
                Endpoint::Tcp { sender, .. } => {
                    (sender.stats().retransmits, sender.stats().timeouts)
                }
                _ => (0, 0),
            };
            let series_mbps = st
                .series
                .iter()
                .map(|b| b as f64 * 8.0 / interval / 1e6)
                .collect();
            flows.push(FlowReport {
                flow: i as u32,
                kind: def.kind.name(),
                src: topo.nodes[def.src].name().into_owned(),
                dst: topo.nodes[def.dst].name().into_owned(),
                offered_mbps: def
                    .open_loop
                    .as_deref()
                    .and_then(|o| o.rate_bps())
                    .map(|r| r / 1e6),
                weight: def.weight,
                throughput_mbps: if active > 0.0 {
                    st.delivered_bytes as f64 * 8.0 / active / 1e6
                } else {
                    0.0
                },
                sent_pkts: st.sent_pkts,
                delivered_pkts: st.delivered_pkts,
                dropped_pkts: st.drops.total(),
                drops: DropReason::ALL
                    .iter()
                    .filter(|r| st.drops.get(r.code()) > 0)
                    .map(|r| (r.name(), st.drops.get(r.code())))
                    .collect(),
                ack_drops: st.ack_drops,
                size_pkts: def.size_pkts,
                fct_s: st
                    .completed
                    .map(|t| t.saturating_sub(def.start).as_secs_f64()),
                retransmits,
                timeouts,
                series_mbps,
                delay: st.delay.report(),
                queueing_histogram: (st.delay.queueing.total() > 0)
                    .then(|| st.delay.queueing.clone()),
            });
        }
        // Jain's index over the flows with a reference share; raw throughputs if none has one.
        let normalized: Vec<f64> = flows
            .iter()
            .zip(&fair)
            .filter(|(_, a)| **a > 0.0 && a.is_finite())
            .map(|(f, a)| f.throughput_mbps * 1e6 / a)
            .collect();
        let normalized = if normalized.is_empty() {
            flows.iter().map(|f| f.throughput_mbps).collect()
        } else {
            normalized
        };
        let links = self
            .ports
            .ports
            .iter()
            .zip(&topo.ports)
            .filter(|(_, d)| d.between_routers)
            .filter_map(|(p, d)| Some((p, d, p.record.as_deref()?)))
            .map(|(p, d, rec)| LinkReport {
                from: topo.nodes[d.from as usize].name().into_owned(),
                to: topo.nodes[d.to as usize].name().into_owned(),
                discipline: d.discipline.name(),
                rate_mbps: d.rate_bps / 1e6,
                tx_pkts: rec.tx_pkts,
                // Busy time within the run: a packet still on the wire at the end counts
                // only for the part of its transmission that happened.
                utilization: if dur > 0.0 {
                    let unsent = p.transmitting_until().saturating_sub(now).as_secs_f64();
                    ((rec.tx_bytes as f64 * 8.0 / d.rate_bps - unsent) / dur).max(0.0)
                } else {
                    0.0
                },
                dropped_pkts: rec.drops,
                mean_queue_bytes: if rec.queue.is_empty() {
                    0.0
                } else {
                    rec.queue.iter().map(|&q| q as f64).sum::<f64>() / rec.queue.len() as f64
                },
                peak_queue_pkts: p.peak_packets as u64,
                sojourn_ms: rec.sojourn.stats(),
                sojourn: rec.sojourn.hist.clone(),
                queue_bytes: rec.queue.clone(),
                alpha_mbps: rec.alpha.clone(),
                table_entries: rec.table.clone(),
                may: p.disc.may_stats().map(|m| MayTableReport {
                    inserts: m.inserts,
                    refused_full: m.refused_full,
                    expired: m.expired,
                    peak_entries: m.peak_entries as u64,
                    peak_bytes: (m.peak_entries * csfq_algo::may::ENTRY_BYTES) as u64,
                }),
            })
            .collect();
        let unused_links = self
            .ports
            .ports
            .iter()
            .zip(&topo.ports)
            .filter(|(p, d)| d.between_routers && p.record.is_none())
            .map(|(_, d)| {
                [
                    topo.nodes[d.from as usize].name().into_owned(),
                    topo.nodes[d.to as usize].name().into_owned(),
                ]
            })
            .collect();
        SimReport {
            scenario: self.name.clone(),
            discipline: self.discipline.name(),
            seed: self.seed,
            duration_s: dur,
            sample_interval_s: interval,
            flows,
            links,
            unused_links,
            jain_index: jain_index(&normalized),
            events: self.events.handled(),
            packet_hops: self.ports.hops,
            loops: self.loops.report(topo),
        }
    }
}
