//! The edge (`bpf/edge.bpf.c`): estimates each flow's rate with the CSFQ paper's Eq. (3)
//! and writes it into the packet as its label (the IPv4 Identification field of atomic
//! datagrams, checksum fixed, or the IPv6 flow label); weighted CSFQ (Section 2.4) divides
//! it by the source's weight.

use std::net::IpAddr;
use std::str::FromStr;

use crate::abi::Counter;
use crate::abi::{
    EdgeConfigRaw, WeightKey, KEY_FIVE_TUPLE, KEY_HOST_PAIR, KEY_SOURCE, METER_EQ3, METER_TSW,
    UNLABELABLE_DROP, UNLABELABLE_PASS, UNLABELABLE_POLICE,
};
use crate::attach::{check_pinned_table, AttachOutcome};
use crate::error::{AttachError, InvalidSetting, SysError};
use crate::loader::{configure, insert_prefix, load_flows, map, reconfigure};
use crate::pins::{attach, confirm_live, dir, existing, open_pinned, preflight, read_entry, typed};
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::report::{CountJson, EdgeStats, InterfaceStats};
use crate::role::Role;
use crate::settings::{
    clock, clock_name, milli, Clock, Prefix, BYTES, DEFAULT_FLOWS, RATE, TABLE, WINDOW,
};
use crate::sys::change_lock;
use aya::maps::LpmTrie;
use csfq_algo::fixed::Meter;

/// The edge's program.
pub(crate) static EDGE: Program = Program {
    role: Role::Edge,
    object: aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/edge.bpf.o")),
    function: "csfq_edge",
    config: "edge_config",
    flows: Some("flows"),
    seeded: true,
    pins: &[
        ("edge_config", "config"),
        ("counters", "counters"),
        ("flows", "flows"),
        ("weights", "weights"),
        ("sources", "sources"),
    ],
    read,
    before_detach: nothing_before,
    after_detach: nothing_after,
};

/// A weight class of the edge: flows whose source address is in `prefix/len` get labels
/// `rate / weight` (weighted CSFQ, paper Section 2.4).
#[derive(Debug, Clone, PartialEq)]
pub struct WeightClass {
    /// The prefix.
    pub prefix: IpAddr,
    /// Its length in bits.
    pub len: u8,
    /// The weight (> 0; 1 is the default class's).
    pub weight: f64,
}

impl FromStr for WeightClass {
    type Err = String;

    /// `PREFIX/LEN=WEIGHT`, e.g. `10.0.1.0/24=2` or `2001:db8::/32=0.5`.
    fn from_str(s: &str) -> Result<Self, String> {
        let expected = "expected PREFIX/LEN=WEIGHT, e.g. 10.0.1.0/24=2";
        let (net, w) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: {expected}"))?;
        let p: Prefix = net.parse()?;
        let weight: f64 = w
            .parse()
            .ok()
            .filter(|w: &f64| *w >= 0.001 && *w <= 1e6)
            .ok_or_else(|| format!("`{w}` is not a weight in [0.001, 1e6]"))?;
        Ok(WeightClass {
            prefix: p.addr,
            len: p.len,
            weight,
        })
    }
}

impl WeightClass {
    pub(crate) fn key(&self) -> WeightKey {
        Prefix {
            addr: self.prefix,
            len: self.len,
        }
        .key()
    }
}

