//! Max-min fairness, the target of every scheme here, and the exact oracle for any
//! scenario of constant-rate sources.
//!
//! Single link: `alpha` solves `sum_i w_i * min(r_i / w_i, alpha) = C` (CSFQ paper,
//! Eq. 1 and Section 2.3); if the demand fits, `alpha = max r_i / w_i` by convention.
//! Network: progressive filling ("water-filling", Bertsekas and Gallager, Data Networks,
//! Section 6.5.2): every unfrozen flow's normalized rate grows together until a flow
//! reaches its demand or a link fills, which freezes every flow crossing it.
//!
//! Per hop ([`per_hop`]): the reference for open-loop (constant-rate) flows on multi-hop
//! paths. No per-link scheme can cut an unresponsive flow at an earlier link because a
//! later one will: each link shares max-min among the rates that reach it, and a flow
//! leaves every link with `w * min(r / w, alpha_link)`. DRR and CSFQ both approach this,
//! not the end-to-end allocation, when their flows do not react to loss.

use thiserror::Error;

/// A malformed max-min problem.
#[derive(Debug, Error, PartialEq)]
pub enum MaxMinError {
    /// A flow crosses a link that does not exist.
    #[error("flow {flow} crosses link {link}, but there are only {links} links")]
    UnknownLink {
        /// The flow's index.
        flow: usize,
        /// The link index it names.
        link: usize,
        /// How many links there are.
        links: usize,
    },
    /// A negative or non-finite demand, weight or capacity.
    #[error("{what} must be finite and {bound}, got {value}")]
    BadNumber {
        /// Which quantity.
        what: &'static str,
        /// The bound it violates.
        bound: &'static str,
        /// The value.
        value: f64,
    },
    /// The per-hop rates did not settle: the links feed each other in a cycle.
    #[error("the per-hop allocation did not converge within {passes} passes")]
    NoFixedPoint {
        /// How many passes were made.
        passes: usize,
    },
}

/// The unweighted fair share of one link: `alpha` with `sum min(r_i, alpha) = C`.
pub fn fair_share(rates: &[f64], capacity: f64) -> f64 {
    let weights = vec![1.0; rates.len()];
    weighted_fair_share(rates, &weights, capacity)
}

/// The weighted fair share of one link: `alpha` with `sum w_i min(r_i / w_i, alpha) = C`.
/// Flow `i` then gets `w_i * min(r_i / w_i, alpha)`.
pub fn weighted_fair_share(rates: &[f64], weights: &[f64], capacity: f64) -> f64 {
    assert_eq!(rates.len(), weights.len());
    let mut norm: Vec<(f64, f64)> = rates
        .iter()
        .zip(weights)
        .map(|(&r, &w)| (r / w, w))
        .collect();
    norm.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = rates.iter().sum();
    if total <= capacity {
        return norm.last().map_or(0.0, |x| x.0);
    }
    // Walk the sorted normalized rates: below the k-th, flows are satisfied.
    let mut used = 0.0;
    let mut w_left: f64 = weights.iter().sum();
    for &(nr, w) in &norm {
        let alpha = (capacity - used) / w_left;
        if alpha <= nr {
            return alpha;
        }
        used += nr * w;
        w_left -= w;
    }
    unreachable!("demand exceeds capacity, so some flow is constrained")
}

/// One flow of a network max-min problem.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxMinFlow {
    /// Its demand (sending rate), bits/s; `f64::INFINITY` for a greedy flow.
    pub demand: f64,
    /// Its weight (1 for unweighted).
    pub weight: f64,
    /// Indices of the links it crosses, in the order it crosses them.
    pub links: Vec<usize>,
}

