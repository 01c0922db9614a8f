//! The MAY program on crafted packets (BPF_PROG_TEST_RUN): the same decisions, `v`,
//! utilization and table entries as the Rust model (`csfq_algo::may_fixed`) on the shared
//! vectors, flows keyed as documented, and a table bounded by its size. Needs root;
//! skipped with the reason elsewhere (and failing instead when CSFQ_DP_REQUIRED is set).

mod common;

use common::*;
use csfq_dp::abi::{Counter, FixedMayParams, MayConfigRaw, CLOCK_COARSE};
use csfq_dp::flow_table::{FlowTable, Lookup};
use csfq_dp::TestProgram;

const PASS: i32 = -1; // TC_ACT_UNSPEC
const SHOT: i32 = 2; // TC_ACT_SHOT

fn vector_lines(kind: &str) -> Vec<Vec<String>> {
    raw_vectors_in("may-fixed-vectors.csv", kind)
}

fn config_from_vectors() -> MayConfigRaw {
    let p: Vec<u64> = vector_lines("mayparams")[0]
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    MayConfigRaw {
        params: FixedMayParams {
            capacity_bps: p[0],
            interval_ns: p[1],
            timeout_ns: p[2],
            u0_q16: p[3],
            gain_q16: p[4],
            q_w_q16: p[5],
            keep_q32: p[6],
            sample_q32: p[7],
            passed_only: p[8] as u32,
            ceiling: p[9] as u32,
        },
        test_mode: 1,
        ..Default::default()
    }
}

fn flow_packet(flow: u64, bytes: usize) -> V4 {
    V4 {
        sport: 4000 + flow as u16,
        frame_len: bytes,
        ..Default::default()
    }
}

/// Every packet of the shared vectors (1200 packets of four flows: both kinds of drop,
/// inserts, an expiry, an entry folded over several intervals, a silence) gets the
/// model's verdict, and leaves `v`, the utilization, the interval count and its flow's
/// entry exactly as the model's.
#[test]
fn may_equals_the_model_on_the_vectors() {
    if !dataplane_or_skip("may_equals_the_model_on_the_vectors") {
        return;
    }
    replay_may_vectors(false);
}

/// Each CPU counts the utilization's bytes on its own and the CPU that ends an interval
/// sums them: the vectors replayed with the packets spread over two CPUs, in runs of 1 to
/// 8 packets on each, so that intervals end on either and each interval's bytes are
/// counted on both, give the same verdicts, `v`, utilization and entries as on one.
#[test]
fn may_sums_its_cpus_arrivals_exactly() {
    if !dataplane_or_skip("may_sums_its_cpus_arrivals_exactly") {
        return;
    }
    if allowed_cpus().len() < 2 {
        eprintln!("skipped may_sums_its_cpus_arrivals_exactly: one CPU allowed");
        return;
    }
    replay_may_vectors(true);
}

fn replay_may_vectors(two_cpus: bool) {
    let lines = vector_lines("may");
    assert_eq!(lines.len(), 1200);
    let mut cfg = config_from_vectors();
    let mut p = TestProgram::load_may(1024).expect("load may");
    let (mut inserted, mut expired) = (0, 0);
    let mut spread = TwoCpus::new(two_cpus);
    for (i, l) in lines.iter().enumerate() {
        spread.before(i);
        let n = |j: usize| l[j].parse::<u64>().unwrap();
        let (now, flow, bytes, draw) = (n(0), n(1), n(2) as usize, n(3) as u32);
        cfg.test_now_ns = now;
        cfg.test_draw = draw;
        p.set_may_config(&cfg).unwrap();
        let v4 = flow_packet(flow, bytes);
        let (ret, _) = p.run(&v4.frame()).unwrap();
        let want = if n(4) == 0 { PASS } else { SHOT };
        assert_eq!(ret, want, "packet {i}: verdict (vector {l:?})");
        inserted += n(5);
        expired += n(6);
        let s = p.may_state().unwrap();
        assert_eq!(
            (s.v_q32, s.util_q16, s.epoch),
            (n(7), n(8), n(9)),
            "packet {i}: v, utilization, interval"
        );
        let e = p.may_entry(&key_v4(&v4, true)).unwrap();
        match (&l[10][..], e) {
            ("-", None) => {}
            ("-", Some(e)) => panic!("packet {i}: the model has no entry, the program {e:?}"),
            (_, None) => panic!("packet {i}: the program has no entry, the model {l:?}"),
            (d, Some(e)) => assert_eq!(
                (e.delta_q16.to_string(), e.nd.to_string()),
                (d.to_string(), l[11].clone()),
                "packet {i}: delta, ND"
            ),
        }
    }
    assert_eq!(count(&p, Counter::MayInserted), inserted);
    assert_eq!(count(&p, Counter::MayExpired), expired);
    let drops = lines.iter().filter(|l| l[4] != "0").count() as u64;
    assert_eq!(
        count(&p, Counter::DropMayHistory) + count(&p, Counter::DropMaySample),
        drops
    );
    if two_cpus {
        assert!(
            (400..=800).contains(&spread.on_second),
            "{} of 1200 packets on the second CPU",
            spread.on_second
        );
    }
}

