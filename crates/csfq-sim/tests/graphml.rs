//! A Topology Zoo network read from GraphML (`scenarios/abilene.toml`): the routers and
//! links the file holds, delays from the routers' coordinates (checked by hand for one
//! link), a scenario that stands on its own once written back, and DRR within 10% of the
//! reference share of every flow on it (per hop for the UDPs, end-to-end max-min for the
//! TCPs): the network is built as the file says.

use std::path::Path;

use csfq_sim::config::DisciplineKind;
use csfq_sim::{Scenario, ScenarioFile, Simulation};

fn abilene() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/abilene.toml");
    ScenarioFile::load(&path).unwrap()
}

#[test]
fn abilene_is_read_as_the_file_says() {
    let s = abilene();
    assert_eq!(s.routers.len(), 11);
    assert_eq!(s.links.len(), 14);
    assert!(s.routers.iter().any(|r| r == "Washington DC"));
    let l = s
        .links
        .iter()
        .map(|l| l.get_ref())
        .find(|l| l.between == ["New York".to_string(), "Chicago".to_string()])
        .expect("the New York - Chicago link");
    // OC-192 scaled by 1/1000.
    assert!((l.rate_mbps - 9.95328).abs() < 1e-9, "{}", l.rate_mbps);
    // Haversine on a 6371 km sphere: 1144.3 km, at 5 us per km.
    assert!((l.delay_ms - 5.72).abs() < 0.01, "{}", l.delay_ms);
    let delays: Vec<f64> = s.links.iter().map(|l| l.get_ref().delay_ms).collect();
    let (lo, hi) = delays
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), &d| (a.min(d), b.max(d)));
    assert!(
        (1.3..1.4).contains(&lo) && (10.9..11.1).contains(&hi),
        "{lo} {hi}"
    );
    // Written back, it parses alone (no GraphML file needed) to the same links.
    let again = ScenarioFile::parse(&s.to_toml(), Path::new("/nonexistent/a.toml")).unwrap();
    assert_eq!(
        again.links.iter().map(|l| l.get_ref()).collect::<Vec<_>>(),
        s.links.iter().map(|l| l.get_ref()).collect::<Vec<_>>()
    );
}

#[test]
fn drr_gives_every_flow_its_share_on_abilene() {
    let s = abilene()
        .variant(|s| s.discipline = DisciplineKind::Drr)
        .unwrap();
    let sim = Simulation::new(&s).unwrap();
    let reference = sim.topology().reference_allocation();
    let r = sim.run();
    for (f, share) in r.flows.iter().zip(&reference) {
        let err = f.throughput_mbps / (share / 1e6) - 1.0;
        assert!(
            err.abs() < 0.10,
            "flow {} {}->{}: {err:+.3}",
            f.flow,
            f.src,
            f.dst
        );
    }
}

/// A GraphML file that cannot be read is an error at the scenario's `[graphml]` table,
/// naming the file; a fault inside it names the GraphML file and its line.
#[test]
fn graphml_faults_are_located() {
    let dir = std::env::temp_dir().join(format!("csfq-graphml-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = |file: &str| {
        format!(
            "name = \"g\"\nduration_s = 1.0\ndiscipline = \"fifo\"\n\n[graphml]\nfile = \"{file}\"\n\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 1\n"
        )
    };
    let e = ScenarioFile::parse(&scenario("nosuch.graphml"), &dir.join("s.toml")).unwrap_err();
    assert_eq!(
        (e.line, e.field.as_deref()),
        (5, Some("graphml.file")),
        "{e}"
    );
    assert!(
        e.message.contains("nosuch.graphml") && e.message.contains("cannot read"),
        "{e}"
    );
    std::fs::write(
        dir.join("bad.graphml"),
        "<graphml>\n<graph>\n<node id=\"a\"/>\n<edge source=\"a\"/>\n</graph>\n</graphml>\n",
    )
    .unwrap();
    let e = ScenarioFile::parse(&scenario("bad.graphml"), &dir.join("s.toml")).unwrap_err();
    assert!(e.file.ends_with("bad.graphml"), "{e}");
    assert_eq!((e.line, e.field.as_deref()), (4, Some("target")), "{e}");
}

/// A path longer than a packet's 16-bit hop count (a chain of 70 000 routers) is an error
/// at the flow's table, naming its length, where it was a build error naming a flow index
/// only; a path within the count over the same chain loads.
#[test]
fn a_path_longer_than_the_hop_count_is_an_error_at_its_flow() {
    let dir = std::env::temp_dir().join(format!("csfq-graphml-chain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 70_000;
    let mut xml = String::from("<graphml>\n<graph edgedefault=\"undirected\">\n");
    for i in 0..n {
        xml.push_str(&format!("<node id=\"n{i}\"/>\n"));
    }
    for i in 1..n {
        xml.push_str(&format!("<edge source=\"n{}\" target=\"n{i}\"/>\n", i - 1));
    }
    xml.push_str("</graph>\n</graphml>\n");
    std::fs::write(dir.join("chain.graphml"), xml).unwrap();
    let scenario = |to: &str| {
        format!(
            "name = \"chain\"\nduration_s = 1.0\ndiscipline = \"fifo\"\n\n[graphml]\n\
             file = \"chain.graphml\"\n\n[[flow]]\nkind = \"udp\"\nfrom = \"n0\"\nto = \"{to}\"\n\
             rate_mbps = 1\n"
        )
    };
    let far = format!("n{}", n - 1);
    let e = ScenarioFile::parse(&scenario(&far), &dir.join("s.toml")).unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (11, Some("to")), "{e}");
    assert!(e.message.contains("69999 hops"), "{e}");
    assert!(ScenarioFile::parse(&scenario("n60000"), &dir.join("s.toml")).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
