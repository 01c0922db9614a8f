//! Alpha-fair allocations (Mo and Walrand, "Fair end-to-end window-based congestion
//! control", IEEE/ACM ToN 8(5), 2000): the rates that maximize
//! `sum_i w_i x_i^(1-a) / (1-a)` (`sum_i w_i log x_i` for `a = 1`) subject to every link's
//! load being at most its capacity and every flow's rate at most its demand.
//!
//! `a = 1` is proportional fairness (Kelly, Maulloo and Tan 1998), `a = 2` minimum potential
//! delay (Massoulié and Roberts 2000), and `a -> infinity` max-min ([`crate::maxmin`]). The
//! edge-to-edge overlay paper (Section 5) shows its loops approach proportional fairness and
//! compares the long flow of a linear network with both the `a = 1` and `a = 2` values.
//!
//! Solved exactly (to a relative 1e-12) on the dual: link prices `p_l >= 0`, each flow at
//! `x_i = min(d_i, (w_i / q_i)^(1/a))` with `q_i` the sum of its links' prices. Coordinate
//! descent sets one link's price at a time, by bisection, to the price at which that link is
//! exactly full (or 0 if it is not full at price 0); the dual is strictly convex where flows
//! are greedy, so the sweeps converge to the unique optimum.

use crate::maxmin::{MaxMinError, MaxMinFlow};

