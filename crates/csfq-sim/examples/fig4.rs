use csfq_sim::{DisciplineKind, ScenarioFile, Simulation};
fn main() {
    let base = ScenarioFile::load("scenarios/csfq-fig4.toml".as_ref()).unwrap();
    for d in DisciplineKind::ALL {
        let mut line = format!("{d:6}");
        for n in [2u32, 4, 8, 12, 16, 22, 26, 32] {
            let mut s = base.with_discipline(d);
            let udp = s.flows[1].get_mut();
            udp.count = n - 1;
            udp.rate_mbps = Some(2.0 * 10.0 / n as f64);
            let r = Simulation::new(&s).unwrap().run();
            line += &format!(" {:.2}", r.flows[0].throughput_mbps / (10.0 / n as f64));
        }
        println!("{line}");
    }
}
