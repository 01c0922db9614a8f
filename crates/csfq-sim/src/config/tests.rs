//! Parsing and validation of scenario files.

use super::*;
use std::path::Path;

const GOOD: &str = r#"
name = "t"
duration_s = 1.0
discipline = "csfq"
routers = ["a", "b"]

[[link]]
between = ["a", "b"]
rate_mbps = 10

[[flow]]
kind = "udp"
from = "a"
to = "b"
rate_mbps = 1
"#;

fn parse(s: &str) -> Result<Scenario, ScenarioError> {
    ScenarioFile::parse(s, Path::new("t.toml"))
}

#[test]
fn parses_with_defaults() {
    let s = parse(GOOD).unwrap();
    assert_eq!(s.links[0].get_ref().buffer_bytes, 64_000);
    assert_eq!(s.flows[0].get_ref().jitter, 0.5);
    assert_eq!(s.csfq.k_ms, 100.0);
}

#[test]
fn unknown_field_names_file_line_and_field() {
    let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = 10\nrate_mpbs = 3");
    let e = parse(&bad).unwrap_err();
    assert_eq!(e.line, 10);
    assert_eq!(e.field.as_deref(), Some("rate_mpbs"));
    let shown = e.to_string();
    assert!(
        shown.starts_with("t.toml:10:1: field `rate_mpbs`"),
        "{shown}"
    );
    assert!(shown.contains("unknown field"), "{shown}");
}

#[test]
fn wrong_type_names_the_field() {
    let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = \"ten\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (9, Some("rate_mbps")));
}

#[test]
fn semantic_errors_point_at_the_table() {
    let bad = GOOD.replace("to = \"b\"", "to = \"c\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (14, Some("to")));
    assert!(e.message.contains("unknown router `c`"));
    // The routers that do exist, so the typo is easy to see.
    assert!(e.message.contains("(routers: a, b)"), "{}", e.message);
    let bad = GOOD.replace("rate_mbps = 10", "rate_mbps = -1");
    let e = parse(&bad).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (9, Some("rate_mbps")));
}

#[test]
fn limits_keep_runs_finite() {
    for (from, to, field) in [
        ("duration_s = 1.0", "duration_s = 1e9", "duration_s"),
        (
            "duration_s = 1.0",
            "duration_s = 1.0\nsample_interval_ms = 1e-6",
            "sample_interval_ms",
        ),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\ncount = 2000000\n",
            "count",
        ),
        (
            "routers = [\"a\", \"b\"]",
            "routers = [\"a\", \"b\"]\n[tcp]\nmax_window_segments = 4000000000",
            "tcp.max_window_segments",
        ),
        (
            "routers = [\"a\", \"b\"]",
            "routers = [\"a\", \"b\"]\n[drr]\nquantum_bytes = 4000000000",
            "drr.quantum_bytes",
        ),
        (
            "routers = [\"a\", \"b\"]",
            "routers = [\"a\", \"b\"]\n[fq_codel]\nflows = 0",
            "fq_codel.flows",
        ),
        (
            "routers = [\"a\", \"b\"]",
            "routers = [\"a\", \"b\"]\n[fq_codel]\ntarget_ms = -5",
            "fq_codel.target_ms",
        ),
    ] {
        let bad = GOOD.replace(from, to);
        assert_ne!(bad, GOOD, "{field}: replacement did not apply");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
    }
}

/// A chain of 20 000 routers loads (names are looked up by hash and components found
/// by union-find: 100 000 routers took 24.5 s when both were linear scans), a flow
/// across all of it has a route, and one missing link in the middle is found.
#[test]
fn long_chains_load_and_their_gaps_are_found() {
    let n = 20_000;
    let chain = |skip: usize| {
        let mut t = format!(
            "name = \"t\"\nduration_s = 1\ndiscipline = \"fifo\"\nrouters = [{}]\n",
            (0..n)
                .map(|i| format!("\"r{i}\""))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for i in (0..n - 1).filter(|&i| i != skip) {
            t += &format!(
                "[[link]]\nbetween = [\"r{i}\", \"r{}\"]\nrate_mbps = 10\n",
                i + 1
            );
        }
        t + &format!(
            "[[flow]]\nkind = \"udp\"\nfrom = \"r0\"\nto = \"r{}\"\nrate_mbps = 1\n",
            n - 1
        )
    };
    assert!(parse(&chain(usize::MAX)).is_ok());
    let e = parse(&chain(n / 2)).unwrap_err();
    assert!(e.to_string().contains("no route"), "{e}");
}

/// RLM layers double from the base: 16 layers from 1e8 kbit/s would send 65535 times
/// the 1 Tbit/s bound on every other source (a run of ~86 000 years); refused, like a
/// top layer too fast for its packets, while the paper's seven from 32 kbit/s pass.
#[test]
fn rlm_layers_are_bounded_like_any_source() {
    let rlm = |extra: &str| {
        GOOD.replace("kind = \"udp\"", "kind = \"rlm\"")
            .replace("rate_mbps = 1\n", extra)
    };
    assert!(parse(&rlm("")).is_ok());
    assert!(parse(&rlm("layers = 16\nlayer_base_kbps = 1000\n")).is_ok());
    for bad in [
        "layers = 16\nlayer_base_kbps = 1e8\n",
        "layers = 1\nlayer_base_kbps = 9e8\npacket_bytes = 20\n",
    ] {
        let e = parse(&rlm(bad)).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("layer_base_kbps"), "{bad}: {e}");
    }
}

