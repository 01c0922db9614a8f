//! The `csfq` command as a user meets it: outputs on success, a clear one-line error and a
//! failing exit status (never a panic) on bad input.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The command as a pipe sees it: no width to fit (COLUMNS removed), rows whole.
fn csfq(args: &[&str], dir: &Path) -> Output {
    csfq_in_columns(args, dir, None)
}

/// The command with COLUMNS set to `columns` (as an 80-column terminal exports it), or none.
fn csfq_in_columns(args: &[&str], dir: &Path, columns: Option<u16>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_csfq"));
    c.args(args).current_dir(dir).env_remove("COLUMNS");
    if let Some(w) = columns {
        c.env("COLUMNS", w.to_string());
    }
    c.output().expect("the binary runs")
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
    // The delay columns of the printed table and the file.
    assert!(stdout.contains("delay ms p50/p99") && stdout.contains("sojourn ms"));
    let header = csv.lines().next().unwrap();
    for col in [
        ",queueing_p99_ms,",
        ",jitter_ms,",
        ",reference_mbps,",
        ",drops_overflow",
    ] {
        assert!(header.contains(col), "{col} in {header}");
    }
}

/// `csfq sweep` no longer runs a second build of the crates through Python: it says where
/// campaigns are, with the arguments given, and fails.
#[test]
fn sweep_points_to_the_python_package() {
    let o = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args(["sweep", "x.toml", "--seeds", "1-2"])
        .output()
        .expect("the binary runs");
    let (stdout, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("python3 -m csfq sweep x.toml --seeds 1-2"),
        "{stderr}"
    );
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
    // By default every verdict is the mean over seeds 1-8, each seed's number kept, and
    // results.csv holds every seed's runs.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["seeds"], serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8]));
    for v in json["verdicts"].as_array().unwrap() {
        let per_seed: Vec<f64> = v["per_seed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(per_seed.len(), 8, "{v}");
        let mean = per_seed.iter().sum::<f64>() / 8.0;
        assert!((v["ours"].as_f64().unwrap() - mean).abs() < 1e-9, "{v}");
    }
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 8 * 6 * 32);
    assert!(stdout.contains("mean of seeds 1-8"), "{stdout}");
    // --seed judges one seed: that seed's own numbers, and its runs alone.
    let one = tmp("repro-one");
    let o = csfq(
        &[
            "reproduce",
            "csfq-fig3a",
            "--seed",
            "3",
            "--out",
            one.to_str().unwrap(),
        ],
        &one,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let single: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(one.join("summary.json")).unwrap()).unwrap();
    assert_eq!(single["seeds"], serde_json::json!([3]));
    for (a, b) in single["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(json["verdicts"].as_array().unwrap())
    {
        assert_eq!(a["ours"], b["per_seed"][2], "{a} {b}");
    }
}

/// `csfq compare`: the committed csfq-table4 against a copy with its first verdict's
/// seeds all moved by 1 (8 seeds, so the standard error of the difference is the seeds'
/// standard deviation over 2) and its second verdict's outcome flipped: the first is
/// beyond 2 standard errors, the second changed outcome, the rest identical.
#[test]
fn compare_counts_moves_in_standard_errors() {
    let dir = tmp("compare");
    let src = repo().join("docs/report/csfq-table4/summary.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&src).unwrap()).unwrap();
    let (old, new) = (dir.join("old/csfq-table4"), dir.join("new/csfq-table4"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    std::fs::copy(&src, old.join("summary.json")).unwrap();
    let verdicts = v["verdicts"].as_array_mut().unwrap();
    let n = verdicts.len();
    let seeds: Vec<f64> = verdicts[0]["per_seed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let mean = seeds.iter().sum::<f64>() / seeds.len() as f64;
    let sd = (seeds.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 7.0).sqrt();
    verdicts[0]["per_seed"] = seeds.iter().map(|x| x + 1.0).collect();
    verdicts[0]["ours"] = (mean + 1.0).into();
    let flipped = if verdicts[1]["outcome"] == "matches" {
        "departs"
    } else {
        "matches"
    };
    verdicts[1]["outcome"] = flipped.into();
    std::fs::write(new.join("summary.json"), v.to_string()).unwrap();
    let args = |json: bool| {
        let mut a = vec![
            "compare".to_string(),
            dir.join("old").display().to_string(),
            dir.join("new").display().to_string(),
        ];
        if json {
            a.push("--json".into());
        }
        a
    };
    let o = csfq(
        &args(false).iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        &dir,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!(
            "{n} verdicts of 1 experiment: 1 outcome changed, 1 beyond 2 SE, same outcome, {} identical",
            n - 2
        )),
        "{stdout}"
    );
    let o = csfq(
        &args(true).iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        &dir,
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let beyond = &j["rows"][1];
    assert_eq!(beyond["moved"], "beyond", "{j}");
    // |1| over sqrt(sd^2/8 + sd^2/8) = 2 / sd.
    let z = beyond["z"].as_f64().unwrap();
    assert!((z - 2.0 / sd).abs() < 1e-6 * z, "{z} against {}", 2.0 / sd);
    let o = csfq(&["compare", "no-such-dir", "new"], &dir);
    assert!(!o.status.success());
    assert!(
        text(&o).1.contains("no-such-dir is not a directory"),
        "{:?}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
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
            "[possible values: fifo, red, fred1, fred2, drr, csfq",
        ),
        (&["reproduce", "nope"], "unknown experiment `nope`"),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "5-1"],
            "the range 5-1 is empty",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "1-100000"],
            "at most 1000",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "1,x"],
            "`x` is not a seed",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "3,2"],
            "increasing order",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "1-"],
            "a seed is missing",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "1,,2"],
            "a seed is missing",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "+5"],
            "`+5` is not a seed",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seeds", "1-8,10"],
            "not both",
        ),
        (
            &[
                "reproduce",
                "csfq-fig3a",
                "--seeds",
                "0-18446744073709551616",
            ],
            "is not a seed",
        ),
        (
            &["reproduce", "csfq-fig3a", "--seed", "1", "--seeds", "1-2"],
            "cannot be used with",
        ),
        (&["bench", "--repeat", "0"], "--repeat"),
        (
            &["bench", "--scale", "10", "--scale-gbps", "1e12"],
            "expected 0.0012 to 1000 Gbit/s",
        ),
        (
            &["bench", "--scale", "10", "--scale-gbps", "0.0011"],
            "expected 0.0012 to 1000 Gbit/s",
        ),
        (
            &["bench", "--scale", "10", "--scale-seconds", "1e9"],
            "expected 0.000001 to 1000000 seconds",
        ),
        (&["bench", "--long"], "--scale"),
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

