//! Per-flow delay and per-link sojourn against hand-computed cases.

use csfq_sim::{ScenarioFile, SimReport, Simulation};

fn run(text: &str) -> SimReport {
    let s = ScenarioFile::parse(text, std::path::Path::new("delay.toml")).unwrap();
    Simulation::new(&s).unwrap().run()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A 1 Mbit/s CBR flow alone on two 10 Mbit/s links never waits: every packet's one-way
/// delay is two transmissions (0.8 ms each) and two propagation delays (5 and 3 ms), plus
/// its two access links (100 Mbit/s: 0.08 ms each; 1 ms each): 1.6 + 8 + 0.16 + 2 =
/// 11.76 ms, with no jitter.
#[test]
fn a_lone_flow_has_only_its_path_delay() {
    let r = run(
        "name = \"t\"\nduration_s = 1.0\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\", \"c\"]\n\
         [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 10\ndelay_ms = 5\n\
         [[link]]\nbetween = [\"b\", \"c\"]\nrate_mbps = 10\ndelay_ms = 3\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"c\"\nrate_mbps = 1\njitter = 0\n\
         access = { rate_mbps = 100, delay_ms = 1 }\n",
    );
    let d = r.flows[0].delay.expect("packets arrived");
    // One packet per 8 ms from t = 0; those sent by 1 s - 11.76 ms arrive.
    assert_eq!(d.packets, 124);
    for v in [
        d.one_way_ms.mean,
        d.one_way_ms.p50,
        d.one_way_ms.p99,
        d.one_way_ms.max,
    ] {
        assert!(close(v, 11.76, 1e-9), "{d:?}");
    }
    for v in [d.queueing_ms.mean, d.queueing_ms.p50, d.queueing_ms.max] {
        assert_eq!(v, 0.0, "{d:?}");
    }
    assert_eq!(d.jitter_ms, 0.0);
    let link = &r.links[0];
    assert_eq!(link.sojourn_ms.unwrap().max, 0.0);
}

/// CBR at twice the link's rate, with a buffer that never fills: packet k reaches the
/// queue at k * 0.4 ms and starts at k * 0.8 ms, so it waits 0.4 k ms. Over the n packets
/// that arrive, the queueing delay's mean is 0.2 (n - 1) ms and its maximum 0.4 (n - 1),
/// the p50 that of packet ceil(n / 2) - 1 (within the histogram's 12.5%), and RFC 3550's
/// jitter, with |D| = 0.4 ms at every packet, 0.4 (1 - (15/16)^(n-1)) ms. The link's
/// sojourn is the same for the packets it has sent.
#[test]
fn an_overloaded_fifo_delays_each_packet_as_computed() {
    let r = run(
        "name = \"t\"\nduration_s = 0.1\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\"]\n\
         [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 10\ndelay_ms = 1\nbuffer_bytes = 1000000\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 20\njitter = 0\n",
    );
    let d = r.flows[0].delay.expect("packets arrived");
    let n = d.packets as f64;
    // Packet k arrives at 0.8 (k + 1) + 1 ms: 123 of them by 100 ms.
    assert_eq!(d.packets, 123);
    let q = d.queueing_ms;
    assert!(close(q.mean, 0.2 * (n - 1.0), 1e-9), "{q:?}");
    assert!(close(q.max, 0.4 * (n - 1.0), 1e-9), "{q:?}");
    let p50 = 0.4 * ((n / 2.0).ceil() - 1.0);
    assert!(close(q.p50, p50, p50 * 0.125), "{q:?} vs {p50}");
    let p99 = 0.4 * ((0.99 * n).ceil() - 1.0);
    assert!(close(q.p99, p99, p99 * 0.125), "{q:?} vs {p99}");
    // One-way adds the path's 0.8 ms transmission and 1 ms propagation to each.
    assert!(close(d.one_way_ms.mean, q.mean + 1.8, 1e-9));
    assert!(close(d.one_way_ms.max, q.max + 1.8, 1e-9));
    let jitter = 0.4 * (1.0 - (15.0f64 / 16.0).powf(n - 1.0));
    assert!(
        close(d.jitter_ms, jitter, 1e-4),
        "{} vs {jitter}",
        d.jitter_ms
    );
    let link = &r.links[0];
    let s = link.sojourn_ms.unwrap();
    let sent = link.tx_pkts as f64;
    assert!(close(s.mean, 0.2 * (sent - 1.0), 1e-9), "{s:?} over {sent}");
    assert!(close(s.max, 0.4 * (sent - 1.0), 1e-9), "{s:?} over {sent}");
}

/// Per-flow delay in flows.csv: one row per flow, the columns filled from the report.
#[test]
fn flows_csv_carries_the_delay_columns() {
    let r = run(
        "name = \"t\"\nduration_s = 0.1\ndiscipline = \"fifo\"\nrouters = [\"a\", \"b\"]\n\
         [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 10\ndelay_ms = 1\nbuffer_bytes = 1000000\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 20\njitter = 0\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 1\nstart_s = 0.09\n",
    );
    let text = r.flows_csv();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let h = rd.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = rd.records().map(|x| x.unwrap()).collect();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let d = r.flows[0].delay.unwrap();
    assert_eq!(
        rows[0][col("delay_pkts")].parse::<u64>().unwrap(),
        d.packets
    );
    let p99: f64 = rows[0][col("queueing_p99_ms")].parse().unwrap();
    assert!(close(p99, d.queueing_ms.p99, 1e-6));
    // The second flow starts at 90 ms behind a 45 ms queue: nothing arrived, so its cells are empty.
    assert!(r.flows[1].delay.is_none());
    assert_eq!(&rows[1][col("delay_mean_ms")], "");
    assert_eq!(&rows[1][col("jitter_ms")], "");
}