/// The worst case the buffers could queue, by hand: two 64 000-byte directions of
/// 20-byte packets are 6400 packets, 112 bytes each; a 4 GB buffer of them is refused against a budget
/// it exceeds (it used to grow to 8.5 GB and abort), naming the link and the packet.
#[test]
fn buffers_that_cannot_fit_are_refused() {
    let small = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 1\npacket_bytes = 20\n");
    let b = parse(&small).unwrap().queue_bound();
    assert_eq!(b.packets, 6400);
    // Each at most 112 bytes: at an in-order port a 16-byte record in its queue (time,
    // size, flow) and a 96-byte slot on its wire (the 72-byte packet, its arrival time,
    // its scheduling order, the next slot, the port); at a scheduler the 72-byte packet.
    assert_eq!(b.bytes, 6400 * 112);
    assert_eq!(b.smallest, (20, "a flow's packet_bytes"));
    let huge = small.replace(
        "rate_mbps = 10\n",
        "rate_mbps = 10\nbuffer_bytes = 4294967295\n",
    );
    let s = parse(&huge).unwrap();
    let b = s.queue_bound();
    assert_eq!(b.packets, 2 * (4_294_967_295 / 20));
    let e = s.check_queue_memory(1 << 30).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("link 0 (a-b)") && text.contains("20 bytes"),
        "{text}"
    );
    assert!(s.check_queue_memory(u64::MAX).is_ok());
    // TCP's ACKs are its smallest packets.
    let tcp = GOOD
        .replace("kind = \"udp\"", "kind = \"tcp\"")
        .replace("rate_mbps = 1\n", "");
    assert_eq!(
        parse(&tcp).unwrap().queue_bound().smallest,
        (40, "[tcp] ack_bytes")
    );
}

/// Names are printed and written to files: control characters and Unicode's direction
/// overrides are refused in router and loop names, naming the character.
#[test]
fn names_with_unprintable_characters_are_refused() {
    for bad in ["a\\n", "a\\u202Eb", "a\\u001b[31m"] {
        let text = GOOD.replace("\"b\"", &format!("\"{bad}\""));
        let e = parse(&text).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("routers"), "{bad}: {e}");
    }
    assert!(parse(&GOOD.replace("\"b\"", "\"b,\\\"c\\\" é\"")).is_ok());
}

/// A packet larger than a link's buffer could never be queued and its flow would get
/// nothing: refused at load, naming the buffer and the flow that sends it; ACKs are
/// bounded like segments.
#[test]
fn packets_larger_than_a_buffer_are_refused() {
    let jumbo = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 1\npacket_bytes = 9000\n");
    let small = jumbo.replace("rate_mbps = 10\n", "rate_mbps = 10\nbuffer_bytes = 4000\n");
    assert!(parse(&jumbo).is_ok(), "9000 bytes fit the default 64 KB");
    let e = parse(&small).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("buffer_bytes"), "{e}");
    assert!(
        e.to_string()
            .contains("flow table 1 sends 9000-byte packets"),
        "{e}"
    );
    let tcp = GOOD
        .replace("kind = \"udp\"", "kind = \"tcp\"")
        .replace("rate_mbps = 1\n", "");
    let big = format!("{tcp}\n[tcp]\nsegment_bytes = 65000\n");
    let e = parse(&big).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("buffer_bytes"), "{e}");
    assert!(e.to_string().contains("segment_bytes"), "{e}");
    let ack = format!("{tcp}\n[tcp]\nack_bytes = 4294967295\n");
    let e = parse(&ack).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.ack_bytes"), "{e}");
    assert!(parse(&format!("{tcp}\n[tcp]\nack_bytes = 1500\n")).is_ok());
}