/// The scale benchmark runs at the slowest rate it accepts (whose buffer just holds the
/// 1500 bytes a link's buffer must) and says which flows sent: two flows, one segment of
/// buffer, so one is served and the table says so.
#[test]
fn scale_bench_runs_at_its_slowest_rate_and_counts_the_flows_served() {
    let dir = tmp("scale-slowest");
    let o = csfq(
        &[
            "bench",
            "--scale",
            "3",
            "--scale-gbps",
            "0.0012",
            "--scale-seconds",
            "0.5",
        ],
        &dir,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    for d in ["fifo", "csfq", "drr"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("│ {d} ")))
            .unwrap_or_else(|| panic!("no {d} row: {stdout}"));
        // One segment on the wire, one in the 1500-byte buffer: two of three served.
        assert!(row.contains("2 (66.7%)"), "{row}");
    }
    assert!(stdout.contains("--scale-gbps 0.002:"), "{stdout}");
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
        // A core must be told whose labels to believe (its rate and limit may be left
        // out: they are read from the shaper).
        (
            vec!["dp", "core", "attach", "--dev", "eth0"],
            "--trusted-from <IF>",
        ),
        (
            vec!["dp", "core", "attach", "--dev", "eth0", "--rate", "10mbit"],
            "--trusted-from <IF>",
        ),
        (
            vec![
                "dp",
                "core",
                "attach",
                "--dev",
                "eth0",
                "--rate",
                "10mbit",
                "--trusted-from",
                "eth1",
                "--trust-any-label",
            ],
            "cannot be used with",
        ),
        (
            vec![
                "dp",
                "edge",
                "attach",
                "--dev",
                "eth0",
                "--unlabelable",
                "police",
            ],
            "expected `pass`, `drop`, or a policing rate such as 2mbit",
        ),
        (
            vec![
                "dp",
                "edge",
                "attach",
                "--dev",
                "eth0",
                "--unlabelable-burst",
                "10kb",
            ],
            "--unlabelable",
        ),
    ] {
        let o = csfq(&args, &d);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A closed pipe (`csfq run ... | head -1`) ends the command quietly, after it has written
/// its files; it used to panic in `println!` and lose them.
#[test]
fn a_closed_pipe_loses_no_output_files() {
    use std::io::Read as _;
    let out = tmp("pipe");
    let scenario = repo().join("scenarios/csfq-fig3a.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args(["run", scenario.to_str().unwrap(), "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, as `head -1` does, then close the pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    child.wait().unwrap();
    assert!(String::from_utf8_lossy(&first).starts_with("csfq-fig3a:"));
    assert!(!stderr.contains("panicked"), "{stderr}");
    for f in ["flows.csv", "delays.csv", "summary.json", "throughput.svg"] {
        assert!(out.join(f).is_file(), "{f} not written");
    }
}

/// Inputs that crashed, wrapped silently or wrote outside `out/`: each an error naming the
/// file, line and field, and nothing written.
#[test]
fn scenarios_beyond_the_simulators_ranges_are_errors() {
    let dir = tmp("ranges");
    let good = std::fs::read_to_string(repo().join("scenarios/csfq-fig3a.toml")).unwrap();
    let cases = [
        (
            "name = \"csfq-fig3a\"",
            "name = \"../../escaped\"",
            "field `name`",
        ),
        ("name = \"csfq-fig3a\"", "name = \"/tmp/x\"", "field `name`"),
        ("name = \"csfq-fig3a\"", "name = \"\"", "field `name`"),
        (
            "delay_ms = 1\nbuffer_bytes",
            "delay_ms = 1e300\nbuffer_bytes",
            "field `delay_ms`",
        ),
        (
            "rate_mbps = 10\ndelay_ms",
            "rate_mbps = 1e-300\ndelay_ms",
            "field `rate_mbps`",
        ),
        (
            "between = [\"r1\", \"r2\"]",
            "between = [\"r1\", \"r2\", \"r1\"]",
            "field `between`",
        ),
        (
            "discipline = \"csfq\"\n",
            "",
            "field `discipline`: required",
        ),
    ];
    for (i, (from, to, expect)) in cases.iter().enumerate() {
        let bad = good.replacen(from, to, 1);
        assert_ne!(bad, good, "{from}: replacement did not apply");
        let file = format!("bad{i}.toml");
        std::fs::write(dir.join(&file), bad).unwrap();
        let run: &[&str] = &["run", &file, "--out", "o"];
        let maxmin: &[&str] = &["maxmin", &file];
        for args in [run, maxmin] {
            let (cmd, o) = (args[0], csfq(args, &dir));
            let (_, stderr) = text(&o);
            assert_eq!(o.status.code(), Some(1), "{cmd} {to}: {stderr}");
            assert!(stderr.starts_with(&format!("error: {file}:")), "{stderr}");
            assert!(stderr.contains(expect), "{cmd} {to}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    assert!(
        !dir.join("o").exists(),
        "nothing is written for a bad scenario"
    );
    // A flow with no route: named at its table, with the file and line.
    let island = good
        .replacen(
            "routers = [\"r1\", \"r2\"]",
            "routers = [\"r1\", \"r2\", \"r3\"]",
            1,
        )
        .replacen("to = \"r2\"", "to = \"r3\"", 1);
    std::fs::write(dir.join("island.toml"), island).unwrap();
    let (_, stderr) = text(&csfq(&["maxmin", "island.toml"], &dir));
    assert!(stderr.starts_with("error: island.toml:"), "{stderr}");
    assert!(stderr.contains("no route from `r1` to `r3`"), "{stderr}");
    // Not a scenario: no line number, and /dev/zero is not read to the end.
    let (_, stderr) = text(&csfq(&["run", "/dev/zero"], &dir));
    assert!(stderr.contains("/dev/zero: larger than 16 MiB"), "{stderr}");
    let (_, stderr) = text(&csfq(&["run", "missing.toml"], &dir));
    assert!(
        stderr.starts_with("error: missing.toml: cannot read"),
        "{stderr}"
    );
}

/// A bad `--out` fails before any simulation runs.
#[test]
fn a_bad_out_directory_fails_before_simulating() {
    let dir = tmp("outdir");
    std::fs::write(dir.join("file"), "").unwrap();
    let scenario = repo().join("scenarios/csfq-fig3a.toml");
    for args in [
        vec!["run", scenario.to_str().unwrap(), "--out", "file/sub"],
        vec!["reproduce", "--all", "--out", "file/sub"],
        vec!["reproduce", "csfq-fig3a", "--out", "file/sub"],
    ] {
        let o = csfq(&args, &dir);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr.contains("cannot create the output directory file/sub"),
            "{stderr}"
        );
        // Nothing was simulated: no table printed.
        assert!(stdout.is_empty(), "{stdout}");
    }
}

/// Link utilization counts only the part of a transmission that happened within the run:
/// a 1 kbit/s link sends one 1000-byte packet in 8 s, and 1 s of it is 100%, not 800%.
#[test]
fn utilization_never_exceeds_the_link() {
    let dir = tmp("util");
    let good = std::fs::read_to_string(repo().join("scenarios/csfq-fig3a.toml")).unwrap();
    let slow = good
        .replacen("rate_mbps = 10\ndelay_ms", "rate_mbps = 0.001\ndelay_ms", 1)
        .replacen("duration_s = 10.0", "duration_s = 1.0", 1);
    assert_ne!(slow, good);
    std::fs::write(dir.join("slow.toml"), slow).unwrap();
    let o = csfq(
        &["run", "slow.toml", "--out", "o", "--discipline", "fifo"],
        &dir,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("o/summary.json")).unwrap())
            .unwrap();
    let u = json["links"][0]["utilization"].as_f64().unwrap();
    assert!(u > 0.99 && u <= 1.0, "{u}: {stdout}");
}

/// Finite transfers are judged by completion time; a Jain index over the one long-lived
/// flow beside them would be a meaningless 1.0000.
#[test]
fn jain_is_not_shown_over_a_single_flow() {
    let dir = tmp("table2");
    let scenario = repo().join("scenarios/csfq-table2.toml");
    let o = csfq(&["run", scenario.to_str().unwrap(), "--out", "o"], &dir);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.contains("Jain's index 1.0000"), "{stdout}");
    assert!(
        stdout.contains("judged by their completion times"),
        "{stdout}"
    );
    assert!(stdout.contains("mean FCT s"), "{stdout}");
}

/// When no flow delivers anything, Jain's index is undefined, not a perfect 1.0000: two
/// UDP flows behind a 1 kbit/s link whose first packet needs 8 s, in a 1 s run.
#[test]
fn jain_is_undefined_when_nothing_is_delivered() {
    let dir = tmp("nothing");
    std::fs::write(
        dir.join("s.toml"),
        "name = \"nothing\"\nduration_s = 1\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\"]\n\n\
         [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 0.001\n\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 1\ncount = 2\n",
    )
    .unwrap();
    let o = csfq(&["run", "s.toml", "--out", "o"], &dir);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.contains("Jain's index 1.0000"), "{stdout}");
    assert!(stdout.contains("Jain's index undefined"), "{stdout}");
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).unwrap();
    assert!(summary.contains("\"jain_index\": null"), "{summary}");
}