/// Checks an allocation problem: capacities finite and non-negative, demands non-negative,
/// weights positive and finite, every link a flow names exists.
pub fn check_problem(capacities: &[f64], flows: &[MaxMinFlow]) -> Result<(), MaxMinError> {
    for &c in capacities {
        if !(c.is_finite() && c >= 0.0) {
            return Err(MaxMinError::BadNumber {
                what: "capacity",
                bound: ">= 0",
                value: c,
            });
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if f.demand.is_nan() || f.demand < 0.0 {
            return Err(MaxMinError::BadNumber {
                what: "demand",
                bound: ">= 0",
                value: f.demand,
            });
        }
        if !(f.weight.is_finite() && f.weight > 0.0) {
            return Err(MaxMinError::BadNumber {
                what: "weight",
                bound: "> 0",
                value: f.weight,
            });
        }
        if let Some(&l) = f.links.iter().find(|&&l| l >= capacities.len()) {
            return Err(MaxMinError::UnknownLink {
                flow: i,
                link: l,
                links: capacities.len(),
            });
        }
    }
    Ok(())
}

/// The weighted max-min fair allocation of `flows` over links of `capacities` (bits/s).
pub fn water_fill(capacities: &[f64], flows: &[MaxMinFlow]) -> Result<Vec<f64>, MaxMinError> {
    check_problem(capacities, flows)?;
    let mut alloc = vec![0.0; flows.len()];
    let mut frozen: Vec<bool> = flows.iter().map(|f| f.demand == 0.0).collect();
    let mut residual = capacities.to_vec();
    let mut level = 0.0; // the common normalized rate of unfrozen flows
    while frozen.iter().any(|f| !f) {
        // How far the level can rise before a flow meets its demand or a link fills.
        let mut step = f64::INFINITY;
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                step = step.min(f.demand / f.weight - level);
            }
        }
        let mut link_weight = vec![0.0; capacities.len()];
        for (i, f) in flows.iter().enumerate() {
            if !frozen[i] {
                for &l in &f.links {
                    link_weight[l] += f.weight;
                }
            }
        }
        for (l, &w) in link_weight.iter().enumerate() {
            if w > 0.0 {
                step = step.min(residual[l] / w);
            }
        }
        if !step.is_finite() {
            // Greedy flows on no link: unbounded; leave them at infinity.
            for (i, f) in flows.iter().enumerate() {
                if !frozen[i] {
                    alloc[i] = f.demand;
                    frozen[i] = true;
                }
            }
            break;
        }
        let step = step.max(0.0);
        level += step;
        for (l, &w) in link_weight.iter().enumerate() {
            residual[l] -= step * w;
        }
        let eps = 1e-9 * capacities.iter().cloned().fold(1.0, f64::max);
        for (i, f) in flows.iter().enumerate() {
            if frozen[i] {
                continue;
            }
            alloc[i] = level * f.weight;
            let at_demand = alloc[i] >= f.demand - eps;
            let on_full_link = f.links.iter().any(|&l| residual[l] <= eps);
            if at_demand || on_full_link {
                alloc[i] = alloc[i].min(f.demand);
                frozen[i] = true;
            }
        }
    }
    Ok(alloc)
}

