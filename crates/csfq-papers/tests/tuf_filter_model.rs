//! The dataplane's TUF (`tuf-filter`: integer tags at the edges, TCPs tagged there as
//! unresponsive, a filter that drops tags above the threshold at which a window's arrivals
//! fill the link) beside the report's TUF (`tuf`: TCP sources tag themselves by Padhye's
//! formula, a queue that pushes out the highest tag), on the experiments the report runs
//! TUF in: how far the dataplane's TUF is from the report's.

use csfq_papers::experiments::find;
use csfq_papers::scenarios::fig4_with;
use csfq_sim::{DisciplineKind, SimReport, Simulation};

const SEEDS: u64 = 4;

fn run(id: &str, d: DisciplineKind, seed: u64, n: Option<u32>) -> SimReport {
    let base = find(id).unwrap().scenario();
    let mut s = match n {
        Some(n) => fig4_with(&base, n),
        None => base,
    }
    .with_discipline(d);
    s.seed = seed;
    Simulation::new(&s.check().unwrap()).unwrap().run()
}

/// Mean and standard error of the mean.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, (var / n).sqrt())
}

/// Seeds 1-4. tuf-fig9a (32 UDP flows at 1..32 x their share): the filter's worst and best
/// flows within two standard errors (of the difference of the means) of the queue's.
/// tuf-fig9b (a UDP at 10 Mbit/s against 31 TCPs): the UDP gets no more through the filter
/// than through the queue, within two standard errors. tuf-fig10 (a TCP against N - 1
/// UDPs at twice their share) is printed: its TCP, tagged as unresponsive, fares as under
/// CSFQ rather than as the report's self-tagging TCP (README, "TUF on a real router").
#[test]
fn the_filter_beside_the_push_out_queue() {
    let (mut lo, mut hi, mut udp9b) = ([vec![], vec![]], [vec![], vec![]], [vec![], vec![]]);
    for seed in 1..=SEEDS {
        for (i, d) in [DisciplineKind::Tuf, DisciplineKind::TufFilter]
            .into_iter()
            .enumerate()
        {
            let r = run("tuf-fig9a", d, seed, None);
            let dev: Vec<f64> = r
                .flows
                .iter()
                .map(|f| f.throughput_mbps / 0.3125 - 1.0)
                .collect();
            lo[i].push(dev.iter().copied().fold(f64::MAX, f64::min));
            hi[i].push(dev.iter().copied().fold(f64::MIN, f64::max));
            let udp = run("tuf-fig9b", d, seed, None).flows[0].throughput_mbps;
            udp9b[i].push(udp);
            let mut tcp = Vec::new();
            for n in [8u32, 16, 24, 32] {
                let share =
                    run("tuf-fig10", d, seed, Some(n)).flows[0].throughput_mbps / (10.0 / n as f64);
                tcp.push(share);
            }
            eprintln!("seed {seed} {d}: tuf-fig9b the UDP {udp:.3} Mbit/s; tuf-fig10 the TCP {tcp:.3?} of its share at N = 8, 16, 24, 32");
        }
    }
    let ((q, sq), (f, sf)) = (mean_se(&udp9b[0]), mean_se(&udp9b[1]));
    let two_se = 2.0 * (sq * sq + sf * sf).sqrt();
    eprintln!("tuf-fig9b the UDP: queue {q:.3}, filter {f:.3} Mbit/s (2 se {two_se:.3})");
    assert!(
        f <= q + two_se,
        "tuf-fig9b: the UDP gets more through the filter {:?} than the queue {:?}",
        udp9b[1],
        udp9b[0]
    );
    for (what, [queue, filter]) in [("worst flow", lo), ("best flow", hi)] {
        let ((a, sa), (b, sb)) = (mean_se(&queue), mean_se(&filter));
        let two_se = 2.0 * (sa * sa + sb * sb).sqrt();
        eprintln!(
            "tuf-fig9a {what}: queue {a:+.4}, filter {b:+.4} (difference {:+.4}, 2 se {two_se:.4})",
            b - a
        );
        assert!(
            (b - a).abs() <= two_se,
            "tuf-fig9a {what}: filter {filter:?} against queue {queue:?}"
        );
    }
}
