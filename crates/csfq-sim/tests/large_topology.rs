//! A topology far larger than what runs on it: 100 000 routers (a random tree read from
//! GraphML) and two flows for a second. What the run holds and writes follows the flows,
//! not the routers: only the link directions some flow crosses are recorded and reported
//! (checked against the tree's own paths, computed here from the parents), the others are
//! named in `unused_links`, the report's JSON takes a few tens of bytes per unused link,
//! and the heap at its peak stays within a budget per router.
//!
//! The budget, 2 KB of heap per router at the peak of building, running and reporting, is
//! the one a topology can afford beside BENCHMARKS.md's 1.5 KB per flow at a million flows.
//! Before link records followed the flows, the same run took about 10 KB per router (a
//! 4 KB label histogram at every CSFQ port, time series at every link direction) and wrote
//! a 118 MB summary.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use csfq_sim::{ScenarioFile, Simulation};

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = HELD.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HELD.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const ROUTERS: usize = 100_000;
const HEAP_PER_ROUTER: usize = 2048;

/// Router `i > 0`'s parent in the tree: an earlier router, drawn with a fixed LCG.
fn parents() -> Vec<usize> {
    let mut x: u64 = 1;
    (0..ROUTERS)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if i == 0 {
                0
            } else {
                ((x >> 33) as usize) % i
            }
        })
        .collect()
}

/// The tree's hops from `a` to `b`, each as (from, to).
fn hops(parent: &[usize], mut a: usize, mut b: usize) -> Vec<(usize, usize)> {
    let (mut up, mut down) = (Vec::new(), Vec::new());
    // Parents are numbered below their children: climb from the larger until they meet.
    while a != b {
        if a > b {
            up.push((a, parent[a]));
            a = parent[a];
        } else {
            down.push((parent[b], b));
            b = parent[b];
        }
    }
    up.extend(down.into_iter().rev());
    up
}

#[test]
fn a_hundred_thousand_routers_with_two_flows_hold_and_write_what_the_flows_use() {
    let parent = parents();
    let dir = std::env::temp_dir().join(format!("csfq-large-topology-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut g = String::from(
        "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n<graph edgedefault=\"undirected\">\n",
    );
    for i in 0..ROUTERS {
        g.push_str(&format!("<node id=\"n{i}\"/>\n"));
    }
    for (i, p) in parent.iter().enumerate().skip(1) {
        g.push_str(&format!("<edge source=\"n{p}\" target=\"n{i}\"/>\n"));
    }
    g.push_str("</graph>\n</graphml>\n");
    std::fs::write(dir.join("tree.graphml"), g).unwrap();
    let flows = [(5, ROUTERS - 1), (77, 12_345)];
    let mut toml = String::from(
        "name = \"tree\"\nduration_s = 1.0\ndiscipline = \"csfq\"\n\n[graphml]\nfile = \"tree.graphml\"\n",
    );
    for (k, (a, b)) in flows.iter().enumerate() {
        let kind = if k == 0 {
            "kind = \"udp\"\nrate_mbps = 5"
        } else {
            "kind = \"tcp\""
        };
        toml.push_str(&format!(
            "\n[[flow]]\n{kind}\nfrom = \"n{a}\"\nto = \"n{b}\"\n"
        ));
    }
    let path = dir.join("tree.toml");
    std::fs::write(&path, toml).unwrap();

    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let s = ScenarioFile::load(&path).unwrap();
    let r = Simulation::new(&s).unwrap().run();
    let json = serde_json::to_vec(&r).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    std::fs::remove_dir_all(&dir).unwrap();

    // Each flow crosses its path's links both ways (data one way, ACKs or nothing back).
    let mut crossed = BTreeSet::new();
    for &(a, b) in &flows {
        for (x, y) in hops(&parent, a, b) {
            crossed.insert((format!("n{x}"), format!("n{y}")));
            crossed.insert((format!("n{y}"), format!("n{x}")));
        }
    }
    let reported: BTreeSet<_> = r
        .links
        .iter()
        .map(|l| (l.from.clone(), l.to.clone()))
        .collect();
    assert_eq!(reported, crossed, "the links reported are the flows' paths");
    assert_eq!(r.unused_links.len(), 2 * (ROUTERS - 1) - crossed.len());
    assert!(r
        .unused_links
        .iter()
        .all(|[a, b]| !crossed.contains(&(a.clone(), b.clone()))));
    // Data crosses each hop from a to b; the way back carries the TCP's ACKs and nothing
    // of the UDP's.
    let busy: BTreeSet<_> = r
        .links
        .iter()
        .filter(|l| l.tx_pkts > 0)
        .map(|l| (l.from.clone(), l.to.clone()))
        .collect();
    let mut carrying = BTreeSet::new();
    for (k, &(a, b)) in flows.iter().enumerate() {
        for (x, y) in hops(&parent, a, b) {
            carrying.insert((format!("n{x}"), format!("n{y}")));
            if k == 1 {
                carrying.insert((format!("n{y}"), format!("n{x}")));
            }
        }
    }
    assert_eq!(busy, carrying, "the links that carried packets");
    let per_unused = json.len() / r.unused_links.len();
    assert!(
        per_unused <= 32,
        "{} bytes of JSON for {} unused links",
        json.len(),
        r.unused_links.len()
    );
    assert!(
        peak <= HEAP_PER_ROUTER * ROUTERS,
        "{peak} bytes of heap at the peak: {} per router",
        peak / ROUTERS
    );
    eprintln!(
        "{} links reported, {} unused; {} bytes of JSON; heap peak {} bytes ({} per router)",
        r.links.len(),
        r.unused_links.len(),
        json.len(),
        peak,
        peak / ROUTERS
    );
}
