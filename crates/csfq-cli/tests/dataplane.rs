//! The eBPF dataplane end to end, on real kernel TCP flows: senders -> edge router ->
//! core router (10 Mbit/s tbf) -> receiver, each in a network namespace this test makes,
//! with GSO/TSO/GRO off on every veth. Four iperf3 TCP flows and one UDP flow at 5x its
//! fair share: with `csfq dp` attached the UDP gets at most 1.5x its fair share and every
//! TCP at least half of it; without, the UDP takes most of the link; `csfq dp exporter` is
//! scraped while the flows run. Also the command's errors on a real system. Needs root,
//! iperf3, ethtool, ip and tc: skipped with the reason elsewhere, failing instead when
//! CSFQ_DP_REQUIRED is set (CI sets it).

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use csfq_dp::lab::{Lab, Offloads};

const CSFQ: &str = env!("CARGO_BIN_EXE_csfq");

fn missing_tool(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
}

fn runnable(test: &str) -> bool {
    let why = csfq_dp::unavailable_reason()
        .map(str::to_string)
        .or_else(|| {
            ["ip", "tc", "iperf3", "ethtool", "timeout"]
                .iter()
                .find(|t| missing_tool(t))
                .map(|t| format!("needs {t} (Debian: iproute2, iperf3, ethtool, coreutils)"))
        });
    match why {
        None => true,
        Some(why) => {
            if std::env::var_os("CSFQ_DP_REQUIRED").is_some_and(|v| v != "0") {
                panic!("{test}: {why}, but CSFQ_DP_REQUIRED is set");
            }
            // Straight to the process's stderr: libtest would swallow eprintln! of a
            // passing test, and a skip must be seen.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
            false
        }
    }
}

/// Taken whole by the tests that must not share the two CPUs with any other traffic
/// (`cpu_heavy`): `csfq dp bench` saturates them, the overlay loops' daemons act every
/// 10 ms (a loop measured beside the bench measured the machine's load instead: its TCP
/// fell below the assured rate), and the rate test carries up to 1 Gbit/s through three
/// namespaces, which takes both CPUs. The lighter traffic tests (10 Mbit/s) share it
/// (`cpu_light`): they may run beside each other, never beside a heavy one.
static CPU_HEAVY: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn cpu_heavy() -> std::sync::RwLockWriteGuard<'static, ()> {
    CPU_HEAVY.write().unwrap_or_else(|e| e.into_inner())
}

fn cpu_light() -> std::sync::RwLockReadGuard<'static, ()> {
    CPU_HEAVY.read().unwrap_or_else(|e| e.into_inner())
}

