//! Scenario files: TOML with every table `deny_unknown_fields`, so a typo is an error with
//! a line number rather than a silent default.
//!
//! Units are in the field names (`rate_mbps`, `delay_ms`, `buffer_bytes`, `duration_s`).
//! A scenario declares routers, duplex links between them, and flows between routers;
//! a flow may get private access links (`access = { rate_mbps, delay_ms }`), which put a
//! host of its own on each side. A flow's first router is its CSFQ edge.
//! See the README's "Scenario format" for an annotated example.

use serde::{Deserialize, Serialize};
use toml::Spanned;
mod builder;
pub mod graphml;
mod memory;
pub mod overlay;
mod params;
mod parse;
mod scenario;
mod validate;
mod validate_flows;
mod validate_tables;

pub use crate::discipline::{
    DisciplineTables, DrrDropFrom, EstimatorKind, MayCeilingKind, MayUtilizationKind, TableError,
};
pub use crate::kinds::{CongestionControl, DisciplineKind, FlowKind, TcpTimer};
pub use crate::limits::{MAX_DURATION_S, MIN_TIME_MS};
pub use builder::ScenarioBuilder;
pub use memory::{available_memory, QueueBound, TooLarge};
pub use overlay::{LoopSpec, OverlayConfig, ServiceKind};
pub use params::*;
pub use parse::ScenarioError;
pub use scenario::Scenario;

/// The relative errors a scenario's `delay_precision` may ask for (the finest costs 512
/// histogram buckets an octave).
pub const DELAY_PRECISION: std::ops::RangeInclusive<f64> = 0.001..=0.25;
/// `delay_precision` when the scenario leaves it out: percentiles within 1%.
pub const DEFAULT_DELAY_PRECISION: f64 = 0.01;
pub(crate) use validate::printable;

/// A duplex link between two routers; both directions get the same parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two routers it joins.
    #[serde(deserialize_with = "two_routers")]
    pub between: [String; 2],
    /// Capacity, Mbit/s.
    pub rate_mbps: f64,
    /// Propagation delay, ms.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: f64,
    /// Buffer per direction, bytes.
    #[serde(default = "default_buffer_bytes")]
    pub buffer_bytes: u32,
    /// Queue discipline of both directions; the scenario's `discipline` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<DisciplineKind>,
}

/// Exactly two router names (serde alone would take the first two of a longer list).
fn two_routers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[String; 2], D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    <[String; 2]>::try_from(names).map_err(|names| {
        serde::de::Error::invalid_length(names.len(), &"two router names, one for each end")
    })
}

fn default_delay_ms() -> f64 {
    1.0
}
fn default_buffer_bytes() -> u32 {
    64_000
}

/// Private access links for a flow: a host of its own on each side.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// Capacity, Mbit/s.
    pub rate_mbps: f64,
    /// Propagation delay, ms.
    pub delay_ms: f64,
    /// Added to the delay of each successive flow of the table: flow `j`'s access links
    /// have `delay_ms + j * delay_step_ms` (many round-trip times from one table).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_step_ms: f64,
}

/// How a web table spaces its transfers' starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential gaps of mean `arrival_mean_ms` (a Poisson process).
    #[default]
    Exponential,
    /// Every `arrival_mean_ms` exactly.
    Periodic,
}