/// The weighted `a`-fair allocation of `flows` over links of `capacities` (bits/s).
/// `a` must be positive and finite. Greedy flows on no link get `f64::INFINITY`.
pub fn alpha_fair(
    capacities: &[f64],
    flows: &[MaxMinFlow],
    a: f64,
) -> Result<Vec<f64>, MaxMinError> {
    if !(a.is_finite() && a > 0.0) {
        return Err(MaxMinError::BadNumber {
            what: "alpha",
            bound: "> 0",
            value: a,
        });
    }
    crate::maxmin::check_problem(capacities, flows)?;
    // Solved in units of the largest capacity, so prices stay representable for large `a`.
    let scale = capacities.iter().cloned().fold(0.0, f64::max);
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let capacities: Vec<f64> = capacities.iter().map(|c| c / scale).collect();
    let flows: Vec<MaxMinFlow> = flows
        .iter()
        .map(|f| MaxMinFlow {
            demand: f.demand / scale,
            weight: f.weight,
            links: f.links.clone(),
        })
        .collect();
    let rate = |f: &MaxMinFlow, q: f64| -> f64 {
        if f.demand == 0.0 {
            0.0
        } else if q <= 0.0 {
            f.demand
        } else {
            (f.weight / q).powf(1.0 / a).min(f.demand)
        }
    };
    let mut on_link: Vec<Vec<usize>> = vec![Vec::new(); capacities.len()];
    for (i, f) in flows.iter().enumerate() {
        for &l in &f.links {
            on_link[l].push(i);
        }
    }
    let mut price = vec![0.0f64; capacities.len()];
    let mut q = vec![0.0f64; flows.len()];
    for sweep in 0..200_000 {
        let mut moved = 0.0f64;
        for (l, members) in on_link.iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let c = capacities[l];
            let others = |i: usize| q[i] - price[l];
            let load = |p: f64| -> f64 {
                members
                    .iter()
                    .map(|&i| rate(&flows[i], others(i) + p))
                    .sum()
            };
            let new = if load(0.0) <= c {
                0.0
            } else {
                // load is non-increasing in p: find where it crosses c.
                let mut hi = price[l].max(1e-30);
                while load(hi) > c {
                    hi *= 2.0;
                    if !hi.is_finite() {
                        break; // a zero-capacity link with a greedy flow: price unbounded
                    }
                }
                let mut lo = 0.0;
                for _ in 0..200 {
                    let mid = 0.5 * (lo + hi);
                    if mid <= lo || mid >= hi {
                        break;
                    }
                    if load(mid) > c {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                hi
            };
            let old = price[l];
            if new != old {
                let scale = new.abs().max(old.abs());
                moved = moved.max((new - old).abs() / scale);
                for &i in members {
                    q[i] += new - old;
                }
                price[l] = new;
            }
        }
        if moved < 1e-13 && sweep > 0 {
            break;
        }
    }
    Ok(flows
        .iter()
        .zip(&q)
        .map(|(f, &qi)| {
            scale
                * if f.links.is_empty() {
                    f.demand
                } else {
                    rate(f, qi)
                }
        })
        .collect())
}

/// The long flow of the linear network of the overlay paper's Fig. 5 (and Massoulié and
/// Roberts' example): `m` links of capacity `c`, `k` one-hop cross flows on each, one long
/// flow across all, everyone greedy. Proportional fairness gives it `c / (1 + m k)`.
pub fn linear_network_proportional(c: f64, m: u32, k: u32) -> f64 {
    c / (1.0 + m as f64 * k as f64)
}

/// The same network under minimum potential delay fairness: `c / (1 + k sqrt(m))`.
pub fn linear_network_min_delay(c: f64, m: u32, k: u32) -> f64 {
    c / (1.0 + k as f64 * (m as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxmin::water_fill;

    fn linear(m: u32, k: u32) -> (Vec<f64>, Vec<MaxMinFlow>) {
        let caps = vec![100e6; m as usize];
        let mut flows = vec![MaxMinFlow {
            demand: f64::INFINITY,
            weight: 1.0,
            links: (0..m as usize).collect(),
        }];
        for l in 0..m as usize {
            for _ in 0..k {
                flows.push(MaxMinFlow {
                    demand: f64::INFINITY,
                    weight: 1.0,
                    links: vec![l],
                });
            }
        }
        (caps, flows)
    }

    /// The closed forms of the linear network (derived by hand from the Lagrangian: the
    /// cross flows get `m` (a = 1) or `sqrt(m)` (a = 2) times the long flow's rate).
    #[test]
    fn linear_network_matches_the_closed_forms() {
        for m in 1..=6 {
            let (caps, flows) = linear(m, 4);
            let pf = alpha_fair(&caps, &flows, 1.0).unwrap();
            let want = linear_network_proportional(100e6, m, 4);
            assert!(
                (pf[0] / want - 1.0).abs() < 1e-9,
                "m={m}: {} vs {want}",
                pf[0]
            );
            assert!((pf[1] / (m as f64 * want) - 1.0).abs() < 1e-9);
            let md = alpha_fair(&caps, &flows, 2.0).unwrap();
            let want = linear_network_min_delay(100e6, m, 4);
            assert!(
                (md[0] / want - 1.0).abs() < 1e-9,
                "m={m}: {} vs {want}",
                md[0]
            );
            // Every link is full under both.
            for l in 0..m as usize {
                let load: f64 = flows
                    .iter()
                    .zip(&md)
                    .filter(|(f, _)| f.links.contains(&l))
                    .map(|(_, x)| x)
                    .sum();
                assert!((load / 100e6 - 1.0).abs() < 1e-9);
            }
        }
    }

    /// A large `a` approaches max-min; demands cap flows; weights scale shares (a = 1 on one
    /// link gives shares proportional to weights).
    #[test]
    fn limits_demands_and_weights() {
        let (caps, flows) = linear(3, 2);
        let mm = water_fill(&caps, &flows).unwrap();
        let near = alpha_fair(&caps, &flows, 64.0).unwrap();
        for (x, y) in mm.iter().zip(&near) {
            assert!((x / y - 1.0).abs() < 0.05, "{x} vs {y}");
        }
        let one = vec![10.0];
        let flows = vec![
            MaxMinFlow {
                demand: 1.0,
                weight: 1.0,
                links: vec![0],
            },
            MaxMinFlow {
                demand: f64::INFINITY,
                weight: 1.0,
                links: vec![0],
            },
            MaxMinFlow {
                demand: f64::INFINITY,
                weight: 2.0,
                links: vec![0],
            },
        ];
        let x = alpha_fair(&one, &flows, 1.0).unwrap();
        assert!((x[0] - 1.0).abs() < 1e-9);
        assert!(
            (x[1] - 3.0).abs() < 1e-9 && (x[2] - 6.0).abs() < 1e-9,
            "{x:?}"
        );
        assert!(alpha_fair(&one, &flows, 0.0).is_err());
        let bad = vec![MaxMinFlow {
            demand: 1.0,
            weight: 1.0,
            links: vec![3],
        }];
        assert!(matches!(
            alpha_fair(&one, &bad, 1.0),
            Err(MaxMinError::UnknownLink {
                flow: 0,
                link: 3,
                ..
            })
        ));
    }
}