/// Buffers that could hold more packets than the machine has memory for are refused before
/// the run, with what to change: three 4 GB links of 20-byte packets (over 90 GiB of queue
/// state) into a 1 kbit/s link used to grow past 8 GB and abort.
#[test]
fn buffers_beyond_memory_are_refused_before_running() {
    let dir = tmp("huge-buffers");
    let mut file = String::from(
        "name = \"huge\"\nduration_s = 10\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\", \"c\", \"d\"]\n",
    );
    for (x, y) in [("a", "b"), ("b", "c"), ("c", "d")] {
        file += &format!(
            "[[link]]\nbetween = [\"{x}\", \"{y}\"]\nrate_mbps = 0.001\nbuffer_bytes = 4294967295\n"
        );
    }
    file += "[[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"d\"\nrate_mbps = 160000\npacket_bytes = 20\n";
    std::fs::write(dir.join("s.toml"), file).unwrap();
    let o = csfq(&["run", "s.toml", "--out", "o"], &dir);
    let (_, stderr) = text(&o);
    assert!(!o.status.success());
    assert!(stderr.contains("lower buffer_bytes"), "{stderr}");
    assert!(!dir.join("o/summary.json").exists());
}

/// `--json` on run, maxmin and reproduce: one JSON document on standard output, the same as
/// the file written beside it, with numbers checked against hand-computed allocations.
#[test]
fn json_output_for_scripts() {
    let out = tmp("json");
    let run = |args: &[&str]| {
        let o = csfq(args, &out);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{args:?}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {stdout}"));
        v
    };
    let hops = repo().join("scenarios/per-hop-2links.toml");
    let hops = hops.to_str().unwrap();
    // README: end to end 2 / 8 / 2 Mbit/s, per hop 2 / 5 / 2.
    let m = run(&["maxmin", hops, "--json"]);
    let col = |v: &serde_json::Value, k: &str| -> Vec<f64> {
        v["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[k].as_f64().unwrap())
            .collect()
    };
    let near = |a: Vec<f64>, b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
    assert!(near(col(&m, "max_min_mbps"), [2.0, 8.0, 2.0]), "{m}");
    assert!(near(col(&m, "per_hop_mbps"), [2.0, 5.0, 2.0]), "{m}");
    assert_eq!(m["links"].as_array().unwrap().len(), 4);
    // A run: stdout is summary.json, with the reference shares flows.csv also has.
    let dir = out.join("run");
    let r = run(&["run", hops, "--json", "--out", dir.to_str().unwrap()]);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(r, file);
    let refs: Vec<f64> = r["references"]["reference_mbps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(near(refs, [2.0, 5.0, 2.0]), "{r}");
    let csv = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    let mut rd = csv.lines();
    let header: Vec<&str> = rd.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let row1: Vec<&str> = rd.next().map(|l| l.split(',').collect()).unwrap();
    let row2: Vec<&str> = rd.next().map(|l| l.split(',').collect()).unwrap();
    assert_eq!(row2[at("max_min_mbps")], "8.000000");
    assert_eq!(row2[at("per_hop_mbps")], "5.000000");
    // Every drop reason is a column; CSFQ drops by its probability here.
    assert!(row1[at("drops_csfq_prob")].parse::<u64>().unwrap() > 0);
    assert_eq!(row1[at("drops_red_early")], "0");
    // A reproduction: its summary.json.
    let rep = run(&[
        "reproduce",
        "weighted-1link",
        "--seed",
        "1",
        "--json",
        "--out",
        out.join("rep").to_str().unwrap(),
    ]);
    assert_eq!(rep["id"], "weighted-1link");
    assert!(!rep["verdicts"].as_array().unwrap().is_empty());
}

/// A disk that fills while a run writes its outputs: the error names the file, and nothing
/// truncated is left looking complete (summary.json used to be cut short silently); an
/// earlier run's outputs in the same directory stay as they were, whole (the new
/// flows.csv, which fitted, used to replace the old one beside the old summary.json).
#[test]
fn a_full_disk_leaves_no_output_that_looks_complete() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED a_full_disk_leaves_no_output_that_looks_complete: needs root to mount a small tmpfs");
        return;
    }
    let mnt = tmp("full-disk");
    // 32 KiB: flows.csv (8 KB) fits alone, delays.csv, summary.json and the figure (tens
    // of KB) do not. The figure is written beside the tables, so which file finds the disk
    // full first depends on the threads.
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32k", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED a_full_disk_leaves_no_output_that_looks_complete: cannot mount tmpfs");
        return;
    }
    let out = mnt.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let earlier = [
        ("flows.csv", "an earlier run's flows\n"),
        ("summary.json", "{\"earlier\": true}\n"),
        ("throughput.svg", "<svg/>\n"),
    ];
    for (f, text) in earlier {
        std::fs::write(out.join(f), text).unwrap();
    }
    let scenario = repo().join("scenarios/csfq-fig3b.toml");
    let o = csfq(
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &repo(),
    );
    let (_, stderr) = text(&o);
    let listing: Vec<String> = std::fs::read_dir(&out)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let kept: Vec<(String, String)> = earlier
        .iter()
        .map(|(f, _)| {
            (
                f.to_string(),
                std::fs::read_to_string(out.join(f)).unwrap_or_default(),
            )
        })
        .collect();
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(!o.status.success(), "a full disk must fail the run");
    let run_files = [
        "flows.csv",
        "delays.csv",
        "summary.json",
        "throughput.svg",
        "throughput.png",
    ];
    assert!(
        stderr.contains("cannot write") && run_files.iter().any(|f| stderr.contains(f)),
        "{stderr}"
    );
    for ((f, was), (_, now)) in earlier.iter().zip(&kept) {
        assert_eq!(was, now, "{f} changed: {listing:?}");
    }
    assert!(
        !listing.iter().any(|f| f.contains(".partial")),
        "{listing:?}"
    );
}