/// One `[[flow]]` table: `count` flows alike but for their rates.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// udp, onoff or tcp.
    pub kind: FlowKind,
    /// Source router.
    pub from: String,
    /// Destination router.
    pub to: String,
    /// How many flows this table makes.
    #[serde(default = "one")]
    pub count: u32,
    /// Sending rate (udp; onoff while ON), Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// Added to the rate of each successive flow of the table: flow `j` sends
    /// `rate_mbps + j * rate_step_mbps`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_step_mbps: f64,
    /// Packet size, bytes (udp, onoff; tcp uses `[tcp] segment_bytes`).
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// Inter-arrival jitter: gaps uniform on [1 - jitter, 1 + jitter] x mean (0.5).
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Mean ON period, ms (onoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_ms: Option<f64>,
    /// Mean OFF period, ms (onoff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_ms: Option<f64>,
    /// Start time, s.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_s: f64,
    /// Stop time, s (the scenario's end if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// CSFQ weight: the edge labels `rate / weight` (Section 2.3).
    #[serde(default = "one_f")]
    pub weight: f64,
    /// tcp: a finite transfer of this many segments (unlimited if absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_pkts: Option<u32>,
    /// tcp, web: the senders' congestion control (`newreno`, `cubic`) [default: `[tcp]
    /// congestion_control`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<CongestionControl>,
    /// web: mean gap between transfer starts, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_mean_ms: Option<f64>,
    /// web: `exponential` gaps (default) or `periodic` ones.
    #[serde(default, skip_serializing_if = "is_default")]
    pub arrivals: Arrivals,
    /// web: mean transfer size, segments (Pareto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_mean_pkts: Option<f64>,
    /// web: Pareto shape parameter, above 1 (1.06 in the CSFQ paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_shape: Option<f64>,
    /// web: uniform sizes instead of Pareto, from `size_min_pkts` to `size_max_pkts`
    /// segments inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_min_pkts: Option<u32>,
    /// web: the largest uniform size, segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_max_pkts: Option<u32>,
    /// rlm: number of layers (default 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u8>,
    /// rlm: rate of layer 1, Kbit/s; layer i sends twice layer i-1 (default 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_base_kbps: Option<f64>,
    /// Private access links on both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessSpec>,
    /// The edge-to-edge overlay loop (a `[[loop]]` name) that carries these flows.
    #[serde(rename = "loop", default, skip_serializing_if = "Option::is_none")]
    pub overlay_loop: Option<String>,
}

fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn default_packet_bytes() -> u32 {
    1000
}
fn default_jitter() -> f64 {
    0.5
}
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// The most samples of one time series a run may take.
pub const MAX_SAMPLES: f64 = 1e6;
/// The most time-series values a run may keep in all (flows and links, every sample):
/// 160 MB as `f64`, several times that in `summary.json`.
pub const MAX_SAMPLE_POINTS: f64 = 2e7;
/// The slowest link, flow or access rate, Mbit/s (1 kbit/s).
pub const MIN_RATE_MBPS: f64 = 1e-3;
/// The fastest link, flow or access rate, Mbit/s (1 Tbit/s).
pub const MAX_RATE_MBPS: f64 = 1e6;
/// The longest propagation delay, ms.
pub const MAX_DELAY_MS: f64 = 1e6;
/// The smallest flow weight.
pub const MIN_WEIGHT: f64 = 1e-3;
/// The largest flow weight.
pub const MAX_WEIGHT: f64 = 1e3;
/// The longest scenario, router or loop name, bytes.
pub const MAX_NAME_BYTES: usize = 100;
/// The largest scenario file, bytes.
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// RLM sessions' layers when a flow does not say (the CSFQ paper's seven).
pub const RLM_DEFAULT_LAYERS: u8 = 7;
/// The first RLM layer's rate when a flow does not say, kbit/s.
pub const RLM_DEFAULT_BASE_KBPS: f64 = 32.0;
const RATE_RANGE: &str = "must be 0.001..=1000000 Mbit/s (1 kbit/s to 1 Tbit/s)";
const DELAY_RANGE: &str = "must be 0..=1000000 ms";
/// The most flows a scenario may have.
pub const MAX_FLOWS: u64 = 1 << 20;
/// The largest TCP window, segments.
pub const MAX_WINDOW: u32 = 1 << 20;

