use csfq_sim::{DisciplineKind, ScenarioFile, Simulation};
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let s = ScenarioFile::load(path.as_ref()).unwrap();
    for d in DisciplineKind::ALL {
        let t = std::time::Instant::now();
        let r = Simulation::new(&s.with_discipline(d)).unwrap().run();
        let th: Vec<String> = r
            .flows
            .iter()
            .take(40)
            .map(|f| format!("{:.3}", f.throughput_mbps))
            .collect();
        println!(
            "{d}: {:?} events={} t={:?} jain={:.3}\n  {}",
            r.links[0].utilization,
            r.events,
            t.elapsed(),
            r.jain_index,
            th.join(" ")
        );
    }
}
