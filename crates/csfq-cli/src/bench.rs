//! `csfq bench`: simulator speed on csfq-fig3b and csfq-fig3a for every discipline, as events and packet
//! hops per wall-clock second, with each discipline's time as a ratio to FIFO's in the
//! same run; with `--scale FLOWS`, long-lived TCP flows through one bottleneck under FIFO,
//! CSFQ and DRR, each run in a process of its own so its peak memory is its own.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use csfq_papers::experiments::find;
use csfq_sim::config::{FlowSpec, LinkSpec, ScenarioBuilder};
use csfq_sim::net::{human_duration, millions};
use csfq_sim::{DisciplineKind, Refused, Scenario, SimReport, Simulation};

fn fastest(s: &Scenario, repeat: u32) -> Result<(Duration, SimReport)> {
    let mut best: Option<(Duration, SimReport)> = None;
    for _ in 0..repeat {
        let sim = Simulation::new(s)?;
        let t = Instant::now();
        let r = sim.run();
        let e = t.elapsed();
        if best.as_ref().is_none_or(|b| e < b.0) {
            best = Some((e, r));
        }
    }
    Ok(best.expect("repeat >= 1"))
}

/// The scale scenario: one UDP at 1 Gbps and 999 TCP flows over a 1 Gbps link, 10 s.
pub fn large_scenario(d: DisciplineKind) -> Scenario {
    ScenarioBuilder::udp_and_tcps("udp1-tcp999-1g", 10.0, d, 1000.0, 999)
        .with(|s| s.description = "1 UDP at 1 Gbps and 999 TCP flows over a 1 Gbps link".into())
        .build()
        .expect("valid built-in scenario")
}

/// `csfq bench`.
pub fn bench(repeat: u32, large: bool) -> Result<()> {
    let mut cases: Vec<(String, Scenario)> = Vec::new();
    for id in ["csfq-fig3b", "csfq-fig3a"] {
        let base = find(id).expect("shipped experiment").scenario().check()?;
        for d in DisciplineKind::ALL {
            cases.push((format!("{id}/{d}"), base.with_discipline(d)));
        }
    }
    if large {
        for d in [
            DisciplineKind::Fifo,
            DisciplineKind::Csfq,
            DisciplineKind::Drr,
        ] {
            cases.push((format!("udp1-tcp999-1g/{d}"), large_scenario(d)));
        }
    }
    let mut t = crate::table(vec![
        "case",
        "wall s",
        "events",
        "Mevents/s",
        "Mpacket-hops/s",
        "simulated s per wall s",
        "time vs fifo",
    ]);
    let mut baseline: Option<f64> = None;
    for (name, s) in &cases {
        let (wall, r) = fastest(s, repeat)?;
        let w = wall.as_secs_f64();
        if name.ends_with("/fifo") {
            baseline = Some(w); // each scenario's FIFO comes first: ratios within a scenario
        }
        t.add_row(vec![
            name.clone(),
            format!("{w:.4}"),
            r.events.to_string(),
            format!("{:.2}", r.events as f64 / w / 1e6),
            format!("{:.2}", r.packet_hops as f64 / w / 1e6),
            format!("{:.1}", s.duration_s / w),
            baseline.map_or("-".into(), |b| format!("{:.2}x", w / b)),
        ]);
    }
    println!("fastest of {repeat} runs each, one core:");
    println!("{t}");
    Ok(())
}

/// The scale benchmark's shape: how many long-lived TCP flows, through how fast a
/// bottleneck, for how long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Concurrent TCP flows, each with its own hosts, access links and CSFQ edge.
    pub flows: u32,
    /// The bottleneck, Gbit/s.
    pub gbps: f64,
    /// Simulated seconds.
    pub seconds: f64,
}

/// The slowest bottleneck the scale run takes, Gbit/s: its buffer (10 ms of it) then holds
/// the 1500 bytes a link's buffer must.
pub const MIN_SCALE_GBPS: f64 = 0.0012;
/// The fastest, Gbit/s: the most a scenario's link takes.
pub const MAX_SCALE_GBPS: f64 = csfq_sim::config::MAX_RATE_MBPS / 1e3;

/// The shortest and longest simulated seconds the scale run takes: what a scenario's
/// duration takes.
pub const SCALE_SECONDS: std::ops::RangeInclusive<f64> =
    csfq_sim::config::MIN_TIME_MS / 1e3..=csfq_sim::config::MAX_DURATION_S;

