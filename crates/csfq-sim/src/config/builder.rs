//! Scenarios as values: what tests, experiments and the Python package build in code,
//! without writing TOML by hand.
//!
//! ```
//! use csfq_sim::config::{FlowSpec, LinkSpec, ScenarioBuilder};
//! use csfq_sim::{DisciplineKind, Simulation};
//!
//! let s = ScenarioBuilder::new("two-flows", 1.0, DisciplineKind::Csfq)
//!     .routers(["a", "b"])
//!     .link(LinkSpec::new("a", "b", 10.0).buffer_bytes(32_000))
//!     .flow(FlowSpec::udp("a", "b", 8.0))
//!     .flow(FlowSpec::tcp("a", "b").count(3))
//!     .build()
//!     .unwrap();
//! let report = Simulation::new(&s).unwrap().run();
//! assert_eq!(report.flows.len(), 4);
//! ```
//!
//! [`ScenarioBuilder::build`] checks the scenario exactly as a file is checked, on the
//! value itself; an invalid one is then written as the TOML it stands for and read back,
//! so it is refused with the same message as that file (its line is the generated
//! text's, which the error quotes).

use toml::Spanned;

use super::{
    AccessSpec, DisciplineKind, FlowKind, FlowSpec, LinkSpec, LoopSpec, Scenario, ScenarioError,
    ScenarioFile, ServiceKind,
};

/// Builds a [`Scenario`] from values; see the module's example.
#[derive(Debug, Clone)]
pub struct ScenarioBuilder {
    file: ScenarioFile,
}

impl ScenarioBuilder {
    /// A scenario of `duration_s` simulated seconds, every link on `discipline` unless it
    /// says otherwise, every table at its defaults, seed 1.
    pub fn new(name: &str, duration_s: f64, discipline: DisciplineKind) -> Self {
        // Every other field as a file that leaves it out has it: serde's defaults, the
        // one place they are written (no flows yet: `flow` is the other key a file needs).
        let mut required = toml::Table::new();
        required.insert("name".into(), name.into());
        required.insert("duration_s".into(), duration_s.into());
        required.insert(
            "discipline".into(),
            toml::Value::try_from(discipline).expect("a discipline serializes"),
        );
        required.insert("flow".into(), toml::Value::Array(Vec::new()));
        ScenarioBuilder {
            file: required
                .try_into()
                .expect("a name, a duration, a discipline and flows make a scenario"),
        }
    }

    /// Its one-line description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.file.description = text.into();
        self
    }

    /// The seed of every random stream.
    pub fn seed(mut self, seed: u64) -> Self {
        self.file.seed = seed;
        self
    }

    /// Adds routers, in order.
    pub fn routers<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.file.routers.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds a duplex link.
    pub fn link(mut self, link: LinkSpec) -> Self {
        self.file.links.push(Spanned::new(0..0, link));
        self
    }

    /// Adds a `[[flow]]` table.
    pub fn flow(mut self, flow: FlowSpec) -> Self {
        self.file.flows.push(Spanned::new(0..0, flow));
        self
    }

    /// Adds an edge-to-edge overlay loop.
    pub fn overlay_loop(mut self, l: LoopSpec) -> Self {
        self.file.loops.push(Spanned::new(0..0, l));
        self
    }

    /// Sets anything else (a discipline's table, `[tcp]`, the sample interval).
    pub fn with(mut self, f: impl FnOnce(&mut ScenarioFile)) -> Self {
        f(&mut self.file);
        self
    }

    /// The scale scenario's shape: one UDP flow at the link's rate and `tcps` TCP flows
    /// from `r1` to `r2` over one link of `mbps` (1 ms, a 1 MB buffer), every flow with
    /// access links ten times as fast (1 ms).
    pub fn udp_and_tcps(
        name: &str,
        duration_s: f64,
        discipline: DisciplineKind,
        mbps: f64,
        tcps: u32,
    ) -> Self {
        ScenarioBuilder::new(name, duration_s, discipline)
            .routers(["r1", "r2"])
            .link(
                LinkSpec::new("r1", "r2", mbps)
                    .delay_ms(1.0)
                    .buffer_bytes(1_000_000),
            )
            .flow(FlowSpec::udp("r1", "r2", mbps).access(10.0 * mbps, 1.0))
            .flow(
                FlowSpec::tcp("r1", "r2")
                    .count(tcps)
                    .access(10.0 * mbps, 1.0),
            )
    }

    /// The scenario, checked as a file would be ([`ScenarioFile::check`]).
    pub fn build(self) -> Result<Scenario, ScenarioError> {
        let name = format!("<built scenario {}>", self.file.name);
        self.file.checked_as(&name)
    }
}