/// Walks a pcapng file block by block: every block's length is repeated at its end and the
/// last ends at the end of the file. Returns the blocks.
fn pcapng_blocks(bytes: &[u8]) -> usize {
    let (mut at, mut n) = (0usize, 0usize);
    while at < bytes.len() {
        assert!(at + 12 <= bytes.len(), "a block cut short at {at}");
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        assert!(
            len >= 12 && at + len <= bytes.len(),
            "a block cut short at {at}"
        );
        let tail = u32::from_le_bytes(bytes[at + len - 4..at + len].try_into().unwrap());
        assert_eq!(tail as usize, len, "block at {at}");
        at += len;
        n += 1;
    }
    n
}

/// `--pcap-limit`: the trace stops whole at the limit, the run goes on, and the output says
/// the trace is incomplete.
#[test]
fn a_trace_stops_at_its_limit_and_says_so() {
    let out = tmp("pcap-limit");
    let scenario = repo().join("scenarios/csfq-fig3b.toml");
    let args = |limit: &str| {
        vec![
            "run".to_string(),
            scenario.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--pcap".into(),
            "r1-r2".into(),
            "--pcap-limit".into(),
            limit.into(),
        ]
    };
    let o = csfq(
        &args("20K").iter().map(String::as_str).collect::<Vec<_>>(),
        &out,
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("the trace stopped at"), "{stdout}");
    let bytes = std::fs::read(out.join("trace.pcapng")).unwrap();
    assert!(bytes.len() >= 20 << 10 && bytes.len() < (20 << 10) + 300);
    assert!(pcapng_blocks(&bytes) > 100);
    // The run's own results are whole.
    assert!(out.join("summary.json").exists());
    let o = csfq(
        &args("12Q").iter().map(String::as_str).collect::<Vec<_>>(),
        &out,
    );
    let (_, stderr) = text(&o);
    assert!(
        !o.status.success() && stderr.contains("expected a size like 500M"),
        "{stderr}"
    );
}