/// ns-2's timer needs a tick: `clock_granularity_ms = 0` (allowed for RFC 6298, where
/// G = 0 is meaningful) is refused with it, naming the field; an unknown timer names the
/// choices.
#[test]
fn ns2_timer_needs_a_tick() {
    let ok = format!("{GOOD}\n[tcp]\ntimer = \"ns2\"\n");
    assert_eq!(parse(&ok).unwrap().tcp.timer, TcpTimer::Ns2);
    let zero = format!("{GOOD}\n[tcp]\ntimer = \"ns2\"\nclock_granularity_ms = 0\n");
    let e = parse(&zero).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.clock_granularity_ms"), "{e}");
    let rfc = format!("{GOOD}\n[tcp]\nclock_granularity_ms = 0\n");
    assert_eq!(parse(&rfc).unwrap().tcp.timer, TcpTimer::Rfc6298);
    let bad = format!("{GOOD}\n[tcp]\ntimer = \"bsd\"\n");
    let e = parse(&bad).unwrap_err().to_string();
    assert!(e.contains("rfc6298") && e.contains("ns2"), "{e}");
}

/// CUBIC is chosen for every TCP flow by `[tcp] congestion_control`, or per flow; a UDP
/// flow that names one is refused, naming the field.
#[test]
fn congestion_control_by_table_and_by_flow() {
    let all = format!("{GOOD}\n[tcp]\ncongestion_control = \"cubic\"\n");
    assert_eq!(
        parse(&all).unwrap().tcp.congestion_control,
        CongestionControl::Cubic
    );
    let tcp = GOOD.replace(
        "kind = \"udp\"",
        "kind = \"tcp\"\ncongestion_control = \"cubic\"",
    );
    let tcp = tcp.replace("rate_mbps = 1\n", "");
    let s = parse(&tcp).unwrap();
    assert_eq!(
        s.flows[0].get_ref().congestion_control,
        Some(CongestionControl::Cubic)
    );
    assert_eq!(s.tcp.congestion_control, CongestionControl::NewReno);
    let udp = GOOD.replace(
        "kind = \"udp\"",
        "kind = \"udp\"\ncongestion_control = \"cubic\"",
    );
    let e = parse(&udp).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("congestion_control"), "{e}");
    let bad = format!("{GOOD}\n[tcp]\ncongestion_control = \"vegas\"\n");
    let e = parse(&bad).unwrap_err().to_string();
    assert!(e.contains("newreno") && e.contains("cubic"), "{e}");
}

/// Values that overflowed the simulator's integer time, divided by zero or wrapped,
/// each now an error naming its field and line.
#[test]
fn values_beyond_exact_ranges_are_errors() {
    let onoff = GOOD.replace(
        "kind = \"udp\"",
        "kind = \"onoff\"\non_ms = 4e-7\noff_ms = 4e-7",
    );
    assert_eq!(parse(&onoff).unwrap_err().field.as_deref(), Some("on_ms"));
    for (from, to, field, line) in [
        ("rate_mbps = 10", "rate_mbps = 1e-300", "rate_mbps", 9),
        ("rate_mbps = 10", "rate_mbps = 1e300", "rate_mbps", 9),
        (
            "rate_mbps = 10",
            "rate_mbps = 10\ndelay_ms = 1e300",
            "delay_ms",
            10,
        ),
        ("rate_mbps = 1\n", "rate_mbps = 1e30\n", "rate_mbps", 15),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\njitter = 1e-300\n",
            "jitter",
            16,
        ),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\nstart_s = 1e300\n",
            "start_s",
            16,
        ),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\nstop_s = 1e300\n",
            "stop_s",
            16,
        ),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\nweight = 1e300\n",
            "weight",
            16,
        ),
        (
            "rate_mbps = 1\n",
            "rate_mbps = 1\naccess = { rate_mbps = 10, delay_ms = 1e300 }\n",
            "access",
            16,
        ),
    ] {
        let bad = GOOD.replace(from, to);
        assert_ne!(bad, GOOD, "{field}: replacement did not apply");
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some(field), line), "{e}");
    }
    // At 20-byte packets, 200 Gbit/s would be packets 0.8 ns apart.
    let tight = GOOD.replace("rate_mbps = 1\n", "rate_mbps = 200000\npacket_bytes = 20\n");
    let e = parse(&tight).unwrap_err();
    assert!(e.message.contains("less than 1 ns apart"), "{e}");
    assert!(parse(&GOOD.replace("rate_mbps = 1\n", "rate_mbps = 100000\n")).is_ok());
}