impl LinkSpec {
    /// A link of `rate_mbps` between routers `a` and `b`, with a file's defaults: 1 ms,
    /// a 64 000-byte buffer each way, the scenario's discipline.
    pub fn new(a: &str, b: &str, rate_mbps: f64) -> Self {
        LinkSpec {
            between: [a.to_string(), b.to_string()],
            rate_mbps,
            delay_ms: super::default_delay_ms(),
            buffer_bytes: super::default_buffer_bytes(),
            discipline: None,
        }
    }

    /// Its propagation delay, ms.
    pub fn delay_ms(mut self, ms: f64) -> Self {
        self.delay_ms = ms;
        self
    }

    /// Its buffer in each direction, bytes.
    pub fn buffer_bytes(mut self, bytes: u32) -> Self {
        self.buffer_bytes = bytes;
        self
    }

    /// Its own discipline.
    pub fn discipline(mut self, d: DisciplineKind) -> Self {
        self.discipline = Some(d);
        self
    }
}

impl FlowSpec {
    /// One flow of `kind` from router `from` to router `to`, every other field at a file's
    /// default.
    pub fn new(kind: FlowKind, from: &str, to: &str) -> Self {
        FlowSpec {
            kind,
            from: from.to_string(),
            to: to.to_string(),
            count: super::one(),
            rate_mbps: None,
            rate_step_mbps: 0.0,
            packet_bytes: super::default_packet_bytes(),
            jitter: super::default_jitter(),
            on_ms: None,
            off_ms: None,
            start_s: 0.0,
            stop_s: None,
            weight: super::one_f(),
            size_pkts: None,
            congestion_control: None,
            arrival_mean_ms: None,
            arrivals: Default::default(),
            size_mean_pkts: None,
            size_shape: None,
            size_min_pkts: None,
            size_max_pkts: None,
            layers: None,
            layer_base_kbps: None,
            access: None,
            overlay_loop: None,
        }
    }

    /// A constant-rate UDP flow of `rate_mbps`.
    pub fn udp(from: &str, to: &str, rate_mbps: f64) -> Self {
        FlowSpec {
            rate_mbps: Some(rate_mbps),
            ..FlowSpec::new(FlowKind::Udp, from, to)
        }
    }

    /// A long-lived TCP flow.
    pub fn tcp(from: &str, to: &str) -> Self {
        FlowSpec::new(FlowKind::Tcp, from, to)
    }

    /// An ON/OFF source: `rate_mbps` while ON, ON and OFF periods exponential with means
    /// `on_ms` and `off_ms`.
    pub fn onoff(from: &str, to: &str, rate_mbps: f64, on_ms: f64, off_ms: f64) -> Self {
        FlowSpec {
            rate_mbps: Some(rate_mbps),
            on_ms: Some(on_ms),
            off_ms: Some(off_ms),
            ..FlowSpec::new(FlowKind::Onoff, from, to)
        }
    }

    /// How many flows the table makes.
    pub fn count(mut self, n: u32) -> Self {
        self.count = n;
        self
    }

    /// Packet size, bytes (open-loop sources).
    pub fn packet_bytes(mut self, bytes: u32) -> Self {
        self.packet_bytes = bytes;
        self
    }

    /// Inter-arrival jitter (0: exactly periodic).
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter;
        self
    }

    /// Start and stop times, s.
    pub fn between_s(mut self, start_s: f64, stop_s: Option<f64>) -> Self {
        self.start_s = start_s;
        self.stop_s = stop_s;
        self
    }

    /// Its weight.
    pub fn weight(mut self, w: f64) -> Self {
        self.weight = w;
        self
    }

    /// A finite TCP transfer of `segments`.
    pub fn size_pkts(mut self, segments: u32) -> Self {
        self.size_pkts = Some(segments);
        self
    }

    /// Private access links of `rate_mbps` and `delay_ms` on both sides.
    pub fn access(mut self, rate_mbps: f64, delay_ms: f64) -> Self {
        self.access = Some(AccessSpec {
            rate_mbps,
            delay_ms,
            delay_step_ms: 0.0,
        });
        self
    }

    /// Carried by the overlay loop `name` (a `[[loop]]` of the scenario).
    pub fn via_loop(mut self, name: &str) -> Self {
        self.overlay_loop = Some(name.to_string());
        self
    }
}

impl LoopSpec {
    /// A best-effort loop `name` from edge router `ingress` to `egress`, with a file's
    /// defaults: starting at 0, a FIFO shaper queue of 64 000 bytes.
    pub fn new(name: &str, ingress: &str, egress: &str) -> Self {
        LoopSpec {
            name: name.to_string(),
            ingress: ingress.to_string(),
            egress: egress.to_string(),
            service: ServiceKind::BestEffort,
            rate_mbps: None,
            start_s: 0.0,
            queue: DisciplineKind::Fifo,
            buffer_bytes: 64_000,
        }
    }

    /// A quasi-leased line of `rate_mbps` from `start_s`.
    pub fn quasi_leased(mut self, rate_mbps: f64, start_s: f64) -> Self {
        self.service = ServiceKind::QuasiLeased;
        self.rate_mbps = Some(rate_mbps);
        self.start_s = start_s;
        self
    }