/// Flows as documented: IPv4 without DF keyed by its 5-tuple like any other, a later
/// fragment by its addresses (ports 0); frames that are not IP pass and count in the
/// utilization's bytes.
#[test]
fn may_keys_what_cannot_carry_a_label_and_passes_non_ip() {
    if !dataplane_or_skip("may_keys_what_cannot_carry_a_label_and_passes_non_ip") {
        return;
    }
    let mut cfg = config_from_vectors();
    cfg.params.sample_q32 = 1 << 32; // every packet of a new flow is sampled
    cfg.test_now_ns = 1_000;
    let mut p = TestProgram::load_may(64).expect("load may");
    p.set_may_config(&cfg).unwrap();

    let (ret, _) = p.run(&arp_frame()).unwrap();
    assert_eq!(ret, PASS);
    assert_eq!(count(&p, Counter::PassNotIp), 1);
    // Every frame counts in the interval's arrivals, IP or not.
    let before = p.may_arrived().unwrap();
    let no_df = V4 {
        frag: 0,
        sport: 7000,
        ..Default::default()
    };
    let (ret, _) = p.run(&no_df.frame()).unwrap();
    assert_eq!(ret, PASS, "the utilization is 0: sampled, not dropped");
    assert!(p.may_entry(&key_v4(&no_df, true)).unwrap().is_some());
    let later_fragment = V4 {
        frag: 0x0010, // offset 128 bytes
        sport: 7001,
        ..Default::default()
    };
    p.run(&later_fragment.frame()).unwrap();
    assert!(p
        .may_entry(&key_v4(&later_fragment, false))
        .unwrap()
        .is_some());
    assert_eq!(
        p.may_arrived().unwrap(),
        before + no_df.frame_len as u64 + later_fragment.frame_len as u64
    );
}

/// The table holds what it was sized for, and takes entries as its model does
/// (`csfq_dp::flow_table`: a flow's two sets of four, an empty entry first, else the
/// flow with the oldest TS): 200 flows, each sampled at its first packet a microsecond
/// after the last, through a table of 32 leave the entries the model gives, at most 32,
/// the newest flow among them, and as many evictions counted as the model makes.
#[test]
fn may_table_takes_entries_as_its_model() {
    if !dataplane_or_skip("may_table_takes_entries_as_its_model") {
        return;
    }
    let mut cfg = config_from_vectors();
    cfg.params.sample_q32 = 1 << 32;
    let mut p = TestProgram::load_may(32).expect("load may");
    let mut model = FlowTable::new(32, 0);
    let mut evicted = 0;
    for f in 0..200 {
        cfg.test_now_ns = 1_000 * (f + 1);
        p.set_may_config(&cfg).unwrap();
        let packet = flow_packet(f, 100);
        p.run(&packet.frame()).unwrap();
        if let Lookup::Evicted(_) = model.packet(&key_v4(&packet, true), cfg.test_now_ns) {
            evicted += 1;
        }
    }
    assert_eq!(count(&p, Counter::MayInserted), 200);
    assert_eq!(count(&p, Counter::Evicted), evicted);
    assert_eq!(p.may_flows().unwrap(), model.flows());
    let held: Vec<u64> = (0..200)
        .filter(|&f| {
            p.may_entry(&key_v4(&flow_packet(f, 100), true))
                .unwrap()
                .is_some()
        })
        .collect();
    assert!(
        !held.is_empty() && held.len() <= 32 && held.len() == model.len(),
        "{} entries, the model {}",
        held.len(),
        model.len()
    );
    assert!(held.contains(&199), "the newest flow is held: {held:?}");
}

