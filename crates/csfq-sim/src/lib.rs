//! A packet-level discrete-event simulator for core-stateless fair queueing.
//!
//! The crate reads top-down, each layer using only those below it:
//!
//! - [`config`]: a scenario file (TOML) parsed and checked into a [`Scenario`]: routers,
//!   links, disciplines, flows, loops; every fault reported with file, line and field. A
//!   `Scenario` is the only form of a scenario the layers below take, so nothing builds or
//!   runs one that was not checked;
//! - [`net`]: the network it describes, built once as a typed plan ([`Topology`]): nodes,
//!   ports, each flow's route, the overlay loops, and the reference allocations (max-min,
//!   per hop) results are judged by;
//! - [`discipline`]: a port's queue discipline, the `csfq-algo` algorithms behind one enum,
//!   each registered by one line of its list and a module with its table of the file;
//! - [`hosts`]: sources, TCP senders and receivers; [`overlay`]: the loops at run time;
//! - [`engine`]: the event loop ([`Simulation`]): ports, forwarding, drops, sampling, the
//!   report;
//! - [`observe`]: what a run records and reports ([`SimReport`]), traces and pcapng;
//! - on the ground floor, what every layer names: [`kinds`] (a discipline, a flow's
//!   kind, TCP's congestion control and timer), [`packet`], [`rng`], [`limits`].
//!
//! Time is integer nanoseconds and every component draws from its own seeded random
//! stream ([`rng`]), so the same scenario and seed give byte-identical results.
//! The published experiments, their numbers and analyses are the `csfq-papers` crate.

pub mod config;
pub mod discipline;
pub mod engine;
pub(crate) mod events;
pub mod hosts;
pub mod kinds;
pub mod limits;
pub mod net;
pub mod observe;
pub mod overlay;
pub mod packet;
pub mod rng;
pub(crate) mod routes;

pub use config::{Scenario, ScenarioError, ScenarioFile};
pub use engine::{Admitted, MemoryUse, Refused, Simulation};
pub use kinds::{DisciplineKind, FlowKind};
pub use net::{BuildError, Topology};
pub use observe::report::SimReport;
