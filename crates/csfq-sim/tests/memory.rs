//! Memory follows what is queued, not buffer sizes or the run's length.
//!
//! Checked through the simulator's own count of allocated packet slots
//! (`Simulation::memory`), not through RSS or time: a queue may hold about twice the most
//! packets it has queued at once (a growable ring doubles), and running four times longer
//! must not allocate more than 20% more slots for queues, packets on the wire or events.

use csfq_algo::Nanos;
use csfq_sim::config::ScenarioBuilder;
use csfq_sim::{DisciplineKind, MemoryUse, Scenario, ScenarioFile, Simulation};

/// One UDP at the link rate and 99 TCP flows over a 100 Mbit/s link with a 1 MB buffer,
/// each flow with private 1 Gbit/s access links (ports that rarely queue anything), for
/// 10 s: read at 2 and 8 s, both before the end, where the packets still in the network
/// are all on wires (none taken by its host ahead of its arrival after the end).
fn scenario(d: DisciplineKind) -> Scenario {
    ScenarioBuilder::udp_and_tcps("memory", 10.0, d, 100.0, 99)
        .with(|s| s.sample_interval = Some(1000.0))
        .build()
        .unwrap()
}

fn total(m: &MemoryUse) -> usize {
    m.queue_slots + m.wire_slots + m.event_slots
}

#[test]
fn memory_is_bounded_by_what_is_queued_not_by_run_length() {
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Csfq,
        DisciplineKind::Drr,
    ] {
        let mut sim = Simulation::new(&scenario(d)).unwrap();
        sim.run_until(Nanos::from_secs_f64(2.0));
        let early = sim.memory();
        sim.run_until(Nanos::from_secs_f64(8.0));
        let late = sim.memory();
        assert!(
            total(&late) as f64 <= 1.2 * total(&early) as f64,
            "{d}: {early:?} at 2 s, {late:?} at 8 s"
        );
        // FIFO queues (one ring per port): at most twice the peak, plus a ring's smallest
        // allocation (4 slots) per port. DRR's per-flow rings are bounded per flow.
        if d != DisciplineKind::Drr {
            assert!(
                late.queue_slots <= 2 * late.queue_peak_packets + 4 * late.ports,
                "{d}: {late:?}"
            );
        }
        // Far below a buffer's worth of minimum-size packets per port (1 MB / 40 B).
        assert!(
            late.queue_slots < late.ports * 1_000_000 / 40 / 10,
            "{d}: {late:?}"
        );
    }
}

/// 100 000 TCP flows on a chain of four routers, in four groups: r0->r1 (40 000),
/// r1->r2 (30 000), r2->r3 (20 000) and r0->r3 (10 000, across all three links).
fn hundred_thousand(d: DisciplineKind) -> Scenario {
    let mut text = format!(
        r#"
name = "memory-100k"
duration_s = 0.03
discipline = "{d}"
routers = ["r0", "r1", "r2", "r3"]
sample_interval_ms = 10
"#
    );
    for (a, b) in [("r0", "r1"), ("r1", "r2"), ("r2", "r3")] {
        text += &format!(
            "[[link]]\nbetween = [\"{a}\", \"{b}\"]\nrate_mbps = 100000\ndelay_ms = 1\nbuffer_bytes = 1000000\n"
        );
    }
    for (a, b, n) in [
        ("r0", "r1", 40_000),
        ("r1", "r2", 30_000),
        ("r2", "r3", 20_000),
        ("r0", "r3", 10_000),
    ] {
        text += &format!(
            "[[flow]]\nkind = \"tcp\"\nfrom = \"{a}\"\nto = \"{b}\"\ncount = {n}\n\
             access = {{ rate_mbps = 100000, delay_ms = 1 }}\n"
        );
    }
    ScenarioFile::parse(&text, std::path::Path::new("memory-100k.toml")).unwrap()
}

#[test]
fn per_flow_state_is_only_where_a_flow_is() {
    // Each port's per-flow records are at most the flows that cross it (data or ACKs):
    // at r1->r2, the 30 000 flows of its group and the 10 000 long ones, not 100 000. An
    // edge holds exactly the flows whose data enters the island there (every flow's first
    // packet reaches its edge within the run). Access ports (four per flow) hold none.
    for d in [
        DisciplineKind::Csfq,
        DisciplineKind::Drr,
        DisciplineKind::Fred1,
    ] {
        let s = hundred_thousand(d);
        let mut sim = Simulation::new(&s).unwrap();
        let topo = sim.topology();
        assert_eq!(topo.flows.len(), 100_000);
        assert_eq!(topo.ports.len(), 6 + 4 * 100_000);
        let crossing = topo.port_flows().to_vec();
        let mut edge_flows = vec![0usize; topo.ports.len()];
        for f in 0..topo.flows.len() {
            let edge = topo
                .fwd_ports(f)
                .find(|&p| topo.nodes[topo.ports[p].from as usize].is_router());
            edge_flows[edge.unwrap()] += 1;
        }
        // Router ports: r0->r1 carries groups 1 and 4 (data) and nothing back; r1->r0 their ACKs.
        assert_eq!(crossing[0], 50_000);
        assert_eq!(crossing[1], 50_000);
        assert_eq!(crossing[2], 40_000);
        assert_eq!(crossing[4], 30_000);
        sim.run_until(sim.end());
        let slots = sim.flow_slots_by_port();
        for (p, (&n, &cross)) in slots.iter().zip(&crossing).enumerate() {
            assert!(
                n <= cross as usize,
                "{d}: port {p} holds {n} flow records, but only {cross} flows cross it"
            );
            if p >= 6 {
                assert_eq!(n, 0, "{d}: access port {p} holds {n} flow records");
            }
        }
        if d == DisciplineKind::Csfq {
            for p in [0, 2, 4] {
                assert_eq!(slots[p], edge_flows[p], "csfq: edge records at port {p}");
            }
        }
        let total: usize = slots.iter().sum();
        assert_eq!(sim.memory().flow_slots, total);
        assert!(total > 0 && total <= crossing.iter().map(|&c| c as usize).sum());
    }
}
