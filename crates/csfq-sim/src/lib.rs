//! A packet-level discrete-event simulator for core-stateless fair queueing.
//!
//! A [`scenario::ScenarioFile`] (TOML) describes routers, links, disciplines and flows;
//! [`topology::Topology`] turns it into a network with shortest-path routes;
//! [`sim::Simulation`] runs it with integer-nanosecond time and seeded per-component random
//! streams, so the same scenario and seed give byte-identical results; the
//! [`report::SimReport`] holds per-flow throughput, drops by reason, and time series.
//! Queue disciplines come from `csfq-algo`; sources are CBR "UDP", ON-OFF, and TCP
//! NewReno ([`tcp`]).

mod compact;
pub mod delay;
pub mod discipline;
pub mod experiments;
pub mod ns2_timer;
pub mod overlay;
pub mod packet;
pub mod pcap;
pub mod report;
pub mod rlm;
pub mod scenario;
pub mod sim;
pub mod source;
pub mod tcp;
pub mod topology;
pub mod trace;

pub use report::SimReport;
pub use scenario::{DisciplineKind, ScenarioError, ScenarioFile};
pub use sim::{MemoryUse, Simulation};
pub use topology::{BuildError, Topology};
