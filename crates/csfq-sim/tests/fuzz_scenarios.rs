//! The scenario parser, validator and simulator on mutated scenario files: every shipped
//! scenario with numbers replaced by extremes (0, -1, 1e300, 1e-300, nan, inf, 2^64, ...),
//! lines deleted, duplicated or inserted, names replaced and the text cut short. Each case
//! either fails to load with a `FILE:LINE:COLUMN` error, or builds, gets its reference
//! allocations and its work estimate, and runs a few simulated milliseconds handling at
//! most three times the events estimated: never a panic (a panic is a failed case, which
//! proptest shrinks and prints). Some mutations aim at large counts and rates.
//!
//! Cases: `CSFQ_FUZZ_CASES` (default 5000; the README gives the long run).
//!
//! And a scenario changed in code, checked as a value (`ScenarioFile::check`, which writes
//! no text), agrees with the file it stands for, written out and read back.

use std::path::{Path, PathBuf};

use csfq_sim::{ScenarioFile, Simulation, Topology};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("CSFQ_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000)
}

fn shipped() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    v.sort();
    v
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.5",
    "1e300",
    "-1e300",
    "1e-300",
    "4e-7",
    "nan",
    "inf",
    "-inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "9223372036854775807",
    "65535",
    "65536",
    "1048576",
    "1e6",
    "1e9",
    "0.001",
    "100000",
    "\"x\"",
    "[]",
    "{}",
    "true",
];
const STRINGS: &[&str] = &[
    "\"\"",
    "\"../x\"",
    "\"/tmp/x\"",
    "\"r1\"",
    "\"r2\"",
    "\"nosuch\"",
    "\"a b\"",
    "\"csfq\"",
    "\"drr\"",
    "\"tcp\"",
    "\"udp\"",
    "\"onoff\"",
    "\"web\"",
    "\"rlm\"",
    "\"fq_codel\"",
];
const LINES: &[&str] = &[
    "[[flow]]\nkind = \"udp\"\nfrom = \"r1\"\nto = \"r2\"\nrate_mbps = 1",
    "[[flow]]\nkind = \"tcp\"\nfrom = \"r1\"\nto = \"r2\"\ncount = 50",
    "[[flow]]\nkind = \"onoff\"\nfrom = \"r1\"\nto = \"r2\"\nrate_mbps = 5\non_ms = 1\noff_ms = 1",
    "[[link]]\nbetween = [\"r1\", \"r2\"]\nrate_mbps = 1",
    "[[loop]]\nname = \"l\"\ningress = \"r1\"\negress = \"r2\"",
    "[csfq]\nk_ms = 1e-9",
    "[tcp]\nmax_window_segments = 1",
    "count = 3",
    "weight = 1e-3",
    "start_s = 0.001",
    "stop_s = 0.002",
    "rate_step_mbps = -1",
    "access = { rate_mbps = 1e6, delay_ms = 0, delay_step_ms = -0.5 }",
    "packet_bytes = 20",
    "size_pkts = 1",
    "sample_interval_ms = 0.001",
    "discipline = \"fq_codel\"",
    "buffer_bytes = 1500",
    "jitter = 0.999",
    // Toward large counts and rates, valid or just past the limits (a 20-byte stream at
    // 160 Gbit/s into a 1 kbit/s link, 65535x-rate layered sources, thousands of flows).
    "[[flow]]\nkind = \"udp\"\nfrom = \"r1\"\nto = \"r2\"\nrate_mbps = 160000\npacket_bytes = 20",
    "[[flow]]\nkind = \"rlm\"\nfrom = \"r1\"\nto = \"r2\"\nlayers = 255\nlayer_base_kbps = 1e9",
    "[[flow]]\nkind = \"tcp\"\nfrom = \"r1\"\nto = \"r2\"\ncount = 100000",
    "[[link]]\nbetween = [\"r1\", \"r2\"]\nrate_mbps = 0.001\nbuffer_bytes = 4000000000",
    "rate_mbps = 1e6",
    "rate_mbps = 4e6",
    "count = 65535",
    "count = 1000000",
    "buffer_bytes = 4294967295",
    "duration_s = 1e9",
    "layers = 255",
    "layer_base_kbps = 1e12",
];