/// The edge's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSettings {
    /// Averaging constant `K` of Eq. (3), ns (at most 1 s). Default 100 ms.
    pub k_ns: u64,
    /// Weight of flows no class matches. Default 1.
    pub default_weight: f64,
    /// Weight classes by source prefix.
    pub weights: Vec<WeightClass>,
    /// Flow-table size, entries, rounded up to whole sets of four ([`crate::flow_table`]:
    /// a flow may take an entry in two sets, evicting the least recently seen of their
    /// flows when all eight are taken; active flows stay until about half the table holds
    /// flows). `None`: 65 536 on a new attach, and an attached edge keeps its table. A
    /// table cannot be resized in place: a different size for an attached edge is refused.
    pub flows: Option<u32>,
    /// Attach at the interface's ingress (traffic entering the router on it: the default)
    /// or egress.
    pub ingress: bool,
    /// What to do with IPv4 that cannot carry a label (no DF, or a fragment). Default:
    /// pass it, for the cores to judge as one unlabeled flow.
    pub unlabelable: Unlabelable,
    /// What makes a flow. Default: the 5-tuple.
    pub flow_key: FlowKey,
    /// The clock Eq. (3) reads: the coarse one (the kernel's tick counter, one tick's
    /// resolution: see [`crate::tick_ns`]) gives labels within half a percent of the fine
    /// one's. Default: [`Clock::Auto`], the coarse clock wherever the tick can be read.
    pub clock: Clock,
    /// The source prefixes the edge accepts; IP from any other source is dropped
    /// (`drop_source`), as ingress filtering does (BCP 38). Empty: every source (the
    /// default). At most `MAX_SOURCES` (1024).
    pub allow_sources: Vec<Prefix>,
    /// How a flow's rate is measured: CSFQ's Eq. (3) (the default) or, for the edges of a
    /// CS-FNE island, the Time Sliding Window of Kim's thesis (Fig. 3-1), over `k_ns`.
    pub meter: Meter,
    /// Write TUF tags `T(R (1 - X) / w)` (`csfq_algo::tuf_fixed`) instead of labels: the
    /// edges of a TUF island.
    pub tuf: bool,
    /// With [`EdgeSettings::tuf`]: leave the tag of a TCP packet that arrives tagged (by
    /// its sender's TUF source tagger, `csfq dp tuf-source attach`, which knows the TCP's
    /// round trip) and tag only the rest. The hosts behind this edge are then trusted
    /// with their TCPs' tags. Default: every packet is tagged here.
    pub keep_source_tags: bool,
}

/// The `sources` map's size.
const MAX_SOURCES: usize = 1024;

/// Sources accepted whenever the filter is on: IPv6 link-local and the unspecified
/// address (neighbour discovery and duplicate-address detection, never forwarded).
const LINK_LOCAL: [&str; 2] = ["fe80::/10", "::/128"];

/// What the edge counts as one flow, to estimate its rate and label its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlowKey {
    /// Protocol, addresses and ports: the paper's flows. A host that opens many
    /// connections gets a share for each.
    #[default]
    FiveTuple,
    /// Source and destination addresses: one share per pair of hosts.
    HostPair,
    /// The source address: one share per sending host, however many connections or
    /// destinations it has (and a table entry per host, not per connection).
    Source,
}

impl FlowKey {
    /// The name `csfq dp` takes and shows.
    pub fn name(self) -> &'static str {
        match self {
            FlowKey::FiveTuple => "5-tuple",
            FlowKey::HostPair => "host-pair",
            FlowKey::Source => "source",
        }
    }
}

impl FromStr for FlowKey {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [FlowKey::FiveTuple, FlowKey::HostPair, FlowKey::Source]
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("`{s}`: expected 5-tuple, host-pair or source"))
    }
}

/// The edge's choice for IPv4 that cannot carry a label (no DF, or a fragment: the
/// Identification field is not free, RFC 6864). Such packets cross the island unlabeled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unlabelable {
    /// Pass it: every core judges all unlabeled traffic as one flow, priced at its
    /// aggregate rate, so together it gets one fair share.
    #[default]
    Pass,
    /// Police all of it at this edge to `rate_bps` with a bucket of `burst_bytes`
    /// (`csfq_algo::policer`); what exceeds it is dropped here.
    Police {
        /// bit/s, 8 bit/s to 4 Tbit/s.
        rate_bps: u64,
        /// bytes, 1500 to 1 GiB.
        burst_bytes: u32,
    },
    /// Drop it at this edge.
    Drop,
}

impl Unlabelable {
    /// The default bucket for a policing rate: 10 ms at the rate, at least 3000 bytes
    /// (two full-size packets).
    pub fn default_burst(rate_bps: u64) -> u32 {
        (rate_bps / 800).clamp(3000, csfq_algo::policer::MAX_BURST_BYTES as u64) as u32
    }
}

impl Default for EdgeSettings {
    fn default() -> Self {
        EdgeSettings {
            k_ns: 100_000_000,
            default_weight: 1.0,
            weights: Vec::new(),
            flows: None,
            ingress: true,
            unlabelable: Unlabelable::Pass,
            flow_key: FlowKey::FiveTuple,
            clock: Clock::Auto,
            allow_sources: Vec::new(),
            meter: Meter::Eq3,
            tuf: false,
            keep_source_tags: false,
        }
    }
}