/// Settings the program's arithmetic cannot hold are refused before anything loads: an
/// interval whose arrivals at four times the rate could pass the 2^40 bytes it counts, a
/// rate out of range, a table out of range, a `q_w` the fixed point cannot hold.
#[test]
fn may_settings_out_of_range_are_refused() {
    use csfq_dp::MaySettings;
    assert!(MaySettings::new(10_000_000).raw().is_ok());
    let bad = |s: MaySettings, field: &str| {
        let e = s.raw().unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("invalid {field}:")),
            "{field}: {e}"
        );
    };
    bad(
        MaySettings {
            interval_ns: 60_000_000_000,
            ..MaySettings::new(100_000_000_000)
        },
        "interval",
    );
    bad(MaySettings::new(10), "rate");
    bad(
        MaySettings {
            table: Some(4),
            ..MaySettings::new(10_000_000)
        },
        "table",
    );
    bad(
        MaySettings {
            q_w: 1e-9,
            ..MaySettings::new(10_000_000)
        },
        "q-w",
    );
}

/// `--utilization arrivals` in the program is the model without `passed_only` (the
/// vectors are of the default, `passed`): the vectors' packets replayed through both,
/// each packet's verdict, `v`, utilization and the interval's byte count equal (dropped
/// packets count too).
#[test]
fn arrivals_reading_equals_the_model() {
    use csfq_algo::may_fixed::{FixedMay, FixedMayVerdict};
    if !dataplane_or_skip("arrivals_reading_equals_the_model") {
        return;
    }
    let mut cfg = config_from_vectors();
    assert_eq!(
        cfg.params.passed_only, 1,
        "the vectors are of the default reading"
    );
    cfg.params.passed_only = 0;
    // The program's parameters are the model's: one type.
    let mut model = FixedMay::new(cfg.params);
    let mut p = TestProgram::load_may(1024).expect("load may");
    let mut dropped = 0;
    for (i, l) in vector_lines("may").iter().enumerate() {
        let n = |j: usize| l[j].parse::<u64>().unwrap();
        let (now, flow, bytes, draw) = (n(0), n(1), n(2) as usize, n(3) as u32);
        cfg.test_now_ns = now;
        cfg.test_draw = draw;
        p.set_may_config(&cfg).unwrap();
        let (ret, _) = p.run(&flow_packet(flow, bytes).frame()).unwrap();
        let o = model.on_arrival(now, csfq_algo::FlowId(flow as u32), bytes as u32, draw);
        let want = if o.verdict == FixedMayVerdict::Forward {
            PASS
        } else {
            dropped += 1;
            SHOT
        };
        assert_eq!(ret, want, "packet {i}");
        let s = p.may_state().unwrap();
        let m = model.state;
        assert_eq!(
            (s.v_q32, s.util_q16, s.epoch, p.may_arrived().unwrap()),
            (m.v_q32, m.util_q16, m.epoch, m.arrived_bytes),
            "packet {i}"
        );
    }
    assert!(
        dropped > 100,
        "the option must be exercised: {dropped} drops"
    );
}

/// MAY's coarse clock (the kernel's tick counter, `CSFQ_CLOCK_COARSE`) is on the fine
/// clock's scale: the time a flow entering the table is stamped with is within a tick of
/// `CLOCK_MONOTONIC` read around its packet (allowed one tick more, for a tick whose update
/// of jiffies runs late), over packets 10 ms apart that cross several ticks.
#[test]
fn may_coarse_clock_is_within_a_tick_of_the_fine_clock() {
    if !dataplane_or_skip("may_coarse_clock_is_within_a_tick_of_the_fine_clock") {
        return;
    }
    let tick = csfq_dp::tick_ns();
    assert!(tick >= 1_000_000, "a tick of {tick} ns: HZ above 1000?");
    let mut p = TestProgram::load_may(64).expect("load may");
    let vectors = config_from_vectors();
    p.set_may_config(&MayConfigRaw {
        test_mode: 0,
        // Every packet of a flow not in the table enters it.
        params: FixedMayParams {
            sample_q32: 1 << 32,
            ..vectors.params
        },
        clock: CLOCK_COARSE,
        tick_ns: tick,
        ..vectors
    })
    .unwrap();
    for f in 0..8 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let packet = flow_packet(f, 100);
        let before = monotonic_ns();
        p.run(&packet.frame()).unwrap();
        let after = monotonic_ns();
        let now = p
            .may_entry(&key_v4(&packet, true))
            .unwrap()
            .expect("the flow entered the table")
            .ts_ns;
        assert!(
            now + 2 * tick > before && now < after + 2 * tick,
            "coarse {now} against fine {before}..{after}, tick {tick}"
        );
    }
}
