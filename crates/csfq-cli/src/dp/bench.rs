//! `csfq dp bench`: the programs' cost per packet on a veth path, printed as a table.

use anyhow::Result;

/// Runs `csfq dp bench`.
pub(crate) fn run(secs: f64, repeat: u32, json: bool) -> Result<()> {
    if !(0.1..=60.0).contains(&secs) {
        anyhow::bail!("--secs must be from 0.1 to 60");
    }
    let r = csfq_dp::bench::veth_path(secs, repeat)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let mut t = crate::table(vec![
            "programs on the path",
            "packets/s",
            "vs none",
            "spread",
            "ns/packet (BPF statistics)",
        ]);
        let ns = |name: &str, v: Option<f64>| v.map(|v| format!("{name} {v:.0}"));
        for c in &r {
            let cost: Vec<String> = [
                ns("empty", c.empty_ns),
                ns("edge", c.edge_ns),
                ns("core", c.core_ns),
                ns("may", c.may_ns),
                ns("csfne", c.csfne_ns),
                ns("tuf", c.tuf_ns),
            ]
            .into_iter()
            .flatten()
            .collect();
            t.add_row(vec![
                c.case.to_string(),
                format!("{:.0}", c.pps),
                format!("{:.3}", c.ratio),
                format!("{:.3}-{:.3}", c.ratio_min, c.ratio_max),
                if cost.is_empty() {
                    "-".into()
                } else {
                    cost.join(", ")
                },
            ]);
        }
        println!(
            "64-byte UDP through a veth pair, one sender thread, {repeat} interleaved \
             repetition{} x {secs} s: median packets/s, median ratio to none in the \
             same repetition and its range; ns/packet from the kernel's BPF run-time \
             statistics (run_time_ns / run_cnt)",
            if repeat == 1 { "" } else { "s" }
        );
        println!("{t}");
        let alone = |case: &str| r.iter().find(|c| c.case == case);
        if let (Some(floor), Some(edge), Some(core)) = (
            alone("empty").and_then(|c| c.empty_ns),
            alone("edge").and_then(|c| c.edge_ns),
            alone("core").and_then(|c| c.core_ns),
        ) {
            println!(
                "An empty program costs {floor:.0} ns/packet by the same measure (the \
                 statistics' clock reads and the call): beyond it, the edge's own work \
                 is {:.0} ns ({} with the coarse clock) and the core's {:.0} ns per \
                 packet{}.",
                edge - floor,
                alone("edge, coarse clock")
                    .and_then(|c| c.edge_ns)
                    .map(|e| format!("{:.0} ns", e - floor))
                    .unwrap_or_else(|| "not measured".into()),
                core - floor,
                alone("may")
                    .and_then(|c| c.may_ns)
                    .map(|m| {
                        format!(
                            ", MAY's {:.0} ns{}",
                            m - floor,
                            alone("may, coarse clock")
                                .and_then(|c| c.may_ns)
                                .map(|c| format!(" ({:.0} with the coarse clock)", c - floor))
                                .unwrap_or_default()
                        )
                    })
                    .unwrap_or_default()
            );
            if let (Some(tsw), Some(csfne)) = (
                alone("edge, tsw meter").and_then(|c| c.edge_ns),
                alone("csfne").and_then(|c| c.csfne_ns),
            ) {
                println!(
                    "CS-FNE, beyond the empty program: the edge with the TSW meter {:.0} \
                     ns, the CS-FNE core {:.0} ns per packet (its lock and a \
                     fingerprint; uncongested here: no ring search, no draw).",
                    tsw - floor,
                    csfne - floor
                );
            }
            if let (Some(tags), Some(untagged), Some(tagged)) = (
                alone("edge, tuf tags").and_then(|c| c.edge_ns),
                alone("tuf").and_then(|c| c.tuf_ns),
                alone("edge (tuf)+tuf").and_then(|c| c.tuf_ns),
            ) {
                println!(
                    "TUF, beyond the empty program: the edge writing tags {:.0} ns, \
                     the TUF core {:.0} ns per tagged packet (no lock) and {:.0} per \
                     untagged one (tagged there, under its lock).",
                    tags - floor,
                    tagged - floor,
                    untagged - floor
                );
            }
            if let (Some(fine), Some(coarse)) =
                (alone("edge+core"), alone("edge+core, coarse clocks"))
            {
                let beyond = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}", v - floor));
                println!(
                    "Edge and core together, beyond the empty program: the edge {} ns \
                     and the core {} ns per labeled packet on the fine clock, {} and {} \
                     on the coarse clock.",
                    beyond(fine.edge_ns),
                    beyond(fine.core_ns),
                    beyond(coarse.edge_ns),
                    beyond(coarse.core_ns),
                );
            }
        }
        if let (Some(c), Some(l)) = (alone("2 CPUs: core"), alone("2 CPUs: edge+core")) {
            println!(
                "Two senders, each pinned to its own CPU, through one core: {:.3} of \
                 the rate with no program on the same two CPUs ({:.3}-{:.3}) with \
                 unlabeled packets, {:.3} ({:.3}-{:.3}) with the edge before it; \
                 counted at the far end. The core costs {} ns per labeled packet on \
                 two CPUs against {} on one.",
                c.ratio,
                c.ratio_min,
                c.ratio_max,
                l.ratio,
                l.ratio_min,
                l.ratio_max,
                l.core_ns.map_or("-".into(), |n| format!("{n:.0}")),
                alone("edge+core")
                    .and_then(|c| c.core_ns)
                    .map_or("-".into(), |n| format!("{n:.0}")),
            );
        }
        if let Some(m) = alone("2 CPUs: may, coarse clock") {
            println!(
                "Two senders through MAY on the coarse clock: {:.3} ({:.3}-{:.3}) of \
                 the rate with no program on the same two CPUs; MAY costs {} ns per \
                 packet on two CPUs against {} on one.",
                m.ratio,
                m.ratio_min,
                m.ratio_max,
                m.may_ns.map_or("-".into(), |n| format!("{n:.0}")),
                alone("may, coarse clock")
                    .and_then(|c| c.may_ns)
                    .map_or("-".into(), |n| format!("{n:.0}")),
            );
        }
    }
    Ok(())
}