impl EdgeSettings {
    /// The program's configuration, after the ranges the command line offers.
    fn raw(&self) -> Result<EdgeConfigRaw, InvalidSetting> {
        let (clock, tick_ns) = clock(self.clock, |_| Ok(()))?;
        WINDOW.check("k", self.k_ns)?;
        if self.tuf && self.meter != Meter::Eq3 {
            return Err(InvalidSetting::new(
                "meter",
                "TUF tags take the flow's rate by Eq. (3), as the TUF report's edges do: \
                 leave out --meter with --tuf",
            ));
        }
        if self.keep_source_tags && !self.tuf {
            return Err(InvalidSetting::new(
                "keep-source-tags",
                "source tags are TUF tags: give --tuf with --keep-source-tags",
            ));
        }
        if !(self.default_weight >= 0.001 && self.default_weight <= 1e6) {
            return Err(InvalidSetting::new(
                "default-weight",
                "must be in [0.001, 1e6]",
            ));
        }
        if let Some(n) = self.flows {
            TABLE.check("flows", n.into())?;
        }
        if self.allow_sources.len() > MAX_SOURCES - LINK_LOCAL.len() {
            return Err(InvalidSetting::new(
                "allow-source",
                format!(
                    "{} prefixes: at most {}",
                    self.allow_sources.len(),
                    MAX_SOURCES - LINK_LOCAL.len()
                ),
            ));
        }
        let (unlabelable, police_rate_bps, police_burst_bytes) = match self.unlabelable {
            Unlabelable::Pass => (UNLABELABLE_PASS, 0, 0),
            Unlabelable::Drop => (UNLABELABLE_DROP, 0, 0),
            Unlabelable::Police {
                rate_bps,
                burst_bytes,
            } => {
                RATE.check("unlabelable", rate_bps)?;
                BYTES.check("unlabelable-burst", burst_bytes.into())?;
                (UNLABELABLE_POLICE, rate_bps, burst_bytes)
            }
        };
        Ok(EdgeConfigRaw {
            k_ns: self.k_ns,
            default_weight_milli: milli(self.default_weight),
            police_rate_bps,
            police_burst_bytes,
            unlabelable,
            flow_key: match self.flow_key {
                FlowKey::FiveTuple => KEY_FIVE_TUPLE,
                FlowKey::HostPair => KEY_HOST_PAIR,
                FlowKey::Source => KEY_SOURCE,
            },
            clock,
            tick_ns,
            source_filter: u32::from(!self.allow_sources.is_empty()),
            meter: match self.meter {
                Meter::Eq3 => METER_EQ3,
                Meter::Tsw => METER_TSW,
            },
            tuf: u32::from(self.tuf),
            keep_source_tags: u32::from(self.keep_source_tags),
            ..Default::default()
        })
    }
}

/// Puts the weight classes into the `weights` map.
fn insert_weights(
    trie: &mut LpmTrie<&mut aya::maps::MapData, [u8; 16], u32>,
    weights: &[WeightClass],
) -> Result<(), SysError> {
    for c in weights {
        insert_prefix(trie, &c.key(), milli(c.weight), "writing a weight class")?;
    }
    Ok(())
}

/// Puts `allowed` (with the link-local sources, if any) into the `sources` map, and with
/// `prune` removes every other prefix.
fn set_sources(
    trie: &mut LpmTrie<&mut aya::maps::MapData, [u8; 16], u32>,
    allowed: &[Prefix],
    prune: bool,
) -> Result<(), SysError> {
    let mut keys: Vec<WeightKey> = allowed.iter().map(Prefix::key).collect();
    if !allowed.is_empty() {
        keys.extend(
            LINK_LOCAL
                .iter()
                .map(|p| p.parse::<Prefix>().expect("a prefix").key()),
        );
    }
    for k in &keys {
        insert_prefix(trie, k, 1, "writing an accepted source prefix")?;
    }
    if !prune {
        return Ok(());
    }
    let stale: Vec<_> = trie
        .keys()
        .filter_map(Result::ok)
        .filter(|k| {
            !keys
                .iter()
                .any(|n| n.prefixlen == k.prefix_len() && n.addr == k.data())
        })
        .collect();
    for k in stale {
        trie.remove(&k)
            .map_err(|e| SysError::kernel("removing an accepted source prefix", e))?;
    }
    Ok(())
}