/// Declares [`ScenarioFile`] with a field for each discipline's table in the list
/// (`crate::discipline::with_disciplines`), the tables the disciplines read of it
/// ([`ScenarioFile::discipline_tables`]) and their checks.
macro_rules! scenario_file {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident = $name:literal in $module:ident :: $build:ident,
        loop_shaper: $shaper:literal $(, table $table:ident: $ty:ident)?;
    )+) => {
        $($(pub use crate::discipline::$ty;)?)+

        /// A scenario file as written.
        #[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct ScenarioFile {
            /// Short name.
            pub name: String,
            /// One sentence on what it shows.
            #[serde(default)]
            pub description: String,
            /// Simulated time, s.
            pub duration_s: f64,
            /// Seed of every random stream.
            #[serde(default = "default_seed")]
            pub seed: u64,
            /// Default discipline of every link.
            pub discipline: DisciplineKind,
            /// Interval of the throughput and queue time series, ms; if absent, 100 ms or the
            /// smallest multiple of 100 ms that keeps the run within [`MAX_SAMPLES`] and
            /// [`MAX_SAMPLE_POINTS`] (see [`ScenarioFile::sample_interval_ms`]).
            #[serde(
                default,
                rename = "sample_interval_ms",
                skip_serializing_if = "Option::is_none"
            )]
            pub sample_interval: Option<f64>,
            /// The relative error of the links' sojourn percentiles, and half that of the flows'
            /// one-way and queueing delay percentiles: histograms split each octave finely enough
            /// that a percentile is within it; 0.001..=0.25, default 0.01 (see
            /// [`crate::observe::delay`]).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub delay_precision: Option<f64>,
            /// Routers (with `[graphml]`, the file's are added after these).
            #[serde(default)]
            pub routers: Vec<String>,
            /// A topology read from a GraphML file: its nodes become routers and its edges links
            /// (see [`graphml`]). Read once, when the scenario is parsed; the links it gave are
            /// then among `links`, so the scenario written back stands on its own.
            #[serde(default, skip_serializing)]
            pub graphml: Option<Spanned<graphml::GraphmlSpec>>,
            $($(
                #[doc = concat!("The `[", stringify!($table), "]` table (`discipline::", stringify!($module), "`).")]
                #[serde(default)]
                pub $table: crate::discipline::$ty,
            )?)+
            /// TCP.
            #[serde(default)]
            pub tcp: TcpConfig,
            /// Edge-to-edge overlay loops' parameters.
            #[serde(default)]
            pub overlay: OverlayConfig,
            /// Links (with `[graphml]`, the file's are added after these).
            #[serde(rename = "link", default)]
            pub links: Vec<Spanned<LinkSpec>>,
            /// Flows.
            #[serde(rename = "flow")]
            pub flows: Vec<Spanned<FlowSpec>>,
            /// Edge-to-edge overlay loops.
            #[serde(rename = "loop", default, skip_serializing_if = "Vec::is_empty")]
            pub loops: Vec<Spanned<LoopSpec>>,
        }

        impl ScenarioFile {
            /// What the queue disciplines read of it.
            pub fn discipline_tables(&self) -> DisciplineTables<'_> {
                DisciplineTables {
                    $($($table: &self.$table,)?)+
                    segment_bytes: self.tcp.segment_bytes,
                    seed: self.seed,
                }
            }

            /// Each discipline table's checks, in the list's order: the first value out of
            /// its algorithm's range.
            fn check_discipline_tables(&self) -> Result<(), TableError> {
                $($(self.$table.check()?;)?)+
                Ok(())
            }
        }
    };
}
crate::discipline::with_disciplines!(scenario_file);

fn default_seed() -> u64 {
    1
}
/// The sample interval used when a scenario gives none, ms.
pub const DEFAULT_SAMPLE_MS: f64 = 100.0;

impl ScenarioFile {
    /// Each router's index in `routers`, by name: one hashed lookup per name, so loading
    /// stays linear in the routers, links and flows.
    pub fn router_index(&self) -> std::collections::HashMap<&str, usize> {
        self.routers
            .iter()
            .enumerate()
            .map(|(i, r)| (r.as_str(), i))
            .collect()
    }
}

#[cfg(test)]
mod tests;