    /// Its shaper queue: `queue` with a buffer of `buffer_bytes`.
    pub fn shaper(mut self, queue: DisciplineKind, buffer_bytes: u32) -> Self {
        self.queue = queue;
        self.buffer_bytes = buffer_bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A built scenario is the value the same scenario written by hand parses to, defaults
    /// included.
    #[test]
    fn built_equals_written() {
        let built = ScenarioBuilder::new("t", 2.0, DisciplineKind::Drr)
            .seed(7)
            .routers(["a", "b", "c"])
            .link(LinkSpec::new("a", "b", 10.0))
            .link(
                LinkSpec::new("b", "c", 5.0)
                    .delay_ms(3.0)
                    .buffer_bytes(16_000),
            )
            .flow(FlowSpec::udp("a", "c", 4.0).count(2))
            .flow(FlowSpec::tcp("a", "b").access(100.0, 2.0))
            .build()
            .unwrap();
        let written = ScenarioFile::parse(
            r#"name = "t"
duration_s = 2.0
seed = 7
discipline = "drr"
routers = ["a", "b", "c"]

[[link]]
between = ["a", "b"]
rate_mbps = 10

[[link]]
between = ["b", "c"]
rate_mbps = 5
delay_ms = 3
buffer_bytes = 16000

[[flow]]
kind = "udp"
from = "a"
to = "c"
count = 2
rate_mbps = 4

[[flow]]
kind = "tcp"
from = "a"
to = "b"
access = { rate_mbps = 100, delay_ms = 2 }
"#,
            Path::new("t.toml"),
        )
        .unwrap();
        let specs = |s: &ScenarioFile| {
            (
                s.links
                    .iter()
                    .map(|l| l.get_ref().clone())
                    .collect::<Vec<_>>(),
                s.flows
                    .iter()
                    .map(|f| f.get_ref().clone())
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(specs(&built), specs(&written));
        assert_eq!(
            (
                built.seed,
                built.discipline,
                built.duration_s,
                &built.routers
            ),
            (
                written.seed,
                written.discipline,
                written.duration_s,
                &written.routers
            )
        );
        assert_eq!(built.tcp, written.tcp);
        assert_eq!(built.csfq, written.csfq);
    }

    /// The loops', ON/OFF flows' and description's constructors give what a file with
    /// the same lines, and no other, parses to.
    #[test]
    fn loops_and_onoff_flows_built_equal_written() {
        let built = ScenarioBuilder::new("l", 3.0, DisciplineKind::Fifo)
            .description("two loops")
            .routers(["i", "c", "e"])
            .link(LinkSpec::new("i", "c", 100.0))
            .link(LinkSpec::new("c", "e", 10.0))
            .overlay_loop(LoopSpec::new("be", "i", "e"))
            .overlay_loop(
                LoopSpec::new("ql", "i", "e")
                    .quasi_leased(2.0, 1.5)
                    .shaper(DisciplineKind::Red, 32_000),
            )
            .flow(FlowSpec::udp("i", "e", 8.0).via_loop("be"))
            .flow(FlowSpec::onoff("i", "e", 4.0, 50.0, 150.0).via_loop("ql"))
            .build()
            .unwrap();
        let written = ScenarioFile::parse(
            r#"name = "l"
description = "two loops"
duration_s = 3.0
discipline = "fifo"
routers = ["i", "c", "e"]

[[link]]
between = ["i", "c"]
rate_mbps = 100

[[link]]
between = ["c", "e"]
rate_mbps = 10

[[loop]]
name = "be"
ingress = "i"
egress = "e"

[[loop]]
name = "ql"
ingress = "i"
egress = "e"
service = "quasi-leased"
rate_mbps = 2
start_s = 1.5
queue = "red"
buffer_bytes = 32000

[[flow]]
kind = "udp"
from = "i"
to = "e"
rate_mbps = 8
loop = "be"

[[flow]]
kind = "onoff"
from = "i"
to = "e"
rate_mbps = 4
on_ms = 50
off_ms = 150
loop = "ql"
"#,
            Path::new("l.toml"),
        )
        .unwrap();
        assert_eq!(built, written);
    }

    /// An invalid built scenario is refused with the field at fault.
    #[test]
    fn invalid_values_are_refused() {
        let e = ScenarioBuilder::new("t", 1.0, DisciplineKind::Fifo)
            .routers(["a", "b"])
            .link(LinkSpec::new("a", "b", 10.0).buffer_bytes(100))
            .flow(FlowSpec::udp("a", "b", 1.0))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("buffer_bytes"), "{e}");
        let e = ScenarioBuilder::new("t", 1.0, DisciplineKind::Fifo)
            .routers(["a", "b"])
            .link(LinkSpec::new("a", "b", 10.0))
            .flow(FlowSpec::udp("a", "x", 1.0))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("unknown router `x`"), "{e}");
    }
}
