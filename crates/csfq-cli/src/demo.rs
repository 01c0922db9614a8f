//! `csfq dp demo`: the README's namespaces, built, used and removed in one command. Four
//! kernel TCP flows and a UDP flow at five times its share cross a router whose link to the
//! receiver is shaped to 10 Mbit/s, first with the shaper's drop-tail queue alone, then
//! with CSFQ (an edge where the traffic enters the router, a core in front of the shaper),
//! then with CS-FNE (the edge with the TSW meter, the CS-FNE core), then with TUF (the edge
//! writing tags, the TUF core), then with MAY (in front of the shaper, no edge); each flow's
//! goodput at the receiver, side by side.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use csfq_dp::lab::{Lab, Offloads};

/// The link's rate, Mbit/s, and the UDP's (five times a fifth of it).
const LINK_MBPS: f64 = 10.0;
const TCP_FLOWS: usize = 4;

static STOP: AtomicBool = AtomicBool::new(false);

/// The demo's namespaces, removed (with whatever csfq attached in them, and every process
/// it started) when dropped: also after an error or Ctrl-C.
struct Net {
    lab: Lab,
    tmp: PathBuf,
}

impl Net {
    /// `csfq dp --netns NS ARGS...` (this very binary), which must succeed.
    fn dp(&self, n: &str, args: &[&str]) -> Result<()> {
        let me = std::env::current_exe().context("finding this program")?;
        let ns = self.lab.ns(n);
        let mut a = vec!["dp", "--netns", ns.as_str()];
        a.extend_from_slice(args);
        let o = Command::new(&me)
            .args(&a)
            .output()
            .with_context(|| format!("running {}", me.display()))?;
        if !o.status.success() {
            bail!(
                "csfq {}: {}",
                a.join(" "),
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Ok(())
    }

    fn build() -> Result<Net> {
        csfq_dp::lab::remove_abandoned("csfqdemo", &["h", "r", "d"]);
        let mut net = Net {
            lab: Lab::new(format!("csfqdemo{}", std::process::id())),
            tmp: std::env::temp_dir().join(format!("csfq-demo-{}", std::process::id())),
        };
        std::fs::create_dir_all(&net.tmp)
            .with_context(|| format!("creating {}", net.tmp.display()))?;
        let lab = &mut net.lab;
        for n in ["h", "r", "d"] {
            lab.add(n)?;
        }
        lab.wire(
            ("h", "hr", "10.78.1.1/24"),
            ("r", "rh", "10.78.1.2/24"),
            Offloads::NoSegmentation,
        )?;
        lab.wire(
            ("r", "rd", "10.78.2.1/24"),
            ("d", "dr", "10.78.2.2/24"),
            Offloads::NoSegmentation,
        )?;
        lab.route("h", "default", "10.78.1.2")?;
        lab.route("d", "default", "10.78.2.1")?;
        lab.forward("r")?;
        lab.exec(
            "r",
            &[
                "tc", "qdisc", "add", "dev", "rd", "root", "tbf", "rate", "10mbit", "burst",
                "10kb", "limit", "64kb",
            ],
        )?;
        Ok(net)
    }

    /// The UDP and, half a second later, four TCP flows for `secs`: each flow's goodput at
    /// the receiver over the middle of its run, bit/s (`None` where its iperf3 failed), the
    /// UDP's last.
    fn flows(&mut self, phase: &str, secs: u32) -> Result<Vec<Option<f64>>> {
        let ports: Vec<u16> = (5201..5202 + TCP_FLOWS as u16).collect();
        let logs: Vec<PathBuf> = ports
            .iter()
            .map(|p| self.tmp.join(format!("{phase}-{p}.json")))
            .collect();
        for (p, log) in ports.iter().zip(&logs) {
            let (p, log) = (p.to_string(), log.display().to_string());
            self.lab.spawn(
                "d",
                &["iperf3", "-s", "-1", "-p", &p, "-J", "--logfile", &log],
            )?;
        }
        std::thread::sleep(Duration::from_millis(700));
        let t = secs.to_string();
        let udp_rate = format!("{}M", LINK_MBPS);
        // The UDP first: iperf3 announces a UDP test with one datagram it does not send
        // again, which TCPs already filling the link could get dropped.
        for (i, p) in ports.iter().enumerate().rev() {
            let port = p.to_string();
            let mut a = vec!["iperf3", "-c", "10.78.2.2", "-p", &port, "-t", &t];
            if i == TCP_FLOWS {
                a.extend_from_slice(&["-u", "-b", &udp_rate]);
            }
            self.lab.spawn("h", &a)?;
            if i == TCP_FLOWS {
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        // Every iperf3 ends by itself within the run and a few seconds; one that does not
        // (a client that never reached its server) is stopped, and its flow shows as
        // failed, rather than the demo waiting for ever.
        let deadline = std::time::Instant::now() + Duration::from_secs(u64::from(secs) + 30);
        self.lab.wait(deadline, interrupted)?;
        Ok(logs.iter().map(|l| goodput(l, secs)).collect())
    }
}

impl Drop for Net {
    /// The lab removes the processes, what csfq attached (its pins, also when an attach
    /// was cut short) and the namespaces; then the logs.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// Seconds left out at each end of a flow's `secs` when its goodput is taken: 2, or less
/// for short runs, so at least one second is left.
pub fn trim_secs(secs: u32) -> u32 {
    (secs.saturating_sub(1) / 2).min(2)
}

/// A flow's goodput from its iperf3 server's JSON log, bit/s: over its one-second
/// intervals from `trim` seconds after its start to `trim` before its end of `secs`.
/// The flows start apart (the UDP half a second first; a TCP whose SYN was lost 1 s
/// late), and over a whole run a flow would count seconds in which not all of them
/// competed, as a late flow does at its end (a run once gave the UDP 3.06 Mbit/s against a
/// share of 1.9, with the five goodputs summing to more than the link carries). The
/// middle also leaves out slow start.
pub fn iperf3_goodput(log: &serde_json::Value, secs: u32, trim: u32) -> Result<f64, String> {
    iperf3_goodput_between(log, trim, secs.saturating_sub(trim))
}

/// A flow's goodput from its iperf3 server's JSON log, bit/s: over its one-second
/// intervals from `first` to `last` seconds after its start.
pub fn iperf3_goodput_between(
    log: &serde_json::Value,
    first: u32,
    last: u32,
) -> Result<f64, String> {
    rate_between(log, first, last, |field| field("bytes").map(Some))
}

/// What a UDP flow's sender sent, bit/s of payload, from its iperf3 server's JSON log:
/// over the same intervals as [`iperf3_goodput_between`], each interval's bytes received
/// scaled by the datagrams its sequence numbers say were sent (`packets`) over those that
/// arrived (`packets - lost_packets`). An interval in which none arrived says nothing.
pub fn iperf3_udp_sent_between(
    log: &serde_json::Value,
    first: u32,
    last: u32,
) -> Result<f64, String> {
    rate_between(log, first, last, |field| {
        let (b, sent, lost) = (field("bytes")?, field("packets")?, field("lost_packets")?);
        Ok((sent > lost).then(|| b * sent / (sent - lost)))
    })
}

/// A field of one interval's `sum`, or the error naming it.
type IntervalField<'a> = dyn Fn(&str) -> Result<f64, String> + 'a;

/// Bit/s over an iperf3 log's one-second intervals from `first` to `last` seconds after
/// its start: the bytes `bytes_of` finds in each (none: the interval says nothing) over
/// the seconds of those that say something.
fn rate_between(
    log: &serde_json::Value,
    first: u32,
    last: u32,
    bytes_of: impl Fn(&IntervalField<'_>) -> Result<Option<f64>, String>,
) -> Result<f64, String> {
    let intervals = log["intervals"]
        .as_array()
        .ok_or("no intervals in the log")?;
    let (first, last) = (f64::from(first), f64::from(last));
    let (mut bytes, mut seconds) = (0.0, 0.0);
    for i in intervals {
        let sum = &i["sum"];
        let field = |k: &str| {
            sum[k]
                .as_f64()
                .ok_or_else(|| format!("an interval without {k}: {i}"))
        };
        let (start, end, s) = (field("start")?, field("end")?, field("seconds")?);
        // an interval's end runs a little past the whole second
        if start >= first - 1e-6 && end <= last + 0.1 {
            if let Some(b) = bytes_of(&field)? {
                bytes += b;
                seconds += s;
            }
        }
    }
    // One interval may measure a little under a second.
    if seconds < 0.9 {
        return Err(format!("no whole interval between {first} s and {last} s"));
    }
    Ok(bytes * 8.0 / seconds)
}

/// The goodput [`iperf3_goodput`] finds in the log at `log`; `None` if there is none.
fn goodput(log: &Path, secs: u32) -> Option<f64> {
    let text = std::fs::read_to_string(log).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    iperf3_goodput(&v, secs, trim_secs(secs)).ok()
}

fn missing(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
}

/// Whether Ctrl-C stopped the demo (it has cleaned up: exit 130).
pub fn interrupted() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Jain's index of `xs`.
fn jain(xs: &[f64]) -> f64 {
    let (s, q) = xs.iter().fold((0.0, 0.0), |(s, q), x| (s + x, q + x * x));
    if q > 0.0 {
        s * s / (xs.len() as f64 * q)
    } else {
        f64::NAN
    }
}

/// Runs the demo: `secs` per scheme.
pub fn demo(secs: u32) -> Result<()> {
    if let Some(why) = csfq_dp::unavailable_reason() {
        bail!("csfq dp demo: {why}");
    }
    for (tool, pkg) in [
        ("ip", "iproute2"),
        ("tc", "iproute2"),
        ("ethtool", "ethtool"),
        ("iperf3", "iperf3"),
    ] {
        if missing(tool) {
            bail!("csfq dp demo needs {tool} (Debian: apt-get install {pkg})");
        }
    }
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed));
    eprintln!(
        "building namespaces h (senders), r (router, 10 Mbit/s tbf towards d), d (receiver); \
         {TCP_FLOWS} TCP flows and a UDP flow at {LINK_MBPS} Mbit/s, {secs} s per scheme"
    );
    let mut net = Net::build()?;
    let mut columns: Vec<(&str, Vec<Option<f64>>)> = Vec::new();
    eprintln!("drop-tail (the tbf alone) ...");
    columns.push(("drop-tail", net.flows("fifo", secs)?));
    net.dp("r", &["edge", "attach", "--dev", "rh"])?;
    net.dp(
        "r",
        &[
            "core",
            "attach",
            "--dev",
            "rd",
            "--rate",
            "10mbit",
            "--limit",
            "64kb",
            "--trusted-from",
            "rh",
        ],
    )?;
    eprintln!("CSFQ (edge on rh, core on rd) ...");
    columns.push(("CSFQ", net.flows("csfq", secs)?));
    net.dp("r", &["detach", "--dev", "rh"])?;
    net.dp("r", &["detach", "--dev", "rd"])?;
    net.dp("r", &["edge", "attach", "--dev", "rh", "--meter", "tsw"])?;
    net.dp(
        "r",
        &[
            "csfne",
            "attach",
            "--dev",
            "rd",
            "--rate",
            "10mbit",
            "--limit",
            "64kb",
            "--trusted-from",
            "rh",
        ],
    )?;
    eprintln!("CS-FNE (edge on rh with the TSW meter, CS-FNE core on rd) ...");
    columns.push(("CS-FNE", net.flows("csfne", secs)?));
    net.dp("r", &["detach", "--dev", "rh"])?;
    net.dp("r", &["detach", "--dev", "rd"])?;
    net.dp("r", &["edge", "attach", "--dev", "rh", "--tuf"])?;
    net.dp(
        "r",
        &[
            "tuf",
            "attach",
            "--dev",
            "rd",
            "--rate",
            "10mbit",
            "--limit",
            "64kb",
            "--trusted-from",
            "rh",
        ],
    )?;
    eprintln!("TUF (edge on rh writing tags, TUF core on rd) ...");
    columns.push(("TUF", net.flows("tuf", secs)?));
    net.dp("r", &["detach", "--dev", "rh"])?;
    net.dp("r", &["detach", "--dev", "rd"])?;
    net.dp("r", &["may", "attach", "--dev", "rd", "--rate", "10mbit"])?;
    eprintln!("MAY (on rd, the paper's parameters) ...");
    columns.push(("MAY", net.flows("may", secs)?));
    drop(net);

    let share = LINK_MBPS / (TCP_FLOWS + 1) as f64;
    let mut header = vec!["flow".to_string()];
    header.extend(columns.iter().map(|(n, _)| format!("{n}, Mbit/s")));
    header.push("fair share, Mbit/s".into());
    let mut t = crate::table(header);
    let cell = |v: Option<f64>| v.map_or("failed".to_string(), |b| format!("{:.2}", b / 1e6));
    for i in 0..=TCP_FLOWS {
        let name = if i < TCP_FLOWS {
            format!("TCP {}", i + 1)
        } else {
            format!("UDP at {LINK_MBPS} Mbit/s")
        };
        let mut row = vec![name];
        row.extend(columns.iter().map(|(_, c)| cell(c[i])));
        row.push(format!("{share:.2}"));
        t.add_row(row);
    }
    let mut total = vec!["all".to_string()];
    total.extend(
        columns
            .iter()
            .map(|(_, c)| format!("{:.2}", c.iter().flatten().sum::<f64>() / 1e6)),
    );
    total.push(format!("{LINK_MBPS:.2}"));
    t.add_row(total);
    let mut fair = vec!["Jain's index".to_string()];
    fair.extend(columns.iter().map(|(_, c)| {
        let xs: Vec<f64> = c.iter().map(|v| v.unwrap_or(0.0)).collect();
        format!("{:.3}", jain(&xs))
    }));
    fair.push("1.000".into());
    t.add_row(fair);
    let trim = trim_secs(secs);
    println!(
        "Goodput at the receiver from {trim} s to {} s of each flow's {secs} s (iperf3's \
         intervals), through a 10 Mbit/s tbf with a 64 KB queue; payload carries about 95% \
         of the link",
        secs - trim
    );
    println!("{t}");
    println!(
        "CSFQ, CS-FNE and TUF hold the UDP near its share and the TCPs share the rest; MAY shuts a \
         constant-rate flow above its share off over seconds, and its controller (Delta 1 s) \
         needs longer than this demo to settle (README, \"MAY on a real router\")."
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An iperf3 server log of one-second intervals carrying `mbit[i]` Mbit each.
    fn log(mbit: &[f64]) -> serde_json::Value {
        let intervals: Vec<_> = mbit
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let start = i as f64;
                serde_json::json!({"sum": {
                    "start": start, "end": start + 1.00004, "seconds": 1.00004,
                    "bytes": m * 1e6 / 8.0 * 1.00004,
                }})
            })
            .collect();
        serde_json::json!({ "intervals": intervals })
    }

    /// At least one second is left however short the run.
    #[test]
    fn the_trim_leaves_a_second() {
        let trims: Vec<u32> = (2..=7).map(trim_secs).collect();
        assert_eq!(trims, [0, 1, 1, 2, 2, 2]);
    }

    /// Slow start in the first two seconds and a flow alone in the last two are left out:
    /// the mean of seconds 2..8 of a 10 s run, by hand (2 + 4 + 2 + 4 + 2 + 4) / 6 = 3.
    #[test]
    fn goodput_is_the_middle_of_the_run() {
        let l = log(&[0.5, 1.0, 2.0, 4.0, 2.0, 4.0, 2.0, 4.0, 9.0, 9.0]);
        let g = iperf3_goodput(&l, 10, trim_secs(10)).unwrap();
        assert!((g - 3e6).abs() < 1.0, "{g}");
        // a 2 s run keeps both seconds
        let g = iperf3_goodput(&log(&[1.0, 3.0]), 2, trim_secs(2)).unwrap();
        assert!((g - 2e6).abs() < 1.0, "{g}");
    }

    /// A log cut short (an iperf3 that failed early) gives no figure, not a small one.
    #[test]
    fn a_short_log_gives_no_goodput() {
        let e = iperf3_goodput(&log(&[5.0, 5.0]), 10, 2).unwrap_err();
        assert!(e.contains("no whole interval"), "{e}");
        assert!(iperf3_goodput(&serde_json::json!({}), 10, 2).is_err());
    }

    /// What a UDP sender sent, by hand: an interval that received 1 Mbit with 10 of 40
    /// datagrams lost sent 4/3 Mbit; one with 2 Mbit and none lost, 2; one whose datagrams
    /// were all lost says nothing. Over seconds 0-3: (4/3 + 2) / 2 s.
    #[test]
    fn a_udp_senders_rate_from_its_sequence_numbers() {
        let interval = |start: f64, mbit: f64, packets: f64, lost: f64| {
            serde_json::json!({"sum": {
                "start": start, "end": start + 1.0, "seconds": 1.0,
                "bytes": mbit * 1e6 / 8.0, "packets": packets, "lost_packets": lost,
            }})
        };
        let l = serde_json::json!({"intervals": [
            interval(0.0, 1.0, 40.0, 10.0),
            interval(1.0, 2.0, 50.0, 0.0),
            interval(2.0, 0.0, 30.0, 30.0),
        ]});
        let sent = iperf3_udp_sent_between(&l, 0, 3).unwrap();
        assert!((sent - (4.0 / 3.0 + 2.0) / 2.0 * 1e6).abs() < 1.0, "{sent}");
        assert!((iperf3_goodput_between(&l, 0, 3).unwrap() - 1e6).abs() < 1.0);
        let no_counts = serde_json::json!({"intervals": [log(&[1.0])["intervals"][0]]});
        let e = iperf3_udp_sent_between(&no_counts, 0, 1).unwrap_err();
        assert!(e.contains("without packets"), "{e}");
    }
}
