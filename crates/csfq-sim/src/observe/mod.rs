//! What a run records and reports: per-flow delay histograms ([`delay`]), compact
//! per-flow counters (`compact`), the report types ([`report`]), and packet traces
//! ([`trace`], written as pcapng by [`pcap`]). The engine fills them in; nothing here runs
//! the simulation.

pub(crate) mod compact;
pub mod delay;
pub mod pcap;
pub mod report;
pub mod trace;
