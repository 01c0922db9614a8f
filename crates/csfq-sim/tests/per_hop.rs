//! Open-loop flows on multi-hop paths are judged against the per-hop allocation
//! (`csfq_algo::maxmin::per_hop`: each link shares max-min among the rates that reach it),
//! not the end-to-end one: a constant-rate flow cut down at a later link still takes its
//! larger share at the earlier ones, and no per-link scheme can prevent that.
//!
//! Random chains of 2..5 links of 10 Mbit/s carry 6..14 CBR flows, each entering at a
//! random router and leaving at a later one at 0.5..8 Mbit/s, unweighted and with weights
//! 1..3. Over the second half of a 120 s run (after the estimators settle), every flow is
//! within 5% of its per-hop share under CSFQ (either estimator) and within 2% under
//! weighted DRR. The run is long because CSFQ's drops are random: a flow that keeps 1 of
//! 9 packets and delivers 70 a second has a binomial standard deviation of 3.6% over
//! 10 s, 1.5% over 60 s; the worst flow of these chains was 9% off over 10 s, 3.3% over
//! 60 s (histogram estimator; the fixed-point model 3.4%).

use csfq_sim::config::EstimatorKind;
use csfq_sim::{DisciplineKind, Scenario, ScenarioFile, Simulation, Topology};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::fmt::Write as _;
use std::path::Path;

/// A random chain of CBR flows (TOML, parsed as a user's file would be).
fn chain(seed: u64, weighted: bool) -> Scenario {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let links = rng.random_range(2..=5usize);
    let flows = rng.random_range(6..=14usize);
    let mut t = format!(
        "name = \"chain-{seed}\"\ndescription = \"random CBR chain\"\nduration_s = 120.0\n\
         seed = {seed}\ndiscipline = \"csfq\"\nrouters = [{}]\n",
        (0..=links)
            .map(|i| format!("\"r{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for i in 0..links {
        writeln!(
            t,
            "[[link]]\nbetween = [\"r{i}\", \"r{}\"]\nrate_mbps = 10\ndelay_ms = 2\n\
             buffer_bytes = 64000",
            i + 1
        )
        .unwrap();
    }
    for _ in 0..flows {
        let from = rng.random_range(0..links);
        let to = rng.random_range(from + 1..=links);
        let rate = (rng.random_range(0.5..8.0f64) * 1000.0).round() / 1000.0;
        let weight = if weighted {
            rng.random_range(1..=3u32)
        } else {
            1
        };
        writeln!(
            t,
            "[[flow]]\nkind = \"udp\"\nfrom = \"r{from}\"\nto = \"r{to}\"\nrate_mbps = {rate}\n\
             weight = {weight}\naccess = {{ rate_mbps = 100, delay_ms = 1 }}"
        )
        .unwrap();
    }
    ScenarioFile::parse(&t, Path::new("chain.toml")).expect("generated scenario is valid")
}

/// Each flow's mean throughput over the second half of the run, bits/s.
fn second_half_bps(s: &Scenario) -> Vec<f64> {
    let r = Simulation::new(s).unwrap().run();
    r.flows
        .iter()
        .map(|f| {
            let h = &f.series_mbps[f.series_mbps.len() / 2..];
            h.iter().sum::<f64>() / h.len() as f64 * 1e6
        })
        .collect()
}

#[test]
fn csfq_and_drr_land_on_the_per_hop_allocation_of_random_cbr_chains() {
    let mut discriminating = 0;
    for seed in 1..=8 {
        for weighted in [false, true] {
            let s = chain(seed, weighted);
            let topo = Topology::build(&s).unwrap();
            let hop = topo.per_hop_allocation().expect("a chain settles");
            let e2e = topo.max_min_allocation();
            let paper = |s: Scenario| {
                s.variant(|s| s.csfq.estimator = EstimatorKind::Paper)
                    .unwrap()
            };
            let runs = [
                ("csfq", s.with_discipline(DisciplineKind::Csfq), 0.05),
                (
                    "csfq (paper)",
                    paper(s.with_discipline(DisciplineKind::Csfq)),
                    0.05,
                ),
                ("drr", s.with_discipline(DisciplineKind::Drr), 0.02),
            ];
            for (d, run, tolerance) in runs {
                let got = second_half_bps(&run);
                for (i, (g, h)) in got.iter().zip(&hop).enumerate() {
                    assert!(
                        (g / h - 1.0).abs() <= tolerance,
                        "seed {seed} weighted {weighted} {d} flow {i}: {:.4} Mbit/s, \
                         per hop {:.4}, end to end {:.4}",
                        g / 1e6,
                        h / 1e6,
                        e2e[i] / 1e6
                    );
                }
                // Where the references differ, DRR is far from the end-to-end one.
                if d == "drr"
                    && got
                        .iter()
                        .zip(&e2e)
                        .any(|(g, e)| (g / e - 1.0).abs() > 0.10)
                {
                    discriminating += 1;
                }
            }
        }
    }
    // The test tells the two references apart on most chains.
    assert!(
        discriminating >= 6,
        "only {discriminating} chains separate them"
    );
}

/// The per-hop allocation by hand on the shape: a flow cut at link 2 keeps its
/// link-1 share, so the flow that only crosses link 1 cannot take the rest.
#[test]
fn per_hop_reference_of_a_two_link_scenario() {
    let t = "name = \"two\"\ndescription = \"d\"\nduration_s = 1.0\ndiscipline = \"drr\"\n\
             routers = [\"a\", \"b\", \"c\"]\n\
             [[link]]\nbetween = [\"a\", \"b\"]\nrate_mbps = 10\ndelay_ms = 1\nbuffer_bytes = 64000\n\
             [[link]]\nbetween = [\"b\", \"c\"]\nrate_mbps = 4\ndelay_ms = 1\nbuffer_bytes = 64000\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"c\"\nrate_mbps = 10\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a\"\nto = \"b\"\nrate_mbps = 10\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"b\"\nto = \"c\"\nrate_mbps = 10\n";
    let s = ScenarioFile::parse(t, Path::new("two.toml")).unwrap();
    let topo = Topology::build(&s).unwrap();
    let hop = topo.per_hop_allocation().unwrap();
    let e2e = topo.max_min_allocation();
    for (got, want) in hop.iter().zip([2e6, 5e6, 2e6]) {
        assert!((got - want).abs() < 1.0, "{hop:?}");
    }
    for (got, want) in e2e.iter().zip([2e6, 8e6, 2e6]) {
        assert!((got - want).abs() < 1.0, "{e2e:?}");
    }
    // The reference judges these open-loop flows per hop.
    assert_eq!(topo.reference_allocation(), hop);
}
