//! The overlay paper's networks (Harrison, Kalyanaraman and Ramakrishnan, Section 7),
//! generated for each point of a sweep. The paper gives capacities, buffers and the
//! controller's parameters; rates of the sources, delays and durations it leaves out are
//! ours and stated on each generator.

use std::fmt::Write as _;
use std::path::Path;

use csfq_sim::config::ScenarioFile;

/// overlay-fig6's cross loops per bottleneck.
pub const LINEAR_K: u32 = 4;
/// overlay-fig6's bottleneck capacity, Mbit/s.
pub const LINEAR_C_MBPS: f64 = 100.0;
/// overlay-fig7's numbers of loops.
pub const DUMBBELL_LOOPS: [u32; 4] = [0, 2, 5, 10];
/// overlay-fig7's numbers of TCP flows.
pub const DUMBBELL_FLOWS: [u32; 5] = [10, 50, 100, 250, 500];
/// overlay-fig10's leased shares `b = A / C` of the 100 Mbps bottleneck.
pub const LEASED_SHARES: [f64; 5] = [0.2, 0.4, 0.5, 0.6, 0.8];

fn parse(text: &str, name: &str) -> ScenarioFile {
    ScenarioFile::parse(text, Path::new(name)).expect("generated overlay scenarios are valid")
}

/// Fig. 5/6: routers r0..rM in a line of 100 Mbps, 5 ms links with 1 MB buffers; on each
/// link K = 4 one-hop loops, and one loop from r0 to rM. Every loop carries one greedy
/// source (UDP at 40 Mbps, above any share it can get, so its shaper is always backlogged;
/// 64 KB shaper queues). 20 s; shares are measured over the last 10 s.
pub fn linear(m: u32) -> ScenarioFile {
    let routers: Vec<String> = (0..=m).map(|i| format!("\"r{i}\"")).collect();
    let mut t = format!(
        "name = \"overlay-fig6\"\ndescription = \"linear network: {m} bottlenecks of 100 Mbps, {LINEAR_K} one-hop loops on each, one loop across all\"\n\
         duration_s = 20.0\nseed = 1\ndiscipline = \"fifo\"\nrouters = [{}]\n",
        routers.join(", ")
    );
    for i in 1..=m {
        let _ = write!(
            t,
            "\n[[link]]\nbetween = [\"r{}\", \"r{i}\"]\nrate_mbps = {LINEAR_C_MBPS}\ndelay_ms = 5\nbuffer_bytes = 1000000\n",
            i - 1
        );
    }
    let flow = |t: &mut String, name: &str, from: String, to: String| {
        let _ = write!(
            t,
            "\n[[loop]]\nname = \"{name}\"\ningress = \"{from}\"\negress = \"{to}\"\n\n[[flow]]\nkind = \"udp\"\nfrom = \"{from}\"\nto = \"{to}\"\nrate_mbps = 40\njitter = 0\nloop = \"{name}\"\naccess = {{ rate_mbps = 1000, delay_ms = 0 }}\n"
        );
    };
    flow(&mut t, "long", "r0".into(), format!("r{m}"));
    for i in 1..=m {
        for k in 0..LINEAR_K {
            flow(
                &mut t,
                &format!("x{i}.{k}"),
                format!("r{}", i - 1),
                format!("r{i}"),
            );
        }
    }
    parse(&t, "overlay-fig6")
}