/// The per-hop fair allocation: every flow's rate after its last link when each link
/// shares (weighted) max-min among the rates that reach it, and each flow enters its first
/// link at its demand. Links are revisited until no rate changes (one pass per hop of the
/// longest path when no two links feed each other both ways).
pub fn per_hop(capacities: &[f64], flows: &[MaxMinFlow]) -> Result<Vec<f64>, MaxMinError> {
    check_problem(capacities, flows)?;
    // rate[i][k]: flow i's rate entering hop k (k = links.len(): after its last link).
    let mut rate: Vec<Vec<f64>> = flows
        .iter()
        .map(|f| vec![f.demand; f.links.len() + 1])
        .collect();
    let mut crossing: Vec<Vec<(usize, usize)>> = vec![Vec::new(); capacities.len()];
    for (i, f) in flows.iter().enumerate() {
        for (k, &l) in f.links.iter().enumerate() {
            crossing[l].push((i, k));
        }
    }
    let max_passes = 4 * capacities.len() + 100;
    let (mut rates, mut weights) = (Vec::new(), Vec::new());
    for _ in 0..max_passes {
        let mut changed = false;
        for (l, on) in crossing.iter().enumerate() {
            rates.clear();
            weights.clear();
            for &(i, k) in on {
                rates.push(rate[i][k]);
                weights.push(flows[i].weight);
            }
            let alpha = weighted_fair_share(&rates, &weights, capacities[l]);
            for (&(i, k), (&r, &w)) in on.iter().zip(rates.iter().zip(&weights)) {
                let out = r.min(w * alpha);
                let old = rate[i][k + 1];
                // Greedy flows start at infinity, where a relative tolerance means nothing.
                let moved = if old.is_finite() && out.is_finite() {
                    (out - old).abs() > 1e-12 * old.abs().max(1.0)
                } else {
                    out != old
                };
                if moved {
                    rate[i][k + 1] = out;
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(rate.iter().map(|r| r[r.len() - 1]).collect());
        }
    }
    Err(MaxMinError::NoFixedPoint { passes: max_passes })
}

/// Jain's fairness index `(sum x)^2 / (n sum x^2)`: 1 when all equal, `1/n` at worst.
/// Undefined (NaN) for an empty or all-zero input: nothing shared is not shared fairly.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn flow(demand: f64, weight: f64, links: &[usize]) -> MaxMinFlow {
        MaxMinFlow {
            demand,
            weight,
            links: links.to_vec(),
        }
    }

    /// Link 0 (10) carries A and B, link 1 (4) carries A and C, all sending 10. Per hop,
    /// link 0 gives A and B 5 each, then link 1 cuts A to 2 beside C: B keeps 5. End to
    /// end, A's 2 frees link 0 for B: 8.
    #[test]
    fn per_hop_keeps_the_share_taken_upstream() {
        let caps = [10.0, 4.0];
        let flows = [
            flow(10.0, 1.0, &[0, 1]),
            flow(10.0, 1.0, &[0]),
            flow(10.0, 1.0, &[1]),
        ];
        let hop = per_hop(&caps, &flows).unwrap();
        let e2e = water_fill(&caps, &flows).unwrap();
        for (got, want) in hop.iter().zip([2.0, 5.0, 2.0]) {
            assert!(close(*got, want), "{hop:?}");
        }
        for (got, want) in e2e.iter().zip([2.0, 8.0, 2.0]) {
            assert!(close(*got, want), "{e2e:?}");
        }
    }

    /// Weighted: link 0 (12) gives A (weight 2) 8 and B 4; link 1 (6) solves
    /// 2 min(4, a) + a = 6, a = 2: A 4, C 2. End to end B gets 12 - 4 = 8.
    #[test]
    fn per_hop_weighted_hand_computed() {
        let caps = [12.0, 6.0];
        let flows = [
            flow(100.0, 2.0, &[0, 1]),
            flow(100.0, 1.0, &[0]),
            flow(100.0, 1.0, &[1]),
        ];
        let hop = per_hop(&caps, &flows).unwrap();
        for (got, want) in hop.iter().zip([4.0, 4.0, 2.0]) {
            assert!(close(*got, want), "{hop:?}");
        }
        let e2e = water_fill(&caps, &flows).unwrap();
        assert!(close(e2e[1], 8.0), "{e2e:?}");
    }

    /// Two links feeding each other (A: 0 then 1, B: 1 then 0) settle at 5 each; a flow
    /// whose demand fits keeps it; one on no link keeps its demand.
    #[test]
    fn per_hop_settles_on_links_that_feed_each_other() {
        let caps = [10.0, 10.0];
        let flows = [
            flow(10.0, 1.0, &[0, 1]),
            flow(10.0, 1.0, &[1, 0]),
            flow(3.0, 1.0, &[]),
        ];
        let hop = per_hop(&caps, &flows).unwrap();
        for (got, want) in hop.iter().zip([5.0, 5.0, 3.0]) {
            assert!(close(*got, want), "{hop:?}");
        }
        let light = [flow(2.0, 1.0, &[0, 1]), flow(3.0, 1.0, &[1])];
        assert_eq!(per_hop(&caps, &light).unwrap(), vec![2.0, 3.0]);
        // Greedy flows (infinite demand) end at finite shares: 5 and 5 on link 1, where
        // the first arrives with all of link 0 (10).
        let greedy = [
            flow(f64::INFINITY, 1.0, &[0, 1]),
            flow(f64::INFINITY, 1.0, &[1]),
        ];
        assert_eq!(per_hop(&caps, &greedy).unwrap(), vec![5.0, 5.0]);
    }

    /// On one link per hop and end to end agree (a proptest over random demands).
    #[test]
    fn per_hop_equals_water_filling_on_one_link() {
        use proptest::prelude::*;
        proptest!(|(demands in proptest::collection::vec(0.0f64..20.0, 1..12))| {
            let flows: Vec<_> = demands.iter().map(|&d| flow(d, 1.0, &[0])).collect();
            let hop = per_hop(&[30.0], &flows).unwrap();
            let e2e = water_fill(&[30.0], &flows).unwrap();
            for (a, b) in hop.iter().zip(&e2e) {
                prop_assert!((a - b).abs() <= 1e-6, "{hop:?} vs {e2e:?}");
            }
        });
    }

    #[test]
    fn single_link_hand_computed() {
        // C = 10: rates 1, 2, 8, 9 -> 1 + 2 + 2*alpha = 10 -> alpha = 3.5.
        assert!(close(fair_share(&[1.0, 2.0, 8.0, 9.0], 10.0), 3.5));
        // Fits: alpha = max rate.
        assert!(close(fair_share(&[1.0, 2.0], 10.0), 2.0));
        // csfq-fig3a: 32 flows at (i+1) * 0.3125 on 10 Mbps: alpha = 10/32.
        let rates: Vec<f64> = (0..32).map(|i| (i + 1) as f64 * 0.3125).collect();
        assert!(close(fair_share(&rates, 10.0), 0.3125));
    }

    #[test]
    fn weighted_single_link_hand_computed() {
        // Weights 1, 2, 3, all greedy on C = 12: alpha = 2, allocations 2, 4, 6.
        let a = weighted_fair_share(&[100.0, 100.0, 100.0], &[1.0, 2.0, 3.0], 12.0);
        assert!(close(a, 2.0));
        // Flow 0 wants only 1: 1 + 5 alpha = 12 -> alpha = 2.2.
        let a = weighted_fair_share(&[1.0, 100.0, 100.0], &[1.0, 2.0, 3.0], 12.0);
        assert!(close(a, 2.2));
    }

    #[test]
    fn network_parking_lot() {
        // Links 0 and 1 of 10; flow 0 crosses both, flows 1..=2 only link 0, flow 3 only
        // link 1. Link 0: three flows -> 10/3 each; link 1: flow 0 at 10/3, flow 3 the rest.
        let g = f64::INFINITY;
        let flows = vec![
            MaxMinFlow {
                demand: g,
                weight: 1.0,
                links: vec![0, 1],
            },
            MaxMinFlow {
                demand: g,
                weight: 1.0,
                links: vec![0],
            },
            MaxMinFlow {
                demand: g,
                weight: 1.0,
                links: vec![0],
            },
            MaxMinFlow {
                demand: g,
                weight: 1.0,
                links: vec![1],
            },
        ];
        let a = water_fill(&[10.0, 10.0], &flows).unwrap();
        let third = 10.0 / 3.0;
        assert!(close(a[0], third) && close(a[1], third) && close(a[2], third));
        assert!(close(a[3], 10.0 - third));
    }

    #[test]
    fn network_table4_relabeling_topology() {
        // csfq-table4: flows 1, 2 share link 1 (10 Mbps), then link 2 with flow 3.
        let d = 10.0;
        let flows = vec![
            MaxMinFlow {
                demand: d,
                weight: 1.0,
                links: vec![0, 1],
            },
            MaxMinFlow {
                demand: d,
                weight: 1.0,
                links: vec![0, 1],
            },
            MaxMinFlow {
                demand: d,
                weight: 1.0,
                links: vec![1],
            },
        ];
        let a = water_fill(&[10.0, 10.0], &flows).unwrap();
        for x in a {
            assert!(close(x, 10.0 / 3.0));
        }
    }

    #[test]
    fn network_weighted_across_two_links() {
        // Link 0 (C=6): flows 0 (w=1) and 1 (w=2); link 1 (C=10): flows 1 and 2 (w=3).
        // Level rises to 2 when link 0 fills: flow 0 = 2, flow 1 = 4. Then flow 2 alone
        // on link 1 gets 10 - 4 = 6.
        let g = f64::INFINITY;
        let flows = vec![
            MaxMinFlow {
                demand: g,
                weight: 1.0,
                links: vec![0],
            },
            MaxMinFlow {
                demand: g,
                weight: 2.0,
                links: vec![0, 1],
            },
            MaxMinFlow {
                demand: g,
                weight: 3.0,
                links: vec![1],
            },
        ];
        let a = water_fill(&[6.0, 10.0], &flows).unwrap();
        assert!(
            close(a[0], 2.0) && close(a[1], 4.0) && close(a[2], 6.0),
            "{a:?}"
        );
    }

    #[test]
    fn water_fill_agrees_with_single_link_formula() {
        let rates = [0.5, 1.0, 3.0, 7.0, 0.2];
        let weights = [1.0, 2.0, 1.0, 0.5, 1.0];
        let alpha = weighted_fair_share(&rates, &weights, 5.0);
        let flows: Vec<MaxMinFlow> = rates
            .iter()
            .zip(weights)
            .map(|(&r, w)| MaxMinFlow {
                demand: r,
                weight: w,
                links: vec![0],
            })
            .collect();
        let a = water_fill(&[5.0], &flows).unwrap();
        for i in 0..rates.len() {
            assert!(
                close(a[i], (weights[i] * alpha).min(rates[i])),
                "{i}: {a:?}"
            );
        }
        assert!(close(a.iter().sum::<f64>(), 5.0));
    }

    #[test]
    fn rejects_bad_problems() {
        let f = MaxMinFlow {
            demand: 1.0,
            weight: 1.0,
            links: vec![3],
        };
        assert!(matches!(
            water_fill(&[1.0], &[f]),
            Err(MaxMinError::UnknownLink { .. })
        ));
        let f = MaxMinFlow {
            demand: 1.0,
            weight: 0.0,
            links: vec![0],
        };
        assert!(matches!(
            water_fill(&[1.0], &[f]),
            Err(MaxMinError::BadNumber { .. })
        ));
    }

    #[test]
    fn jain_index_bounds() {
        assert!(close(jain_index(&[1.0, 1.0, 1.0]), 1.0));
        assert!(close(jain_index(&[1.0, 0.0, 0.0, 0.0]), 0.25));
        assert!(
            jain_index(&[0.0, 0.0]).is_nan(),
            "undefined when nothing is delivered"
        );
        assert!(jain_index(&[]).is_nan());
    }
}