fn run(cmd: &str, args: &[&str]) -> Output {
    let o = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Four namespaces (senders, edge, core, receiver) joined by veth pairs; all of it (and
/// any csfq pins and iperf3 processes) is removed on drop, also when a test fails.
struct Net {
    lab: Lab,
    tmp: PathBuf,
    /// The TCP senders' congestion control (`iperf3 -C`); `None`: the host's default.
    tcp_cc: Option<&'static str>,
    /// The seconds of each flow's run its goodput is taken over; `None`: the middle
    /// (`csfq_cli::demo::trim_secs`).
    window: Option<(u32, u32)>,
    /// What the last run's UDP sender sent over the window, bit/s of payload.
    udp_sent: Option<f64>,
}

const NS: [&str; 4] = ["s", "e", "c", "r"];
/// With [`Net::attacker`]: a host wired straight to the core router, bypassing the edge.
const ATTACKER: &str = "a";

impl Net {
    fn ns(&self, n: &str) -> String {
        self.lab.ns(n)
    }

    /// The kernel's TCP counters in namespace `n` (segments sent and retransmitted,
    /// retransmission timeouts, tail loss probes), one line.
    fn tcp_counters(&self, n: &str) -> String {
        let o = self.x(
            n,
            &[
                "nstat",
                "-asz",
                "TcpOutSegs",
                "TcpRetransSegs",
                "TcpExtTCPTimeouts",
                "TcpExtTCPLossProbes",
            ],
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some(format!("{} {}", w.next()?, w.next()?))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn prefix(&self) -> &str {
        self.lab.prefix()
    }

    fn x(&self, n: &str, args: &[&str]) -> Output {
        self.lab.exec(n, args).unwrap_or_else(|e| panic!("{e}"))
    }

    fn csfq(&self, n: &str, args: &[&str]) -> Output {
        let ns = self.ns(n);
        let mut a = vec!["dp", "--netns", ns.as_str()];
        a.extend_from_slice(args);
        Command::new(CSFQ).args(&a).output().expect("csfq runs")
    }

    /// Starts `csfq dp --netns NS loop ARGS...` in namespace `n`, its output kept.
    fn loop_daemon(&self, n: &str, args: &[&str]) -> Child {
        let ns = self.ns(n);
        let mut a = vec!["dp", "--netns", ns.as_str(), "loop"];
        a.extend_from_slice(args);
        Command::new(CSFQ)
            .args(&a)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("csfq dp loop")
    }

    /// The namespaces for `tag`, which no other test may use: tests run at once, and a
    /// net's drop removes every namespace and pin of its prefix.
    fn new(tag: &str) -> Net {
        Net::shaped(tag, "10mbit", "10kb", "64kb")
    }

    /// As [`Net::new`], the bottleneck a tbf of this rate, burst and limit (tc's units).
    fn shaped(tag: &str, rate: &str, burst: &str, limit: &str) -> Net {
        let mut net = Net {
            lab: Lab::new(format!("csfqt{}{tag}", std::process::id() % 100_000)),
            tmp: std::env::temp_dir().join(format!("csfq-dp-{}-{tag}", std::process::id())),
            tcp_cc: None,
            window: None,
            udp_sent: None,
        };
        let _ = std::fs::remove_dir_all(&net.tmp);
        std::fs::create_dir_all(&net.tmp).unwrap();
        let lab = &mut net.lab;
        let ok = |r: Result<(), csfq_dp::lab::LabError>| r.unwrap_or_else(|e| panic!("{e}"));
        for n in NS {
            ok(lab.add(n));
        }
        for (a, b) in [
            (("s", "s0", "10.77.1.1/24"), ("e", "e0", "10.77.1.2/24")),
            (("e", "e1", "10.77.2.1/24"), ("c", "c0", "10.77.2.2/24")),
            (("c", "c1", "10.77.3.1/24"), ("r", "r0", "10.77.3.2/24")),
        ] {
            ok(lab.wire(a, b, Offloads::None));
        }
        ok(lab.forward("e"));
        ok(lab.forward("c"));
        ok(lab.route("s", "default", "10.77.1.2"));
        ok(lab.route("r", "default", "10.77.3.1"));
        ok(lab.route("e", "10.77.3.0/24", "10.77.2.2"));
        ok(lab.route("c", "10.77.1.0/24", "10.77.2.1"));
        // The bottleneck: out of the core router towards the receiver.
        net.x(
            "c",
            &[
                "tc", "qdisc", "add", "dev", "c1", "root", "tbf", "rate", rate, "burst", burst,
                "limit", limit,
            ],
        );
        net
    }

    /// `csfq dp --netns NS ARGS...` in namespace `n`, which must succeed.
    fn dp_ok(&self, n: &str, args: &[&str]) {
        let o = self.csfq(n, args);
        assert!(
            o.status.success(),
            "csfq dp {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The core in front of the tbf on `c1` (10 Mbit/s, 64 KB limit), trusting labels as
    /// `trust` says (`--trusted-from c0`: the edge's side; or `--trust-any-label`).
    fn attach_core(&self, trust: &[&str]) {
        let mut a = vec![
            "core", "attach", "--dev", "c1", "--rate", "10mbit", "--limit", "64kb",
        ];
        a.extend_from_slice(trust);
        self.dp_ok("c", &a);
    }

    /// Adds namespace `a` (10.77.4.1), wired to the core router's `c2` (10.77.4.2): a host
    /// that reaches the core without crossing the edge.
    fn attacker(&mut self) {
        let ok = |r: Result<(), csfq_dp::lab::LabError>| r.unwrap_or_else(|e| panic!("{e}"));
        ok(self.lab.add(ATTACKER));
        ok(self.lab.wire(
            (ATTACKER, "a0", "10.77.4.1/24"),
            ("c", "c2", "10.77.4.2/24"),
            Offloads::None,
        ));
        ok(self.lab.route(ATTACKER, "default", "10.77.4.2"));
    }

    /// Waits for what [`Net::spawn`] started (each ends within its `timeout 40`).
    fn wait(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        self.lab
            .wait(deadline, || false)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Starts `args` in namespace `n` under `timeout 40`, waited for by the lab.
    fn spawn(&mut self, n: &str, args: &[&str]) {
        let mut a = vec!["timeout", "40"];
        a.extend_from_slice(args);
        self.lab.spawn(n, &a).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Four TCP flows and one UDP flow at `udp_rate` for `secs`; returns each flow's
    /// goodput at the receiver over the middle of its run (see [`goodput`]), bit/s (the
    /// UDP's last).
    fn traffic(&mut self, udp_rate: &str, secs: u32) -> Vec<f64> {
        self.traffic_with_udp_from("s", udp_rate, secs)
    }

    /// As [`Net::traffic`], the UDP sent from namespace `udp_from`.
    fn traffic_with_udp_from(&mut self, udp_from: &str, udp_rate: &str, secs: u32) -> Vec<f64> {
        self.try_traffic(udp_from, udp_rate, secs)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Net::traffic_with_udp_from`]; an iperf3 client that fails is an error, not a
    /// panic (its control connection can time out when its host's flows lose heavily).
    fn try_traffic(
        &mut self,
        udp_from: &str,
        udp_rate: &str,
        secs: u32,
    ) -> Result<Vec<f64>, String> {
        self.try_iperf(Some((udp_from, udp_rate)), secs)
    }

    /// The four TCP flows, and the UDP flow if given (its namespace and rate); each flow's
    /// goodput at the receiver over the middle of its run, bit/s (the UDP's last).
    ///
    /// The UDP client starts first: iperf3 (3.12) announces a UDP test with one datagram
    /// and waits for the server's reply without sending it again, so a datagram lost
    /// behind TCPs that already fill the link leaves the client hanging. TCP retries its
    /// handshake (after 1 s), which [`goodput`]'s trim absorbs.
    fn try_iperf(&mut self, udp: Option<(&str, &str)>, secs: u32) -> Result<Vec<f64>, String> {
        let all = [5201, 5202, 5203, 5204, 5205];
        let ports = &all[..if udp.is_some() { 5 } else { 4 }];
        let (udp_from, udp_rate) = udp.unwrap_or(("s", "0"));
        let logs: Vec<PathBuf> = ports
            .iter()
            .map(|p| self.tmp.join(format!("srv{p}.json")))
            .collect();
        for (p, log) in ports.iter().zip(&logs) {
            // iperf3 appends to its log: a second run on this network starts afresh.
            let _ = std::fs::remove_file(log);
            let (p, log) = (p.to_string(), log.to_str().unwrap().to_string());
            self.spawn(
                "r",
                &["iperf3", "-s", "-1", "-p", &p, "-J", "--logfile", &log],
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(700));
        let t = secs.to_string();
        let clients: Vec<(u16, Child)> = ports
            .iter()
            .rev()
            .map(|&p| {
                let ns = self.ns(if p == 5205 { udp_from } else { "s" });
                let port = p.to_string();
                let mut a = vec![
                    "netns",
                    "exec",
                    ns.as_str(),
                    "timeout",
                    "40",
                    "iperf3",
                    "-c",
                    "10.77.3.2",
                    "-p",
                    &port,
                    "-t",
                    &t,
                ];
                if p == 5205 {
                    a.extend_from_slice(&["-u", "-b", udp_rate]);
                } else if let Some(cc) = self.tcp_cc {
                    a.extend_from_slice(&["-C", cc]);
                }
                let child = Command::new("ip")
                    .args(&a)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("iperf3");
                if p == 5205 {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                }
                (p, child)
            })
            .collect();
        let mut failed = None;
        for (p, c) in clients {
            let o = c.wait_with_output().expect("wait");
            if !o.status.success() {
                failed = Some(format!(
                    "the iperf3 client to port {p} failed: {}: {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
        self.wait();
        if let Some(e) = failed {
            return Err(e);
        }
        let trim = csfq_cli::demo::trim_secs(secs);
        let (first, last) = self.window.unwrap_or((trim, secs - trim));
        let read = |log: &PathBuf| -> serde_json::Value {
            let text = std::fs::read_to_string(log).expect("iperf3 server log");
            serde_json::from_str(&text).expect("iperf3 JSON")
        };
        self.udp_sent = udp
            .is_some()
            .then(|| csfq_cli::demo::iperf3_udp_sent_between(&read(&logs[4]), first, last).ok())
            .flatten();
        logs.iter()
            .map(|log| {
                csfq_cli::demo::iperf3_goodput_between(&read(log), first, last)
                    .map_err(|e| format!("{}: {e}", log.display()))
            })
            .collect()
    }
}

impl Drop for Net {
    /// The lab removes the processes, the pins and the namespaces; then the logs.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// `csfq dp exporter` on a free loopback port, stopped on drop.
struct Exporter {
    child: Child,
    addr: String,
}

impl Exporter {
    fn start() -> Exporter {
        use std::io::BufRead as _;
        let mut child = Command::new(CSFQ)
            .args(["dp", "exporter", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("csfq dp exporter");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("exporter said: {line}"))
            .to_string();
        Exporter { child, addr }
    }

    /// One scrape: every sample line as (series with its labels, value).
    fn scrape(&self) -> Vec<(String, f64)> {
        use std::io::{Read as _, Write as _};
        let mut c = std::net::TcpStream::connect(&self.addr).unwrap();
        c.write_all(b"GET /metrics HTTP/1.0\r\nHost: csfq\r\n\r\n")
            .unwrap();
        let mut page = String::new();
        c.read_to_string(&mut page).unwrap();
        let (head, body) = page.split_once("\r\n\r\n").unwrap();
        assert!(
            head.starts_with("HTTP/1.") && head.contains(" 200 "),
            "{head}"
        );
        assert!(head.contains("application/openmetrics-text"), "{head}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        body.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (series, v) = l.rsplit_once(' ').unwrap();
                (series.to_string(), v.parse().unwrap())
            })
            .collect()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Goodputs of four TCPs and a UDP (last, bit/s) as CSFQ should leave them on the
/// 10 Mbit/s link: the UDP at most 1.5 times the fair share, each TCP at least half of it;
/// `what` names the case.
fn assert_held_to_share(what: &str, rates: &[f64]) {
    assert_shares(what, rates, 10e6, FAIR_GOODPUT, 1.5, 0.5);
}

/// Goodputs of four TCPs and a UDP (last, bit/s) on a link of `link_bps` whose fair share
/// of payload is `fair`: the UDP at most `udp_max` times it, each TCP at least `tcp_min`
/// times it. First, that their sum is at most the link's rate: a sum above it means some
/// flow's window held seconds in which fewer flows competed (a coarse guard: payload alone
/// cannot exceed about 97% of it).
fn assert_shares(what: &str, rates: &[f64], link_bps: f64, fair: f64, udp_max: f64, tcp_min: f64) {
    let total: f64 = rates.iter().sum();
    assert!(
        total <= link_bps,
        "{what}: the goodputs sum to {total} bit/s, more than the link carries: the flows \
         did not run over the same seconds: {rates:?}"
    );
    assert!(
        rates[4] <= udp_max * fair,
        "{what}: UDP {} > {udp_max} x its share {fair}: {rates:?}",
        rates[4]
    );
    for (i, tcp) in rates[..4].iter().enumerate() {
        assert!(
            *tcp >= tcp_min * fair,
            "{what}: TCP {i} {tcp} < {tcp_min} x its share {fair}: {rates:?}"
        );
    }
}

/// The TCPs' floor a rate test holds (`floor` of the fair share) when the UDP's sender sent
/// at least 90% of the link rate it was asked for (`sent`, bit/s; unknown: held), and 0
/// otherwise: a sender held back by its CPU (on this 2-core machine at 1 Gbit/s, 90-414
/// Mbit/s of 1000) is no hog at the link rate, the flows then meet in the tbf's FIFO, and
/// a TCP's share measures how kernel TCPs on starved CPUs share a FIFO, not the scheme
/// (runs at 1 Gbit/s put one TCP at 0.45 of its share under CS-FNE with the UDP at 90
/// Mbit/s, and one at 0.69 under CSFQ with it at 185, the TCPs without csfq at 0.78-1.47).
/// The same 90% rule as the twin's UDP comparison; the UDP's ceiling and the goodputs' sum
/// are held at every rate.
fn tcp_floor_where_the_hog_keeps_up(sent: Option<f64>, mbps: u64, floor: f64) -> f64 {
    if sent.is_none_or(|s| hog_keeps_up(s, mbps)) {
        return floor;
    }
    eprintln!(
        "{mbps} Mbit/s: the UDP's sender sent {:.1} Mbit/s, under 90% of the link: the TCPs' \
         floor ({floor} of the share) is not judged",
        sent.unwrap_or(0.0) / 1e6
    );
    0.0
}

/// Whether a UDP's sender that sent `sent` bit/s kept up with a link of `mbps`: at least
/// 90% of it.
fn hog_keeps_up(sent: f64, mbps: u64) -> bool {
    sent >= 0.9 * mbps as f64 * 1e6
}

/// The attachments `csfq dp stats --json` shows in the namespaces of the network whose
/// names start with `prefix`.
fn of_net<'a>(stats: &'a serde_json::Value, prefix: &str) -> Vec<&'a serde_json::Value> {
    let scope = format!("netns-{prefix}");
    stats
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["scope"].as_str().unwrap().starts_with(&scope))
        .collect()
}

/// 10 Mbit/s shared by 5 flows that all want more: 2 Mbit/s each on the wire; iperf3
/// counts payload, about 95% of a full-size frame.
const FAIR_GOODPUT: f64 = 2e6 * 0.95;

#[test]
fn csfq_protects_tcp_from_udp_on_real_interfaces() {
    if !runnable("csfq_protects_tcp_from_udp_on_real_interfaces") {
        return;
    }
    let _light = cpu_light();
    // Without csfq: drop-tail tbf, and the UDP takes most of the link.
    let mut net = Net::new("a");
    let plain = net.traffic("10M", 10);
    drop(net);
    eprintln!(
        "without csfq, Mbit/s: {:?}",
        plain.iter().map(|r| r / 1e6).collect::<Vec<_>>()
    );
    assert!(
        plain[4] > 5e6,
        "without csfq the UDP should take most of the link: {plain:?}"
    );

    // With csfq: the edge on the senders' interface, the core in front of the tbf, both on
    // the fine clock.
    let mut net = Net::new("b");
    net.dp_ok("e", &["edge", "attach", "--dev", "e0", "--clock", "fine"]);
    net.attach_core(&["--trusted-from", "c0", "--clock", "fine"]);
    // Prometheus scrapes the exporter (in the host namespace; it reads every scope's
    // pins) once a second while the flows run.
    let exporter = Exporter::start();
    let (fair, scrapes) = std::thread::scope(|s| {
        let scraper = s.spawn(|| {
            let mut scrapes = Vec::new();
            for _ in 0..9 {
                std::thread::sleep(std::time::Duration::from_secs(1));
                scrapes.push(exporter.scrape());
            }
            scrapes
        });
        let fair = net.traffic("10M", 10);
        (fair, scraper.join().unwrap())
    });
    let last_scrape = exporter.scrape();
    let stats = Command::new(CSFQ)
        .args(["dp", "stats", "--json"])
        .output()
        .unwrap();
    let after_stats = exporter.scrape();
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats JSON");
    let mine = of_net(&stats, net.prefix());
    eprintln!(
        "with csfq, Mbit/s: {:?}",
        fair.iter().map(|r| r / 1e6).collect::<Vec<_>>()
    );
    assert_eq!(mine.len(), 2, "stats shows the edge and the core: {stats}");
    let core = mine.iter().find(|s| s["role"] == "core").unwrap();
    let edge = mine.iter().find(|s| s["role"] == "edge").unwrap();
    assert!(
        edge["counters"]["labeled"]["packets"].as_u64().unwrap() > 1000,
        "{edge}"
    );
    assert_eq!(edge["edge"]["clock"], "fine", "{edge}");
    assert!(
        core["counters"]["drop_csfq_prob"]["packets"]
            .as_u64()
            .unwrap()
            > 100,
        "{core}"
    );
    check_scrapes(net.prefix(), &scrapes, [&last_scrape, &after_stats], &mine);
    assert_held_to_share("fine clock", &fair);
    // A second after the traffic, the core reads as idle, not as it was at its last packet
    // (congested, A above C): A decayed by e^(-T/K_alpha) (K_alpha 105 ms: below a tenth of
    // C), no fair share, not congested, and the idle time shown. (Not a whole second of
    // it: a stray packet, a TCP's last segments or neighbour discovery, may cross the core
    // after the flows end; one did in a CI run, 0.4 s before the scrape.)
    std::thread::sleep(std::time::Duration::from_secs(1));
    let idle = exporter.scrape();
    let core_ns = format!("netns=\"{}c\"", net.prefix());
    let value = |name: &str| {
        idle.iter()
            .find(|(s, _)| s.starts_with(name) && s.contains(&core_ns))
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    assert!(value("csfq_core_idle_seconds") > 0.0, "{idle:?}");
    assert_eq!(value("csfq_core_congested"), 0.0, "{idle:?}");
    assert_eq!(value("csfq_core_fair_share_bits_per_second"), 0.0);
    assert!(
        value("csfq_core_arrival_rate_bits_per_second") < 1e6,
        "{idle:?}"
    );
    // `stats --watch` as a script reads it: one JSON document per read, each with the
    // stats, and the rates since the previous read from the second on.
    let o = net.csfq("c", &["stats", "--watch", "0.2", "--count", "3", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reads: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON document per line"))
        .collect();
    assert_eq!(reads.len(), 3);
    for (i, r) in reads.iter().enumerate() {
        assert!(!r["stats"].as_array().unwrap().is_empty(), "{r}");
        let rates = r["rates"].as_array().unwrap();
        assert_eq!(rates.is_empty(), i == 0, "{r}");
        if i > 0 {
            let dt = r["time_s"].as_f64().unwrap() - reads[i - 1]["time_s"].as_f64().unwrap();
            assert!(dt >= 0.2, "{dt}");
            assert!(rates.iter().any(|x| x["counter"] == "forwarded"), "{r}");
        }
    }

    // Detach removes only csfq's programs: the tbf stays.
    let o = net.csfq("c", &["detach", "--dev", "c1"]);
    assert!(o.status.success());
    let q = net.x("c", &["tc", "qdisc", "show", "dev", "c1"]);
    assert!(String::from_utf8_lossy(&q.stdout).contains("tbf"));
    let o = net.csfq("c", &["detach", "--dev", "c1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing attached"));

    // Both on the default clock, `auto`, which here (a tick of at most 4 ms; the limit
    // drains in 52 ms, K_alpha and K_c 105 ms) is the coarse one, the kernel's tick
    // counter: the edge switched in place, keeping its flow table, a new core; the same
    // shares by the same bounds.
    net.dp_ok("e", &["edge", "attach", "--dev", "e0"]);
    net.attach_core(&["--trusted-from", "c0"]);
    let coarse = net.traffic("10M", 10);
    eprintln!(
        "with csfq on the coarse clock, Mbit/s: {:?}",
        coarse.iter().map(|r| r / 1e6).collect::<Vec<_>>()
    );
    let stats = Command::new(CSFQ)
        .args(["dp", "stats", "--json"])
        .output()
        .unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats JSON");
    let clocks: Vec<&serde_json::Value> = of_net(&stats, net.prefix())
        .into_iter()
        .map(|s| &s[s["role"].as_str().unwrap()]["clock"])
        .collect();
    assert_eq!(clocks, ["coarse", "coarse"], "{stats}");
    assert_held_to_share("coarse clock", &coarse);
}

/// The core reads the link's rate and its queue's limit from the interface's root qdisc:
/// a tbf's rate and limit; an htb's default class (the least ceil on its way to the root)
/// and that class's FIFO (packets counted as full frames of the MTU); a value given that
/// the qdisc contradicts is kept, with a warning; stats shows the limit in use and says
/// when the shaper no longer agrees with it (overridden, or changed after the attach),
/// and attaching again follows the shaper.
/// The core's `C` and limit as `stats` shows them; `None` without a core.
fn core_rate_and_limit(net: &Net) -> Option<(u64, u64)> {
    let o = net.csfq("c", &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats");
    let c = of_net(&v, net.prefix())
        .into_iter()
        .find(|s| s["role"] == "core")?["core"]
        .clone();
    Some((c["capacity_bps"].as_u64()?, c["limit_bytes"].as_u64()?))
}

/// `core attach --follow` stays and follows the shaper: a tbf changed from 10 Mbit/s and
/// 64 KB to 20 Mbit/s and 128 KB is the core's within a few reads; the core detached, the
/// follower says so and ends; stopped with SIGINT it ends too, leaving the core.
#[test]
fn core_follows_the_shaper_when_asked() {
    if !runnable("core_follows_the_shaper_when_asked") {
        return;
    }
    let net = Net::new("i");
    let ns = net.ns("c");
    let follow = || {
        Command::new(CSFQ)
            .args(["dp", "--netns", &ns, "core", "attach", "--dev", "c1"])
            .args([
                "--trust-any-label",
                "--follow",
                "--follow-interval",
                "100ms",
            ])
            .stderr(Stdio::piped())
            .spawn()
            .expect("csfq dp core attach --follow")
    };
    let until = |what: &str, ok: &dyn Fn() -> bool| {
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ok() {
            assert!(std::time::Instant::now() < end, "{what}: not within 10 s");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let child = follow();
    until("attached", &|| {
        core_rate_and_limit(&net) == Some((10_000_000, 65_536))
    });
    net.x(
        "c",
        &[
            "tc", "qdisc", "change", "dev", "c1", "root", "tbf", "rate", "20mbit", "burst", "10kb",
            "limit", "128kb",
        ],
    );
    until("followed", &|| {
        core_rate_and_limit(&net) == Some((20_000_000, 131_072))
    });
    net.dp_ok("c", &["detach", "--dev", "c1"]);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "the shaper on c1 changed: the core now has C = 20 Mbit/s, limit 131072 bytes"
        ),
        "{err}"
    );
    assert!(err.contains("was detached: no longer following"), "{err}");
    // Stopped by a signal: the core stays, as attached.
    let child = follow();
    until("attached again", &|| {
        core_rate_and_limit(&net) == Some((20_000_000, 131_072))
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("stopped following; the core stays on c1"),
        "{err}"
    );
    assert_eq!(core_rate_and_limit(&net), Some((20_000_000, 131_072)));
}

#[test]
fn core_reads_rate_and_limit_from_the_shaper() {
    if !runnable("core_reads_rate_and_limit_from_the_shaper") {
        return;
    }
    let net = Net::new("sh");
    let core = |net: &Net| core_rate_and_limit(net).expect("the core");
    // Net's tbf: 10mbit, limit 64kb.
    net.dp_ok("c", &["core", "attach", "--dev", "c1", "--trust-any-label"]);
    assert_eq!(core(&net), (10_000_000, 65_536));
    // Given a limit the tbf contradicts: kept, with a warning that names both.
    let o = net.csfq(
        "c",
        &[
            "core",
            "attach",
            "--dev",
            "c1",
            "--limit",
            "32kb",
            "--trust-any-label",
        ],
    );
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: --limit 32768 bytes on c1, whose root qdisc (tbf) has 65536 bytes"),
        "{err}"
    );
    assert_eq!(core(&net), (10_000_000, 32_768));
    let text = |net: &Net| String::from_utf8_lossy(&net.csfq("c", &["stats"]).stdout).to_string();
    let st = text(&net);
    assert!(
        st.contains("MISMATCH: the shaper (tbf) now has 10.000 Mbit/s and a limit of 65536 B"),
        "{st}"
    );
    // The shaper changed after the attach: stats says so; attaching again follows it.
    net.x(
        "c",
        &[
            "tc", "qdisc", "change", "dev", "c1", "root", "tbf", "rate", "20mbit", "burst", "10kb",
            "limit", "128kb",
        ],
    );
    assert!(text(&net).contains("now has 20.000 Mbit/s and a limit of 131072 B"));
    net.dp_ok("c", &["core", "attach", "--dev", "c1", "--trust-any-label"]);
    assert_eq!(core(&net), (20_000_000, 131_072));
    let st = text(&net);
    assert!(!st.contains("MISMATCH"), "{st}");
    net.dp_ok("c", &["detach", "--dev", "c1"]);
    // htb: default class 1:10 under 1:1; 1:1 ceil 20mbit, 1:10 rate 5mbit ceil 50mbit, its
    // FIFO 40 packets (MTU 1500: 40 x 1514 bytes).
    net.x("c", &["tc", "qdisc", "del", "dev", "c1", "root"]);
    for cmd in [
        "tc qdisc add dev c1 root handle 1: htb default 10",
        "tc class add dev c1 parent 1: classid 1:1 htb rate 20mbit ceil 20mbit",
        "tc class add dev c1 parent 1:1 classid 1:10 htb rate 5mbit ceil 50mbit",
        "tc qdisc add dev c1 parent 1:10 handle 10: pfifo limit 40",
    ] {
        let args: Vec<&str> = cmd.split(' ').collect();
        net.x("c", &args);
    }
    net.dp_ok("c", &["core", "attach", "--dev", "c1", "--trust-any-label"]);
    assert_eq!(core(&net), (20_000_000, 40 * 1514));
}

/// CSFQ across the rates it claims: 10 Mbit/s, 100 Mbit/s and 1 Gbit/s (about the most
/// this machine's veth path carries with offloads off: 0.94-0.96 of it with the tbf
/// alone). Four kernel CUBIC TCPs (Linux's default, pinned: a host may default to
/// another) and a UDP at the link rate; the tbf's limit 20 ms at the rate (at least
/// 64 KB) and its burst an eighth of that, one rule for every rate. The core is attached
/// with neither `--rate` nor `--limit`: both are read from the tbf, and stats says so.
/// At each rate, with csfq, every TCP gets at least 0.75x its fair share, the link carries
/// at least 90% of what it carries without csfq, and the UDP gets at most 1.5x its share
/// (both bounds widened to CSFQ's own spread where the twin's reaches past them:
/// `within_csfqs_spread`):
/// the suite's bound since the dataplane's first test, not the 1.25x aimed at, which
/// 100 Mbit/s does not meet (README, "CSFQ at the rates operators run": 1.18-1.33x, each
/// TCP 0.89-1.00x, the link 0.96 full; with the core's old fixed 64 KB limit 1.96-2.09x
/// and each TCP 0.67-0.77x, which fails here).
///
/// At 1 Gbit/s the UDP's sender cannot take its share even without csfq here (0.6x,
/// measured: the five senders and three routers share two CPUs), so there the test shows
/// the TCPs' shares and the link's use, not a hog held.
///
/// Beside each run the simulator's twin of it (`csfq dp twin`: the same shaper, the core
/// as attach set it, CUBIC senders, the UDP at the rate its sender managed) predicts the
/// UDP's share and the TCPs' mean share; each measured share must lie within 15% of the
/// twin's mean plus two standard deviations of one of its runs.
#[test]
fn csfq_holds_a_udp_at_the_link_rate_from_10_mbits_to_1_gbits() {
    if !runnable("csfq_holds_a_udp_at_the_link_rate_from_10_mbits_to_1_gbits") {
        return;
    }
    let _heavy = cpu_heavy();
    for mbps in [10u64, 100, 1000] {
        let Bottleneck {
            rate,
            burst,
            limit_s,
            limit,
            fair,
        } = Bottleneck::at(mbps);
        let udp = format!("{mbps}M");
        let run = |with_csfq: bool| -> (Vec<f64>, Option<serde_json::Value>, Option<f64>, String) {
            let tag = format!("r{mbps}{}", if with_csfq { "c" } else { "p" });
            let mut net = Net::shaped(&tag, &rate, &burst, &limit_s);
            net.tcp_cc = Some("cubic");
            if with_csfq {
                // The programs' default clock (`auto`: the coarse one at each of these
                // rates, the limit 20 ms of the rate); CSFQ_DP_RATE_CLOCK=fine (or coarse)
                // runs the matrix on that clock.
                let clock = std::env::var("CSFQ_DP_RATE_CLOCK").unwrap_or("auto".into());
                net.dp_ok("e", &["edge", "attach", "--dev", "e0", "--clock", &clock]);
                net.dp_ok(
                    "c",
                    &[
                        "core",
                        "attach",
                        "--dev",
                        "c1",
                        "--trusted-from",
                        "c0",
                        "--clock",
                        &clock,
                    ],
                );
            }
            let rates = net.traffic(&udp, 10);
            let core = with_csfq.then(|| {
                let o = net.csfq("c", &["stats", "--json"]);
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats");
                of_net(&v, net.prefix())
                    .into_iter()
                    .find(|s| s["role"] == "core")
                    .expect("the core in stats")["core"]
                    .clone()
            });
            (rates, core, net.udp_sent, net.tcp_counters("s"))
        };
        let (plain, _, _, _) = run(false);
        let (fair_run, core, udp_sent, counters) = run(true);
        eprintln!("{mbps} Mbit/s, the senders' TCP with csfq: {counters}");
        let core = core.unwrap();
        let mbit = |v: &[f64]| v.iter().map(|r| r / 1e6).collect::<Vec<_>>();
        eprintln!(
            "{mbps} Mbit/s: without csfq {:?}, with csfq {:?} (fair share {:.2}; the core on \
             the {} clock)",
            mbit(&plain),
            mbit(&fair_run),
            fair / 1e6,
            core["clock"]
        );
        assert_eq!(
            core["capacity_bps"],
            mbps * 1_000_000,
            "C read from the tbf: {core}"
        );
        assert_eq!(
            core["limit_bytes"], limit,
            "the limit read from the tbf: {core}"
        );
        if mbps <= 100 {
            assert!(
                plain[4] > 1.25 * fair,
                "{mbps} Mbit/s: without csfq the UDP should take more than its share: {plain:?}"
            );
        }
        let (total_plain, total): (f64, f64) = (plain.iter().sum(), fair_run.iter().sum());
        let what = format!("{mbps} Mbit/s");
        // The simulator as the twin of this run: the same shaper, the core as attach set
        // it, the UDP at the rate its sender sent here (on the wire: 1490 bytes per 1448 of
        // payload). Shares of the payload's share here, of the wire's there.
        let sent = udp_sent.expect("the UDP's sent rate") * 1490.0 / 1448.0;
        let o = Command::new(CSFQ)
            .args(["dp", "twin", "--json", "--rate", &rate, "--limit", &limit_s])
            .args(["--udp-rate", &format!("{}kbit", (sent / 1e3) as u64)])
            .output()
            .expect("csfq dp twin");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let twin: serde_json::Value = serde_json::from_slice(&o.stdout).expect("twin JSON");
        let (udp, tcp) = (
            fair_run[4] / fair,
            fair_run[..4].iter().sum::<f64>() / 4.0 / fair,
        );
        // Within 15% of the twin's mean, widened by two standard deviations of one run
        // (the twin's over its eight seeds): this run is one draw.
        let agrees = |what: &str, measured: f64, key: &str| {
            let (mean, sd) = (
                twin[key]["mean"].as_f64().unwrap(),
                twin[key]["sd"].as_f64().unwrap(),
            );
            let band = 0.15 * mean + 2.0 * sd;
            eprintln!(
                "{mbps} Mbit/s, {what}: measured {measured:.3} of the share, the twin \
                 {mean:.3} (sd {sd:.3}, range {}-{}), band {band:.3}",
                twin[key]["min"], twin[key]["max"]
            );
            (measured - mean).abs() <= band
        };
        eprintln!("{mbps} Mbit/s: the UDP sent {:.1} Mbit/s", sent / 1e6);
        let udp_agrees = agrees("the UDP", udp, "udp_share");
        let tcp_agrees = agrees("the TCPs' mean", tcp, "tcp_share");
        // The twin's UDP sends at a constant rate. A sender that cannot reach the rate it was
        // asked for (here, at 1 Gbit/s, about a fifth of it) is held back by its CPU and
        // sends in bursts, which the twin does not model (README, "The simulator as the
        // dataplane's twin"): there the comparison is printed, not asserted.
        let sender_keeps_up = hog_keeps_up(sent, mbps);
        assert!(
            udp_agrees || !sender_keeps_up,
            "{mbps} Mbit/s: the twin's UDP share is off: {twin}"
        );
        // The core drops the twin's TCPs several times as often as the kernel's, and they
        // time out ten to forty times as often; at 1 Gbit/s that costs them a quarter of
        // their share (0.75 where the kernel's get 1.0), the cause not yet found: README,
        // "The simulator as the dataplane's twin".
        if mbps <= 100 {
            assert!(
                tcp_agrees,
                "{mbps} Mbit/s: the twin's TCP share is off: {twin}"
            );
        }
        let (udp_max, tcp_min) = within_csfqs_spread(&twin, 1.5, 0.75);
        let floor = tcp_floor_where_the_hog_keeps_up(Some(sent), mbps, tcp_min);
        assert_shares(&what, &fair_run, mbps as f64 * 1e6, fair, udp_max, floor);
        assert!(
            total >= 0.9 * total_plain,
            "{mbps} Mbit/s: the link carried {total} with csfq, under 90% of {total_plain} \
             without: {fair_run:?} / {plain:?}"
        );
    }
}

/// The UDP's ceiling and the least TCP's floor, in shares, where the simulator's twin of
/// the run gives CSFQ's own spread (`twin`: its `udp_share` and `tcp_min_share` over eight
/// seeds): the suite's aims (`udp_max`, `tcp_min`), or the twin's mean plus (minus) three
/// of its standard deviations where CSFQ itself reaches past them. One run is one draw of
/// CSFQ: at 100 Mbit/s the twin's UDP gets 1.33 with sd 0.12 (1.22-1.58 over its seeds),
/// so a run crosses 1.5 about once in fourteen, and at 10 Mbit/s its least TCP 0.82 with
/// sd 0.04 (down to 0.77): a fixed bound there fails the suite for CSFQ's spread, not for
/// the dataplane's fault. Three standard deviations, one sided: a run of the twin's past
/// them about once in 740. Printed where they widen.
fn within_csfqs_spread(twin: &serde_json::Value, udp_max: f64, tcp_min: f64) -> (f64, f64) {
    let spread = |key: &str| {
        let (mean, sd) = (
            twin[key]["mean"].as_f64().unwrap(),
            twin[key]["sd"].as_f64().unwrap(),
        );
        (mean, sd, mean + 3.0 * sd, mean - 3.0 * sd)
    };
    let (mean, sd, ceiling, _) = spread("udp_share");
    if ceiling > udp_max {
        eprintln!(
            "the UDP's ceiling: {ceiling:.3} of the share (the twin's {mean:.3} + 3 x {sd:.3}), \
             above the suite's {udp_max}"
        );
    }
    let (mean, sd, _, floor) = spread("tcp_min_share");
    if floor < tcp_min {
        eprintln!(
            "the least TCP's floor: {floor:.3} of the share (the twin's {mean:.3} - 3 x \
             {sd:.3}), below the suite's {tcp_min}"
        );
    }
    (ceiling.max(udp_max), floor.min(tcp_min))
}

/// The rate tests' bottleneck at `mbps`: a tbf at that rate whose limit is 20 ms of it (at
/// least 64 KB) and whose burst an eighth of that, in tc's words; the limit in bytes; and
/// each of five flows' fair share of payload, bit/s (iperf3 counts payload, about 95% of a
/// full-size frame).
struct Bottleneck {
    rate: String,
    burst: String,
    limit_s: String,
    limit: u64,
    fair: f64,
}

impl Bottleneck {
    fn at(mbps: u64) -> Self {
        let limit = (mbps * 1_000_000 / 8 * 20 / 1000).max(64 * 1024);
        Bottleneck {
            rate: format!("{mbps}mbit"),
            burst: format!("{}b", limit / 8),
            limit_s: format!("{limit}b"),
            limit,
            fair: mbps as f64 * 1e6 / 5.0 * 0.95,
        }
    }
}

/// CS-FNE and TUF on real packets at 10, 100 and 1000 Mbit/s (the highest rate this
/// machine carries; there the UDP's sender falls short of the link, under CSFQ too): the
/// edge labeling with the TSW meter and the CS-FNE core, then the edge tagging and the TUF
/// core, then the CSFQ edge and core for comparison, each in front of the tbf, four kernel
/// CUBIC TCPs and a UDP at the link rate for 10 s. The bounds: the UDP at most 1.5x its
/// share, each TCP at least half its share. For CS-FNE, from the thesis's spread
/// (csfne-table1, csfq-fig3a's 32 flows: max - min 0.162 Mbit/s about a mean of 0.312, so no
/// flow above 1.52x the mean; the TCP against UDPs at twice their share averages 0.643 of
/// its share, csfne-table2); for TUF, the report gives its TCP 70-100% of its share against
/// UDPs (tuf-fig10) and its flows "comparable" to CSFQ's (tuf-fig9), whose bound is 1.5x
/// here. Each core's C and limit come from the tbf. Each core must have dropped by its own
/// rule (its drop counter above zero) where the UDP's sender kept up with the link (90% of
/// it); where it did not, as at 1 Gbit/s on a slow machine (61 Mbit/s seen, under its
/// share), there is nothing above its share to drop, and neither that nor the TCPs' floor is
/// judged.
#[test]
fn csfne_and_tuf_hold_a_udp_at_the_link_rate_from_10_mbits_to_1_gbits() {
    if !runnable("csfne_and_tuf_hold_a_udp_at_the_link_rate_from_10_mbits_to_1_gbits") {
        return;
    }
    let _heavy = cpu_heavy();
    for (mbps, tags) in [
        (10u64, ["ea", "eb", "eg"]),
        (100, ["ec", "ed", "eh"]),
        (1000, ["ee", "ef", "ei"]),
    ] {
        let Bottleneck {
            rate,
            burst,
            limit_s,
            limit,
            fair,
        } = Bottleneck::at(mbps);
        let run = |core: &str, tag: &str| -> (Vec<f64>, serde_json::Value, Option<f64>) {
            let mut net = Net::shaped(tag, &rate, &burst, &limit_s);
            net.tcp_cc = Some("cubic");
            let edge: &[&str] = match core {
                "csfne" => &["--meter", "tsw"],
                "tuf" => &["--tuf"],
                _ => &[],
            };
            let mut args = vec!["edge", "attach", "--dev", "e0"];
            args.extend_from_slice(edge);
            net.dp_ok("e", &args);
            net.dp_ok(
                "c",
                &[core, "attach", "--dev", "c1", "--trusted-from", "c0"],
            );
            let rates = net.traffic(&format!("{mbps}M"), 10);
            if core == "csfne" {
                // The ring cannot change in place: its entries sit modulo its size.
                let o = net.csfq(
                    "c",
                    &[
                        "csfne",
                        "attach",
                        "--dev",
                        "c1",
                        "--trusted-from",
                        "c0",
                        "--ring",
                        "64",
                    ],
                );
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(!o.status.success() && err.contains("invalid ring"), "{err}");
            }
            let o = net.csfq("c", &["stats", "--json"]);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats");
            let st = of_net(&v, net.prefix())
                .into_iter()
                .find(|s| s["role"] == core)
                .expect("the core in stats")
                .clone();
            (rates, st, net.udp_sent)
        };
        let share = |v: &[f64]| v.iter().map(|r| r / fair).collect::<Vec<_>>();
        let sent = |v: Option<f64>| v.map_or("?".into(), |v| format!("{:.1}", v / 1e6));
        let mut seen = Vec::new();
        for (scheme, core, tag) in [
            ("CS-FNE", "csfne", tags[0]),
            ("TUF", "tuf", tags[2]),
            ("CSFQ", "core", tags[1]),
        ] {
            let (rates, st, udp_sent) = run(core, tag);
            eprintln!(
                "{mbps} Mbit/s, {scheme}: shares of {:.2} Mbit/s (4 TCPs, the UDP) {:.2?}; \
                 the UDP sent {} Mbit/s",
                fair / 1e6,
                share(&rates),
                sent(udp_sent)
            );
            let c = &st[if core == "core" { "core" } else { core }];
            eprintln!("{mbps} Mbit/s, the {scheme} core: {c}");
            assert_eq!(c["capacity_bps"], mbps * 1_000_000, "C from the tbf: {c}");
            assert_eq!(c["limit_bytes"], limit, "the limit from the tbf: {c}");
            let drop = match core {
                "csfne" => "drop_csfne_prob",
                "tuf" => "drop_tuf_highest_tag",
                _ => "drop_csfq_prob",
            };
            // The core has a flow above its share to drop only where the UDP's sender
            // kept up with the link (the rule that judges the TCPs' floor below).
            if udp_sent.is_none_or(|s| hog_keeps_up(s, mbps)) {
                assert!(
                    st["counters"][drop]["packets"].as_u64() > Some(0),
                    "{mbps} Mbit/s, {scheme}: no {drop}: {st}"
                );
            } else {
                eprintln!(
                    "{mbps} Mbit/s, {scheme}: the UDP's sender under 90% of the link, its \
                     {drop} ({}) not judged",
                    st["counters"][drop]["packets"]
                );
            }
            seen.push((scheme, rates, udp_sent));
        }
        for (scheme, rates, udp_sent) in &seen[..2] {
            let floor = tcp_floor_where_the_hog_keeps_up(*udp_sent, mbps, 0.5);
            assert_shares(
                &format!("{mbps} Mbit/s, {scheme}"),
                rates,
                mbps as f64 * 1e6,
                fair,
                1.5,
                floor,
            );
        }
    }
}

/// TUF's TCP tagger at the source on real sockets, at 10 and 100 Mbit/s: the sender's TCPs
/// tagged on its egress by Padhye's throughput from the kernel's own round trip (`csfq dp
/// tuf-source attach`, gso_max_segs 1 so that every packet is one segment), the edge
/// keeping those tags and tagging the UDP (`--tuf --keep-source-tags`), the TUF core; four
/// kernel CUBIC TCPs and a UDP at the link rate for 10 s, beside the same run with every
/// flow tagged at the edge, and again with the tagger's `t0` at about a round trip
/// (`--rto-min 1ms`, where the kernel's RTO is RTT + 200 ms). Held: no packet passed as a
/// super-packet, the edge keeps what the tagger tagged and tags itself no more packets than
/// the tagger passed as no TCP socket's (the UDP, and the TCP of no full socket), and each
/// socket's last tag is the model's (`csfq_algo::tuf_source::source_tag`) for the round
/// trip and MSS the program read from the kernel, bit for bit, that round trip being one
/// the path can have (above nothing, below a second). The shares are held to the other
/// schemes' bounds (the UDP at most 1.5x its share, every TCP at least half: the CS-FNE and
/// TUF test's, from the report's tuf-fig9 and tuf-fig10); that the UDP gets far less than
/// its share with the TCPs tagged at their sender by the kernel's RTO is a departure,
/// printed and explained in README ("TUF's tagger at the source"), not bounded.
#[test]
fn tuf_source_tags_real_tcp_sockets_by_their_round_trip() {
    if !runnable("tuf_source_tags_real_tcp_sockets_by_their_round_trip") {
        return;
    }
    let _heavy = cpu_heavy();
    for (mbps, tags) in [(10u64, ["sa", "sb", "se"]), (100, ["sc", "sd", "sf"])] {
        let Bottleneck {
            rate,
            burst,
            limit_s,
            limit: _,
            fair,
        } = Bottleneck::at(mbps);
        // The tagger's rto_min (t0 = RTT + rto_min): the kernel's, then 1 ms (a timeout
        // priced at about a round trip); none: every flow tagged at the edge.
        for (rto_min, tag) in [
            (Some("200ms"), tags[0]),
            (Some("1ms"), tags[2]),
            (None, tags[1]),
        ] {
            let source = rto_min.is_some();
            let how = match rto_min {
                Some(r) => format!("at the source (rto-min {r})"),
                None => "at the edge".to_string(),
            };
            let mut net = Net::shaped(tag, &rate, &burst, &limit_s);
            net.tcp_cc = Some("cubic");
            if source {
                net.x(
                    "s",
                    &["ip", "link", "set", "dev", "s0", "gso_max_segs", "1"],
                );
                let o = net.csfq(
                    "s",
                    &[
                        "tuf-source",
                        "attach",
                        "--dev",
                        "s0",
                        "--rto-min",
                        rto_min.unwrap(),
                    ],
                );
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(o.status.success(), "{err}");
                assert!(!err.contains("warning"), "{err}");
                net.dp_ok(
                    "e",
                    &[
                        "edge",
                        "attach",
                        "--dev",
                        "e0",
                        "--tuf",
                        "--keep-source-tags",
                    ],
                );
            } else {
                net.dp_ok("e", &["edge", "attach", "--dev", "e0", "--tuf"]);
            }
            net.dp_ok(
                "c",
                &["tuf", "attach", "--dev", "c1", "--trusted-from", "c0"],
            );
            let rates = net.traffic(&format!("{mbps}M"), 10);
            let shares: Vec<f64> = rates.iter().map(|r| r / fair).collect();
            eprintln!(
                "{mbps} Mbit/s, TUF, TCPs tagged {how}: shares of {:.2} Mbit/s (4 TCPs, the \
                 UDP) {shares:.2?}; the sender's TCP: {}",
                fair / 1e6,
                net.tcp_counters("s"),
            );
            // Each namespace's stats show its own attachments.
            let role = |n: &str, r: &str| -> Option<serde_json::Value> {
                let o = net.csfq(n, &["stats", "--json"]);
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats");
                let all = of_net(&v, net.prefix());
                all.iter().find(|s| s["role"] == r).map(|s| (*s).clone())
            };
            assert_shares(
                &format!("{mbps} Mbit/s, TUF, TCPs tagged {how}"),
                &rates,
                mbps as f64 * 1e6,
                fair,
                1.5,
                0.5,
            );
            let edge = role("e", "edge").expect("the edge in stats");
            let kept = edge["counters"]["kept_source_tag"]["packets"]
                .as_u64()
                .unwrap_or(0);
            if !source {
                assert_eq!(kept, 0);
                continue;
            }
            let st = role("s", "tuf-source").expect("the source tagger in stats");
            let c = &st["counters"];
            let n = |k: &str| c[k]["packets"].as_u64().unwrap_or(0);
            eprintln!("{mbps} Mbit/s, the source tagger: {}", st["tuf_source"]);
            assert_eq!(n("pass_super_packet"), 0, "{st}");
            assert!(n("source_tagged") > 1000, "{st}");
            // The edge keeps what the tagger tagged (less what the sender's own queue
            // dropped), and tags itself only what the tagger passed as no TCP socket's
            // (the UDP): no TCP packet left the sender untagged.
            assert!(kept > n("source_tagged") * 9 / 10, "{kept} kept: {st}");
            let edge_tagged = edge["counters"]["labeled"]["packets"].as_u64().unwrap_or(0);
            assert!(
                edge_tagged <= n("pass_not_tcp_socket"),
                "the edge tagged {edge_tagged}: {st}"
            );
            let t = &st["tuf_source"];
            let params = csfq_algo::tuf_source::FixedPadhyeParams::new(
                t["per_ack"].as_u64().unwrap() as u32,
                t["max_window"].as_u64().unwrap_or(0) as u32,
                t["rto_min_us"].as_u64().unwrap() as u32,
                (t["weight"].as_f64().unwrap() * 1000.0).round() as u32,
            );
            let sockets = t["sockets"].as_array().unwrap();
            let busy = sockets
                .iter()
                .filter(|s| s["packets"].as_u64().unwrap() > 1000)
                .count();
            assert!(busy >= 4, "the four TCPs: {t}");
            for s in sockets {
                let g = |k: &str| s[k].as_u64().unwrap() as u32;
                let want =
                    csfq_algo::tuf_source::source_tag(g("n"), g("srtt8_us"), g("mss"), &params);
                assert_eq!(u32::from(want), g("tag"), "socket {s}");
                let srtt = s["srtt_us"].as_f64().unwrap();
                assert!(srtt > 0.0 && srtt < 1e6, "socket {s}");
            }
        }
    }
}

/// A host wired straight to the core router, bypassing the edge, labels its own 10 Mbit/s
/// UDP low (its own csfq edge, with weight 1000: a label of a thousandth of its rate). A
/// core that believes every label never drops it, and it takes the link from the four
/// TCPs, which the edge labels honestly. A core told to trust labels only from the edge's
/// side (`--trusted-from c0`) judges the attacker's packets as unlabeled traffic and
/// holds it near its share, as it holds an honest UDP.
#[test]
fn core_trusts_labels_only_from_the_edges_side() {
    if !runnable("core_trusts_labels_only_from_the_edges_side") {
        return;
    }
    let _light = cpu_light();
    let mut results = Vec::new();
    for trust in [["--trust-any-label", ""], ["--trusted-from", "c0"]] {
        let mut net = Net::new(if trust[1].is_empty() { "t" } else { "u" });
        net.attacker();
        net.dp_ok("e", &["edge", "attach", "--dev", "e0"]);
        net.dp_ok(
            ATTACKER,
            &[
                "edge",
                "attach",
                "--dev",
                "a0",
                "--egress",
                "--default-weight",
                "1000",
            ],
        );
        let trust: Vec<&str> = trust.into_iter().filter(|a| !a.is_empty()).collect();
        net.attach_core(&trust);
        let got = net.traffic_with_udp_from(ATTACKER, "10M", 10);
        let stats = net.csfq("c", &["stats", "--json"]);
        let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats");
        let untrusted = stats
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["role"] == "core")
            .map(|s| s["counters"]["untrusted"]["packets"].as_u64().unwrap())
            .expect("the core's stats");
        eprintln!(
            "core {}: attacker {:.2} Mbit/s, TCPs {:?} Mbit/s; {untrusted} packets untrusted",
            trust.join(" "),
            got[4] / 1e6,
            got[..4].iter().map(|r| r / 1e6).collect::<Vec<_>>()
        );
        results.push((got, untrusted));
    }
    let (forged, untrusted) = &results[0];
    assert!(
        forged[4] > 3.0 * FAIR_GOODPUT && *untrusted == 0,
        "believing every label, the forged labels should win the link: {forged:?}"
    );
    let (held, untrusted) = &results[1];
    assert!(
        *untrusted > 1000,
        "the attacker's packets counted untrusted"
    );
    assert_held_to_share("attacker", held);
}

/// A core trusting its edge router's side warns while that router's island-facing egress
/// carries no edge (what is born on the router, or enters it where no edge is, would leave
/// with its labels believed), says what to attach, and is silent once the edge is also at
/// that egress, or when an edge labels the trusted interface's own ingress; a core
/// believing every label is not told about interfaces. The attacker
/// of `core_trusts_labels_only_from_the_edges_side` born on the edge router is what this
/// guards against (README "Limits: trust").
#[test]
fn a_core_warns_while_its_trusted_side_can_send_unlabeled() {
    if !runnable("a_core_warns_while_its_trusted_side_can_send_unlabeled") {
        return;
    }
    let _light = cpu_light();
    let net = Net::new("ej");
    net.dp_ok("e", &["edge", "attach", "--dev", "e0"]);
    let core = |trust: &[&str]| {
        let mut a = vec![
            "core", "attach", "--dev", "c1", "--rate", "10mbit", "--limit", "64kb",
        ];
        a.extend_from_slice(trust);
        let o = net.csfq("c", &a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // As one line: the warning is wrapped to the terminal's width.
        let words: Vec<String> = String::from_utf8_lossy(&o.stderr)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        words.join(" ")
    };
    let warned = core(&["--trusted-from", "c0"]);
    let e = net.ns("e");
    assert!(
        warned.contains("warning: labels from c0 are believed")
            && warned.contains(&format!("e1 in namespace {e},"))
            && warned.contains(&format!(
                "csfq dp --netns {e} edge attach --dev e1 --egress"
            )),
        "{warned}"
    );
    assert!(core(&["--trust-any-label"]).is_empty());
    net.dp_ok("e", &["edge", "attach", "--dev", "e1", "--egress"]);
    let quiet = core(&["--trusted-from", "c0"]);
    assert!(!quiet.contains("warning"), "{quiet}");
    // An edge at that interface's ingress (traffic from the core) guards nothing.
    net.dp_ok("e", &["detach", "--dev", "e1"]);
    net.dp_ok("e", &["edge", "attach", "--dev", "e1"]);
    assert!(core(&["--trusted-from", "c0"]).contains("warning: labels from c0"));
    // An edge on the trusted interface's own ingress (edge and core in one router, as in
    // README's example and the demo) labels all that comes in there.
    net.dp_ok("c", &["edge", "attach", "--dev", "c0"]);
    let quiet = core(&["--trusted-from", "c0"]);
    assert!(!quiet.contains("warning"), "{quiet}");
}

/// A non-IP flood on a bridged bottleneck: the core router's `c1` is a bridge port (with
/// the router's address on the bridge) beside `c3`, a port to namespace `q`, which floods
/// QinQ frames (ethertype 0x88a8, 1000 bytes) at twice the link's rate towards the
/// receiver while four kernel TCPs run through the island. The core cannot parse the
/// flood: priced as unlabeled traffic (the default), each TCP keeps at least half of its
/// share (they got 0.07 Mbit/s in all when such frames passed uncounted); with
/// `--unparsed drop` none of it passes. The flood's share is what
/// the core let through (`pass_not_ip`) over the TCPs' run.
#[test]
fn a_qinq_flood_on_a_bridged_bottleneck_is_priced_or_dropped() {
    if !runnable("a_qinq_flood_on_a_bridged_bottleneck_is_priced_or_dropped") {
        return;
    }
    let _light = cpu_light();
    const SECS: u32 = 12;
    for (tag, unparsed) in [("ca", "price"), ("cb", "drop")] {
        let mut net = Net::new(tag);
        let ok = |r: Result<(), csfq_dp::lab::LabError>| r.unwrap_or_else(|e| panic!("{e}"));
        ok(net.lab.add("q"));
        ok(net.lab.wire(
            ("q", "q0", "10.77.5.1/24"),
            ("c", "c3", "10.77.5.2/24"),
            Offloads::None,
        ));
        for cmd in [
            "ip addr del 10.77.5.2/24 dev c3",
            "ip addr del 10.77.3.1/24 dev c1",
            "ip link add br0 type bridge",
            "ip link set c1 master br0",
            "ip link set c3 master br0",
            "ip addr add 10.77.3.1/24 dev br0",
            "ip link set br0 up",
        ] {
            let a: Vec<&str> = cmd.split(' ').collect();
            let o = net.x("c", &a);
            assert!(
                o.status.success(),
                "{cmd}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        net.dp_ok("e", &["edge", "attach", "--dev", "e0"]);
        net.dp_ok("e", &["edge", "attach", "--dev", "e1", "--egress"]);
        net.attach_core(&["--trusted-from", "c0", "--unparsed", unparsed]);
        // The flood: paced QinQ frames to the receiver's MAC, from a raw socket.
        // (A bridge drops frames from the zero address: the sender's own is the source.)
        let mac = |n: &str, dev: &str| {
            let o = net.x(n, &["cat", &format!("/sys/class/net/{dev}/address")]);
            String::from_utf8(o.stdout).unwrap().trim().replace(':', "")
        };
        let (dst, src) = (mac("r", "r0"), mac("q", "q0"));
        let flood = format!(
            "import socket, time\n\
             s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n\
             s.bind(('q0', 0))\n\
             f = bytes.fromhex('{dst}{src}88a80064810000c80800')\n\
             f = f + bytes(1000 - len(f))\n\
             gap = 1000 * 8 / {rate}\n\
             t0 = time.monotonic()\n\
             n = 0\n\
             while time.monotonic() - t0 < {secs}:\n\
             \x20   s.send(f); n += 1\n\
             \x20   d = t0 + n * gap - time.monotonic()\n\
             \x20   time.sleep(d) if d > 0 else None\n",
            secs = SECS + 2,
            rate = 20e6,
        );
        let core = |net: &Net| {
            let stats = net.csfq("c", &["stats", "--json"]);
            let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats");
            stats
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["role"] == "core")
                .expect("the core's stats")
                .clone()
        };
        net.spawn("q", &["python3", "-c", &flood]);
        // The flood's share is judged over the TCPs' run (it outlasts them by 2 s).
        let (before, t0) = (core(&net), std::time::Instant::now());
        let tcps = net
            .try_iperf(None, SECS)
            .unwrap_or_else(|e| panic!("{unparsed}: {e}"));
        let (after, secs) = (core(&net), t0.elapsed().as_secs_f64());
        net.wait();
        let counter = |c: &str, what: &str| {
            let n = |s: &serde_json::Value| s["counters"][c][what].as_u64().unwrap_or(0);
            n(&after) - n(&before)
        };
        let passed_bps = counter("pass_not_ip", "bytes") as f64 * 8.0 / secs;
        eprintln!(
            "QinQ flood, --unparsed {unparsed}: TCPs {:?} Mbit/s; flood passed {:.2} Mbit/s \
             ({} frames), dropped {} frames (unparsed) and {} (priced)",
            tcps.iter().map(|r| r / 1e6).collect::<Vec<_>>(),
            passed_bps / 1e6,
            counter("pass_not_ip", "packets"),
            counter("drop_unparsed", "packets"),
            counter("drop_csfq_prob", "packets") + counter("drop_overflow", "packets"),
        );
        for (i, t) in tcps.iter().enumerate() {
            assert!(
                *t >= 0.5 * FAIR_GOODPUT,
                "--unparsed {unparsed}: TCP {i} {t} < half its share: {tcps:?}"
            );
        }
        if unparsed == "drop" {
            // What passes is ARP (spared; counted as pass_not_ip), a few frames.
            let (dropped, passed) = (
                counter("drop_unparsed", "packets"),
                counter("pass_not_ip", "packets"),
            );
            assert!(
                dropped > 1000 && passed * 100 < dropped,
                "{dropped} {passed}"
            );
        } else {
            // Priced, not dropped outright: some of it passes, counted. What it takes is
            // bounded by the TCPs' floor above; its own share is printed (measured 1.49-1.61
            // shares of frames at 1, 2 and 5 times the link: at or above the 1.5 this suite
            // holds a labeled UDP to, not traced; README says so).
            assert!(counter("pass_not_ip", "packets") > 0);
        }
    }
}

/// The core trusts its `--trusted-from` interfaces by index. Deleted and made again under
/// the same name, the edge's side has another index, and its labels are no longer
/// believed: `stats` names each trusted index's interface, says which index no interface
/// has any more (it said only "ifindex 2", and an honest UDP got three times its share),
/// and attaching again trusts the new one; a core attached with `--follow` trusts it by
/// itself.
#[test]
fn a_trusted_interface_made_again_is_shown_missing_until_attached_again() {
    if !runnable("a_trusted_interface_made_again_is_shown_missing_until_attached_again") {
        return;
    }
    let _light = cpu_light();
    let net = Net::new("f");
    net.attach_core(&["--trusted-from", "c0"]);
    let text = |net: &Net| {
        let o = net.csfq("c", &["stats"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let index = |net: &Net| -> u32 {
        let o = net.x("c", &["cat", "/sys/class/net/c0/ifindex"]);
        String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
    };
    let before = index(&net);
    let t = text(&net);
    assert!(
        t.contains(&format!("labels trusted only from ifindex {before} (c0)"))
            && !t.contains("MISSING"),
        "{t}"
    );
    // The edge's side deleted and made again, same names.
    let make_again = |net: &Net| {
        net.x("e", &["ip", "link", "del", "e1"]);
        run(
            "ip",
            &[
                "link",
                "add",
                "e1",
                "netns",
                &net.ns("e"),
                "type",
                "veth",
                "peer",
                "name",
                "c0",
                "netns",
                &net.ns("c"),
            ],
        );
    };
    make_again(&net);
    let after = index(&net);
    assert_ne!(before, after, "a veth made again gets another index");
    let t = text(&net);
    assert!(
        t.contains(&format!(
            "MISSING: trusted ifindex {before} is no interface now"
        )),
        "{t}"
    );
    let o = net.csfq("c", &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
    let core = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["role"] == "core")
        .expect("the core");
    assert_eq!(
        core["core"]["trusted_now"],
        serde_json::json!([[before, null]]),
        "{core}"
    );
    // Attached again: the new index, by name, and nothing missing.
    net.attach_core(&["--trusted-from", "c0"]);
    let t = text(&net);
    assert!(
        t.contains(&format!("labels trusted only from ifindex {after} (c0)"))
            && !t.contains("MISSING"),
        "{t}"
    );
    // With --follow the core trusts the interface made again by itself.
    let follower = Command::new(CSFQ)
        .args([
            "dp",
            "--netns",
            &net.ns("c"),
            "core",
            "attach",
            "--dev",
            "c1",
        ])
        .args([
            "--trusted-from",
            "c0",
            "--follow",
            "--follow-interval",
            "100ms",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("csfq dp core attach --follow");
    std::thread::sleep(std::time::Duration::from_millis(500));
    make_again(&net);
    let third = index(&net);
    assert_ne!(third, after);
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let t = text(&net);
        if t.contains(&format!("labels trusted only from ifindex {third} (c0)")) {
            assert!(!t.contains("MISSING"), "{t}");
            break;
        }
        assert!(
            std::time::Instant::now() < end,
            "not followed within 10 s: {t}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let kill = Command::new("kill")
        .args(["-INT", &follower.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = follower.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "the trusted interfaces are now c0 = ifindex {third}"
        )),
        "{err}"
    );
}

/// Two `csfq dp core attach` at once, five times: both succeed (one attaches, the other
/// updates its settings) and the core is attached afterwards: a success message means it
/// is running. An attached edge's flow table cannot be resized in place: another
/// `--flows` is refused, naming the table's size, and the edge keeps running; the same
/// size, or none, updates it.
#[test]
fn concurrent_attaches_leave_one_core_and_flow_tables_are_not_resized_silently() {
    if !runnable("concurrent_attaches_leave_one_core_and_flow_tables_are_not_resized_silently") {
        return;
    }
    let net = Net::new("k");
    let ns = net.ns("c");
    let core_running = || {
        let o = net.csfq("c", &["stats", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
        v.as_array()
            .unwrap()
            .iter()
            .any(|s| s["role"] == "core" && s["interface"] == "c1" && s["stale"] == false)
    };
    for trial in 0..5 {
        let attach = || {
            Command::new(CSFQ)
                .args([
                    "dp",
                    "--netns",
                    &ns,
                    "core",
                    "attach",
                    "--dev",
                    "c1",
                    "--rate",
                    "10mbit",
                    "--trusted-from",
                    "c0",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("csfq")
        };
        let (a, b) = (attach(), attach());
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        for o in &outs {
            assert!(
                o.status.success(),
                "trial {trial}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let said: Vec<String> = outs
            .iter()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .collect();
        assert_eq!(
            said.iter()
                .filter(|s| s.contains("core attached to c1"))
                .count(),
            1,
            "trial {trial}: one attaches, the other updates: {said:?}"
        );
        assert!(core_running(), "trial {trial}: {said:?}, yet no core runs");
        net.dp_ok("c", &["detach", "--dev", "c1"]);
    }

    let edge = |flows: Option<&str>| {
        let mut a = vec!["edge", "attach", "--dev", "e0"];
        if let Some(n) = flows {
            a.extend(["--flows", n]);
        }
        net.csfq("e", &a)
    };
    let o = edge(Some("1024"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = edge(Some("16"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("flow table of 1024 entries"),
        "{err}"
    );
    for flows in [None, Some("1024")] {
        let o = edge(flows);
        assert!(
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("settings updated"),
            "{flows:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// What Prometheus saw during the fairness run: every counter of both programs, never
/// going back; the core's state during the run (congested, A above C, alpha near the fair
/// share of 2 Mbit/s on the wire); and after it, the same counters `csfq dp stats` shows
/// (read between two scrapes, `around`: a stray packet may land in between).
fn check_scrapes(
    prefix: &str,
    scrapes: &[Vec<(String, f64)>],
    around: [&[(String, f64)]; 2],
    stats: &[&serde_json::Value],
) {
    let core_ns = format!("netns=\"{prefix}c\"");
    let ours = |series: &str| series.contains(&format!("netns=\"{prefix}"));
    let value = |scrape: &[(String, f64)], name: &str| {
        scrape
            .iter()
            .find(|(s, _)| s.starts_with(name) && s.contains(&core_ns))
            .map(|(_, v)| *v)
    };
    assert!(around[0]
        .iter()
        .any(|(s, v)| s == "csfq_dataplane_up" && *v == 1.0));
    // Monotone counters.
    for w in scrapes.windows(2) {
        for (series, v) in w[0]
            .iter()
            .filter(|(s, _)| s.contains("_total{") && ours(s))
        {
            let later = w[1].iter().find(|(s, _)| s == series).map(|(_, v)| *v);
            assert!(
                later.is_some_and(|l| l >= *v),
                "{series}: {v} then {later:?}"
            );
        }
    }
    // Mid-run (scrapes 2..=6, about 3-7 s, fall inside the 10 s of traffic, which starts
    // 0.7 s in and the TCPs' 0.5 s later).
    let mid = &scrapes[2..7];
    let c = value(&mid[0], "csfq_core_capacity_bits_per_second").expect("core capacity");
    assert_eq!(c, 10e6);
    let mut alphas: Vec<f64> = mid
        .iter()
        .filter_map(|s| value(s, "csfq_core_fair_share_bits_per_second"))
        .collect();
    alphas.sort_by(f64::total_cmp);
    eprintln!("alpha from the exporter, bit/s: {alphas:?}");
    let alpha = alphas[alphas.len() / 2];
    assert!(
        (1e6..=4e6).contains(&alpha),
        "median alpha {alpha} bit/s over {alphas:?}: the fair share is 2 Mbit/s (within a factor 2)"
    );
    let congested = mid
        .iter()
        .filter(|s| value(s, "csfq_core_congested") == Some(1.0))
        .count();
    assert!(congested >= 3, "congested in {congested} of 5 scrapes");
    let arrivals = mid
        .iter()
        .filter(|s| value(s, "csfq_core_arrival_rate_bits_per_second").is_some_and(|a| a > c))
        .count();
    let seen: Vec<_> = mid
        .iter()
        .map(|s| value(s, "csfq_core_arrival_rate_bits_per_second"))
        .collect();
    assert!(arrivals >= 3, "A > C in {arrivals} of 5 scrapes: {seen:?}");
    // After the run: the exporter's counters are `csfq dp stats`'s.
    for st in stats {
        let (iface, role) = (
            st["interface"].as_str().unwrap(),
            st["role"].as_str().unwrap(),
        );
        let netns = st["scope"]
            .as_str()
            .unwrap()
            .strip_prefix("netns-")
            .unwrap();
        for (counter, c) in st["counters"].as_object().unwrap() {
            let series = format!(
                "csfq_packets_total{{netns=\"{netns}\",interface=\"{iface}\",role=\"{role}\",counter=\"{counter}\"}}"
            );
            let [before, after] = around.map(|scrape| {
                scrape
                    .iter()
                    .find(|(s, _)| *s == series)
                    .map(|(_, v)| *v)
                    .unwrap_or_else(|| panic!("no {series}"))
            });
            let shown = c["packets"].as_f64().unwrap();
            assert!(
                before <= shown && shown <= after,
                "{series}: exporter {before} then {after}, stats {shown}"
            );
        }
    }
}

/// Sends `n` UDP datagrams of `payload` bytes from namespace `ns` to `to`, without DF
/// (IP_PMTUDISC_DONT), one every `gap`: from a thread that joined `ns` (setns acts on the
/// calling thread only).
fn send_without_df(ns: &str, to: &str, n: u32, payload: usize, gap: std::time::Duration) {
    let (ns, to) = (ns.to_string(), to.to_string());
    std::thread::spawn(move || {
        use std::os::fd::AsRawFd as _;
        let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("netns");
        // SAFETY: setns on an open namespace file, for this thread only.
        assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
        let sock = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
        let dont: libc::c_int = libc::IP_PMTUDISC_DONT;
        // SAFETY: an int option on a socket we own.
        let r = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::IPPROTO_IP,
                libc::IP_MTU_DISCOVER,
                &dont as *const _ as *const libc::c_void,
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0);
        let buf = vec![0x5a; payload];
        let start = std::time::Instant::now();
        for i in 0..n {
            if let Some(wait) = (gap * i).checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            sock.send_to(&buf, &to).unwrap();
        }
    })
    .join()
    .unwrap();
}

/// Sends `n` small UDP datagrams from address `from` to `to`, from namespace `ns`.
fn send_from(ns: &str, from: &str, to: &str, n: u32) {
    let (ns, from, to) = (ns.to_string(), from.to_string(), to.to_string());
    std::thread::spawn(move || {
        use std::os::fd::AsRawFd as _;
        let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("netns");
        // SAFETY: setns on an open namespace file, for this thread only.
        assert_eq!(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) }, 0);
        let sock = std::net::UdpSocket::bind(format!("{from}:0")).unwrap();
        for _ in 0..n {
            sock.send_to(&[0x5a; 100], &to).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    })
    .join()
    .unwrap();
}

/// `edge attach --allow-source`: a host that sends from an address outside the accepted
/// prefix (a spoofed source, here an address of its own outside them) has every such
/// packet dropped at the edge and counted (`drop_source`), while its packets from the
/// accepted prefix are labeled; attached again without the option, the edge takes every
/// source again.
#[test]
fn edge_drops_sources_outside_the_accepted_prefixes() {
    if !runnable("edge_drops_sources_outside_the_accepted_prefixes") {
        return;
    }
    let _light = cpu_light();
    let net = Net::new("d");
    net.x("s", &["ip", "addr", "add", "10.99.0.1/32", "dev", "s0"]);
    let attach = |extra: &[&str]| {
        let mut a = vec!["edge", "attach", "--dev", "e0"];
        a.extend_from_slice(extra);
        net.dp_ok("e", &a);
    };
    attach(&["--allow-source", "10.77.1.0/24"]);
    let edge = || -> serde_json::Value {
        let o = net.csfq("e", &["stats", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
        of_net(&v, net.prefix())
            .into_iter()
            .find(|s| s["role"] == "edge")
            .expect("the edge")
            .clone()
    };
    let packets =
        |e: &serde_json::Value, c: &str| e["counters"][c]["packets"].as_u64().unwrap_or(0);
    assert_eq!(edge()["edge"]["source_filter"], true);
    send_from(&net.ns("s"), "10.99.0.1", "10.77.3.2:9", 200);
    send_from(&net.ns("s"), "10.77.1.1", "10.77.3.2:9", 100);
    let e = edge();
    assert_eq!(packets(&e, "drop_source"), 200, "{e}");
    assert!(packets(&e, "labeled") >= 100, "{e}");
    let text = String::from_utf8_lossy(&net.csfq("e", &["stats"]).stdout).to_string();
    assert!(
        text.contains("sources: only the accepted prefixes"),
        "{text}"
    );
    attach(&[]);
    assert_eq!(edge()["edge"]["source_filter"], false);
    send_from(&net.ns("s"), "10.99.0.1", "10.77.3.2:9", 50);
    let e = edge();
    assert_eq!(packets(&e, "drop_source"), 200, "{e}");
}

/// Sends UDP from `ports` source ports of `src` (round robin, DF set so the edge labels it)
/// to `dst:6000` at `mbps` for `secs`, from namespace `ns`.
const MANY_PORTS_SENDER: &str = r#"
import socket, sys, time
src, dst, n, mbps, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = IP_PMTUDISC_DO: DF set
    s.bind((src, 0))
    s.connect((dst, 6000))
    socks.append(s)
gap = 1000 * 8 / (mbps * 1e6)
t0, k = time.monotonic(), 0
while time.monotonic() - t0 < secs:
    due = t0 + k * gap
    now = time.monotonic()
    if now < due:
        time.sleep(min(due - now, 0.001))
        continue
    try:
        # 972 bytes, the first 8 the datagram's sequence number (the receiver's loss).
        socks[k % n].send(k.to_bytes(8, "big") + b"x" * 964)
    except OSError:
        pass
    k += 1
"#;

/// What [`COUNTING_RECEIVER`] prints.
#[derive(Debug)]
struct UdpCount {
    /// Payload bytes received in the window.
    bytes: f64,
    /// Datagrams received in the window.
    received: u64,
    /// The sequence numbers they span: the datagrams sent over the window.
    span: u64,
    /// Datagrams the receiving host dropped for a full socket buffer (the whole run).
    rcvbuf_errors: u64,
}

impl UdpCount {
    fn parse(stdout: &[u8]) -> Self {
        let text = String::from_utf8_lossy(stdout);
        let f: Vec<f64> = text
            .split_whitespace()
            .map(|w| {
                w.parse()
                    .unwrap_or_else(|_| panic!("receiver printed {text:?}"))
            })
            .collect();
        assert_eq!(f.len(), 4, "receiver printed {text:?}");
        Self {
            bytes: f[0],
            received: f[1] as u64,
            span: f[2] as u64,
            rcvbuf_errors: f[3] as u64,
        }
    }
}

/// Counts the UDP payload bytes that reach port 6000 from `argv[1]` to `argv[2]` seconds
/// after it starts, and prints the total, then what the sequence numbers
/// ([`MANY_PORTS_SENDER`]'s) say of the same window: the datagrams received, the span of
/// numbers they cover (sent, whatever the sender's pace), and the datagrams this host's
/// UDP dropped for a full receive buffer over the whole run (a stalled receiver's loss, not
/// the network's; the buffer is 8 MB to make it rare).
const COUNTING_RECEIVER: &str = r#"
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
except OSError:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("0.0.0.0", 6000))
s.settimeout(0.05)
t0 = time.monotonic()
start, end, total = t0 + float(sys.argv[1]), t0 + float(sys.argv[2]), 0
seqs = set()
while time.monotonic() < end:
    try:
        d = s.recv(4096)
        if time.monotonic() >= start:
            total += len(d)
            seqs.add(int.from_bytes(d[:8], "big"))
    except socket.timeout:
        pass
span = max(seqs) - min(seqs) + 1 if seqs else 0
udp = [l.split() for l in open("/proc/net/snmp") if l.startswith("Udp:")]
rcvbuf = int(dict(zip(udp[0], udp[1]))["RcvbufErrors"])
print(total, len(seqs), span, rcvbuf)
"#;

/// A second host (10.77.1.3, beside the four TCPs' 10.77.1.1) sends UDP at 10 Mbit/s from
/// 1000 source ports (10 kbit/s each) through an edge whose flow table holds 16 flows, so
/// that it churns. Keyed by 5-tuple (the paper's flows), the churning flows are priced as
/// one pool of new flows; keyed by source host (`--flow-key source`) the sender is one
/// flow, held near a host's share (half the link) whatever its ports, and the TCP host
/// keeps its half. Prints every flow's goodput under both keys (the README quotes them).
#[test]
fn many_source_ports_through_a_small_flow_table() {
    if !runnable("many_source_ports_through_a_small_flow_table") || missing_tool("python3") {
        return;
    }
    let _light = cpu_light();
    let secs = 8;
    let mut by_key = Vec::new();
    for key in ["5-tuple", "source"] {
        // Under heavy loss an iperf3 control connection can time out: up to three tries.
        let mut tries = 0;
        let (many, tcp) = loop {
            tries += 1;
            match many_ports_run(key, secs) {
                Ok(r) => break r,
                Err(e) if tries < 3 => eprintln!("--flow-key {key}: {e}; again"),
                Err(e) => panic!("--flow-key {key}: {e}"),
            }
        };
        eprintln!(
            "--flow-key {key}, --flows 16: 1000-port sender {:.2} Mbit/s, TCPs {:?} Mbit/s",
            many / 1e6,
            tcp.iter()
                .map(|r| (r / 1e4).round() / 100.0)
                .collect::<Vec<_>>()
        );
        by_key.push((many, tcp));
    }
    // Keyed by source: two hosts, a share of half the link each (goodput about 4.75). The
    // TCP host's four flows are one flow to the core: they share its half as they would a
    // FIFO, so one of them may get little; their sum is the host's.
    let (many, tcp) = &by_key[1];
    let host_share = 5e6 * 0.95;
    assert!(
        *many <= 1.25 * host_share,
        "the 1000-port host {many} > 1.25 x a host's share: {by_key:?}"
    );
    let tcp_host: f64 = tcp.iter().sum();
    assert!(
        tcp_host >= 0.75 * host_share,
        "the TCP host {tcp_host} < 0.75 x a host's share: {by_key:?}"
    );
}

/// One run of [`many_source_ports_through_a_small_flow_table`] with the edge keyed by
/// `key`: the 1000-port sender's goodput and the four TCPs', bit/s.
fn many_ports_run(key: &str, secs: u32) -> Result<(f64, Vec<f64>), String> {
    {
        let mut net = Net::new(if key == "source" { "m" } else { "n" });
        net.x("s", &["ip", "addr", "add", "10.77.1.3/24", "dev", "s0"]);
        net.dp_ok(
            "e",
            &[
                "edge",
                "attach",
                "--dev",
                "e0",
                "--flows",
                "16",
                "--flow-key",
                key,
            ],
        );
        net.attach_core(&["--trusted-from", "c0"]);
        let (rns, sns) = (net.ns("r"), net.ns("s"));
        let receiver = Command::new("ip")
            .args(["netns", "exec", &rns, "timeout", "30", "python3", "-c"])
            // Counted while the TCPs surely run: from 3 s (they start after about 1 s)
            // to secs + 1 s.
            .args([COUNTING_RECEIVER, "3", &(secs + 1).to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("receiver");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let sender = Command::new("ip")
            .args(["netns", "exec", &sns, "timeout", "30", "python3", "-c"])
            .args([MANY_PORTS_SENDER, "10.77.1.3", "10.77.3.2", "1000", "10"])
            .arg((secs + 2).to_string())
            .spawn()
            .expect("sender");
        // Four TCPs over the same seconds. (No iperf3 UDP beside them: its start-up
        // datagram, a new flow into the congested core, may be dropped, and the client
        // then gives up.)
        let got = net.try_iperf(None, secs);
        let _ = sender.wait_with_output();
        let out = receiver.wait_with_output().expect("receiver");
        let many = UdpCount::parse(&out.stdout).bytes * 8.0 / (secs as f64 - 2.0);
        Ok((many, got?[..4].to_vec()))
    }
}

/// The operator's choice for IPv4 that cannot carry a label, on real interfaces: with
/// `--unlabelable 1mbit` the edge passes at most the token bucket's arrival curve (burst
/// plus 1 Mbit/s over the time the packets took to send) of a 4 Mbit/s stream without DF,
/// and drops the rest; `--unlabelable drop` passes none of it.
#[test]
fn edge_polices_traffic_that_cannot_carry_a_label() {
    if !runnable("edge_polices_traffic_that_cannot_carry_a_label") {
        return;
    }
    let _light = cpu_light();
    let net = Net::new("p");
    net.dp_ok(
        "e",
        &[
            "edge",
            "attach",
            "--dev",
            "e0",
            "--unlabelable",
            "1mbit",
            "--unlabelable-burst",
            "3000b",
        ],
    );
    let edge = |net: &Net| -> serde_json::Value {
        let o = net.csfq("e", &["stats", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
        v.as_array()
            .unwrap()
            .iter()
            .find(|s| s["role"] == "edge")
            .cloned()
            .expect("the edge")
    };
    let e = edge(&net);
    assert_eq!(e["edge"]["unlabelable"], "police", "{e}");
    assert_eq!(e["edge"]["police_rate_bps"], 1_000_000, "{e}");
    assert_eq!(e["edge"]["police_burst_bytes"], 3000, "{e}");
    // 1000 frames of 1442 bytes (1400 of payload), one every 2.884 ms: 4 Mbit/s.
    let start = std::time::Instant::now();
    send_without_df(
        &net.ns("s"),
        "10.77.3.2:9",
        1000,
        1400,
        std::time::Duration::from_micros(2884),
    );
    let span = start.elapsed().as_secs_f64();
    let e = edge(&net);
    let (passed, dropped) = (
        e["counters"]["pass_not_atomic"]["bytes"].as_u64().unwrap(),
        e["counters"]["drop_policed"]["packets"].as_u64().unwrap(),
    );
    // The bucket fills by the program's clock: on the coarse one (a jiffy behind the
    // time at most) its first and last packets can be a tick further apart than the
    // sender's span, and the bucket credits that tick's rate too.
    let tick = if e["edge"]["clock"] == "coarse" {
        csfq_dp::tick_ns() as f64 / 1e9
    } else {
        0.0
    };
    let bound = 3000.0 + 1e6 / 8.0 * (span + tick);
    eprintln!(
        "policed: {passed} bytes passed in {span:.2} s (bound {bound:.0}, a tick {tick} s), \
         {dropped} packets dropped"
    );
    assert!(passed as f64 <= bound, "{passed} > {bound}: {e}");
    // The stream always had packets waiting: the bucket cannot have let much less
    // through than its rate (the first 2.884 ms and one packet of slack).
    assert!(
        passed as f64 >= 1e6 / 8.0 * (span - 0.1) - 1442.0,
        "{passed}: {e}"
    );
    assert!(dropped >= 600, "{e}");

    net.dp_ok(
        "e",
        &["edge", "attach", "--dev", "e0", "--unlabelable", "drop"],
    );
    send_without_df(
        &net.ns("s"),
        "10.77.3.2:9",
        100,
        1400,
        std::time::Duration::from_micros(100),
    );
    let after = edge(&net);
    assert_eq!(
        after["counters"]["pass_not_atomic"]["bytes"]
            .as_u64()
            .unwrap(),
        passed,
        "{after}"
    );
    assert_eq!(
        after["counters"]["drop_policed"]["packets"]
            .as_u64()
            .unwrap(),
        dropped + 100,
        "{after}"
    );
}

/// Errors a user meets on a real system: a missing interface, a missing namespace.
#[test]
fn dp_errors_name_what_is_missing() {
    if !runnable("dp_errors_name_what_is_missing") {
        return;
    }
    let o = Command::new(CSFQ)
        .args([
            "dp",
            "core",
            "attach",
            "--dev",
            "csfq-nosuch0",
            "--rate",
            "10mbit",
            "--trust-any-label",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no interface `csfq-nosuch0`"));
    let o = Command::new(CSFQ)
        .args(["dp", "--netns", "csfq-nosuch-ns", "stats"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no network namespace `csfq-nosuch-ns`"),
        "{err}"
    );
    assert_eq!(
        err.matches("os error 2").count(),
        1,
        "the cause once: {err}"
    );
    // Values tc would parse but the core or edge cannot run with: a range error with the
    // value.
    for (args, needle) in [
        (
            &[
                "core",
                "--rate",
                "0mbit",
                "--limit",
                "64kb",
                "--trust-any-label",
            ][..],
            "invalid rate: 0 bit/s is out of range: must be from 8bit to 4tbit",
        ),
        (
            &[
                "core",
                "--rate",
                "10mbit",
                "--limit",
                "10gb",
                "--trust-any-label",
            ][..],
            "invalid limit: 10737418240 bytes is out of range",
        ),
        (
            &["edge", "--unlabelable", "0mbit"][..],
            "invalid unlabelable: 0 bit/s is out of range: must be from 8bit to 4tbit",
        ),
        (
            &[
                "edge",
                "--unlabelable",
                "1mbit",
                "--unlabelable-burst",
                "1kb",
            ][..],
            "invalid unlabelable-burst: 1024 bytes is out of range",
        ),
        (
            &[
                "edge",
                "--unlabelable",
                "1mbit",
                "--unlabelable-burst",
                "5gb",
            ][..],
            "invalid unlabelable-burst: 5368709120 bytes is out of range",
        ),
        (
            &[
                "edge",
                "--unlabelable",
                "drop",
                "--unlabelable-burst",
                "10kb",
            ][..],
            "only with --unlabelable RATE",
        ),
        (
            &[
                "core",
                "--rate",
                "10mbit",
                "--limit",
                "64kb",
                "--trusted-from",
                "csfq-nosuch1",
            ][..],
            "no interface `csfq-nosuch1`",
        ),
        // Neither given nor readable from the interface's root qdisc (lo has none that
        // shapes): refused, saying what was found.
        (
            &["core", "--trust-any-label"][..],
            "the root qdisc on lo (noqueue) gives no rate: give --rate",
        ),
        (
            &["core", "--rate", "10mbit", "--trust-any-label"][..],
            "the root qdisc on lo (noqueue) gives no byte limit: give --limit",
        ),
        (
            &["may"][..],
            "the root qdisc on lo (noqueue) gives no rate: give --rate",
        ),
    ] {
        let o = Command::new(CSFQ)
            .args(["dp", args[0], "attach", "--dev", "lo"])
            .args(&args[1..])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `ip netns exec NS csfq dp ...` gives the command a private /sys, whose BPF filesystem
/// (and every pin in it) vanished with the command: "attached" was printed and nothing
/// stayed. Now it acts as `csfq dp --netns NS ...`: the programs stay, both forms see them,
/// and either detaches them.
#[test]
fn attach_under_ip_netns_exec_persists() {
    if !runnable("attach_under_ip_netns_exec_persists") {
        return;
    }
    let net = Net::new("x");
    let exec = |args: &[&str]| {
        let ns = net.ns("c");
        let mut a = vec!["netns", "exec", ns.as_str(), CSFQ, "dp"];
        a.extend_from_slice(args);
        Command::new("ip").args(&a).output().unwrap()
    };
    let o = exec(&[
        "core",
        "attach",
        "--dev",
        "c1",
        "--rate",
        "10mbit",
        "--trusted-from",
        "c0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("csfq core attached to c1"));
    let scope = format!("netns-{}", net.ns("c"));
    for o in [
        net.csfq("c", &["stats", "--json"]),
        exec(&["stats", "--json"]),
    ] {
        let stats: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        assert!(
            stats
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["scope"] == scope.as_str() && s["role"] == "core"),
            "the core stays attached after the command exits: {stats}"
        );
    }
    // The program runs on the interface, not only sits in our pins: packets sent through
    // the core router after the command exited are counted.
    net.x(
        "s",
        &[
            "bash",
            "-c",
            "for i in 1 2 3 4 5; do echo x > /dev/udp/10.77.3.2/9; sleep 0.1; done",
        ],
    );
    let stats: serde_json::Value =
        serde_json::from_slice(&net.csfq("c", &["stats", "--json"]).stdout).unwrap();
    let core = stats
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == scope.as_str() && s["role"] == "core")
        .unwrap();
    let seen: u64 = core["counters"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["packets"].as_u64().unwrap())
        .sum();
    assert!(seen >= 5, "{core}");
    let o = exec(&["detach", "--dev", "c1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = net.csfq("c", &["detach", "--dev", "c1"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing attached"));
}

/// `csfq dp bench` end to end, briefly: every case delivers packets, and the kernel's
/// statistics are read for exactly the programs each case attached (the empty program, the
/// edge, the core, MAY, the CS-FNE and TUF cores), so the figures it prints belong to the programs
/// they name.
#[test]
fn dp_bench_reports_each_attached_program() {
    if !runnable("dp_bench_reports_each_attached_program") {
        return;
    }
    let _cpu = cpu_heavy();
    let o = run(
        CSFQ,
        &["dp", "bench", "--secs", "0.2", "--repeat", "1", "--json"],
    );
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let rows = rows.as_array().expect("an array of cases");
    let cases: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    let mut want = vec![
        "none",
        "empty",
        "edge",
        "edge, coarse clock",
        "edge, tsw meter",
        "edge, tuf tags",
        "core",
        "edge+core",
        "edge+core, coarse clocks",
        "may",
        "may, coarse clock",
        "csfne",
        "edge (tsw)+csfne",
        "tuf",
        "edge (tuf)+tuf",
    ];
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        want.extend([
            "2 CPUs: none",
            "2 CPUs: core",
            "2 CPUs: edge",
            "2 CPUs: edge+core",
            "2 CPUs: edge+core, coarse clocks",
            "2 CPUs: may, coarse clock",
        ]);
    }
    assert_eq!(cases, want);
    for r in rows {
        let case = r["case"].as_str().unwrap();
        assert!(
            r["pps"].as_f64().unwrap() > 0.0,
            "{case} delivered nothing: {r}"
        );
        for (field, attached) in [
            ("empty_ns", case == "empty"),
            // "2 CPUs: none" has no program; the other "2 CPUs" cases those they name.
            ("edge_ns", case.contains("edge")),
            ("core_ns", case.contains("core")),
            ("may_ns", case.starts_with("may") || case.contains(": may")),
            ("csfne_ns", case.contains("csfne")),
            ("tuf_ns", case == "tuf" || case.ends_with("+tuf")),
        ] {
            let ns = r[field].as_f64();
            assert_eq!(ns.is_some(), attached, "{case}: {field} = {:?}", r[field]);
            assert!(
                ns.is_none_or(|v| v > 0.0),
                "{case}: {field} = {:?}",
                r[field]
            );
        }
    }
}

/// Deleting a namespace without detaching leaves its pins: `csfq dp stats` marks that
/// attachment stale (before, it showed a core with its numbers frozen, as if alive), the
/// exporter leaves it out, `csfq dp detach --stale` removes it and nothing else, and
/// `--netns NAME stats` shows that namespace's attachments only, as `--netns NAME detach
/// --stale` removes only that namespace's (it used to remove every namespace's).
#[test]
fn a_deleted_namespace_leaves_a_stale_attachment_that_detach_stale_removes() {
    if !runnable("a_deleted_namespace_leaves_a_stale_attachment_that_detach_stale_removes") {
        return;
    }
    let net = Net::new("g");
    net.attach_core(&["--trust-any-label"]);
    net.dp_ok("e", &["edge", "attach", "--dev", "e0"]);
    let (c, e) = (
        format!("netns-{}", net.ns("c")),
        format!("netns-{}", net.ns("e")),
    );
    let ours = |o: &Output| -> Vec<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&o.stderr)));
        v.as_array()
            .unwrap()
            .iter()
            .filter(|s| s["scope"] == c.as_str() || s["scope"] == e.as_str())
            .cloned()
            .collect()
    };
    // --netns: that namespace only.
    let only_e = ours(&net.csfq("e", &["stats", "--json"]));
    assert_eq!(only_e.len(), 1, "{only_e:?}");
    assert_eq!(only_e[0]["scope"], e.as_str());
    // Both alive, then the core's namespace deleted under it.
    let all = ours(
        &Command::new(CSFQ)
            .args(["dp", "stats", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().all(|s| s["stale"] == false), "{all:?}");
    run("ip", &["netns", "del", &net.ns("c")]);
    // The kernel tears a namespace down asynchronously (its cleanup work runs later, later
    // still on a loaded machine): poll for up to 10 s.
    let mut all = Vec::new();
    for _ in 0..100 {
        all = ours(
            &Command::new(CSFQ)
                .args(["dp", "stats", "--json"])
                .output()
                .unwrap(),
        );
        if all.iter().any(|s| s["stale"] == true) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let stale: Vec<_> = all.iter().filter(|s| s["stale"] == true).collect();
    assert_eq!(stale.len(), 1, "{all:?}");
    assert_eq!(stale[0]["scope"], c.as_str());
    let text = Command::new(CSFQ).args(["dp", "stats"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("STALE"));
    // Under another namespace's --netns, detach --stale is that namespace's only: the
    // stale core (the deleted namespace's) stays.
    let o = net.csfq("e", &["detach", "--stale"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("csfq has no stale attachment"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let still = ours(
        &Command::new(CSFQ)
            .args(["dp", "stats", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        still.iter().filter(|s| s["stale"] == true).count(),
        1,
        "{still:?}"
    );
    // detach --stale removes the stale core and leaves the live edge.
    let o = Command::new(CSFQ)
        .args(["dp", "detach", "--stale"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("removed the stale core of c1 ({c})")),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let all = ours(
        &Command::new(CSFQ)
            .args(["dp", "stats", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(
        (all[0]["scope"].as_str(), all[0]["stale"].as_bool()),
        (Some(e.as_str()), Some(false))
    );
}

/// `csfq dp stats --json`'s entry for MAY on `c1`.
fn may_stats(net: &Net) -> serde_json::Value {
    let o = net.csfq("c", &["stats", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let all: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stats JSON");
    all.as_array()
        .and_then(|a| a.iter().find(|s| s["role"] == "may"))
        .cloned()
        .expect("MAY in stats")
}

/// Four TCPs and a UDP flow at `udp_mbps` (10: 5x its 2 Mbit/s share) for `secs`, through
/// the bottleneck as `net` has it; the UDP's goodput from `from` s to the end (bit/s), and
/// the TCPs' over the middle of their runs ([`goodput`]), and the receiver's count of the
/// UDP's datagrams over the same window.
fn udp_beside_tcp(
    net: &mut Net,
    secs: u32,
    from: u32,
    udp_mbps: f64,
) -> Result<(f64, Vec<f64>, UdpCount), String> {
    let (rns, sns) = (net.ns("r"), net.ns("s"));
    let receiver = Command::new("ip")
        .args(["netns", "exec", &rns, "timeout", "60", "python3", "-c"])
        .args([
            COUNTING_RECEIVER,
            &from.to_string(),
            &(secs + 1).to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("receiver");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sender = Command::new("ip")
        .args(["netns", "exec", &sns, "timeout", "60", "python3", "-c"])
        // One port of the four TCPs' host.
        .args([
            MANY_PORTS_SENDER,
            "10.77.1.1",
            "10.77.3.2",
            "1",
            &udp_mbps.to_string(),
        ])
        .arg((secs + 2).to_string())
        .spawn()
        .expect("sender");
    let tcp = net.try_iperf(None, secs);
    let _ = sender.wait_with_output();
    let out = receiver.wait_with_output().expect("receiver");
    let count = UdpCount::parse(&out.stdout);
    let goodput = count.bytes * 8.0 / f64::from(secs + 1 - from);
    Ok((goodput, tcp?[..4].to_vec(), count))
}

/// MAY on real packets (the paper's parameters: Delta 1 s, kappa 0.1, q_w 0.05, S0 1000),
/// with no edge: four kernel TCP flows and a UDP flow at 5x its share through the 10 Mbit/s
/// tbf. The simulator's MAY on the same setup (`csfq run`, 4 TCP + 10 Mbit/s UDP, 64 KB)
/// has the UDP sampled within its first second and shut off from about 8 s (Theorem 3.2:
/// a CBR above the share is shut off, not held at it), so from 10 s on its goodput must be
/// at most 1.25 x its share; under the drop-tail tbf alone it takes most of the link. The
/// utilization is Eq. (3)'s, the bytes MAY passes (the default): once the UDP is shut off
/// it no longer holds v up (with every arriving byte counted, the UDP's dropped packets
/// kept v growing and MAY dropped every flow in its table: all four TCPs at 0.00 Mbit/s at
/// 20 Mbit/s). The TCPs' goodputs, over seconds 10-18 (after MAY's warm-up, as the UDP is
/// judged), are printed, not bounded here: with the paper's controller MAY did not meet "no
/// TCP under half its share" (0.50-6.09 Mbit/s against a share of 1.9 in two runs on the
/// fine clock; README, "MAY on a real router", says why); with `v`'s ceiling, the default
/// since, the next test holds that floor. Last, a UDP at half its share (MAY
/// samples it into the table at 1/S0 a packet and drops it only while its rate times v
/// is above 1, Eq. 2) passes almost untouched: at least 90% of what it sends over the
/// window arrives (by its sequence numbers; the simulator on the same setup, 64 KB buffer,
/// loses 0.7-1.9% of it over seeds 1-30). MAY runs on each clock, the fine one and the
/// kernel's tick counter.
#[test]
fn may_shuts_off_a_udp_flow_above_its_share() {
    if !runnable("may_shuts_off_a_udp_flow_above_its_share") || missing_tool("python3") {
        return;
    }
    let _heavy = cpu_heavy();
    let (secs, from) = (20, 10);
    let mut results = Vec::new();
    for clock in [None, Some("fine"), Some("coarse")] {
        let may = clock.is_some();
        let mut tries = 0;
        let r = loop {
            tries += 1;
            let mut net = Net::new(match clock {
                None => "z",
                Some("fine") => "y",
                Some(_) => "l",
            });
            // Linux's default, pinned: a host may default to another (BBR, say).
            net.tcp_cc = Some("cubic");
            // After MAY's warm-up, as the UDP is judged (the last 2 s left out: the flows
            // end apart).
            net.window = Some((from, secs - 2));
            if let Some(clock) = clock {
                net.dp_ok(
                    "c",
                    &[
                        "may", "attach", "--dev", "c1", "--rate", "10mbit", "--clock", clock,
                    ],
                );
                // One queue, one scheme: a core on the same egress is refused.
                let o = net.csfq(
                    "c",
                    &[
                        "core",
                        "attach",
                        "--dev",
                        "c1",
                        "--rate",
                        "10mbit",
                        "--trust-any-label",
                    ],
                );
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    !o.status.success() && err.contains("runs csfq's may"),
                    "{err}"
                );
            }
            match udp_beside_tcp(&mut net, secs, from, 10.0) {
                Ok((udp, tcp, _)) => {
                    let st = may.then(|| may_stats(&net));
                    break (udp, tcp, st);
                }
                Err(e) if tries < 3 => eprintln!("MAY {clock:?}: {e}; again"),
                Err(e) => panic!("MAY {clock:?}: {e}"),
            }
        };
        eprintln!(
            "{}: UDP from {from} s {:.2} Mbit/s, TCPs {:?} Mbit/s",
            clock.map_or("FIFO (tbf)".into(), |c| format!("MAY, {c} clock")),
            r.0 / 1e6,
            r.1.iter()
                .map(|x| (x / 1e4).round() / 100.0)
                .collect::<Vec<_>>()
        );
        results.push(r);
    }
    let (fifo_udp, _, _) = &results[0];
    assert!(
        *fifo_udp > 3.0 * FAIR_GOODPUT,
        "under the tbf alone the UDP should take most of the link: {results:?}"
    );
    for (clock, (may_udp, _, st)) in ["fine", "coarse"].into_iter().zip(&results[1..]) {
        assert!(
            *may_udp <= 1.25 * FAIR_GOODPUT,
            "MAY ({clock} clock) let the UDP have {may_udp} > 1.25 x its share: {results:?}"
        );
        let st = st.as_ref().unwrap();
        assert_eq!(st["may"]["clock"], clock, "{st}");
        assert_eq!(st["may"]["utilization_counts"], "passed", "{st}");
        assert!(
            st["counters"]["drop_may_history"]["packets"]
                .as_u64()
                .unwrap()
                > 1000,
            "{st}"
        );
    }

    // A UDP at half its share (1 Mbit/s; its payload 972 bytes of each 1000).
    let mut net = Net::new("h");
    net.tcp_cc = Some("cubic");
    net.dp_ok("c", &["may", "attach", "--dev", "c1"]);
    let (udp, tcp, count) = udp_beside_tcp(&mut net, secs, from, 1.0).expect("half-share run");
    let st = may_stats(&net);
    eprintln!(
        "MAY, UDP at half its share: {:.3} Mbit/s from {from} s ({count:?}), TCPs {:?}; \
         MAY's drops {} history, {} sample",
        udp / 1e6,
        tcp.iter().map(|x| x / 1e6).collect::<Vec<_>>(),
        st["counters"]["drop_may_history"]["packets"],
        st["counters"]["drop_may_sample"]["packets"],
    );
    // Judged on what was sent over the window (the sequence numbers), not on the nominal
    // rate, so that a sender that falls behind on a busy host is not counted as MAY's loss;
    // the receiving host's own full-buffer drops are not the network's either, and fail
    // the run apart.
    assert_eq!(
        count.rcvbuf_errors, 0,
        "the receiver dropped datagrams for a full buffer: {count:?}"
    );
    assert!(
        count.span > 1000,
        "the sender sent too little to judge: {count:?}"
    );
    let delivered = count.received as f64 / count.span as f64;
    assert!(
        delivered >= 0.9,
        "MAY dropped a UDP under its share: {:.1}% of what it sent over the window \
         arrived ({count:?}; MAY's counters {})",
        100.0 * delivered,
        st["counters"]
    );
}

/// MAY with `v`'s ceiling (the default) beside a UDP at once and five times the 10 Mbit/s
/// link: four kernel CUBIC TCPs, MAY on the fine clock, judged over seconds 10-18 of 20 as
/// the test above judges the UDP. The UDP at most 1.25x its share, and the TCPs together at
/// least 90% of the payload the link carries (the suite's rule for a scheme's use of the
/// link): what the ceiling is for. With the paper's controller (`--ceiling none`) at 5x,
/// `v` winds up in the UDP's first intervals and every TCP in the table is dropped for some
/// fifteen: the TCPs together got 3.44 Mbit/s here (the simulator on this graph: the link
/// 16-48% used, `csfq-sim/tests/may_ceiling.rs`); that run is printed, not judged. Each
/// TCP's goodput is printed, not bounded: a clean-clone run had one at 0.01 Mbit/s at 1x
/// with the ceiling (the others 2.05-4.32), and two of six later runs one at 0.01-0.09: a
/// TCP whose lone retransmissions the tbf lost while the UDP's smaller datagrams kept its
/// byte queue full, before MAY shut the UDP off, in RFC 6298 back-off to 8-16 s (seen with
/// `ss -tin`; README, "MAY on a real router").
#[test]
fn may_keeps_the_tcps_served_beside_a_udp_at_once_and_five_times_the_link() {
    if !runnable("may_keeps_the_tcps_served_beside_a_udp_at_once_and_five_times_the_link")
        || missing_tool("python3")
    {
        return;
    }
    let _heavy = cpu_heavy();
    let (secs, from) = (20, 10);
    for (times, ceiling) in [(1.0, "heaviest"), (5.0, "heaviest"), (5.0, "none")] {
        let mut net = Net::new(match (times == 1.0, ceiling) {
            (true, _) => "m",
            (false, "heaviest") => "q",
            _ => "w",
        });
        net.tcp_cc = Some("cubic");
        net.window = Some((from, secs - 2));
        net.dp_ok(
            "c",
            &[
                "may",
                "attach",
                "--dev",
                "c1",
                "--rate",
                "10mbit",
                "--ceiling",
                ceiling,
            ],
        );
        let (udp, tcp, count) =
            udp_beside_tcp(&mut net, secs, from, 10.0 * times).expect("the flows ran");
        let st = may_stats(&net);
        eprintln!(
            "MAY (ceiling {ceiling}), UDP at {times}x the link: UDP {:.2} Mbit/s from {from} s, \
             TCPs {:?} Mbit/s, v {}; sent {count:?}",
            udp / 1e6,
            tcp.iter()
                .map(|x| (x / 1e4).round() / 100.0)
                .collect::<Vec<_>>(),
            st["may"]["v"]
        );
        assert_eq!(st["may"]["ceiling"], ceiling == "heaviest", "{st}");
        if ceiling == "none" {
            continue;
        }
        assert!(
            udp <= 1.25 * FAIR_GOODPUT,
            "{times}x: MAY let the UDP have {udp} > 1.25 x its share"
        );
        let together: f64 = tcp.iter().sum();
        assert!(
            together >= 0.9 * 5.0 * FAIR_GOODPUT,
            "{times}x: the TCPs together got {together}, under 90% of the link's payload \
             {}: {tcp:?}",
            5.0 * FAIR_GOODPUT
        );
    }
}

/// MAY above the 10 Mbit/s of the tests before: 100 Mbit/s with the UDP at once and five
/// times the link, and 1 Gbit/s (the highest rate this machine carries) with the UDP asked
/// for the link rate; four kernel CUBIC TCPs, MAY's defaults (the ceiling on, C read from
/// the tbf), judged over seconds 10-18 of 20 as at 10 Mbit/s, against a run of the tbf
/// alone on the same bottleneck. The same rules as there: the UDP at most 1.25x its share
/// (a UDP above its share is shut off, Theorem 3.2), and the link's use with MAY at least
/// 90% of what the tbf alone carried (the suite's rule for a scheme's use of the link; at
/// 1 Gbit/s the senders' CPUs, not the link, may set what the tbf alone carries). Each
/// TCP's goodput printed, not bounded (as at 10 Mbit/s: README, "MAY on a real router").
/// At 1 Gbit/s this machine's UDP sender reaches a fifth of the link or less (177 Mbit/s
/// in a run here, about its share), so no hog is judged there: the run holds MAY's use of
/// the link at that rate, not its shutting off of a flow above its share.
#[test]
fn may_holds_a_udp_at_the_link_rate_at_100_mbits_and_1_gbits() {
    if !runnable("may_holds_a_udp_at_the_link_rate_at_100_mbits_and_1_gbits") {
        return;
    }
    let _heavy = cpu_heavy();
    let (secs, from) = (20, 10);
    for (mbps, times) in [(100u64, 1u64), (100, 5), (1000, 1)] {
        let b = Bottleneck::at(mbps);
        let udp = format!("{}M", mbps * times);
        let run = |with_may: bool| -> (Vec<f64>, Option<serde_json::Value>, Option<f64>) {
            let tag = format!("y{mbps}{times}{}", if with_may { "m" } else { "p" });
            let mut net = Net::shaped(&tag, &b.rate, &b.burst, &b.limit_s);
            net.tcp_cc = Some("cubic");
            net.window = Some((from, secs - 2));
            if with_may {
                net.dp_ok("c", &["may", "attach", "--dev", "c1"]);
            }
            let rates = net.traffic(&udp, secs);
            let st = with_may.then(|| may_stats(&net));
            (rates, st, net.udp_sent)
        };
        // The UDP's sender's rate from the run without MAY: with MAY the receiver may see
        // none of the window's datagrams, and so nothing to count the sent ones by.
        let (plain, _, sent) = run(false);
        let (may, st, _) = run(true);
        let st = st.unwrap();
        let mbit = |v: &[f64]| {
            v.iter()
                .map(|r| (r / 1e4).round() / 100.0)
                .collect::<Vec<_>>()
        };
        eprintln!(
            "MAY at {mbps} Mbit/s, the UDP asked for {times}x the link (sent {:.1} Mbit/s without \
             MAY): \
             without MAY {:?}, with MAY {:?} Mbit/s (fair share {:.2}); v {}, C {}",
            sent.unwrap_or(0.0) / 1e6,
            mbit(&plain),
            mbit(&may),
            b.fair / 1e6,
            st["may"]["v"],
            st["may"]["capacity_bps"]
        );
        assert_eq!(
            st["may"]["capacity_bps"],
            mbps * 1_000_000,
            "C from the tbf: {st}"
        );
        assert!(
            may[4] <= 1.25 * b.fair,
            "{mbps} Mbit/s, {times}x: MAY let the UDP have {} > 1.25 x its share {}",
            may[4],
            b.fair
        );
        let (with, without): (f64, f64) = (may.iter().sum(), plain.iter().sum());
        assert!(
            with >= 0.9 * without,
            "{mbps} Mbit/s, {times}x: the link carried {with} with MAY, under 90% of \
             {without} without: {may:?} / {plain:?}"
        );
    }
}

/// Accepts TCP connections on port 7000 and reads each to its end, for `argv[1]` seconds.
const DISCARD_SERVER: &str = r#"
import socket, sys, threading, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7000))
s.listen(256)
s.settimeout(0.2)
def drain(c):
    c.settimeout(10)
    try:
        while c.recv(65536):
            pass
    except OSError:
        pass
    c.close()
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    threading.Thread(target=drain, args=(c,), daemon=True).start()
"#;

/// Makes `argv[2]` transfers to `argv[1]:7000`, one every 100 ms (each in its own thread),
/// of 10 to 100 segments (uniform, seeded); prints one line per transfer: its segments and
/// the kernel's count of its retransmissions (TCP_INFO tcpi_total_retrans, read once all
/// its data is acknowledged; -1 if it never was within 5 s).
const SHORT_TRANSFERS: &str = r#"
import random, socket, struct, sys, threading, time
dst, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
out, lock = [], threading.Lock()
def transfer(segs):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect((dst, 7000))
        mss = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
        s.sendall(b"y" * (segs * mss))
        retrans, t0 = -1, time.monotonic()
        while time.monotonic() - t0 < 5:
            info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
            unacked, = struct.unpack_from("I", info, 24)
            if unacked == 0:
                retrans, = struct.unpack_from("I", info, 100)
                break
            time.sleep(0.005)
    except OSError:
        retrans = -1
    s.close()
    with lock:
        out.append((segs, retrans))
threads = []
for i in range(n):
    t = threading.Thread(target=transfer, args=(rng.randint(10, 100),))
    t.start()
    threads.append(t)
    time.sleep(0.1)
for t in threads:
    t.join()
for segs, r in out:
    print(segs, r)
"#;

/// Short transfers beside four long TCP flows: 120 transfers of 10 to 100 segments, under
/// MAY and under the tbf alone, each transfer's retransmissions counted by the kernel.
/// MAY's own claim (the paper's Fig. 3) is about its own drops: it samples each packet of a
/// flow not in its table with probability 1/S0 and drops the sampled packet only while the
/// utilization is above u0, so a transfer of n packets (with its SYN, its FIN and its
/// retransmissions r) escapes MAY with probability at least (1 - 1/1000)^(n + 2 + r),
/// about 0.945 on average over 10..100 with no retransmission. A
/// transfer leaves before its entry is first folded (one Delta later), so MAY's drops of
/// the transfers are its sampled drops (the long flows add at most one each): at most the
/// complement of that bound plus three standard errors. Losses to the tbf's overflow are
/// not MAY's: four CUBIC flows fill its 64 KB while v's controller (Delta 1 s, kappa 0.1)
/// climbs, in the simulator too (`csfq run`: the queue swings from empty to full for
/// 200 s); both shares of lossless transfers are printed (the README quotes them).
#[test]
fn may_spares_short_transfers_beside_long_flows() {
    if !runnable("may_spares_short_transfers_beside_long_flows") || missing_tool("python3") {
        return;
    }
    let _light = cpu_light();
    let n = 120;
    let mut shares = Vec::new();
    for may in [true, false] {
        let net = Net::new(if may { "v" } else { "w" });
        if may {
            net.dp_ok("c", &["may", "attach", "--dev", "c1", "--rate", "10mbit"]);
        }
        let (rns, sns) = (net.ns("r"), net.ns("s"));
        let server = Command::new("ip")
            .args(["netns", "exec", &rns, "timeout", "60", "python3", "-c"])
            .args([DISCARD_SERVER, "30"])
            .spawn()
            .expect("server");
        // The long flows start first; the transfers from 4 s, while they run.
        let start = std::time::Instant::now();
        let longs = std::thread::spawn({
            // A second handle on the same namespaces, which must not remove them: never
            // dropped (its files are under `net.tmp`, removed with `net`).
            let mut longs = std::mem::ManuallyDrop::new(Net {
                lab: Lab::new(net.prefix()),
                tmp: net.tmp.join("longs"),
                tcp_cc: net.tcp_cc,
                window: net.window,
                udp_sent: None,
            });
            std::fs::create_dir_all(&longs.tmp).unwrap();
            move || longs.try_iperf(None, 20)
        });
        std::thread::sleep(std::time::Duration::from_secs(4));
        let out = Command::new("ip")
            .args(["netns", "exec", &sns, "timeout", "40", "python3", "-c"])
            .args([SHORT_TRANSFERS, "10.77.3.2", &n.to_string()])
            .output()
            .expect("transfers");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let done: Vec<(u32, i64)> = text
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
            })
            .collect();
        let longs = longs.join().expect("the long flows' thread");
        let _ = server.wait_with_output();
        let longs = longs.unwrap_or_else(|e| panic!("the long flows failed: {e}"));
        assert!(
            longs[..4].iter().all(|&g| g > 0.0),
            "every long flow must have run: {longs:?}"
        );
        assert_eq!(done.len(), n, "every transfer reports: {text}");
        assert!(start.elapsed().as_secs() < 60);
        let lossless = done.iter().filter(|(_, r)| *r == 0).count() as f64 / n as f64;
        let bound = done
            .iter()
            .map(|(s, r)| 0.999f64.powi(*s as i32 + 2 + (*r).max(0) as i32))
            .sum::<f64>()
            / n as f64;
        let counters = may.then(|| may_stats(&net)["counters"].clone());
        let sampled = counters
            .as_ref()
            .map_or(0, |c| c["drop_may_sample"]["packets"].as_u64().unwrap());
        eprintln!(
            "{}: {:.1}% of {n} transfers of 10-100 segments without a retransmission \
             (MAY's sampling alone would spare at least {:.1}%){}",
            if may { "MAY" } else { "FIFO (tbf)" },
            lossless * 100.0,
            bound * 100.0,
            counters
                .map(|c| format!(
                    "; MAY: {} packets forwarded, {} dropped by history and {} sampled, {} \
                     flows inserted",
                    c["forwarded"]["packets"],
                    c["drop_may_history"]["packets"],
                    c["drop_may_sample"]["packets"],
                    c["may_inserted"]["packets"]
                ))
                .unwrap_or_default()
        );
        shares.push((lossless, bound, sampled));
    }
    let (lossless, bound, sampled) = shares[0];
    let se = (bound * (1.0 - bound) / n as f64).sqrt();
    let by_may = (sampled.saturating_sub(4)) as f64 / n as f64;
    assert!(
        by_may <= 1.0 - bound + 3.0 * se,
        "MAY's sampling dropped packets of {by_may} of the transfers (at most {} expected): \
         {shares:?}",
        1.0 - bound + 3.0 * se
    );
    assert!(
        lossless >= shares[1].0,
        "MAY lost more transfers than drop-tail: {shares:?}"
    );
}

/// `csfq dp demo` as a newcomer runs it: it builds its namespaces, prints every flow under
/// drop-tail, CSFQ, CS-FNE, TUF and MAY side by side, and leaves nothing behind; CSFQ, CS-FNE
/// and TUF each hold the UDP to less than half of what drop-tail lets it take. Interrupted halfway (SIGINT), it removes
/// its namespaces too and exits 130.
#[test]
fn dp_demo_runs_and_cleans_up_even_when_interrupted() {
    if !runnable("dp_demo_runs_and_cleans_up_even_when_interrupted") {
        return;
    }
    let _light = cpu_light();
    let leftovers = || {
        let o = run("ip", &["netns", "list"]);
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("csfqdemo"))
            .count()
    };
    // Under heavy loss an iperf3 control connection can time out (its flow then shows as
    // failed): up to three tries.
    let mut tries = 0;
    let out = loop {
        tries += 1;
        let o = Command::new(CSFQ)
            .args(["dp", "demo", "--secs", "4"])
            .output()
            .expect("csfq runs");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        if !out.contains("failed") || tries == 3 {
            break out;
        }
        eprintln!("an iperf3 of the demo failed; again:\n{out}");
    };
    let udp: Vec<f64> = out
        .lines()
        .find(|l| l.contains("UDP at 10 Mbit/s"))
        .expect("the UDP's row")
        .split('┆')
        .skip(1)
        .filter_map(|c| c.trim().trim_end_matches('│').trim().parse().ok())
        .collect();
    assert_eq!(
        udp.len(),
        6,
        "drop-tail, CSFQ, CS-FNE, TUF, MAY, share: {out}"
    );
    for (i, scheme) in [(1, "CSFQ"), (2, "CS-FNE"), (3, "TUF")] {
        assert!(
            udp[i] < udp[0] / 2.0,
            "{scheme}'s UDP {} vs drop-tail's {}: {out}",
            udp[i],
            udp[0]
        );
    }
    for row in ["TCP 1", "TCP 4", "Jain's index"] {
        assert!(out.contains(row), "no {row} row: {out}");
    }
    assert_eq!(leftovers(), 0, "the demo left namespaces");

    let mut child = Command::new(CSFQ)
        .args(["dp", "demo", "--secs", "20"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("csfq runs");
    // Interrupted once it is running in its namespaces, and a little after.
    let t0 = std::time::Instant::now();
    while leftovers() < 3 && t0.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        leftovers(),
        3,
        "the demo should be running in its three namespaces"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        leftovers() > 0,
        "the demo should be running in its namespaces"
    );
    // SAFETY: kill(2) on the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(leftovers(), 0, "an interrupted demo left namespaces");
}

/// The packets the bottleneck's tbf on `c1` has dropped so far.
fn bottleneck_drops(net: &Net) -> u64 {
    let o = net.x("c", &["tc", "-s", "qdisc", "show", "dev", "c1"]);
    let text = String::from_utf8_lossy(&o.stdout);
    text.split("dropped ")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("tbf's dropped count")
}

/// What one overlay run measured.
struct LoopRun {
    /// The UDP's and the TCP's goodput at the receiver, bit/s.
    udp_bps: f64,
    tcp_bps: f64,
    /// Packets the interior's tbf dropped during the run.
    bottleneck_drops: u64,
    /// `csfq dp stats --json` of the ingress edge halfway through.
    ingress_stats: serde_json::Value,
}

/// The paper's Fig. 8 and 9 topology on `net`: two loops from the edge router `e` (the
/// ingress, shaping on `e1`) to the receiver `r` (the egress, counting on `r0`) across the
/// core's 10 Mbit/s tbf, which runs nothing of ours. Loop 0 carries 10.77.5.0/24, where a
/// UDP flow sends at 15 Mbit/s (3x its share); loop 1 carries 10.77.6.0/24, where a TCP
/// flow sends. `tcp_loop` is loop 1's spec (its service); `None`: no loops at all, the
/// FIFO baseline.
fn loops_run(net: &mut Net, tcp_loop: Option<&str>, secs: u32) -> LoopRun {
    let dur = format!("{}s", secs + 4);
    let mut daemons = Vec::new();
    if let Some(tcp_loop) = tcp_loop {
        for (n, args) in [
            (
                "r",
                vec![
                    "egress",
                    "--dev",
                    "r0",
                    "--listen",
                    "10.77.3.2:7700",
                    "--loop",
                    "10.77.5.0/24",
                    "--loop",
                    "10.77.6.0/24",
                    "--duration",
                    &dur,
                ],
            ),
            (
                "e",
                vec![
                    "ingress",
                    "--dev",
                    "e1",
                    "--egress",
                    "10.77.3.2:7700",
                    "--rate",
                    "100mbit",
                    "--loop",
                    "10.77.5.0/24",
                    "--loop",
                    tcp_loop,
                    "--duration",
                    &dur,
                ],
            ),
        ] {
            daemons.push(net.loop_daemon(n, &args));
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
    let before = bottleneck_drops(net);
    let logs: Vec<PathBuf> = [5201, 5202]
        .iter()
        .map(|p| net.tmp.join(format!("loop{p}.json")))
        .collect();
    for log in &logs {
        let _ = std::fs::remove_file(log); // iperf3 appends to its log file
    }
    for (p, bind, log) in [
        ("5201", "10.77.5.1", &logs[0]),
        ("5202", "10.77.6.1", &logs[1]),
    ] {
        // Bound to the loop's address: the UDP test's replies must come from it.
        let log = log.to_str().unwrap().to_string();
        net.spawn(
            "r",
            &[
                "iperf3",
                "-s",
                "-1",
                "-p",
                p,
                "-B",
                bind,
                "-J",
                "--logfile",
                &log,
            ],
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(700));
    let (sns, t) = (net.ns("s"), secs.to_string());
    let clients: Vec<Child> = [
        vec![
            "-c",
            "10.77.5.1",
            "-p",
            "5201",
            "-u",
            "-b",
            "15M",
            "-l",
            "1400",
        ],
        vec!["-c", "10.77.6.1", "-p", "5202"],
    ]
    .iter()
    .map(|c| {
        Command::new("ip")
            .args(["netns", "exec", &sns, "timeout", "60", "iperf3", "-t", &t])
            .args(c)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("iperf3")
    })
    .collect();
    std::thread::sleep(std::time::Duration::from_secs(u64::from(secs) / 2));
    let o = net.csfq("e", &["stats", "--json"]);
    let ingress_stats = serde_json::from_slice(&o.stdout).unwrap_or_default();
    for c in clients {
        let o = c.wait_with_output().expect("wait");
        assert!(
            o.status.success(),
            "iperf3: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    net.wait();
    for d in daemons {
        let o = d.wait_with_output().expect("daemon");
        // Their last progress lines (once a second), for the log of a failure.
        let err = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = err.lines().collect();
        eprintln!("{}", lines[lines.len().saturating_sub(6)..].join("\n"));
        assert!(
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("stopped"),
            "csfq dp loop: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let bps: Vec<f64> = logs
        .iter()
        .map(|log| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(log).expect("iperf3 log"))
                    .expect("iperf3 JSON");
            let end = &v["end"];
            if end["sum_received"].is_object() {
                end["sum_received"]["bits_per_second"]
                    .as_f64()
                    .expect("bps")
            } else {
                // UDP: what arrived, from the server's count of datagrams.
                let s = &end["sum"];
                let sent = s["packets"].as_f64().expect("packets");
                let lost = s["lost_packets"].as_f64().expect("lost");
                (sent - lost) * 1400.0 * 8.0 / s["seconds"].as_f64().expect("seconds")
            }
        })
        .collect();
    LoopRun {
        udp_bps: bps[0],
        tcp_bps: bps[1],
        bottleneck_drops: bottleneck_drops(net) - before,
        ingress_stats,
    }
}

/// Routes for the loops' destinations: 10.77.5.1 and 10.77.6.1 on the receiver.
fn loop_net(tag: &str) -> Net {
    let net = Net::new(tag);
    for a in ["10.77.5.1/32", "10.77.6.1/32"] {
        net.x("r", &["ip", "addr", "add", a, "dev", "lo"]);
    }
    for p in ["10.77.5.0/24", "10.77.6.0/24"] {
        net.x("e", &["ip", "route", "add", p, "via", "10.77.2.2"]);
        net.x("c", &["ip", "route", "add", p, "via", "10.77.3.2"]);
    }
    net
}

/// The loops' share: half the 10 Mbit/s tbf, as TCP goodput (1448 of 1514 bytes a frame).
const LOOP_SHARE_GOODPUT: f64 = 5e6 * 1448.0 / 1514.0;

/// The overlay paper's Fig. 8 on real packets: a UDP loop sending 3x its share and a TCP
/// loop across one FIFO bottleneck (a tbf with nothing of ours on it). With the loops the
/// UDP's excess is dropped in its own ingress queue and the bottleneck drops (almost)
/// nothing; the TCP gets within 20% of its fair share. Without them the same FIFO gives
/// the UDP what it sends and the TCP starves. Both daemons stop by themselves and remove
/// their htb and programs.
#[test]
fn overlay_loops_hold_a_udp_loop_to_its_share_at_its_own_ingress() {
    if !runnable("overlay_loops_hold_a_udp_loop_to_its_share_at_its_own_ingress") {
        return;
    }
    let _cpu = cpu_heavy();
    let secs = 20;
    let mut net = loop_net("o");
    let fifo = loops_run(&mut net, None, secs);
    let looped = loops_run(&mut net, Some("10.77.6.0/24"), secs);
    eprintln!(
        "overlay Fig. 8 on veth: FIFO: UDP {:.2} Mbit/s, TCP {:.2}, bottleneck drops {}; \
         loops: UDP {:.2}, TCP {:.2}, bottleneck drops {}",
        fifo.udp_bps / 1e6,
        fifo.tcp_bps / 1e6,
        fifo.bottleneck_drops,
        looped.udp_bps / 1e6,
        looped.tcp_bps / 1e6,
        looped.bottleneck_drops
    );
    let tcp = looped.tcp_bps / LOOP_SHARE_GOODPUT;
    assert!(
        (0.8..=1.2).contains(&tcp),
        "the TCP loop got {:.2}x its share",
        tcp
    );
    assert!(
        looped.udp_bps < 1.2 * 5e6,
        "the UDP loop got {}",
        looped.udp_bps
    );
    // Its excess (about 10 Mbit/s, some 18 000 packets) is not dropped at the bottleneck.
    assert!(
        looped.bottleneck_drops <= 100,
        "the bottleneck dropped {} packets",
        looped.bottleneck_drops
    );
    assert!(fifo.bottleneck_drops > 1000 && fifo.tcp_bps < 0.5 * LOOP_SHARE_GOODPUT);
    // Stats showed both loops running, their rates set.
    let st = &looped.ingress_stats;
    let loops = st
        .as_array()
        .and_then(|a| a.iter().find(|s| s["role"] == "loop-ingress"))
        .map(|s| s["loops"].clone())
        .expect("the ingress in stats");
    assert_eq!(loops.as_array().map(Vec::len), Some(2), "{st}");
    for l in loops.as_array().unwrap() {
        assert_eq!(l["daemon_running"], true, "{l}");
        assert!(l["lambda_bps"].as_u64().unwrap() > 1_000_000, "{l}");
        assert!(l["feedbacks"].as_u64().unwrap() > 100, "{l}");
    }
    // Gone when they stopped: no htb left on the ingress's interface, nothing in stats.
    let q = net.x("e", &["tc", "qdisc", "show", "dev", "e1"]);
    assert!(!String::from_utf8_lossy(&q.stdout).contains("htb"));
    let o = net.csfq("e", &["stats", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("loop-ingress"));
}

/// Fig. 9's assured rate: the TCP loop, assured 4 Mbit/s, keeps at least that against the
/// best-effort UDP loop at 3x its share (the paper: 4 + 6/2 = 7 Mbit/s). With the
/// decrease on `mu` (Section 7.4's formula) the simulator's overlay-fig9 leaves the assured
/// loop about its FIFO share, 5 Mbit/s, and the real one does the same; the floor, not
/// the 7, is what holds on both.
#[test]
fn an_assured_loop_keeps_its_rate_against_a_best_effort_udp_loop() {
    if !runnable("an_assured_loop_keeps_its_rate_against_a_best_effort_udp_loop") {
        return;
    }
    let _cpu = cpu_heavy();
    let mut net = loop_net("q");
    let r = loops_run(&mut net, Some("10.77.6.0/24,assured=4mbit"), 20);
    eprintln!(
        "overlay Fig. 9 on veth: TCP (assured 4 Mbit/s) {:.2} Mbit/s, UDP {:.2}, bottleneck drops {}",
        r.tcp_bps / 1e6,
        r.udp_bps / 1e6,
        r.bottleneck_drops
    );
    assert!(
        r.tcp_bps >= 4e6 * 1448.0 / 1514.0,
        "the assured loop got {:.2} Mbit/s",
        r.tcp_bps / 1e6
    );
    assert!(r.bottleneck_drops <= 100, "{} drops", r.bottleneck_drops);
}

/// A loop daemon the way operators stop (or lose) one: one per interface, and detach
/// refuses while it runs; SIGTERM stops it cleanly; SIGKILL leaves its program and htb,
/// which stats show as not running, a new daemon refuses to run over, and `csfq dp detach`
/// removes; an interface with a root qdisc of its own is refused and left as it was; an
/// egress configured unlike its ingress ignores the controls and says why.
#[test]
fn loop_daemons_stop_cleanly_and_a_killed_one_is_shown_and_removable() {
    if !runnable("loop_daemons_stop_cleanly_and_a_killed_one_is_shown_and_removable") {
        return;
    }
    let net = loop_net("j");
    let daemon = |n: &str, args: &[&str]| net.loop_daemon(n, args);
    let ingress = [
        "ingress",
        "--dev",
        "e1",
        "--egress",
        "10.77.3.2:7700",
        "--rate",
        "100mbit",
        "--loop",
        "10.77.5.0/24",
    ];
    let signal = |c: &Child, sig: &str| run("kill", &["-s", sig, &c.id().to_string()]);
    let pause = |ms| std::thread::sleep(std::time::Duration::from_millis(ms));
    let stderr_of = |args: &[&str]| {
        let o = net.csfq("e", args);
        assert!(!o.status.success(), "{args:?} should fail");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // An egress whose interval is not the ingress's tau (10 ms) ignores its controls and
    // says why.
    let egress = daemon(
        "r",
        &[
            "egress",
            "--dev",
            "r0",
            "--listen",
            "10.77.3.2:7700",
            "--loop",
            "10.77.5.0/24",
            "--interval",
            "20ms",
        ],
    );
    let first = daemon("e", &ingress);
    pause(1500);
    let mut args = vec!["loop"];
    args.extend_from_slice(&ingress);
    let e = stderr_of(&args);
    assert!(
        e.contains("daemon runs on e1") && e.contains("stop it first"),
        "{e}"
    );
    // Nor does detach pull a running daemon's program from under it.
    let e = stderr_of(&["detach", "--dev", "e1"]);
    assert!(e.contains("runs on e1") && e.contains("kill"), "{e}");
    signal(&first, "KILL");
    let _ = first.wait_with_output();
    pause(1200);
    let o = net.csfq("e", &["stats"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("NOT RUNNING"), "{text}");
    let e = stderr_of(&args);
    assert!(
        e.contains("without cleaning up") && e.contains("csfq dp detach --dev e1"),
        "{e}"
    );
    net.dp_ok("e", &["detach", "--dev", "e1"]);
    let q = net.x("e", &["tc", "qdisc", "show", "dev", "e1"]);
    assert!(!String::from_utf8_lossy(&q.stdout).contains("htb"));
    // A root qdisc of the operator's: refused, and kept.
    net.x(
        "e",
        &[
            "tc", "qdisc", "add", "dev", "e1", "root", "tbf", "rate", "50mbit", "burst", "10kb",
            "limit", "64kb",
        ],
    );
    let e = stderr_of(&args);
    assert!(e.contains("root qdisc"), "{e}");
    let q = net.x("e", &["tc", "qdisc", "show", "dev", "e1"]);
    assert!(String::from_utf8_lossy(&q.stdout).contains("tbf"));
    // SIGTERM: the egress stops, says so, and leaves nothing.
    signal(&egress, "TERM");
    let o = egress.wait_with_output().expect("egress");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("stopped"),
        "{err}"
    );
    assert!(
        err.contains("ignoring controls") && err.contains("--interval is 20 ms"),
        "{err}"
    );
    let o = net.csfq("r", &["stats", "--json"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("loop-egress"));
}

/// `csfq dp apply FILE` in the core router's namespace: a file's edge and core attached,
/// applied again as an update, a second file with `--prune` updating the core and
/// detaching the edge it no longer names; a bad key fails with the file's line before
/// anything changes, and an entry that fails halfway says what was applied.
#[test]
fn apply_attaches_what_a_file_says_and_prunes_the_rest() {
    if !runnable("apply_attaches_what_a_file_says_and_prunes_the_rest") {
        return;
    }
    let _light = cpu_light();
    let net = Net::new("cc");
    let dir = std::env::temp_dir().join(format!("csfq-apply-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let roles = |net: &Net| -> Vec<(String, String, u64)> {
        let o = net.csfq("c", &["stats", "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut r: Vec<_> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["role"].as_str().unwrap().to_string(),
                    s["interface"].as_str().unwrap().to_string(),
                    s["core"]["capacity_bps"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        r.sort();
        r
    };
    let both = file(
        "both.toml",
        "# the edge's side labeled, the core in front of the tbf, the router's own TCPs \
         tagged\n\
         [[edge]]\ndev = \"c0\"\n\n[[core]]\ndev = \"c1\"\ntrusted_from = [\"c0\"]\nrate = \"10mbit\"\n\n\
         [[tuf-source]]\ndev = \"c0\"\nper_ack = 1\n",
    );
    for round in 0..2 {
        let o = net.csfq("c", &["apply", &both]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The second time, an update of each.
        assert_eq!(out.matches("settings updated").count(), 3 * round, "{out}");
    }
    let attached = vec![
        ("core".to_string(), "c1".to_string(), 10_000_000),
        ("edge".to_string(), "c0".to_string(), 0),
        ("tuf-source".to_string(), "c0".to_string(), 0),
    ];
    assert_eq!(roles(&net), attached);
    // A bad key: the line named, nothing changed.
    let bad = file(
        "bad.toml",
        "[[core]]\ndev = \"c1\"\nrate = \"20mbit\"\nk_alhpa = \"50ms\"\n",
    );
    let o = net.csfq("c", &["apply", "--prune", &bad]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("bad.toml:4: [[core]] on c1:"),
        "{err}"
    );
    assert_eq!(roles(&net), attached);
    // An interface that does not exist, after an entry that applies: said so.
    let half = file(
        "half.toml",
        "[[core]]\ndev = \"c1\"\nrate = \"10mbit\"\ntrusted_from = [\"c0\"]\n[[edge]]\ndev = \"nosuch0\"\n",
    );
    let o = net.csfq("c", &["apply", &half]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("half.toml:5: [[edge]] on nosuch0")
            && err.contains("1 of the file's 2 entries applied before it"),
        "{err}"
    );
    // Pruned to the core alone, at a new rate.
    let core = file(
        "core.toml",
        "[[core]]\ndev = \"c1\"\nrate = \"20mbit\"\ntrusted_from = [\"c0\"]\n",
    );
    let o = net.csfq("c", &["apply", "--prune", &core]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("csfq edge detached from c0"), "{out}");
    assert!(out.contains("csfq tuf-source detached from c0"), "{out}");
    assert_eq!(
        roles(&net),
        vec![("core".to_string(), "c1".to_string(), 20_000_000)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
