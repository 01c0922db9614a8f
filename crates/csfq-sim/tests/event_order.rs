//! The canonical event order moves results only through same-instant events. Ports whose
//! discipline departs in order fix each packet's departure when it is queued, with no
//! end-of-transmission event; events at one nanosecond then run in another order than
//! when every departure was an event of its own. On a scenario in which no two events
//! fall on one nanosecond, nothing but the count of events may differ: every flow's and
//! every link's counts equal those the engine with an event per departure gave
//! (`testdata/no-ties-counts.csv`, written by that engine; `testdata/no-ties.toml` says
//! how the absence of ties was checked). The same counts hold since a packet bound for a
//! private hop (its flow's access port into its host) is handed to it when it leaves the
//! link before, with no arrival event at the router between (its flows' access links are
//! private hops), and since its hosts take those packets as they are handed on, with no
//! arrival event at the host.

use std::path::PathBuf;

use csfq_sim::{DisciplineKind, ScenarioFile, Simulation};

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name)
}

#[test]
fn without_ties_every_count_is_the_event_per_departure_engines() {
    let expected = std::fs::read_to_string(testdata("no-ties-counts.csv")).unwrap();
    let mut disciplines: Vec<&str> = Vec::new();
    for line in expected.lines().skip(1) {
        let d = line.split(',').next().unwrap();
        if !disciplines.contains(&d) {
            disciplines.push(d);
        }
    }
    assert!(disciplines.len() >= 10, "{disciplines:?}");
    for d in disciplines {
        let kind = DisciplineKind::from_name(d).unwrap();
        let s = ScenarioFile::load(&testdata("no-ties.toml"))
            .unwrap()
            .with_run_options(None, Some(kind));
        let r = Simulation::new(&s).unwrap().run();
        let mut got = Vec::new();
        for f in &r.flows {
            got.push(format!(
                "{d},flow,{},{},{},{},{},{},",
                f.flow, f.sent_pkts, f.delivered_pkts, f.dropped_pkts, f.retransmits, f.timeouts
            ));
        }
        for (i, l) in r.links.iter().enumerate() {
            got.push(format!("{d},link,{i},,,{},,,{}", l.dropped_pkts, l.tx_pkts));
        }
        let want: Vec<&str> = expected
            .lines()
            .filter(|l| l.split(',').next() == Some(d))
            .collect();
        assert_eq!(got, want, "{d}");
        // A run that drops nothing checks little: these do, at the bottleneck.
        assert!(r.links.iter().any(|l| l.dropped_pkts > 0), "{d}");
    }
}