// The fastest link's buffer (10 ms of 1 Tbit/s, 1.25 GB) holds the first segment of all
// but one of the most flows a run takes, so some rate always lets every flow send.
const _: () = assert!((csfq_sim::config::MAX_FLOWS - 1) * 1000 <= 1_250_000_000);

/// The scale run's TCP segment, bytes (the simulator's default).
const SEGMENT_BYTES: f64 = 1000.0;

/// The least time a flow's first segment takes to arrive, s: two 1 ms access links and
/// the 10 ms bottleneck.
const FIRST_ARRIVAL_S: f64 = 0.012;

/// The scale run's bottleneck buffer: 10 ms at its rate, bytes.
fn buffer_bytes(gbps: f64) -> f64 {
    (gbps * 1e9 / 8.0 * 0.010).round()
}

/// How many flows' first segments the bottleneck takes when all start at once: one onto
/// its wire, and as many as its buffer holds.
fn first_segments_taken(gbps: f64) -> f64 {
    (buffer_bytes(gbps) / SEGMENT_BYTES).floor() + 1.0
}

/// The scale scenario: `flows` TCP flows from `r1` to `r2` over one link of `gbps` with a
/// 10 ms delay and a buffer of 10 ms at the link's rate; each flow's hosts hang off the
/// routers by 10 Gbps, 1 ms access links (a round-trip time of 24 ms).
pub fn scale_scenario(sc: Scale, d: DisciplineKind) -> Result<Scenario> {
    let buffer = buffer_bytes(sc.gbps);
    let buffer = u32::try_from(buffer as u64)
        .with_context(|| format!("a buffer of {buffer} bytes (10 ms at {} Gbps)", sc.gbps))?;
    let (flows, gbps) = (sc.flows, sc.gbps);
    let s = ScenarioBuilder::new(&format!("scale-tcp{flows}-{gbps}g"), sc.seconds, d)
        .description(format!(
            "{flows} long-lived TCP flows over a {gbps} Gbps link"
        ))
        .routers(["r1", "r2"])
        .link(
            LinkSpec::new("r1", "r2", gbps * 1e3)
                .delay_ms(10.0)
                .buffer_bytes(buffer),
        )
        .flow(FlowSpec::tcp("r1", "r2").count(flows).access(10_000.0, 1.0))
        .build()?;
    Ok(s)
}

/// What one scale run measured, as the child process reports it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ScaleRun {
    /// Seconds to build the simulation (topology, hosts, edges).
    pub build_s: f64,
    /// Seconds to run it.
    pub run_s: f64,
    /// Events processed.
    pub events: u64,
    /// Packets delivered to their receivers.
    pub delivered_pkts: u64,
    /// Flows that delivered at least one packet: the rest held their state but lost their
    /// first packets and were still waiting out TCP's initial timeout.
    pub flows_served: u64,
    /// Bytes delivered over the simulated time, as a share of the bottleneck's capacity.
    pub utilization: f64,
    /// Per-flow records held by the disciplines and edges (the simulator's own count).
    pub flow_slots: usize,
    /// The process's peak resident set (VmHWM), bytes.
    pub peak_rss_bytes: u64,
}

/// The process's peak resident set size, bytes (Linux's VmHWM).
fn peak_rss_bytes() -> Result<u64> {
    let status =
        std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .context("no VmHWM in /proc/self/status")?;
    Ok(kb * 1024)
}

/// One scale run in this process (the child's side): prints a [`ScaleRun`] as JSON.
pub fn scale_child(sc: Scale, d: DisciplineKind) -> Result<()> {
    let s = scale_scenario(sc, d)?;
    let t = Instant::now();
    let mut sim = Simulation::new(&s)?;
    let build_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    sim.run_until(sim.end());
    let run_s = t.elapsed().as_secs_f64();
    let (delivered_pkts, delivered_bytes) = sim.delivered();
    let run = ScaleRun {
        build_s,
        run_s,
        events: sim.events(),
        delivered_pkts,
        flows_served: sim.flows_served() as u64,
        utilization: delivered_bytes as f64 * 8.0 / (sc.gbps * 1e9 * sc.seconds),
        flow_slots: sim.memory().flow_slots,
        peak_rss_bytes: peak_rss_bytes()?,
    };
    println!("{}", serde_json::to_string(&run)?);
    Ok(())
}

