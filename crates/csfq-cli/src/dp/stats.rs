//! `csfq dp stats`: every attached program's counters and state, once or watched.

use anyhow::Result;
use csfq_dp::InterfaceStats;

use super::mbps;

/// Runs `csfq dp stats`: once, or every `watch` seconds (`count` times).
pub(crate) fn run(json: bool, watch: Option<f64>, count: Option<u64>) -> Result<()> {
    let Some(secs) = watch else {
        let st = csfq_dp::stats()?;
        if json {
            println!("{}", serde_json::to_string_pretty(&st)?);
        } else {
            print_stats(&st);
        }
        return Ok(());
    };
    watch_stats(secs, count, json)
}

/// What a core (CSFQ's, CS-FNE's or TUF's: `role`) on `dev` believes of its shaper,
/// `(rate, limit)`, against the shaper now, and whose labels it trusts.
pub(crate) fn print_shaper_and_trust(
    role: &str,
    dev: &str,
    (rate_bps, limit_bytes): (u64, u64),
    site: &csfq_dp::CoreSite,
) {
    let (trusted, trusted_now) = (site.trusted_ifindexes.as_deref(), &site.trusted_now);
    if site.drop_unparsed {
        println!("  frames it cannot parse are dropped (--unparsed drop; ARP spared)");
    }
    if let Some(now) = &site.shaper_now {
        let rate_differs = now.rate_bps.is_some_and(|r| r != rate_bps);
        let limit_differs = now.limit_bytes.is_some_and(|l| l != limit_bytes);
        if rate_differs || limit_differs {
            println!(
                "  MISMATCH: the shaper ({}) now has {} and a limit of {}, not the {role}'s: \
                 csfq dp {role} attach --dev {dev} again to follow it",
                now.what,
                now.rate_bps
                    .map_or("no rate".into(), |r| format!("{} Mbit/s", mbps(r))),
                now.limit_bytes.map_or("none".into(), |l| format!("{l} B")),
            );
        }
    }
    match trusted {
        None => println!("  labels trusted from every interface"),
        Some(ix) => println!(
            "  labels trusted only from ifindex {}",
            ix.iter()
                .map(|i| match trusted_now.iter().find(|t| t.0 == *i) {
                    Some((_, Some(name))) => format!("{i} ({name})"),
                    _ => i.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    for (i, _) in trusted_now.iter().filter(|t| t.1.is_none()) {
        println!(
            "  MISSING: trusted ifindex {i} is no interface now (deleted: one made again under its name has another index, and its labels are not believed); csfq dp {role} attach --dev {dev} again to trust it"
        );
    }
}

/// One counter's rate between two reads of `csfq dp stats --watch`.
#[derive(serde::Serialize)]
struct Rate<'a> {
    scope: &'a str,
    interface: &'a str,
    role: &'static str,
    counter: &'static str,
    packets_per_s: f64,
    bits_per_s: f64,
}

/// Each counter's rate from `before` to `now`, `dt` seconds apart: counters of programs
/// present in both reads (one attached between them has none yet; a counter that went
/// back, as a program detached and attached again usually shows, has none either; one
/// attached again whose counters already passed their old values is not told apart).
fn rates<'a>(before: &[InterfaceStats], now: &'a [InterfaceStats], dt: f64) -> Vec<Rate<'a>> {
    let mut out = Vec::new();
    for s in now {
        let Some(b) = before
            .iter()
            .find(|b| b.scope == s.scope && b.interface == s.interface && b.role == s.role)
        else {
            continue;
        };
        for (name, c) in &s.counters {
            let Some(p) = b.counters.get(name) else {
                continue;
            };
            if c.packets < p.packets || c.bytes < p.bytes {
                continue;
            }
            out.push(Rate {
                scope: &s.scope,
                interface: &s.interface,
                role: s.role.name(),
                counter: name,
                packets_per_s: (c.packets - p.packets) as f64 / dt,
                bits_per_s: (c.bytes - p.bytes) as f64 * 8.0 / dt,
            });
        }
    }
    out
}

/// `csfq dp stats --watch SECS`: reads every `secs` seconds (at most `count` times), and
/// prints the stats with each counter's rate since the last read; JSON Lines under `json`.
fn watch_stats(secs: f64, count: Option<u64>, json: bool) -> Result<()> {
    use std::io::{IsTerminal as _, Write as _};
    if !(0.1..=3600.0).contains(&secs) {
        anyhow::bail!("--watch takes from 0.1 to 3600 seconds, not {secs}");
    }
    let redraw = !json && std::io::stdout().is_terminal();
    let start = std::time::Instant::now();
    let mut last: Option<(std::time::Instant, Vec<InterfaceStats>)> = None;
    let mut n = 0;
    loop {
        let st = csfq_dp::stats()?;
        let at = std::time::Instant::now();
        let r = last.as_ref().map_or_else(Vec::new, |(t, b)| {
            rates(b, &st, at.duration_since(*t).as_secs_f64())
        });
        let mut out = std::io::stdout().lock();
        if json {
            let doc = serde_json::json!({
                "time_s": at.duration_since(start).as_secs_f64(),
                "stats": &st,
                "rates": &r,
            });
            writeln!(out, "{doc}")?;
        } else {
            if redraw {
                write!(out, "\x1b[H\x1b[2J")?;
            }
            writeln!(out, "every {secs} s, read {} (Ctrl-C to stop)", n + 1)?;
            drop(out);
            print_stats(&st);
            if !r.is_empty() {
                let mut t =
                    crate::table(vec!["interface", "role", "counter", "packets/s", "Mbit/s"]);
                for x in r.iter().filter(|x| x.packets_per_s > 0.0) {
                    t.add_row(vec![
                        if x.scope == "host" {
                            x.interface.to_string()
                        } else {
                            format!("{} ({})", x.interface, x.scope)
                        },
                        x.role.to_string(),
                        x.counter.to_string(),
                        format!("{:.0}", x.packets_per_s),
                        format!("{:.3}", x.bits_per_s / 1e6),
                    ]);
                }
                println!("since the last read:\n{t}");
            }
        }
        std::io::stdout().flush()?;
        n += 1;
        if count.is_some_and(|c| n >= c) {
            return Ok(());
        }
        last = Some((at, st));
        std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    }
}

fn print_stats(st: &[InterfaceStats]) {
    if st.is_empty() {
        println!(
            "csfq has nothing attached (see `csfq dp edge attach`, `csfq dp core attach`, \
             `csfq dp may attach`, `csfq dp csfne attach`, `csfq dp tuf attach`, \
             `csfq dp loop`)"
        );
        return;
    }
    for s in st {
        let scope = if s.scope == "host" {
            String::new()
        } else {
            format!(" ({})", s.scope)
        };
        let stale = if s.stale {
            "   STALE: attached nowhere, its interface or namespace is gone (csfq dp detach --stale)"
        } else {
            ""
        };
        println!("{} {}{scope}{stale}", s.role.name(), s.interface);
        if let Some(c) = &s.core {
            // A second or more without a packet queued is worth saying: the estimates
            // shown are decayed over it.
            let idle = if c.idle_ns >= 1_000_000_000 {
                format!("   idle {:.1} s", c.idle_ns as f64 / 1e9)
            } else {
                String::new()
            };
            println!(
                "  C {} Mbit/s   A {} Mbit/s   F {} Mbit/s   alpha {} Mbit/s   {}   virtual queue {} of {} B   {} clock{idle}",
                mbps(c.capacity_bps),
                mbps(c.arrival_bps),
                mbps(c.accepted_bps),
                mbps(c.alpha_bps),
                if c.congested { "congested" } else { "uncongested" },
                c.queue_bytes,
                c.limit_bytes,
                c.clock
            );
            print_shaper_and_trust(
                "core",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                &c.site,
            );
        }
        if let Some(c) = &s.tuf {
            super::cores::print_tuf(c);
            print_shaper_and_trust(
                "tuf",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                &c.site,
            );
        }
        if let Some(c) = &s.tuf_source {
            super::cores::print_tuf_source(c);
        }
        if let Some(c) = &s.csfne {
            super::cores::print_csfne(c);
            print_shaper_and_trust(
                "csfne",
                &s.interface,
                (c.capacity_bps, c.limit_bytes),
                &c.site,
            );
        }
        if let Some(m) = &s.may {
            println!(
                "  C {} Mbit/s   v {:.6}   utilization {:.3} (u0 {:.3}; {}) over the last {} ms   intervals {}   {} clock",
                mbps(m.capacity_bps),
                m.v,
                m.utilization,
                m.target_utilization,
                m.utilization_counts,
                m.interval_ns as f64 / 1e6,
                m.intervals,
                m.clock
            );
            println!(
                "  table: {} entries of {} ({} lost a packet within T0)   v's ceiling {}",
                m.table_entries,
                m.table_size,
                m.table_live,
                if m.ceiling { "heaviest" } else { "none" }
            );
        }
        for l in s.loops.iter().flatten() {
            let daemon = if l.daemon_running {
                format!("daemon pid {}", l.pid)
            } else {
                format!(
                    "daemon pid {} NOT RUNNING (csfq dp detach --dev {})",
                    l.pid, s.interface
                )
            };
            println!(
                "  loop {}: lambda {} Mbit/s   mu {} Mbit/s   accumulation {} B   epochs {}{}   controls {}   feedbacks {}   lost {} B   counted {} pkts {} B   {daemon}",
                l.index,
                mbps(l.lambda_bps),
                mbps(l.mu_bps),
                l.accumulation_bytes,
                l.epochs,
                if l.in_epoch { " (in one)" } else { "" },
                l.controls,
                l.feedbacks,
                l.lost_bytes,
                l.packets,
                l.bytes
            );
        }
        if let Some(e) = &s.edge {
            let unlabelable = match e.unlabelable {
                "police" => format!(
                    "policed to {} Mbit/s, bucket {} B",
                    mbps(e.police_rate_bps),
                    e.police_burst_bytes
                ),
                other => other.to_string(),
            };
            println!(
                "  flows ({}) in table {}   {} {} ms   {} clock   unlabelable IPv4: {unlabelable}",
                e.flow_key,
                e.flows,
                match (e.tuf, e.meter == "tsw") {
                    (true, _) if e.keep_source_tags => "TUF tags (TCP's kept from sources), K",
                    (true, _) => "TUF tags, K",
                    (false, true) => "TSW window",
                    (false, false) => "K",
                },
                e.k_ns as f64 / 1e6,
                e.clock
            );
            if e.source_filter {
                println!("  sources: only the accepted prefixes (others: drop_source)");
            }
        }
        if s.counters.is_empty() {
            continue;
        }
        let mut t = crate::table(vec!["counter", "packets", "bytes"]);
        for (name, c) in &s.counters {
            if c.packets > 0 {
                t.add_row(vec![
                    name.to_string(),
                    c.packets.to_string(),
                    c.bytes.to_string(),
                ]);
            }
        }
        println!("{t}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csfq_dp::{CountJson, Role};
    use std::collections::BTreeMap;

    fn one(role: Role, counters: &[(&'static str, u64, u64)]) -> InterfaceStats {
        InterfaceStats {
            counters: counters
                .iter()
                .map(|&(n, packets, bytes)| (n, CountJson { packets, bytes }))
                .collect::<BTreeMap<_, _>>(),
            ..InterfaceStats::empty("netns-c", "c1", role)
        }
    }

    /// By hand: 500 packets and 750 000 bytes more over 0.5 s are 1000 packets/s and
    /// 12 Mbit/s; a counter that went back (the program attached again) and a program
    /// that was not there at the last read have no rate.
    #[test]
    fn rates_are_differences_over_the_interval() {
        let before = [
            one(
                Role::Core,
                &[("forwarded", 1000, 1_500_000), ("drop_csfq_prob", 90, 9)],
            ),
            one(Role::Edge, &[("labeled", 10, 10)]),
        ];
        let now = [
            one(
                Role::Core,
                &[("forwarded", 1500, 2_250_000), ("drop_csfq_prob", 3, 3)],
            ),
            one(Role::May, &[("forwarded", 7, 7)]),
        ];
        let r = rates(&before, &now, 0.5);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].role, r[0].counter), ("core", "forwarded"));
        assert_eq!((r[0].packets_per_s, r[0].bits_per_s), (1000.0, 12e6));
    }
}
