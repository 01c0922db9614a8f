//! `csfq run --pcap` read by Wireshark's own engine: tshark with the shipped Lua dissector
//! (`contrib/wireshark/csfq.lua`) sees the packets `flows.csv` counts and the labels the
//! edge wrote. Needs `tshark` (Debian package `tshark`); without it the test prints
//! SKIPPED, and fails instead when CSFQ_TSHARK_REQUIRED is set (CI sets it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tshark_present() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("CSFQ_TSHARK_REQUIRED").is_some_and(|v| v != "0") {
            panic!(
                "tshark is not installed (apt-get install tshark), but CSFQ_TSHARK_REQUIRED is set"
            );
        }
        eprintln!(
            "SKIPPED tshark_reads_the_trace: tshark is not installed (apt-get install tshark)"
        );
    }
    ok
}

/// `flows.csv` as maps from column to value, one per flow.
fn flows_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn tshark_reads_the_trace() {
    if !tshark_present() {
        return;
    }
    let out = std::env::temp_dir().join(format!("csfq-pcap-tshark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let scenario = repo().join("scenarios/csfq-fig3a.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--pcap",
            "r1-r2",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("trace.pcapng ("), "{stdout}");

    let lua = repo().join("contrib/wireshark/csfq.lua");
    let t = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .arg("-r")
        .arg(out.join("trace.pcapng"))
        .args(["-T", "fields", "-E", "separator=,", "-E", "occurrence=f"])
        .args([
            "-e",
            "frame.interface_name",
            "-e",
            "ip.src",
            "-e",
            "csfq.labeled",
        ])
        .args(["-e", "csfq.rate", "-e", "csfq.drop_reason"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let text = String::from_utf8(t.stdout).unwrap();

    // Per flow (source 10.0.0.<i + 1>): forwarded, dropped, labels of drops, unlabeled.
    #[derive(Default)]
    struct Seen {
        sent: u64,
        dropped: u64,
        drop_labels: Vec<f64>,
        unlabeled: u64,
    }
    let mut seen: HashMap<usize, Seen> = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "{line}");
        assert_eq!(f[0], "r1->r2", "UDP only: nothing comes back");
        let last: usize = f[1].rsplit('.').next().unwrap().parse().unwrap();
        let s = seen.entry(last - 1).or_default();
        if f[2] == "0" || f[2] == "False" {
            s.unlabeled += 1;
        }
        if f[4].is_empty() {
            s.sent += 1;
        } else {
            s.dropped += 1;
            s.drop_labels.push(f[3].parse().unwrap());
        }
    }

    let flows = flows_csv(&out.join("flows.csv"));
    assert_eq!(seen.len(), flows.len());
    // Packets on their way at the end: after r1->r2, at most what 2.1 ms at 10 Mbit/s
    // holds (1 ms of propagation on each of the two links, and a transmission); before it,
    // r1's 64 kB buffer, and per flow one packet on its access link and 1.1 ms of its rate.
    let (mut after, mut before, mut before_bound) = (0i64, 0i64, 64.0);
    for row in &flows {
        let i: usize = row["flow"].parse().unwrap();
        let s = &seen[&i];
        let n = |k: &str| row[k].parse::<i64>().unwrap();
        assert_eq!(s.dropped as i64, n("dropped_pkts"), "flow {i}: drops");
        assert_eq!(
            s.unlabeled, 1,
            "flow {i}: only its first packet is unlabeled"
        );
        let a = s.sent as i64 - n("delivered_pkts");
        let b = n("sent_pkts") - (s.sent + s.dropped) as i64;
        assert!(
            a >= 0 && b >= 0,
            "flow {i}: trace {}+{}, csv {row:?}",
            s.sent,
            s.dropped
        );
        after += a;
        before += b;
        let offered: f64 = row["offered_mbps"].parse().unwrap();
        before_bound += 1.0 + (offered * 1e6 * 1.1e-3 / 8000.0).ceil();
        // The rate the edge measured, as the dissector decodes it (CSFQ drops relabel
        // nothing): the flow's rate within the estimator's few percent.
        if i > 0 {
            let mut l = s.drop_labels.clone();
            l.sort_by(f64::total_cmp);
            let median = l[l.len() / 2];
            assert!(
                (median / (offered * 1e6) - 1.0).abs() < 0.03,
                "flow {i}: median label of drops {median} vs {offered} Mbit/s"
            );
        }
    }
    assert!(after <= 4, "{after} packets past r1->r2 but not delivered");
    assert!(
        before as f64 <= before_bound,
        "{before} packets sent but not at r1->r2 (bound {before_bound})"
    );

    // With "Labeled sources" set, only those sources' values are decoded as labels (a DF
    // IPv4 ID from anywhere else may be anything); a malformed prefix is reported.
    for (sources, decoded) in [
        ("10.0.0.1/32", vec!["10.0.0.1"]),
        (
            "10.0.0.0/30, 10.0.0.32/32",
            vec!["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.32"],
        ),
    ] {
        let t = Command::new("tshark")
            .arg("-X")
            .arg(format!("lua_script:{}", lua.display()))
            .args(["-o", &format!("csfq.sources:{sources}")])
            .arg("-r")
            .arg(out.join("trace.pcapng"))
            .args(["-T", "fields", "-e", "ip.src", "-e", "csfq.labeled"])
            .args(["-e", "csfq.from_labeled_source"])
            .output()
            .unwrap();
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
        let mut got: Vec<String> = String::from_utf8(t.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.split('\t').nth(1).is_some_and(|v| !v.is_empty()))
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(
                    f[2], "1",
                    "{sources}: decoded, so from a labeled source: {l}"
                );
                f[0].to_string()
            })
            .collect();
        got.sort();
        got.dedup();
        assert_eq!(got, decoded, "{sources}");
    }
    let t = Command::new("tshark")
        .arg("-X")
        .arg(format!("lua_script:{}", lua.display()))
        .args(["-o", "csfq.sources:10.0.0/8", "-r"])
        .arg(out.join("trace.pcapng"))
        .args(["-T", "fields", "-e", "csfq.labeled"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&t.stderr);
    assert!(err.contains("cannot read \"10.0.0/8\""), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}