/// Runs the guard `csfq run` runs ([`Simulation::guard`]: memory, the network, more than a
/// day each unless `long`) on a scale benchmark's scenario before any run starts; says
/// what a run of more than a minute is expected to take.
fn check_scale_work(sc: Scale, long: bool) -> Result<()> {
    let s = scale_scenario(sc, DisciplineKind::Fifo)?;
    let est = match Simulation::guard(&s, long) {
        Ok(est) => est,
        Err(Refused::TooLong(e)) => bail!(
            "each of this benchmark's three runs would handle about {:.1e} events: about {} \
             at {} million events per second; lower --scale-seconds or --scale-gbps, or \
             pass --long",
            e.events,
            human_duration(e.wall_s),
            millions(e.events_per_s)
        ),
        Err(e) => return Err(e.into()),
    };
    if let Some(expected) = est.expected() {
        eprintln!("note: each run: {expected}");
    }
    Ok(())
}

/// Makes the process `cmd` starts die with this one: a run outlives nothing, so if the
/// benchmark dies (killed, interrupted), the kernel kills the run it started instead of
/// leaving it to run on for minutes with gigabytes of memory. Linux only; elsewhere a
/// no-op.
fn dies_with_this_process(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec the closure makes two system calls, both
        // async-signal-safe, and touches no memory but its captured integer.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // This process died before the request took hold: go now.
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            })
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// `csfq bench --scale FLOWS`: FIFO, CSFQ and DRR, each in a child process; refused if
/// each would take more than a day, unless `long`.
pub fn bench_scale(sc: Scale, long: bool) -> Result<()> {
    check_scale_work(sc, long)?;
    let exe = std::env::current_exe().context("finding the csfq executable")?;
    let mut t = crate::table(vec![
        "discipline",
        "flows",
        "flows served",
        "build s",
        "run s",
        "events",
        "Mevents/s",
        "simulated s per wall s",
        "utilization",
        "peak RSS MB",
        "bytes per flow",
        "run time vs fifo",
    ]);
    let mut baseline: Option<f64> = None;
    let mut fewest_served = u64::from(sc.flows);
    for d in [
        DisciplineKind::Fifo,
        DisciplineKind::Csfq,
        DisciplineKind::Drr,
    ] {
        eprintln!(
            "{d}: {} flows, {} Gbps, {} s ...",
            sc.flows, sc.gbps, sc.seconds
        );
        let mut cmd = std::process::Command::new(&exe);
        dies_with_this_process(&mut cmd);
        let out = cmd
            .args([
                "bench",
                "--scale",
                &sc.flows.to_string(),
                "--scale-gbps",
                &sc.gbps.to_string(),
                "--scale-seconds",
                &sc.seconds.to_string(),
                "--scale-one",
                d.name(),
            ])
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        if !out.status.success() {
            bail!("the {d} run failed ({})", out.status);
        }
        let r: ScaleRun = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("reading the {d} run's report"))?;
        if baseline.is_none() {
            baseline = Some(r.run_s);
        }
        fewest_served = fewest_served.min(r.flows_served);
        t.add_row(vec![
            d.name().to_string(),
            sc.flows.to_string(),
            format!(
                "{} ({:.1}%)",
                r.flows_served,
                100.0 * r.flows_served as f64 / f64::from(sc.flows)
            ),
            format!("{:.2}", r.build_s),
            format!("{:.2}", r.run_s),
            r.events.to_string(),
            format!("{:.2}", r.events as f64 / r.run_s / 1e6),
            format!("{:.3}", sc.seconds / r.run_s),
            format!("{:.3}", r.utilization),
            format!("{:.0}", r.peak_rss_bytes as f64 / 1e6),
            format!("{:.0}", r.peak_rss_bytes as f64 / sc.flows as f64),
            baseline.map_or("-".into(), |b| format!("{:.2}x", r.run_s / b)),
        ]);
    }
    println!(
        "{} long-lived TCP flows (a CSFQ edge each) through one {} Gbps link, {} s simulated; \
         each discipline in its own process, one core:",
        sc.flows, sc.gbps, sc.seconds
    );
    println!("{t}");
    if fewest_served < u64::from(sc.flows) {
        println!("{}", not_served_note(sc));
    }
    Ok(())
}