/// What `reproduce --all --seeds 1-2` publishes in `out`, its summary `stdout`: every
/// experiment in the report with its figure and results, verdicts over two seeds, the
/// sensitivity section and the section at scale; no staging directory left.
fn check_report_of_two_seeds(out: &Path, stdout: &str) {
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Everything was staged and published: no staging directory is left, the stale one
    // is gone, and the report is the new one.
    let staged: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".partial-"))
        .collect();
    assert!(staged.is_empty(), "{staged:?}");
    assert!(
        md.starts_with("# csfq: the published experiments"),
        "{}",
        &md[..40]
    );
    for id in csfq_papers::experiments::EXPERIMENTS.iter().map(|e| e.id) {
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
    // Two seeds: each verdict the mean of both, and the summary counts the ones that
    // flip with the seed.
    assert!(md.contains("--seeds 1-2"), "the command line in the report");
    assert!(md.contains("mean of seeds 1-2"));
    assert!(md.contains("of them flip with the seed"));
    assert!(md.contains("\nIn all: "));
    assert!(
        md.contains("match at every seed and hold across"),
        "the skeptic's count"
    );
    assert!(md.contains("Held out: every experiment with runs was run again at seeds 3-4"));
    // Every verdict's band comes from its basis, recomputed here from what summary.json
    // says: the one table of readings, our seeds' spread, the source's own numbers.
    let mut kinds = std::collections::BTreeMap::new();
    for id in csfq_papers::experiments::EXPERIMENTS.iter().map(|e| e.id) {
        let text = std::fs::read_to_string(out.join(id).join("summary.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        for v in json["verdicts"].as_array().unwrap() {
            band_follows_its_basis(id, v);
            *kinds
                .entry(v["basis"]["kind"].as_str().unwrap().to_string())
                .or_insert(0) += 1;
        }
    }
    for k in ["stated", "ordering", "noise", "reading"] {
        assert!(kinds.contains_key(k), "no {k} band among {kinds:?}");
    }
    // The sensitivity section judges the verdicts again at other values of the papers'
    // unstated parameters.
    assert!(md.contains("## Sensitivity to unstated parameters"));
    assert!(
        md.contains("| RED/FRED max_p = 0.02 |"),
        "csfq-fig3b's columns"
    );
    assert!(md.contains(" robust |"));
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
    // The losses traced: csfq-fig3b at three delays and csfq-table2 under two schemes, the
    // parking lot under three, a row for each group of flows (one group on one link, six
    // paths on the lot).
    assert!(
        md.contains("## CSFQ's TCPs: drops and timeouts, traced"),
        "losses section missing"
    );
    let csv = std::fs::read_to_string(out.join("losses/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2 + 2 + 3 * 6, "{csv}");
    // Its one-link cases at the seeds asked for (two), the lot at one.
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let runs = rows
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "runs")
        .unwrap();
    for row in rows.records() {
        let row = row.unwrap();
        let want = if row[0].starts_with("parking-lot") {
            "1"
        } else {
            "2"
        };
        assert_eq!(&row[runs], want, "{row:?}");
    }
    assert!(md.contains("### What the trace shows"));
}

/// One verdict of summary.json: its band is what its basis gives. A reading's band is the
/// table's; a noise band is K standard deviations of the difference between our mean and
/// the published number, recomputed from the per-seed numbers; an ordering's pivot is 0
/// or 1 with no slack; a stated band's ends are numbers of the published text.
fn band_follows_its_basis(id: &str, v: &serde_json::Value) {
    let num = |x: &serde_json::Value, inf: f64| x.as_f64().unwrap_or(inf);
    let (lo, hi) = (
        num(&v["lo"], f64::NEG_INFINITY),
        num(&v["hi"], f64::INFINITY),
    );
    let b = &v["basis"];
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    match b["kind"].as_str().unwrap() {
        "reading" => {
            let r = csfq_papers::check::READINGS
                .iter()
                .find(|r| r.text == b["word"].as_str().unwrap())
                .unwrap_or_else(|| panic!("{id}: {b} is not in the table"));
            assert!(close(lo, r.lo) && close(hi, r.hi), "{id}: {v}");
        }
        "ordering" => {
            let p = b["pivot"].as_f64().unwrap();
            assert!(p == 0.0 || p == 1.0, "{id}: {v}");
            assert!(
                (lo == p && hi.is_infinite()) || (hi == p && lo.is_infinite()),
                "{id}: {v}"
            );
        }
        "stated" => {
            let text = v["published"].as_str().unwrap();
            for end in [lo, hi].into_iter().filter(|x| x.is_finite()) {
                let s = csfq_papers::check::fmt_num(end);
                assert!(
                    text.contains(s.trim_start_matches('-')),
                    "{id}: {end} not in {text:?}"
                );
            }
        }
        "noise" => {
            let xs: Vec<f64> = v["per_seed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            // One run (a model without a network): its standard error within the run.
            let (n, sd2) = if xs.len() < 2 {
                (1.0, b["our_se"].as_f64().unwrap().powi(2))
            } else {
                let n = xs.len() as f64;
                let m = xs.iter().sum::<f64>() / n;
                (
                    n,
                    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
                )
            };
            let pub_var = match b["published"].as_str().unwrap() {
                "one_run" => sd2,
                "analytic" => 0.0,
                _ => b["published_se"].as_f64().unwrap().powi(2),
            };
            let h = csfq_papers::check::K_SD * (pub_var + sd2 / n).sqrt()
                + b["read_half_width"].as_f64().unwrap();
            let c = b["center"].as_f64().unwrap();
            match b["side"].as_str().unwrap() {
                "both" => assert!(close(lo, c - h) && close(hi, c + h), "{id}: {v}"),
                "at_least" => assert!(close(lo, c - h) && hi.is_infinite(), "{id}: {v}"),
                _ => assert!(close(hi, c + h) && lo.is_infinite(), "{id}: {v}"),
            }
        }
        other => panic!("{id}: a band with no provenance ({other}): {v}"),
    }
}

/// `reproduce --all` interrupted while it writes its experiments' files leaves nothing that
/// looks like a result: no experiment directory and no new report (an earlier one is left
/// as it was), only its hidden staging
/// directory, which the next run removes, and the runs it finished, which the next run
/// takes instead of simulating them again (then removes), publishing the whole report.
/// One test, over two seeds, so the suite simulates every experiment once, not once to
/// interrupt and once more to publish.
#[test]
fn reproduce_all_interrupted_while_writing_publishes_nothing_then_resumes() {
    use std::os::unix::process::CommandExt as _;
    let out = tmp("all-sigint");
    // What an earlier interrupted run and an earlier report leave: a staging directory
    // (removed when a run starts) and a report (which an interrupted run leaves as it was).
    // (A stage is an earlier run's once its process is gone: a child that has exited.)
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = out.join(format!(".partial-{}", gone.id()));
    std::fs::create_dir_all(stale.join("csfq-fig3a")).unwrap();
    std::fs::write(out.join("report.md"), "an old report\n").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_csfq"));
    cmd.args(["reproduce", "--all", "--seeds", "1-2", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // SAFETY: only signal(2), async-signal-safe, between fork and exec. A suite started
    // in the background by a non-interactive shell inherits SIGINT ignored; Ctrl-C in a
    // terminal, which this stands for, is not.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // The write phase has begun once an experiment's directory appears in the run's own
    // staging directory.
    let stage = out.join(format!(".partial-{}", child.id()));
    let writing = || std::fs::read_dir(&stage).is_ok_and(|mut d| d.next().is_some());
    let t0 = std::time::Instant::now();
    while !writing() && t0.elapsed().as_secs() < 1800 {
        // A run that ended (failed, or finished between two looks) is reported at once,
        // not after the whole bound.
        if child.try_wait().unwrap().is_some() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "the run ended before its write phase was seen ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(writing(), "the write phase never began");
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        !o.status.success(),
        "the run finished before the interrupt: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Nothing new is published, the old report is as it was, and the stale staging
    // directory is gone; the run's own is left for the next run to remove.
    let published: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".partial-") && n != ".runs")
        .collect();
    assert_eq!(published, ["report.md"]);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        "an old report\n"
    );
    assert!(!stale.exists(), "the stale staging directory");
    assert!(stage.exists(), "the interrupted run's staging directory");
    // The runs it finished are kept: run again, it takes them instead of simulating them,
    // publishes the report, and removes them.
    let kept = std::fs::read_dir(out.join(".runs")).map_or(0, |d| d.count());
    assert!(kept > 1000, "the finished runs should be kept: {kept}");
    let o = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args(["reproduce", "--all", "--seeds", "1-2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("resuming: {kept} runs")),
        "the rerun should say it resumes: {stderr}"
    );
    // "N runs were taken from the interrupted invocation, not simulated again (M simulated)"
    let counts: Vec<usize> = stderr
        .lines()
        .find(|l| l.contains("runs were taken from the interrupted invocation"))
        .unwrap_or_else(|| panic!("how many runs were taken: {stderr}"))
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    let (reused, made) = (counts[0], counts[1]);
    // Every kept run is taken (a run two experiments share, as tuf-fig9a runs
    // csfq-fig3a's scenario, is taken for each), and none is simulated again.
    assert!(
        reused >= kept && made == 0,
        "{reused} taken of {kept} kept, {made} simulated"
    );
    check_report_of_two_seeds(&out, &String::from_utf8_lossy(&o.stdout));
    assert!(
        !out.join(".runs").exists(),
        "kept runs are removed once the report is out"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Ctrl-C during a traced run: exit 130, a message that says what is and is not written,
/// and a trace that ends on a whole block.
#[test]
fn an_interrupted_run_leaves_a_whole_trace() {
    let out = tmp("sigint");
    let scenario = repo().join("scenarios/scale-1000.toml");
    let child = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--pcap",
            "r1-r2",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The handler is in place once the trace file exists.
    let trace = out.join("trace.pcapng");
    let t0 = std::time::Instant::now();
    while !trace.exists() && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted at") && stderr.contains("no results written"),
        "{stderr}"
    );
    assert!(!out.join("summary.json").exists());
    let bytes = std::fs::read(&trace).unwrap();
    assert!(pcapng_blocks(&bytes) > 2);
}

/// Completions and the manual page come from the same definitions as the parser, and the
/// command, its crate and the Python package report one version.
#[test]
fn completions_man_page_and_one_version() {
    let dir = tmp("completions");
    let o = csfq(&["completions", "bash"], &dir);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.contains("_csfq()") && stdout.contains("reproduce"),
        "{stdout}"
    );
    let o = csfq(&["man"], &dir);
    let (stdout, _) = text(&o);
    assert!(o.status.success());
    assert!(
        stdout.starts_with(".ie") || stdout.contains(".TH csfq"),
        "{stdout}"
    );
    assert!(stdout.contains("reproduce"));
    // With --dir, a page per subcommand, and every page the top one cites exists.
    let o = csfq(&["man", "--dir", "man1"], &dir);
    assert!(o.status.success(), "{}", text(&o).1);
    let top = std::fs::read_to_string(dir.join("man1/csfq.1")).unwrap();
    assert_eq!(top, stdout);
    for page in ["csfq-run.1", "csfq-reproduce.1", "csfq-dp-core-attach.1"] {
        assert!(dir.join("man1").join(page).is_file(), "{page}");
    }
    // roff escapes the hyphens: csfq\-run(1).
    let plain = top.replace("\\-", "-");
    let cited: Vec<&str> = plain
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '(' || c == ')'))
        .filter_map(|w| w.strip_suffix("(1)"))
        .filter(|w| w.starts_with("csfq-"))
        .collect();
    assert!(!cited.is_empty(), "{top}");
    for c in cited {
        assert!(dir.join("man1").join(format!("{c}.1")).is_file(), "{c}(1)");
    }
    // The disciplines are offered, not file names.
    let o = csfq(&["completions", "bash"], &dir);
    assert!(text(&o).0.contains("fifo red fred1 fred2 drr csfq"));
    let o = csfq(&["--version"], &dir);
    let (stdout, _) = text(&o);
    // "csfq 0.1.0 (commit 1a2b3c4)", ", modified" after the hash when tracked files
    // differed from the commit.
    let (version, build) = stdout
        .trim()
        .strip_prefix("csfq ")
        .and_then(|v| v.split_once(" (commit "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let version = version.to_string();
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    let commit = build.trim_end_matches(')').trim_end_matches(", modified");
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(repo())
        .output();
    match head {
        Ok(h) if h.status.success() => {
            assert_eq!(
                commit,
                String::from_utf8_lossy(&h.stdout).trim(),
                "{stdout}"
            )
        }
        // Not built from a git work tree (a source archive).
        _ => assert_eq!(commit, "unknown", "{stdout}"),
    }
    let field = |file: &str| {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("version = \""))
            .map(|v| v.trim_end_matches('"').to_string())
            .unwrap()
    };
    assert_eq!(field("python/pyproject.toml"), version);
    assert_eq!(field("python/Cargo.toml"), version);
    // The changelog's newest entry is this version.
    let changelog = std::fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    let newest = changelog.lines().find(|l| l.starts_with("## ")).unwrap();
    assert!(newest.contains(&version), "{newest}");
}

/// The README's summary of the report (runs, verdicts matching, robust and fragile) is the
/// report's own, so a regenerated report cannot leave it stale.
#[test]
fn readme_counts_are_the_reports() {
    // Line breaks are where the text was wrapped: compare words.
    let readme = std::fs::read_to_string(repo().join("README.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let report = std::fs::read_to_string(repo().join("docs/report/report.md")).unwrap();
    // The whole numbers in the sentence that starts with `lead`.
    let numbers = |text: &str, lead: &str| -> Vec<u64> {
        let at = text
            .find(lead)
            .unwrap_or_else(|| panic!("`{lead}` not found"));
        let sentence: String = text[at..].chars().take_while(|&c| c != '\n').collect();
        sentence
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| !w.is_empty())
            .map(|w| w.parse().unwrap())
            .collect()
    };
    // Report: "In all: Of R reproductions (each counted once), E match at every seed ...;
    // S ... (seed-dependent); F ... fragile ...; D depart. Apart from these: A analyses ...
    // (M match), ..."
    let all = numbers(&report, "In all: ");
    let (r, e, sd, f, d) = (all[0], all[1], all[2], all[3], all[4]);
    assert_eq!(r, e + sd + f + d, "{all:?}");
    let claim = format!(
        "{} of the {r} reproductions match: {e} at every seed and across the unstated parameters' plausible values, {sd} seed-dependent, {f} fragile; {d} depart",
        e + sd + f
    );
    assert!(readme.contains(&claim), "README should say: {claim}");
    // Report: "... N verdicts of experiments with unstated parameters ...: R robust (...), F fragile"
    let sens = numbers(
        &report,
        "[Sensitivity](#sensitivity-to-unstated-parameters): ",
    );
    let (judged, robust, fragile) = (sens[0], sens[1], sens[3]);
    let claim = format!(
        "of the {judged} verdicts that unstated parameters could move, {robust} are robust and {fragile} fragile"
    );
    assert!(readme.contains(&claim), "README should say: {claim}");
    // Report: "Generated by ...: R runs of ..., and S more for the sensitivity section"
    let runs = numbers(
        &report,
        "Generated by `csfq reproduce --all --out docs/report`: ",
    );
    let claim = format!(
        "({} simulations at seeds 1-8, {} more for the sensitivity section, {} at the held-out seeds 9-16",
        runs[0], runs[3], runs[4]
    );
    assert!(readme.contains(&claim), "README should say: {claim}");
}

/// Every number in the README's results table ("ours") is one the report prints in the
/// section of that row's own experiments (its tables, verdicts and notes), so a regenerated
/// report cannot leave a cell stale, and a cell cannot borrow a number from another
/// experiment: each is looked up among those sections' numbers, rounded as the README
/// rounds them (minus signs and dashes read as `-`).
#[test]
fn readme_results_table_numbers_are_in_the_report() {
    let norm = |t: &str| t.replace(['\u{2212}', '\u{2013}'], "-");
    let readme = norm(&std::fs::read_to_string(repo().join("README.md")).unwrap());
    let report = norm(&std::fs::read_to_string(repo().join("docs/report/report.md")).unwrap());
    // Numbers as tokens: digits with at most one decimal point, after a non-digit.
    let numbers = |text: &str| -> Vec<String> {
        let mut out = Vec::new();
        let b: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_digit()
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == '.'))
            {
                let mut j = i;
                while j < b.len()
                    && (b[j].is_ascii_digit()
                        || (b[j] == '.' && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
                {
                    j += 1;
                }
                out.push(b[i..j].iter().collect());
                i = j;
            } else {
                i += 1;
            }
        }
        out
    };
    // A report number counts at every precision it can be rounded to (9.2696 is also
    // 9.27 and 9.3): the README rounds.
    let known_in = |text: &str| {
        let mut known = std::collections::HashSet::new();
        for n in numbers(text) {
            if let Ok(v) = n.parse::<f64>() {
                let places = n.split('.').nth(1).map_or(0, str::len);
                for d in 0..=places.max(4) {
                    known.insert(format!("{v:.d$}"));
                }
            }
            known.insert(n);
        }
        known
    };
    // The report's sections and subsections (the sensitivity section's and the scale
    // section's, each headed by an experiment's id alone), by heading; a heading of words
    // ("csfq-fig3b at three round trips", in the losses traced) is not an experiment's.
    let headed = report.replace("\n### ", "\n## ");
    let sections: Vec<(String, &str)> = headed
        .split("\n## ")
        .skip(1)
        .map(|sec| {
            let id = sec.lines().next().unwrap_or("").trim().to_string();
            (id, sec)
        })
        .filter(|(id, _)| !id.contains(' '))
        .collect();
    // A row's experiments: its first word, "csfq-fig6a/b" read as csfq-fig6a and
    // csfq-fig6b, each also naming the sections it begins ("tuf-fig13": both of its).
    let row_sections = |cell: &str| -> Vec<&str> {
        let first = cell.trim().split([',', ' ']).next().unwrap_or("");
        let mut parts = first.split('/');
        let base = parts.next().unwrap_or("").to_string();
        let mut ids = vec![base.clone()];
        for p in parts {
            ids.push(format!(
                "{}{p}",
                &base[..base.len().saturating_sub(p.len())]
            ));
        }
        sections
            .iter()
            .filter(|(id, _)| {
                ids.iter()
                    .any(|c| !c.is_empty() && id.starts_with(c.as_str()))
            })
            .map(|(_, sec)| *sec)
            .collect()
    };
    let table = readme
        .split("| experiment | paper | ours")
        .nth(1)
        .expect("the README's results table");
    let mut missing = Vec::new();
    for row in table.lines().skip(2).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').collect();
        let (id, ours) = (cells[1].trim(), cells[3]);
        let secs = row_sections(id);
        assert!(!secs.is_empty(), "{id}: no section of the report");
        let known = known_in(&secs.concat());
        for n in numbers(ours) {
            // Seeds, counts of seeds and link counts ("seeds 1-8", "5 links") are words.
            if n.parse::<f64>()
                .is_ok_and(|v| v.fract() == 0.0 && v <= 20.0)
            {
                continue;
            }
            if !known.contains(&n) {
                missing.push(format!("{id}: {n}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the README's results table has numbers the report does not: {missing:?}"
    );
}

/// A scale benchmark whose runs are estimated at more than a day each (1000 flows sharing
/// 10 Gbit/s, 1.25 million packets a second, for the longest accepted time) is refused
/// before any run starts, saying how long and how to insist, as `csfq run` refuses a run.
#[test]
fn a_scale_benchmark_of_days_is_refused_unless_asked_for() {
    let dir = tmp("scale-long");
    let mut child = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args([
            "bench",
            "--scale",
            "1000",
            "--scale-gbps",
            "10",
            "--scale-seconds",
            "1000000",
        ])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    // Refused, it exits at once; not refused, it would run for weeks: stop it and the runs
    // it started (its process group), and fail.
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() {
        if waited == 600 {
            // SAFETY: a plain system call on the group this test created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            child.wait().unwrap();
            panic!("the benchmark started instead of being refused");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("days at 5 million events per second; lower --scale-seconds or --scale-gbps, or pass --long"),
        "{err}"
    );
    assert!(!err.contains("fifo:"), "no run started: {err}");
    assert!(out.is_empty(), "{out}");
}

/// Whether process `pid` is running a scale benchmark's run (a zombie's command line is
/// empty).
fn is_scale_run(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline
        .split(|&b| b == 0)
        .any(|a| a == b"--scale-one".as_slice())
}

/// The processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let ppid = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .and_then(|v| v.trim().parse::<u32>().ok());
        if ppid == Some(parent) {
            pids.push(pid);
        }
    }
    pids
}

/// Kills, when dropped, a benchmark and the runs it started, however the test ends.
struct KillOnDrop {
    bench: std::process::Child,
    runs: Vec<u32>,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.bench.kill();
        let _ = self.bench.wait();
        for &pid in &self.runs {
            if is_scale_run(pid) {
                // SAFETY: a plain system call on a process this test's benchmark started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
    }
}

/// Killed while one of its runs is under way, the scale benchmark leaves no run behind
/// (each would otherwise run on alone, with its memory, to its end).
#[test]
fn a_killed_scale_benchmark_leaves_no_run_behind() {
    let dir = tmp("scale-killed");
    // 3001 flows for 77.7 s: about half a minute of work a run.
    let bench = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args([
            "bench",
            "--scale",
            "3001",
            "--scale-gbps",
            "3.001",
            "--scale-seconds",
            "77.7",
        ])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut guard = KillOnDrop {
        bench,
        runs: Vec::new(),
    };
    // The benchmark names each run on standard error as it starts it.
    let mut err = std::io::BufReader::new(guard.bench.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("fifo: 3001 flows") {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut err, &mut line).unwrap() > 0,
            "the benchmark ended before its first run"
        );
    }
    let mut tries = 0;
    while guard.runs.is_empty() {
        tries += 1;
        assert!(tries < 100, "the first run did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
        guard.runs = children_of(guard.bench.id())
            .into_iter()
            .filter(|&p| is_scale_run(p))
            .collect();
    }
    guard.bench.kill().unwrap();
    guard.bench.wait().unwrap();
    // The kernel kills the run as the benchmark exits; a second is ample.
    let mut tries = 0;
    let left = loop {
        let left: Vec<u32> = guard
            .runs
            .iter()
            .copied()
            .filter(|&p| is_scale_run(p))
            .collect();
        tries += 1;
        if left.is_empty() || tries == 20 {
            break left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(left.is_empty(), "runs left behind: {left:?}");
}

/// A run estimated at more than a day (1 Tbit/s of 1000-byte packets for a million
/// seconds: 1.25 x 10^14 packets) is refused at once, saying how long and how to insist;
/// nothing is simulated and nothing is written.
#[test]
fn a_run_of_years_is_refused_unless_asked_for() {
    let dir = tmp("long");
    let path = dir.join("years.toml");
    std::fs::write(
        &path,
        "name = \"years\"\nduration_s = 1000000\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\"]\n\
         [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 1000000\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 1000000\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let o = csfq(
        &[
            "run",
            path.to_str().unwrap(),
            "--out",
            dir.join("out").to_str().unwrap(),
        ],
        &dir,
    );
    let (_, err) = text(&o);
    assert!(!o.status.success());
    // About 650 days of wall time (2.8e14 events) at the estimate's rate.
    assert!(
        (err.contains(" days at ") || err.contains(" years at ")) && err.contains("--long"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.join("out").exists(), "nothing written");
    assert!(
        started.elapsed().as_secs() < 30,
        "refused before simulating"
    );
}

/// `csfq dp twin` needs no root: it prints its prediction as JSON, writes a scenario that
/// `csfq run` takes, and refuses a limit the core would refuse, naming the flag.
#[test]
fn the_dataplanes_twin_runs_without_root() {
    let dir = tmp("twin");
    let scenario = dir.join("twin.toml");
    let o = csfq(
        &[
            "dp",
            "twin",
            "--rate",
            "10mbit",
            "--seeds",
            "2",
            "--json",
            "--scenario",
        ],
        &dir,
    );
    assert!(!o.status.success(), "--scenario needs a file");
    let o = Command::new(env!("CARGO_BIN_EXE_csfq"))
        .args(["dp", "twin", "--rate", "10mbit", "--seeds", "2", "--json"])
        .arg("--scenario")
        .arg(&scenario)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["limit_bytes"], 65_536);
    assert_eq!(v["seeds"], 2);
    let udp = v["udp_share"]["mean"].as_f64().unwrap();
    assert!(udp > 0.5 && udp < 1.5, "{v}");
    let o = csfq(&["run", scenario.to_str().unwrap(), "--out", "out"], &dir);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = csfq(&["dp", "twin", "--rate", "10mbit", "--limit", "100"], &dir);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("limit") && err.contains("out of range"),
        "{err}"
    );
    // A rate the dataplane takes but the simulator cannot run is refused by its flag.
    let o = csfq(&["dp", "twin", "--rate", "8bit"], &dir);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("--rate") && err.contains("1kbit"), "{err}");
}

/// The README names every discipline the simulator has, in the command section's list, and
/// exactly those in the scenario reference's comment.
#[test]
fn readme_lists_every_discipline() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let all: std::collections::BTreeSet<&str> = csfq_sim::DisciplineKind::ALL
        .iter()
        .map(|d| d.name())
        .collect();
    // "Disciplines: `fifo`, `red`, ...": the names in backticks up to the blank line (where
    // other words are quoted too).
    let at = readme
        .find("\nDisciplines: ")
        .expect("the Disciplines paragraph");
    let paragraph = &readme[at..][..readme[at + 1..].find("\n\n").unwrap()];
    let quoted: std::collections::BTreeSet<&str> = paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        })
        .collect();
    let missing: Vec<_> = all.difference(&quoted).collect();
    assert!(
        missing.is_empty(),
        "README's Disciplines paragraph lacks {missing:?}"
    );
    // The scenario reference: `discipline = "csfq"  # required; ...:` and its comment lines.
    let at = readme
        .find("\ndiscipline = \"csfq\"")
        .expect("the scenario reference's discipline line");
    let mut words = std::collections::BTreeSet::new();
    for (i, line) in readme[at + 1..].lines().enumerate() {
        let Some((code, comment)) = line.split_once('#') else {
            break;
        };
        if i > 0 && !code.trim().is_empty() {
            break;
        }
        let listed = if i == 0 {
            comment.split_once(':').map_or("", |(_, l)| l)
        } else {
            comment
        };
        words.extend(listed.split_whitespace());
    }
    assert_eq!(
        words,
        all.iter().copied().collect(),
        "the scenario reference's list"
    );
}

/// On an 80- or 120-column terminal (COLUMNS) no line of `csfq run` is wider than the
/// terminal: the per-flow table keeps the columns that matter most and says which it left
/// out, the report's lines wrap; `--wide` shows every column with rows unbroken, as a pipe
/// (no COLUMNS) gets them.
#[test]
fn run_fits_the_terminal_and_wide_shows_every_column() {
    let dir = tmp("width");
    let scenario = repo().join("scenarios/csfq-fig3b.toml");
    let args = |extra: &[&'static str]| {
        let mut a = vec!["run", scenario.to_str().unwrap(), "--out", "o"];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&'static str], columns| {
        let a = args(extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = csfq_in_columns(&a, &dir, columns);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        stdout
    };
    let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap();
    let every = [
        "route",
        "drops by reason",
        "jitter ms",
        "delay ms p50/p99",
        "sent",
    ];
    for w in [80, 120] {
        let out = run(&[], Some(w));
        assert!(widest(&out) <= usize::from(w), "{w} columns:\n{out}");
        for must in ["flow", "throughput Mbps", "vs reference", "max-min Mbps"] {
            assert!(out.contains(must), "{w} columns lack {must}:\n{out}");
        }
        assert!(out.contains("left out to fit: "), "{out}");
        // What was left out is named, and is not in the table.
        let note: String = out[out.find("left out to fit: ").unwrap()..]
            .split(" (--wide")
            .next()
            .unwrap()
            .replace('\n', " ");
        assert!(every.iter().any(|c| note.contains(c)), "{note}");
        // --wide: every column, rows whole (wider than the terminal).
        let wide = run(&["--wide"], Some(w));
        assert!(every.iter().all(|c| wide.contains(c)), "{wide}");
        assert!(!wide.contains("left out to fit"), "{wide}");
        assert_eq!(wide.lines().filter(|l| l.starts_with("│ ")).count(), 33);
    }
    // Piped: every column, one line per row (32 flows, and the header).
    let piped = run(&[], None);
    assert!(every.iter().all(|c| piped.contains(c)), "{piped}");
    assert!(!piped.contains("left out to fit"));
    let rows = piped.lines().filter(|l| l.starts_with("│ ")).count();
    assert_eq!(rows, 33, "{piped}");
}

/// `run` of an experiment's scenario and `reproduce` of the experiment, both with their
/// default output, write apart: out/NAME and out/reproduce/ID, each with its own files.
#[test]
fn run_and_reproduce_write_apart_by_default() {
    let dir = tmp("apart");
    let scenario = repo().join("scenarios/csfq-fig3a.toml");
    let o = csfq(&["run", scenario.to_str().unwrap()], &dir);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = csfq(&["reproduce", "csfq-fig3a", "--seed", "1"], &dir);
    assert!(o.status.success(), "{}", text(&o).1);
    let files = |d: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        v.sort();
        v
    };
    let run = files("out/csfq-fig3a");
    let rep = files("out/reproduce/csfq-fig3a");
    assert!(run.contains(&"flows.csv".to_string()), "{run:?}");
    assert!(!run.contains(&"results.csv".to_string()), "{run:?}");
    assert!(rep.contains(&"results.csv".to_string()), "{rep:?}");
    assert!(!rep.contains(&"flows.csv".to_string()), "{rep:?}");
}

/// `--figure`: the SVG and PNG by default, the SVG alone, or no figure; an older run's
/// figure that this run did not draw is removed (it would not match the new tables), the
/// closing line names just the files written, and the tables are the same whatever figure
/// was drawn.
#[test]
fn the_figure_drawn_is_the_one_asked_for_and_the_tables_do_not_change() {
    let out = tmp("figure");
    let scenario = repo().join("scenarios/csfq-fig3b.toml");
    let tables = ["flows.csv", "delays.csv", "summary.json"];
    let mut first: Option<Vec<Vec<u8>>> = None;
    for (figure, drawn) in [
        (None, &["throughput.svg", "throughput.png"][..]),
        (Some("svg"), &["throughput.svg"][..]),
        (Some("none"), &[][..]),
        (Some("png"), &["throughput.svg", "throughput.png"][..]),
    ] {
        let mut args = vec![
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(f) = figure {
            args.extend(["--figure", f]);
        }
        let o = csfq(&args, &repo());
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{figure:?}: {stderr}");
        let wrote = stdout
            .lines()
            .find(|l| l.starts_with("wrote "))
            .unwrap_or_else(|| panic!("{figure:?}: no closing line in {stdout}"));
        for f in ["throughput.svg", "throughput.png"] {
            assert_eq!(out.join(f).exists(), drawn.contains(&f), "{figure:?}: {f}");
            assert_eq!(wrote.contains(f), drawn.contains(&f), "{figure:?}: {wrote}");
        }
        let now: Vec<Vec<u8>> = tables
            .iter()
            .map(|t| {
                assert!(wrote.contains(t), "{figure:?}: {wrote}");
                std::fs::read(out.join(t)).unwrap()
            })
            .collect();
        match &first {
            None => first = Some(now),
            Some(was) => assert!(was == &now, "{figure:?}: the tables changed"),
        }
    }
    let o = csfq(
        &["run", scenario.to_str().unwrap(), "--figure", "jpeg"],
        &repo(),
    );
    let (_, stderr) = text(&o);
    assert!(!o.status.success() && stderr.contains("jpeg"), "{stderr}");
}
