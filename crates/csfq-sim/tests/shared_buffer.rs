//! Flows of different packet sizes sharing one buffer.
//!
//! A push-out discipline (DRR drops from the longest queue, TUF drops the highest tag)
//! must push out as many packets as the arrival needs: pushing out one 200-byte packet
//! does not make room for a 1500-byte one, and a large-packet flow would be starved while
//! small-packet flows keep the buffer full. The reference is the max-min allocation of one
//! link, computed by water-filling over the rates the sources actually offered (sent bytes
//! over the run), so the jitter of a slow source is not counted against the discipline.

use std::path::Path;

use csfq_algo::maxmin::fair_share;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, SimReport, Simulation};
use proptest::prelude::*;

const LINK_MBPS: f64 = 10.0;
const DURATION_S: f64 = 20.0;

/// One 10 Mbps link with a 64 KB buffer and one UDP flow per `(rate Mbit/s, bytes)`.
fn one_link(flows: &[(f64, u32)], d: DisciplineKind, seed: u64) -> Scenario {
    let mut toml = format!(
        "name = \"mixed-sizes\"\nduration_s = {DURATION_S}\nseed = {seed}\ndiscipline = \"{}\"\n\
         routers = [\"r1\", \"r2\"]\n\n[[link]]\nbetween = [\"r1\", \"r2\"]\nrate_mbps = {LINK_MBPS}\n\
         delay_ms = 1\nbuffer_bytes = 64000\n",
        d.name()
    );
    for (rate, bytes) in flows {
        toml += &format!(
            "\n[[flow]]\nkind = \"udp\"\nfrom = \"r1\"\nto = \"r2\"\nrate_mbps = {rate}\n\
             packet_bytes = {bytes}\naccess = {{ rate_mbps = 100, delay_ms = 1 }}\n"
        );
    }
    ScenarioFile::parse(&toml, Path::new("mixed-sizes.toml")).unwrap()
}

/// Each flow's throughput over its max-min share of the offered load, minus 1.
fn deviations(r: &SimReport, packet_bytes: &[u32]) -> Vec<f64> {
    let offered: Vec<f64> = r
        .flows
        .iter()
        .zip(packet_bytes)
        .map(|(f, &b)| f.sent_pkts as f64 * b as f64 * 8.0 / DURATION_S / 1e6)
        .collect();
    let alpha = fair_share(&offered, LINK_MBPS);
    r.flows
        .iter()
        .zip(&offered)
        .map(|(f, &o)| f.throughput_mbps / o.min(alpha) - 1.0)
        .collect()
}

fn run(flows: &[(f64, u32)], d: DisciplineKind, seed: u64) -> Vec<f64> {
    let report = Simulation::new(&one_link(flows, d, seed)).unwrap().run();
    let bytes: Vec<u32> = flows.iter().map(|f| f.1).collect();
    deviations(&report, &bytes)
}

/// The case that starved the 1500-byte flows: 8 Mbps of 200-byte packets, 8 Mbps and
/// 1 Mbps of 1500-byte packets (max-min 4.5 / 4.5 / 1.0). DRR and TUF give each flow its
/// share within 2%; before the fix they gave 7.04 / 2.72 / 0.24 and 7.41 / 2.35 / 0.24.
#[test]
fn push_out_disciplines_do_not_starve_large_packets() {
    let flows = [(8.0, 200), (8.0, 1500), (1.0, 1500)];
    for d in [DisciplineKind::Drr, DisciplineKind::Tuf] {
        let dev = run(&flows, d, 1);
        assert!(
            dev.iter().all(|x| x.abs() <= 0.02),
            "{d}: {:?}",
            dev.iter()
                .map(|x| format!("{:+.1}%", x * 100.0))
                .collect::<Vec<_>>()
        );
    }
}

/// Disciplines with a shared buffer that do not push out (they drop the arrival) must not
/// starve the slow large-packet flow either: it sends below its share and gets within 5%
/// of it under CSFQ, FRED and CHOKe. (FIFO is not fair and is not checked; CS-FNE's FIFO
/// overflows now and then, which costs 1500-byte arrivals most, and its slow flow gets
/// about 8% less: drop-tail's bias, not a push-out bug.)
#[test]
fn drop_on_arrival_disciplines_serve_the_slow_large_packet_flow() {
    let flows = [(8.0, 200), (8.0, 1500), (1.0, 1500)];
    for d in [
        DisciplineKind::Csfq,
        DisciplineKind::CsfqFixed,
        DisciplineKind::Fred1,
        DisciplineKind::Fred2,
        DisciplineKind::Choke,
    ] {
        let dev = run(&flows, d, 1);
        assert!(
            dev[2].abs() <= 0.05,
            "{d}: slow flow {:+.1}%",
            dev[2] * 100.0
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// One link, 2 to 6 UDP flows of packet sizes 64..1500 bytes and rates 0.2..8 Mbit/s:
    /// DRR gives every flow its max-min share within 2%.
    #[test]
    fn drr_is_max_min_fair_whatever_the_packet_sizes(
        flows in prop::collection::vec((0.2f64..8.0, 64u32..=1500), 2..=6),
        seed in 1u64..1000,
    ) {
        let dev = run(&flows, DisciplineKind::Drr, seed);
        for (i, x) in dev.iter().enumerate() {
            prop_assert!(x.abs() <= 0.02, "flow {i} {:?}: {:+.2}% (all: {:?})", flows[i], x * 100.0, dev);
        }
    }
}