#[derive(Debug, Clone)]
enum Edit {
    Number(usize, &'static str),
    String(usize, &'static str),
    DeleteLine(usize),
    DuplicateLine(usize),
    InsertLines(usize, &'static str),
    Cut(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), select(NUMBERS)).prop_map(|(i, n)| Edit::Number(i, n)),
        2 => (any::<usize>(), select(STRINGS)).prop_map(|(i, s)| Edit::String(i, s)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        1 => any::<usize>().prop_map(Edit::DuplicateLine),
        2 => (any::<usize>(), select(LINES)).prop_map(|(i, l)| Edit::InsertLines(i, l)),
        1 => any::<usize>().prop_map(Edit::Cut),
    ]
}

/// Byte ranges of the tokens of one kind: numbers (after `= ` or in lists), or strings.
fn tokens(text: &str, strings: bool) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if strings && b[i] == b'"' {
            let end = text[i + 1..].find('"').map_or(b.len(), |e| i + 2 + e);
            out.push(i..end);
            i = end;
        } else if !strings
            && (b[i].is_ascii_digit() || b[i] == b'-')
            && i > 0
            && matches!(b[i - 1], b' ' | b'[' | b',' | b'=')
        {
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_')))
                .map_or(b.len(), |e| i + e);
            out.push(i..end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

fn apply(text: &str, e: &Edit) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let line_edit = |i: &usize, f: &dyn Fn(usize, &mut Vec<String>)| {
        let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        if !v.is_empty() {
            let at = i % v.len();
            f(at, &mut v);
        }
        v.join("\n") + "\n"
    };
    match e {
        Edit::Number(i, n) | Edit::String(i, n) => {
            let t = tokens(text, matches!(e, Edit::String(..)));
            if t.is_empty() {
                return text.to_string();
            }
            let r = t[i % t.len()].clone();
            format!("{}{}{}", &text[..r.start], n, &text[r.end..])
        }
        Edit::DeleteLine(i) => line_edit(i, &|at, v| {
            v.remove(at);
        }),
        Edit::DuplicateLine(i) => line_edit(i, &|at, v| {
            let l = v[at].clone();
            v.insert(at, l);
        }),
        Edit::InsertLines(i, l) => line_edit(i, &|at, v| v.insert(at, l.to_string())),
        Edit::Cut(i) => {
            let mut at = i % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        }
    }
}

/// A whole run estimated at no more than this many events is run to its end and held to
/// its estimate; a longer one runs its first 5 ms only (for safety: a few milliseconds
/// from the start, when every source starts at once, say nothing of a whole run's work).
const WHOLE_RUN_EVENTS: f64 = 200_000.0;

/// A first 5 ms estimated (as a whole run of 5 ms) above this is not run: its cost per
/// case is time, not safety (5 ms of 160 Gbit/s of 20-byte packets is five million
/// events).
const SHORT_RUN_EVENTS: f64 = 1_000_000.0;

/// Events a whole run may handle beyond three times its estimate (the estimate's factor,
/// `work_estimate.rs`): a short run's handshakes and first samples.
const ESTIMATE_SLACK_EVENTS: f64 = 2_000.0;

/// One case: load, and if it loads, build, allocate and estimate its work; then run it
/// whole when it is estimated small (handling at most three times the events estimated),
/// or its first few milliseconds.
fn check(file: &Path, text: &str) -> Result<(), TestCaseError> {
    let s = match ScenarioFile::parse(text, file) {
        Ok(s) => s,
        Err(e) => {
            prop_assert!(e.line >= 1 && e.column >= 1, "{e}");
            let shown = e.to_string();
            // A fault inside a GraphML topology names that file (and its line) instead.
            let graphml = e.file.extension().is_some_and(|x| x == "graphml");
            prop_assert!(
                graphml || shown.starts_with(&format!("{}:", file.display())),
                "{}",
                shown
            );
            return Ok(());
        }
    };
    // Networks of more than 2000 flows are checked for loading only, and those of more than
    // 200 (the thousand-flow scale scenarios) are built but not allocated or run: their
    // cost per case is time, not safety (a million cases must take minutes).
    if s.flow_count() > 2000 {
        return Ok(());
    }
    let topo = Topology::build(&s).map_err(|e| TestCaseError::fail(format!("valid but {e}")))?;
    if s.flow_count() > 200 {
        return Ok(());
    }
    let alloc = topo.max_min_allocation();
    prop_assert_eq!(alloc.len(), topo.flows.len());
    prop_assert!(alloc.iter().all(|a| *a >= 0.0), "{:?}", alloc);
    let _ = topo.per_hop_allocation();
    let _ = topo.reference_allocation();
    let whole = topo.work_estimate_of(&s);
    prop_assert!(
        whole.events.is_finite() && whole.events >= 0.0,
        "estimate {:?}",
        whole
    );
    // Simulate the whole run if it is small, else its first few milliseconds (the same
    // scenario run until then: one cut short could hold flows that start after its end,
    // which no file may).
    {
        let whole_run = whole.events <= WHOLE_RUN_EVENTS;
        let until_s = if whole_run {
            s.duration_s
        } else {
            s.duration_s.min(0.005)
        };
        let mut sim =
            Simulation::new(&s).map_err(|e| TestCaseError::fail(format!("valid but {e}")))?;
        // The estimate is of the whole run; a part of it costs about its share of the time.
        if whole.events * (until_s / s.duration_s) > SHORT_RUN_EVENTS {
            return Ok(());
        }
        sim.run_until(csfq_algo::Nanos::from_secs_f64(until_s));
        let r = sim.report();
        if whole_run {
            prop_assert!(
                r.events as f64 <= 3.0 * whole.events + ESTIMATE_SLACK_EVENTS,
                "{} events handled against {:.0} estimated",
                r.events,
                whole.events
            );
        }
        for l in &r.links {
            prop_assert!(l.utilization <= 1.0 + 1e-9, "utilization {}", l.utilization);
        }
        prop_assert!(!s.to_toml().is_empty());
    }
    Ok(())
}

#[test]
fn mutated_scenarios_load_cleanly_or_fail_cleanly() {
    let files = shipped();
    assert!(files.len() >= 20);
    let strategy = (
        select((0..files.len()).collect::<Vec<_>>()),
        proptest::collection::vec(edit(), 1..4),
    );
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(f, edits)| {
        let (path, text) = &files[f];
        let mutated = edits.iter().fold(text.clone(), |t, e| apply(&t, e));
        check(path, &mutated)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The mutations do what they say (the harness itself can fail).
#[test]
fn mutations_change_the_text() {
    let text = "name = \"t\"\nduration_s = 1.0\nrouters = [\"a\", \"b\"]\n";
    assert_eq!(
        apply(text, &Edit::Number(0, "nan")),
        "name = \"t\"\nduration_s = nan\nrouters = [\"a\", \"b\"]\n"
    );
    assert_eq!(tokens(text, true).len(), 3);
    assert_eq!(
        apply(text, &Edit::DeleteLine(0)),
        "duration_s = 1.0\nrouters = [\"a\", \"b\"]\n"
    );
}

/// `ScenarioFile::check` checks a value changed in code as it is, writing no text; it must
/// agree with the file that value stands for, written out and read back: the same
/// scenario where one is accepted, the same error where refused. Every shipped scenario,
/// with one value at a time changed to each of a set of extremes, in the scenario's own
/// fields, its first link's and first flow's, and the disciplines' and `[tcp]` tables.
#[test]
fn a_changed_value_is_checked_as_its_file() {
    type Change = fn(&mut ScenarioFile, f64, u32);
    let changes: &[(&str, Change)] = &[
        ("duration_s", |s, x, _| s.duration_s = x),
        ("sample_interval_ms", |s, x, _| s.sample_interval = Some(x)),
        ("delay_precision", |s, x, _| s.delay_precision = Some(x)),
        ("link rate_mbps", |s, x, _| {
            s.links[0].get_mut().rate_mbps = x
        }),
        ("link delay_ms", |s, x, _| s.links[0].get_mut().delay_ms = x),
        ("link buffer_bytes", |s, _, n| {
            s.links[0].get_mut().buffer_bytes = n
        }),
        ("flow rate_mbps", |s, x, _| {
            s.flows[0].get_mut().rate_mbps = Some(x)
        }),
        ("flow start_s", |s, x, _| s.flows[0].get_mut().start_s = x),
        ("flow weight", |s, x, _| s.flows[0].get_mut().weight = x),
        ("flow jitter", |s, x, _| s.flows[0].get_mut().jitter = x),
        ("flow count", |s, _, n| s.flows[0].get_mut().count = n),
        ("flow packet_bytes", |s, _, n| {
            s.flows[0].get_mut().packet_bytes = n
        }),
        ("csfq.k_ms", |s, x, _| s.csfq.k_ms = x),
        ("red.w_q", |s, x, _| s.red.w_q = x),
        ("red.min_th_bytes", |s, _, n| s.red.min_th_bytes = n),
        ("drr.quantum_bytes", |s, _, n| s.drr.quantum_bytes = n),
        ("tuf.untagged_buffer_share", |s, x, _| {
            s.tuf.untagged_buffer_share = x
        }),
        ("may.gain", |s, x, _| s.may.gain = x),
        ("fq_codel.target_ms", |s, x, _| s.fq_codel.target_ms = x),
        ("tcp.segment_bytes", |s, _, n| s.tcp.segment_bytes = n),
        ("tcp.min_rto_ms", |s, x, _| s.tcp.min_rto_ms = x),
    ];
    let floats = [
        0.0,
        -0.0,
        -1.0,
        4e-7,
        0.5,
        1e6,
        1e300,
        f64::NAN,
        f64::INFINITY,
    ];
    let ints = [0, 1, 63, 65_535, 1 << 20, u32::MAX];
    let (mut accepted, mut refused) = (0, 0);
    for (path, text) in shipped() {
        let base = ScenarioFile::parse(&text, &path).unwrap().into_file();
        for (what, change) in changes {
            for (i, x) in floats.iter().enumerate() {
                let mut s = base.clone();
                change(&mut s, *x, ints[i % ints.len()]);
                let name = format!("<{} as changed>", s.name);
                let direct = s.check();
                let read_back = ScenarioFile::parse(&s.to_toml(), Path::new(&name));
                match (&direct, &read_back) {
                    // As text: a value the checks leave alone may be NaN (a TCP's jitter).
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a.to_toml(), b.to_toml(), "{}: {what} = {x}", path.display());
                        accepted += 1;
                    }
                    (Err(a), Err(b)) => {
                        assert_eq!(a, b, "{}: {what} = {x}", path.display());
                        refused += 1;
                    }
                    _ => panic!(
                        "{}: {what} = {x}: checked as a value {:?}, as its file {:?}",
                        path.display(),
                        direct.as_ref().err(),
                        read_back.as_ref().err()
                    ),
                }
            }
        }
    }
    // Both kinds of outcome are exercised.
    assert!(
        accepted > 100 && refused > 100,
        "{accepted} accepted, {refused} refused"
    );
}