/// Why some flows delivered nothing, and what would let every flow send.
fn not_served_note(sc: Scale) -> String {
    let flows = f64::from(sc.flows);
    let head = "Not every flow sent: \"flows served\" delivered at least one packet; the \
                others hold their state (hosts, access ports, edge, TCP records) but sent \
                nothing that arrived";
    if first_segments_taken(sc.gbps) < flows {
        // The least rate, in whole Mbit/s, whose buffer holds all but one first segment.
        let mbps = ((flows - 1.0) * SEGMENT_BYTES * 8.0 / 0.010 / 1e6).ceil();
        let gbps = (mbps / 1e3).max(MIN_SCALE_GBPS);
        let too_short = if sc.seconds < FIRST_ARRIVAL_S {
            " The run is also too short for any first segment to arrive (a flow's first \
             takes at least 12 ms): give a longer --scale-seconds too."
        } else {
            ""
        };
        format!(
            "{head}: their first segments met the full buffer (10 ms of the link, {} \
             bytes) when all started at once, and they wait out TCP's retransmission \
             timeout (1 s at first, then doubling). Memory per flow is then mostly that of \
             idle flows, and events/s is the served flows'. For every flow to send, give \
             the link at least --scale-gbps {gbps}: its buffer then holds every flow's \
             first segment.{too_short}",
            buffer_bytes(sc.gbps)
        )
    } else {
        format!(
            "{head}: the buffer holds every flow's first segment, but the run ended before \
             all of them arrived (a flow's first takes at least 12 ms, and the last queued \
             waits up to 10 ms more): give a longer --scale-seconds."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All flows start at once with a window of one segment: the bottleneck takes one
    /// packet onto its wire and its buffer holds the next `buffer / size`, and every other
    /// flow's first packet is dropped, so until TCP's initial timeout (1 s) no other flow
    /// delivers anything: served = buffer / size + 1, computed by hand, whatever the
    /// discipline (each drops only to make room, and the first packets arrive before any
    /// flow has a second).
    #[test]
    fn scale_run_serves_only_the_flows_whose_first_packet_fits() {
        // 10 Mbit/s: the buffer is 10 ms of it, 12 500 bytes, twelve 1000-byte segments.
        let sc = Scale {
            flows: 200,
            gbps: 0.01,
            seconds: 0.5,
        };
        for d in [
            DisciplineKind::Fifo,
            DisciplineKind::Drr,
            DisciplineKind::Csfq,
        ] {
            let s = scale_scenario(sc, d).unwrap();
            let mut sim = Simulation::new(&s).unwrap();
            sim.run_until(sim.end());
            assert_eq!(sim.flows_served(), 12 + 1, "{d}");
        }
        // Past the initial timeout the others retransmit and some get through.
        let s = scale_scenario(Scale { seconds: 3.0, ..sc }, DisciplineKind::Drr).unwrap();
        let mut sim = Simulation::new(&s).unwrap();
        sim.run_until(sim.end());
        assert!(sim.flows_served() > 13, "{}", sim.flows_served());
    }

    /// The note under the table names the cause and a rate that lets every flow send,
    /// and that rate does: 200 flows' first segments need 199 in the buffer, 199 000
    /// bytes, 10 ms of 159.2 Mbit/s, so 160.
    #[test]
    fn not_served_note_names_a_rate_that_serves_every_flow() {
        let sc = Scale {
            flows: 200,
            gbps: 0.01,
            seconds: 0.5,
        };
        let note = not_served_note(sc);
        assert!(note.contains("--scale-gbps 0.16:"), "{note}");
        assert!(note.contains("(10 ms of the link, 12500 bytes)"), "{note}");
        let s = scale_scenario(Scale { gbps: 0.16, ..sc }, DisciplineKind::Fifo).unwrap();
        let mut sim = Simulation::new(&s).unwrap();
        sim.run_until(sim.end());
        assert_eq!(sim.flows_served(), 200);
        // A million flows: 999 999 segments of buffer, 10 ms of 799.9992 Gbit/s.
        let note = not_served_note(Scale {
            flows: 1_000_000,
            gbps: 100.0,
            seconds: 1.0,
        });
        assert!(note.contains("--scale-gbps 800:"), "{note}");
        assert!(!note.contains("too short"), "{note}");
        // Both: a full buffer, and a run shorter than any first segment's trip.
        let note = not_served_note(Scale {
            flows: 1_000_000,
            gbps: 100.0,
            seconds: 0.001,
        });
        assert!(
            note.contains("--scale-gbps 800:")
                && note.contains("give a longer --scale-seconds too"),
            "{note}"
        );
        // Room for all, but a run too short for the first segments to arrive.
        let note = not_served_note(Scale {
            flows: 10,
            gbps: 1.0,
            seconds: 0.005,
        });
        assert!(note.contains("give a longer --scale-seconds"), "{note}");
        let s = scale_scenario(
            Scale {
                flows: 10,
                gbps: 1.0,
                seconds: 0.005,
            },
            DisciplineKind::Fifo,
        )
        .unwrap();
        let mut sim = Simulation::new(&s).unwrap();
        sim.run_until(sim.end());
        assert_eq!(sim.flows_served(), 0);
    }
}