/// Attaches the edge to `dev`, or updates its settings if it is attached already.
pub fn attach_edge(dev: &str, s: &EdgeSettings) -> Result<AttachOutcome, AttachError> {
    let raw = s.raw()?;
    preflight("csfq dp edge attach", dev)?;
    let _lock = change_lock()?;
    let d = dir(dev, Role::Edge);
    if existing(dev, &d)? {
        check_pinned_table(dev, &d, "the edge", "flows", s.flows)?;
        // The new sources are accepted before the filter is switched on, the old ones
        // removed after: no accepted source is dropped while the settings change.
        let path = d.join(EDGE.pin_of("sources"));
        let mut m = open_pinned(&path)?;
        let mut sources = typed(&mut m, &path)?;
        set_sources(&mut sources, &s.allow_sources, false)?;
        reconfigure(&EDGE, &d, &raw)?;
        set_sources(&mut sources, &s.allow_sources, true)?;
        let path = d.join(EDGE.pin_of("weights"));
        let mut w = open_pinned(&path)?;
        insert_weights(&mut typed(&mut w, &path)?, &s.weights)?;
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = load_flows(&EDGE, Some(s.flows.unwrap_or(DEFAULT_FLOWS)))?;
    configure(&mut ebpf, &EDGE, &raw)?;
    {
        let mut trie = LpmTrie::try_from(map(&mut ebpf, "weights")).expect("lpm trie");
        insert_weights(&mut trie, &s.weights)?;
        let mut sources = LpmTrie::try_from(map(&mut ebpf, "sources")).expect("lpm trie");
        set_sources(&mut sources, &s.allow_sources, true)?;
    }
    attach(dev, &EDGE, s.ingress, ebpf)?;
    confirm_live(dev, Role::Edge)?;
    Ok(AttachOutcome::Attached)
}

/// Reads the edge's configuration and the size of its table.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let c: EdgeConfigRaw = read_entry(&EDGE.config_pin(p.dir), 0, "the edge configuration")?;
    // Entries are never emptied, only taken over: the flows in the table are those that
    // entered it less those evicted.
    let entered = |name| {
        stats
            .counters
            .get(name)
            .map_or(0, |c: &CountJson| c.packets)
    };
    let n = entered(Counter::NewFlow.name()).saturating_sub(entered(Counter::Evicted.name()));
    stats.edge = Some(EdgeStats {
        flows: n,
        k_ns: c.k_ns,
        unlabelable: match c.unlabelable {
            UNLABELABLE_POLICE => "police",
            UNLABELABLE_DROP => "drop",
            _ => "pass",
        },
        police_rate_bps: c.police_rate_bps,
        police_burst_bytes: c.police_burst_bytes,
        flow_key: match c.flow_key {
            KEY_HOST_PAIR => FlowKey::HostPair,
            KEY_SOURCE => FlowKey::Source,
            _ => FlowKey::FiveTuple,
        }
        .name(),
        clock: clock_name(c.clock),
        source_filter: c.source_filter != 0,
        meter: if c.meter == METER_TSW { "tsw" } else { "eq3" },
        tuf: c.tuf != 0,
        keep_source_tags: c.keep_source_tags != 0,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InvalidSetting;

    /// TUF tags take the flow's rate by Eq. (3): the TSW meter with them is refused, naming
    /// the meter; each alone is taken.
    #[test]
    fn tuf_tags_refuse_the_tsw_meter() {
        let both = EdgeSettings {
            tuf: true,
            meter: Meter::Tsw,
            ..Default::default()
        };
        match both.raw() {
            Err(InvalidSetting { field, .. }) => assert_eq!(field, "meter"),
            other => panic!("{other:?}"),
        }
        let tuf = EdgeSettings {
            tuf: true,
            ..Default::default()
        };
        assert_eq!(tuf.raw().unwrap().tuf, 1);
        // Source tags are TUF tags: keeping them without --tuf is refused, naming the flag.
        let keep = EdgeSettings {
            keep_source_tags: true,
            ..Default::default()
        };
        match keep.raw() {
            Err(InvalidSetting { field, .. }) => {
                assert_eq!(field, "keep-source-tags")
            }
            other => panic!("{other:?}"),
        }
        let both = EdgeSettings {
            tuf: true,
            keep_source_tags: true,
            ..Default::default()
        };
        assert_eq!(both.raw().unwrap().keep_source_tags, 1);
        let tsw = EdgeSettings {
            meter: Meter::Tsw,
            ..Default::default()
        };
        assert_eq!(tsw.raw().unwrap().meter, METER_TSW);
    }
}
