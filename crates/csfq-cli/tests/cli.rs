//! The `csfq` command as a user meets it: outputs on success, a clear one-line error and a
//! failing exit status (never a panic) on bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn csfq(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("csfq-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn run_prints_table_and_writes_outputs() {
    let out = tmp("run");
    let scenario = repo().join("scenarios/csfq-fig3b.toml");
    let o = csfq(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &out,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("Jain's index"), "{stdout}");
    assert!(stdout.contains("max-min Mbps"));
    let csv = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("flow,kind,src,dst,"));
    assert_eq!(lines.count(), 32);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["flows"].as_array().unwrap().len(), 32);
    let svg = std::fs::read_to_string(out.join("throughput.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
}

#[test]
fn reproduce_lists_and_runs() {
    let out = tmp("repro");
    let o = csfq(&["reproduce", "--list"], &out);
    assert!(o.status.success());
    assert!(text(&o).0.contains("csfq-fig4"));
    let o = csfq(
        &["reproduce", "csfq-fig3a", "--out", out.to_str().unwrap()],
        &out,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("-11% .. +5%"), "{stdout}");
    for f in ["results.csv", "summary.json", "csfq-fig3a.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
}

#[test]
fn maxmin_prints_the_allocation() {
    let scenario = repo().join("scenarios/csfq-fig3a.toml");
    let o = csfq(&["maxmin", scenario.to_str().unwrap()], &repo());
    let (stdout, _) = text(&o);
    assert!(o.status.success());
    // 32 flows on 10 Mbps, flow i offering (i+1) x 0.3125: everyone gets 0.3125. On one
    // link every alpha-fair allocation is min(demand, level), so the per-hop,
    // proportional-fair and min-potential-delay columns agree with max-min: 4 x 32
    // allocations + flow 0's demand.
    assert_eq!(stdout.matches("0.3125 ").count(), 129, "{stdout}");
}

/// Two links (10 and 4 Mbit/s), three CBR flows at 10: end to end 2, 8, 2; per hop
/// 2, 5, 2 (link 1 gives flows 0 and 1 5 each before link 2 cuts flow 0). `run` judges
/// these open-loop flows per hop.
#[test]
fn open_loop_flows_are_judged_per_hop() {
    let scenario = repo().join("scenarios/per-hop-2links.toml");
    let o = csfq(&["maxmin", scenario.to_str().unwrap()], &repo());
    let (stdout, _) = text(&o);
    assert!(o.status.success());
    let row = stdout.lines().find(|l| l.contains("a->b  ")).unwrap();
    let cells: Vec<&str> = row.split('┆').map(str::trim).collect();
    assert_eq!((cells[5], cells[6]), ("8.0000", "5.0000"), "{row}");
    let out = tmp("per-hop");
    let o = csfq(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &repo(),
    );
    let (stdout, _) = text(&o);
    assert!(o.status.success());
    assert!(stdout.contains("per-hop Mbps"), "{stdout}");
    assert_eq!(stdout.matches("(per-hop)").count(), 3, "{stdout}");
}

#[test]
fn malformed_scenario_names_file_line_and_field() {
    let dir = tmp("bad");
    let good = std::fs::read_to_string(repo().join("scenarios/csfq-fig3a.toml")).unwrap();
    std::fs::write(
        dir.join("bad.toml"),
        good.replace(
            "delay_ms = 1\nbuffer_bytes",
            "delay_ms = \"one\"\nbuffer_bytes",
        ),
    )
    .unwrap();
    let o = csfq(&["run", "bad.toml"], &dir);
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("bad.toml:13:12:"), "{stderr}");
    assert!(stderr.contains("field `delay_ms`"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let dir = tmp("errors");
    let cases: &[(&[&str], &str)] = &[
        (&["run", "missing.toml"], "cannot read"),
        (
            &["run", "x.toml", "--discipline", "wfq"],
            "expected one of fifo, red, fred1, fred2, drr, csfq",
        ),
        (&["reproduce", "nope"], "unknown experiment `nope`"),
        (&["bench", "--repeat", "0"], "--repeat"),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, expect) in cases {
        let o = csfq(args, &dir);
        let (_, stderr) = text(&o);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn reproduce_all_writes_the_report() {
    let out = tmp("all");
    let o = csfq(
        &["reproduce", "--all", "--out", out.to_str().unwrap()],
        &out,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for id in csfq_sim::experiments::EXPERIMENTS.iter().map(|e| e.id) {
        assert!(stdout.contains(id), "{id} missing from the summary");
        assert!(
            md.contains(&format!("## {id}")),
            "{id} missing from report.md"
        );
        assert!(
            html.contains(&format!("{id}/{id}.svg")),
            "{id} figure missing from report.html"
        );
        assert!(out.join(id).join(format!("{id}.svg")).exists());
        assert!(out.join(id).join("results.csv").exists());
    }
    assert!(md.contains("**Verdict:**"));
    // The section beyond the papers: 5 scenarios x 5 schemes, figures for the 4 with a UDP.
    assert!(md.contains("## CSFQ at scale"), "scale section missing");
    let csv = std::fs::read_to_string(out.join("scale/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 25, "{csv}");
    for id in [
        "scale-1000",
        "scale-tcp-step",
        "scale-udp-step",
        "csfq-fig3b",
    ] {
        for what in ["udp", "alpha"] {
            let f = format!("scale/{id}-{what}.svg");
            assert!(out.join(&f).exists(), "{f}");
            assert!(md.contains(&f), "{f} not in report.md");
        }
    }
}

/// `csfq dp` rejects bad units and weights before touching the kernel, saying what it
/// expected, with clap's usage-error status.
#[test]
fn dp_rejects_bad_units_with_what_it_expected() {
    let d = tmp("dp-units");
    for (args, needle) in [
        (
            vec!["dp", "core", "attach", "--dev", "eth0", "--rate", "10mbits"],
            "tc rate unit",
        ),
        (
            vec![
                "dp", "core", "attach", "--dev", "eth0", "--rate", "10mbit", "--limit", "64kib",
            ],
            "tc size unit",
        ),
        (
            vec!["dp", "edge", "attach", "--dev", "eth0", "--k", "1h"],
            "tc time unit",
        ),
        (
            vec![
                "dp",
                "edge",
                "attach",
                "--dev",
                "eth0",
                "--weight",
                "10.0.0.0/33=2",
            ],
            "prefix length",
        ),
        (vec!["dp", "core", "attach", "--dev", "eth0"], "--rate"),
    ] {
        let o = csfq(&args, &d);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