/// The name becomes `out/NAME`: it must not escape `out/` or be empty.
#[test]
fn names_that_are_not_one_path_component_are_errors() {
    for name in ["", "/tmp/x", "../../escaped", "..", ".hidden", "a/b", "a b"] {
        let bad = GOOD.replace("name = \"t\"", &format!("name = {name:?}"));
        let e = parse(&bad).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("name"), 2),
            "{name:?}: {e}"
        );
    }
    assert!(parse(&GOOD.replace("name = \"t\"", "name = \"csfq-fig3a_v2.1\"")).is_ok());
}

#[test]
fn a_link_joins_exactly_two_routers() {
    for between in ["[\"a\", \"b\", \"a\"]", "[\"a\"]", "[]"] {
        let bad = GOOD.replace("between = [\"a\", \"b\"]", &format!("between = {between}"));
        let e = parse(&bad).unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("between"), 8), "{e}");
        assert!(e.message.contains("two router names"), "{e}");
    }
}

#[test]
fn a_missing_field_is_named_not_the_first_key() {
    let e = parse(&GOOD.replace("discipline = \"csfq\"\n", "")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("discipline"), "{e}");
    assert!(e.message.contains("top level"), "{e}");
    let e = parse(&GOOD.replace("from = \"a\"\n", "")).unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("from"), 11), "{e}");
    assert!(e.message.contains("table that starts here"), "{e}");
}

#[test]
fn a_flow_without_a_route_is_an_error_at_its_table() {
    let bad = GOOD
        .replace(
            "routers = [\"a\", \"b\"]",
            "routers = [\"a\", \"b\", \"c\"]",
        )
        .replace("to = \"b\"", "to = \"c\"");
    let e = parse(&bad).unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("to"), 14), "{e}");
    assert!(e.message.contains("no route from `a` to `c`"), "{e}");
}

/// The default sample interval grows with the run so that every allowed duration is
/// accepted; an explicit one that is too fine names the smallest allowed.
#[test]
fn the_default_sample_interval_fits_any_allowed_run() {
    let long = parse(&GOOD.replace("duration_s = 1.0", "duration_s = 1e6")).unwrap();
    let ms = long.sample_interval_ms();
    assert!(ms >= 1000.0 && ms % 100.0 == 0.0, "{ms}");
    assert!(1e9 / ms <= MAX_SAMPLES);
    assert_eq!(parse(GOOD).unwrap().sample_interval_ms(), 100.0);
    // 1000 flows for 1000 s at 1 ms would be 10^9 values.
    let many = GOOD
        .replace(
            "duration_s = 1.0",
            "duration_s = 1000.0\nsample_interval_ms = 1",
        )
        .replace("rate_mbps = 1\n", "rate_mbps = 1\ncount = 1000\n");
    let e = parse(&many).unwrap_err();
    assert_eq!(
        (e.field.as_deref(), e.line),
        (Some("sample_interval_ms"), 4),
        "{e}"
    );
    assert!(e.message.contains("at least 50.3 ms"), "{e}");
}

#[test]
fn files_that_cannot_be_scenarios_are_errors_without_a_line() {
    let e = ScenarioFile::load(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{e}"
    );
    // Read no further than the limit: /dev/zero would otherwise fill memory.
    if Path::new("/dev/zero").exists() {
        let e = ScenarioFile::load(Path::new("/dev/zero")).unwrap_err();
        assert!(e.message.contains("larger than 16 MiB"), "{e}");
    }
    let dir = std::env::temp_dir().join(format!("csfq-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("binary.toml");
    std::fs::write(&p, b"name = \"t\"\n\xff\xfe").unwrap();
    let e = ScenarioFile::load(&p).unwrap_err();
    assert_eq!((e.line, e.column), (2, 1), "{e}");
    assert!(e.message.contains("not UTF-8"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn round_trips_through_toml() {
    let s = parse(GOOD).unwrap();
    let again = parse(&s.to_toml()).unwrap();
    assert_eq!(s.flows[0].get_ref(), again.flows[0].get_ref());
    assert_eq!(s.links[0].get_ref(), again.links[0].get_ref());
}
