//! Shortest paths between routers: breadth first over the router-to-router ports, each
//! router's ports in index order, so ties go to the link written first and routes are
//! deterministic. Used to validate loops (`config`) and to route flows (`net`).

use std::collections::{HashMap, VecDeque};

/// Routes over a fixed set of router ports, computed once per pair of routers however
/// many flows join them.
pub(crate) struct RouterRoutes {
    /// Per router: its ports to other routers, in index order.
    out: Vec<Vec<usize>>,
    /// Per port: the router it leads to.
    to: Vec<usize>,
    /// Per port: the router it leaves.
    from: Vec<usize>,
    cache: HashMap<(usize, usize), Option<Vec<usize>>>,
}

impl RouterRoutes {
    /// Over ports given as (from, to) router indices, in index order.
    pub(crate) fn over(routers: usize, ports: impl Iterator<Item = (usize, usize)>) -> Self {
        let (from, to): (Vec<usize>, Vec<usize>) = ports.unzip();
        let mut out = vec![Vec::new(); routers];
        for (i, &f) in from.iter().enumerate() {
            out[f].push(i);
        }
        RouterRoutes {
            out,
            to,
            from,
            cache: HashMap::new(),
        }
    }

    /// The ports from router `a` to router `b` (empty if they are the same), cached.
    pub(crate) fn path(&mut self, a: usize, b: usize) -> Option<Vec<usize>> {
        if let Some(p) = self.cache.get(&(a, b)) {
            return p.clone();
        }
        let p = self.search(a, b);
        self.cache.insert((a, b), p.clone());
        p
    }

    /// The ports from router `from` to router `to`, uncached.
    pub(crate) fn search(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        let n = self.out.len();
        let mut via: Vec<Option<usize>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[from] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(r) = queue.pop_front() {
            if r == to {
                break;
            }
            for &pi in &self.out[r] {
                let next = self.to[pi];
                if !seen[next] {
                    seen[next] = true;
                    via[next] = Some(pi);
                    queue.push_back(next);
                }
            }
        }
        if !seen[to] {
            return None;
        }
        let mut path = Vec::new();
        let mut r = to;
        while r != from {
            let pi = via[r].expect("reached routers have a predecessor");
            path.push(pi);
            r = self.from[pi];
        }
        path.reverse();
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square r0-r1-r2-r3-r0 with ports numbered as links give them (link i: 2i one
    /// way, 2i + 1 back): two equal routes from r0 to r2, and the one over the link
    /// written first wins.
    #[test]
    fn ties_go_to_the_link_written_first() {
        let links = [(0, 1), (1, 2), (2, 3), (3, 0)];
        let ports = links.iter().flat_map(|&(a, b)| [(a, b), (b, a)]);
        let mut r = RouterRoutes::over(4, ports);
        assert_eq!(r.path(0, 2), Some(vec![0, 2]));
        assert_eq!(r.path(2, 0), Some(vec![3, 1]));
        assert_eq!(r.path(1, 1), Some(vec![]));
        let mut split = RouterRoutes::over(3, [(0, 1), (1, 0)].into_iter());
        assert_eq!(split.path(0, 2), None);
    }
}