/// Fig. 7: `n` TCP flows spread evenly over `loops` edge-to-edge loops (none: plain
/// FIFO everywhere, flows entering at one edge), through one 10 Mbps bottleneck c -> d.
/// Every buffer holds one bandwidth-delay product, 50 packets (50 KB): the RTT is 40 ms
/// (1 ms access, 1 ms edge link, 17 ms bottleneck each way). `fred` puts FRED (our
/// FRED-2, with `minq`) in the loops' shaper queues, or at the bottleneck when there are
/// no loops. 60 s.
pub fn dumbbell(loops: u32, n: u32, fred: bool) -> ScenarioFile {
    let edges = loops.max(1);
    let mut routers: Vec<String> = (1..=edges).map(|i| format!("\"e{i}\"")).collect();
    routers.extend(["\"c\"".to_string(), "\"d\"".to_string()]);
    let mut t = format!(
        "name = \"overlay-fig7\"\ndescription = \"{n} TCP flows over {loops} edge-to-edge loops, 10 Mbps bottleneck, 50-packet buffers\"\n\
         duration_s = 60.0\nseed = 1\ndiscipline = \"fifo\"\nrouters = [{}]\n",
        routers.join(", ")
    );
    for i in 1..=edges {
        let _ = write!(
            t,
            "\n[[link]]\nbetween = [\"e{i}\", \"c\"]\nrate_mbps = 100\ndelay_ms = 1\nbuffer_bytes = 50000\n"
        );
    }
    let bottleneck = if fred && loops == 0 {
        "discipline = \"fred2\"\n"
    } else {
        ""
    };
    let _ = write!(
        t,
        "\n[[link]]\nbetween = [\"c\", \"d\"]\nrate_mbps = 10\ndelay_ms = 17\nbuffer_bytes = 50000\n{bottleneck}"
    );
    let queue = if fred { "fred2" } else { "fifo" };
    for i in 1..=edges {
        // Flows spread as evenly as the count allows.
        let count = n / edges + u32::from(i <= n % edges);
        if count == 0 {
            continue;
        }
        let carried = if loops > 0 {
            let _ = write!(
                t,
                "\n[[loop]]\nname = \"l{i}\"\ningress = \"e{i}\"\negress = \"d\"\nqueue = \"{queue}\"\nbuffer_bytes = 50000\n"
            );
            format!("loop = \"l{i}\"\n")
        } else {
            String::new()
        };
        let _ = write!(
            t,
            "\n[[flow]]\nkind = \"tcp\"\nfrom = \"e{i}\"\nto = \"d\"\ncount = {count}\n{carried}access = {{ rate_mbps = 100, delay_ms = 1 }}\n"
        );
    }
    parse(&t, "overlay-fig7")
}

/// Fig. 10: a best-effort loop with a greedy source (UDP at 100 Mbps) from t = 0, and from
/// t = 2 s a quasi-leased line of `b` x 100 Mbps whose source sends exactly that rate,
/// both through one 100 Mbps bottleneck (10 ms; 4 MB of buffer, so the transient queue is
/// seen whole rather than cut by drops). 6 s.
pub fn leased(b: f64) -> ScenarioFile {
    let a = b * 100.0;
    let t = format!(
        "name = \"overlay-fig10\"\ndescription = \"a best-effort loop, then at 2 s a quasi-leased line of {a} Mbps, on a 100 Mbps bottleneck\"\n\
         duration_s = 6.0\nseed = 1\ndiscipline = \"fifo\"\nsample_interval_ms = 20\nrouters = [\"i1\", \"i2\", \"c\", \"e\"]\n\n\
         [[link]]\nbetween = [\"i1\", \"c\"]\nrate_mbps = 1000\ndelay_ms = 0\nbuffer_bytes = 1000000\n\n\
         [[link]]\nbetween = [\"i2\", \"c\"]\nrate_mbps = 1000\ndelay_ms = 0\nbuffer_bytes = 1000000\n\n\
         [[link]]\nbetween = [\"c\", \"e\"]\nrate_mbps = 100\ndelay_ms = 10\nbuffer_bytes = 4000000\n\n\
         [[loop]]\nname = \"best-effort\"\ningress = \"i1\"\negress = \"e\"\n\n\
         [[loop]]\nname = \"leased\"\ningress = \"i2\"\negress = \"e\"\nservice = \"quasi-leased\"\nrate_mbps = {a}\nstart_s = 2.0\n\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"i1\"\nto = \"e\"\nrate_mbps = 100\njitter = 0\nloop = \"best-effort\"\naccess = {{ rate_mbps = 1000, delay_ms = 0 }}\n\n\
         [[flow]]\nkind = \"udp\"\nfrom = \"i2\"\nto = \"e\"\nrate_mbps = {a}\njitter = 0\nstart_s = 2.0\nloop = \"leased\"\naccess = {{ rate_mbps = 1000, delay_ms = 0 }}\n"
    );
    parse(&t, "overlay-fig10")
}

/// The same network with no loops: every flow enters the FIFO network directly.
pub fn without_loops(s: &ScenarioFile) -> ScenarioFile {
    let mut s = s.clone();
    s.loops.clear();
    for f in &mut s.flows {
        f.get_mut().overlay_loop = None;
    }
    s
}

/// The single-bottleneck bound on the transient queue when a quasi-leased line of share
/// `b` appears (the overlay paper, Section 7.4): `b / (1 - b)`, in units of `C tau`.
/// Derived here: with `beta -> 1` the best-effort loop's rate (over `C`) follows
/// `x' = x / (x + b)` from `x = 1`, i.e. `x_k = (1 - b) / (1 - b^(k+1))`, and the excess
/// `x_k + b - 1` summed over the intervals is `(1 - b) sum b^(k+1) / (1 - b^(k+1))`, at most
/// `sum b^(k+1) = b / (1 - b)`.
pub fn leased_queue_bound(b: f64) -> f64 {
    b / (1.0 - b)
}
