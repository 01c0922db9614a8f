//! Memory follows what is queued, not buffer sizes or the run's length.
//!
//! Checked through the simulator's own count of allocated packet slots
//! (`Simulation::memory`), not through RSS or time: a queue may hold about twice the most
//! packets it has queued at once (a growable ring doubles), and running four times longer
//! must not allocate more than 20% more slots for queues, packets on the wire or events.

use std::path::Path;

use csfq_algo::Nanos;
use csfq_sim::{DisciplineKind, MemoryUse, ScenarioFile, Simulation};

/// One UDP at the link rate and 99 TCP flows over a 100 Mbit/s link with a 1 MB buffer,
/// each flow with private 1 Gbit/s access links (ports that rarely queue anything).
fn scenario(d: DisciplineKind) -> ScenarioFile {
    let text = format!(
        r#"
name = "memory"
duration_s = 8.0
discipline = "{d}"
routers = ["r1", "r2"]
sample_interval_ms = 1000

[[link]]
between = ["r1", "r2"]
rate_mbps = 100
delay_ms = 1
buffer_bytes = 1000000

[[flow]]
kind = "udp"
from = "r1"
to = "r2"
rate_mbps = 100
access = {{ rate_mbps = 1000, delay_ms = 1 }}

[[flow]]
kind = "tcp"
from = "r1"
to = "r2"
count = 99
access = {{ rate_mbps = 1000, delay_ms = 1 }}
"#
    );
    ScenarioFile::parse(&text, Path::new("memory.toml")).unwrap()
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
