//! Attaching, configuring, reading and detaching the programs on real interfaces.
//!
//! Each program is attached with a tcx link (Linux 6.6 and later), at the egress (core;
//! edge by default at the ingress) of the interface, ahead of its qdisc. The link and the
//! maps are pinned in the BPF filesystem, so they outlive this process:
//!
//! ```text
//! /sys/fs/bpf/csfq/<scope>/<interface>/<edge|core|may>/{link,config,counters,state|flows,weights}
//! ```
//!
//! `<scope>` is `host`, or `netns-<name>` when a command runs in a named network namespace
//! (entered with `--netns NAME`, or started in it by `ip netns exec NAME`).
//! Detaching removes the pins, which removes the link; nothing else on the interface is
//! touched (its qdiscs, tc filters and other tcx programs stay).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;

use aya::maps::{Array, LpmTrie, Map, MapData};
use aya::programs::links::{FdLink, PinnedLink};
use aya::programs::tc::TcAttachOptions;
use aya::programs::{LinkOrder, SchedClassifier, TcAttachType};
use serde::Serialize;

use crate::abi::{
    CoreConfigRaw, CoreStateRaw, Count, Counter, EdgeConfigRaw, MayConfigRaw, MaySlotRaw,
    MayStateRaw, WeightKey, CLOCK_COARSE, CLOCK_FINE, FLOW_WAYS, KEY_FIVE_TUPLE, KEY_HOST_PAIR,
    KEY_SOURCE, UNLABELABLE_DROP, UNLABELABLE_PASS, UNLABELABLE_POLICE,
};
use crate::flow_table;
use crate::loader::{
    insert_weight, load, load_flows, map, read_counters, set_core_config, set_edge_config,
    set_may_config,
};
use crate::{DpError, Role};

const BPFFS: &str = "/sys/fs/bpf";
const BPF_FS_MAGIC: i64 = 0xcafe4a11;
/// `BPF_F_LOCK`: read a spin-locked value consistently.
const BPF_F_LOCK: u64 = 4;

static SCOPE: OnceLock<String> = OnceLock::new();

fn scope() -> &'static str {
    SCOPE.get().map_or("host", String::as_str)
}

/// The namespace inode of `path` (`/proc/PID/ns/...`, or a bind mount of one).
fn ns_id(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// Makes a command started inside a named network namespace (`ip netns exec NAME csfq dp
/// ...`, `nsenter --net=/run/netns/NAME ...`) act as `csfq dp --netns NAME ...` would: its
/// pins go under that namespace's scope, in a BPF filesystem that outlives the command.
///
/// `ip netns exec` gives its command a private mount namespace with a fresh /sys, where no
/// BPF filesystem is mounted; pins made in one mounted there vanish when the command exits,
/// and the programs with them. Then this moves the process back into the mount namespace
/// of the nearest ancestor outside that private one (the shell that ran `ip netns exec`),
/// or refuses, saying what to run instead. Call it before any other thread starts.
pub fn adopt_current_netns() -> Result<(), DpError> {
    let here = ns_id(Path::new("/proc/self/ns/net")).map_err(|source| DpError::Io {
        what: "reading",
        path: "/proc/self/ns/net".into(),
        source,
    })?;
    let Some(name) = fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .find(|e| ns_id(&e.path()).is_ok_and(|id| id == here))
        .and_then(|e| e.file_name().into_string().ok())
    else {
        // Not a named namespace: the host's, or one csfq cannot name.
        return Ok(());
    };
    if !is_bpffs(Path::new(BPFFS)) {
        let refused = |source| DpError::PrivateMounts {
            netns: name.clone(),
            source,
        };
        let mine = ns_id(Path::new("/proc/self/ns/mnt")).map_err(refused)?;
        let mut pid = std::process::id();
        let outside = loop {
            match parent_of(pid) {
                Some(p) if p > 1 => pid = p,
                _ => {
                    break Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no ancestor process outside this mount namespace",
                    ))
                }
            }
            let ns = PathBuf::from(format!("/proc/{pid}/ns/mnt"));
            if ns_id(&ns).is_ok_and(|id| id != mine) {
                break Ok(ns);
            }
        }
        .map_err(refused)?;
        let f = fs::File::open(&outside).map_err(refused)?;
        use std::os::fd::AsRawFd;
        // SAFETY: setns on a descriptor we own; the process is single-threaded here (the
        // kernel refuses a mount namespace change otherwise, which is then reported).
        if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNS) } != 0 {
            return Err(refused(std::io::Error::last_os_error()));
        }
    }
    let _ = SCOPE.set(format!("netns-{name}"));
    Ok(())
}

/// The parent of a process, from `/proc/PID/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether a BPF filesystem is mounted at `path`.
fn is_bpffs(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs into a zeroed struct we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type as i64 == BPF_FS_MAGIC }
}

/// Moves this process into the named network namespace (`ip netns add NAME`), so that
/// interface names are those of that namespace; pins go under `netns-NAME`. Call it before
/// any other thread starts.
pub fn enter_netns(name: &str) -> Result<(), DpError> {
    let err = |source| DpError::NoSuchNetns {
        name: name.to_string(),
        source,
    };
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a namespace name",
        )));
    }
    let f = fs::File::open(Path::new("/run/netns").join(name)).map_err(err)?;
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a file descriptor we own; it changes only this thread's namespace,
    // and the CLI calls this first, before any other thread exists.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EPERM) {
            return Err(DpError::NotPermitted("entering a network namespace"));
        }
        return Err(err(e));
    }
    let _ = SCOPE.set(format!("netns-{name}"));
    Ok(())
}

/// An address prefix as the programs match it (longest prefix; IPv4 as ::ffff:a.b.c.d).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The network's address.
    pub addr: IpAddr,
    /// Its length in bits.
    pub len: u8,
}

impl FromStr for Prefix {
    type Err = String;

    /// `ADDR/LEN`, e.g. `10.0.1.0/24` or `2001:db8::/32`. Bits past the length are
    /// refused (as `ip route` refuses them): the kernel's match reads only the first `len`
    /// bits, so `10.0.1.1/24` would silently be `10.0.1.0/24`, and replace an entry given
    /// that way.
    fn from_str(net: &str) -> Result<Self, String> {
        let expected = "expected ADDR/LEN, e.g. 10.0.1.0/24";
        let (addr, len) = net
            .split_once('/')
            .ok_or_else(|| format!("`{net}`: {expected}"))?;
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("`{addr}` is not an IP address; {expected}"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len: u8 = len
            .parse()
            .ok()
            .filter(|&l| l <= max)
            .ok_or_else(|| format!("`{len}` is not a prefix length of 0..={max}"))?;
        let octets = match addr {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        let host_bits = octets.iter().enumerate().any(|(i, &b)| {
            let keep = (len as usize).saturating_sub(8 * i).min(8);
            b & !(0xffu8.checked_shl(8 - keep as u32).unwrap_or(0)) != 0
        });
        if host_bits {
            return Err(format!(
                "`{net}` has bits set past its prefix length; give the network's address"
            ));
        }
        Ok(Prefix { addr, len })
    }
}

impl Prefix {
    /// The programs' key for it.
    pub fn key(&self) -> WeightKey {
        match self.addr {
            IpAddr::V4(a) => {
                let mut addr = [0u8; 16];
                addr[10] = 0xff;
                addr[11] = 0xff;
                addr[12..].copy_from_slice(&a.octets());
                WeightKey {
                    prefixlen: 96 + self.len as u32,
                    addr,
                }
            }
            IpAddr::V6(a) => WeightKey {
                prefixlen: self.len as u32,
                addr: a.octets(),
            },
        }
    }
}

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
    fn key(&self) -> WeightKey {
        Prefix {
            addr: self.prefix,
            len: self.len,
        }
        .key()
    }
}

fn milli(weight: f64) -> u32 {
    ((weight * 1000.0).round() as u32).max(1)
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
    /// Read the coarse clock (the kernel's tick counter, one tick's resolution: see
    /// [`tick_ns`]) instead of the fine one: cheaper, and within half a percent of the fine
    /// clock's labels from 10 Mbit/s up (README, "The programs' clock"). Default: the fine
    /// clock.
    pub coarse_clock: bool,
}

/// The kernel's tick (a jiffy: 4 ms at 250 Hz), ns: the coarse clock's resolution, as
/// `clock_getres(CLOCK_MONOTONIC_COARSE)` gives it.
pub fn tick_ns() -> u64 {
    // SAFETY: clock_getres into a zeroed struct we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if r != 0 {
        return 0; // the programs then read the fine clock
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

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
            coarse_clock: false,
        }
    }
}

/// The core's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// `K_alpha`, ns. Default: twice the limit's drain time at the rate, within 1 ms and
    /// 1 s (`csfq_algo::csfq::scaled_window`; 105 ms for 64 KiB at 10 Mbit/s).
    pub k_alpha_ns: u64,
    /// `K_c`, ns. Default as `k_alpha_ns`.
    pub k_c_ns: u64,
    /// The virtual queue's size, bytes: set it to the shaper's limit. Default 64 KiB.
    pub limit_bytes: u32,
    /// Queue below which the core keeps `alpha = 0`, bytes. Default half the limit.
    pub threshold_bytes: Option<u32>,
    /// Buffer-overflow decreases of `alpha` between two updates of it. Default 29.
    pub overflow_budget: u32,
    /// How `alpha` is estimated. Default: the label histogram.
    pub estimator: csfq_algo::csfq::Estimator,
    /// Whose labels count. Default [`CoreTrust::Any`]; `csfq dp core attach` makes the
    /// operator choose.
    pub trust: CoreTrust,
    /// Read the coarse clock (the kernel's tick counter, see [`tick_ns`]) instead of the
    /// fine one. The virtual queue then drains once a tick and looks up to one tick at `C`
    /// fuller than it is, so it is refused unless a tick is at most a quarter of the
    /// limit's drain time at `C`, of `K_alpha` and of `K_c`. Default: the fine clock.
    pub coarse_clock: bool,
}

/// Whose labels the core believes. A label is only as good as the edge that wrote it: a
/// host wired to the core router, bypassing the edges, can write any label it likes, and
/// a low one is never dropped. Packets received on an interface that is not trusted are
/// judged as unlabeled traffic (one flow, priced by the rate of all of it) and leave with
/// their label overwritten; `untrusted` counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreTrust {
    /// Labels count whichever interface they arrive on.
    Any,
    /// Labels count only on packets received on these interfaces (those facing the
    /// island's edges and other cores), at most [`crate::abi::MAX_TRUSTED`].
    Interfaces(Vec<String>),
}

impl CoreSettings {
    /// Defaults for a link of `rate_bps` with a 64 KiB limit.
    pub fn new(rate_bps: u64) -> Self {
        Self::with_limit(rate_bps, 65_536)
    }

    /// Defaults for a link of `rate_bps` whose shaper holds `limit_bytes`.
    pub fn with_limit(rate_bps: u64, limit_bytes: u32) -> Self {
        let k = csfq_algo::csfq::scaled_window(rate_bps.max(1) as f64, limit_bytes).0;
        CoreSettings {
            rate_bps,
            k_alpha_ns: k,
            k_c_ns: k,
            limit_bytes,
            threshold_bytes: None,
            overflow_budget: 29,
            estimator: csfq_algo::csfq::Estimator::Histogram,
            trust: CoreTrust::Any,
            coarse_clock: false,
        }
    }

    fn raw(&self) -> Result<CoreConfigRaw, DpError> {
        let invalid = |field, why: &str| DpError::Invalid {
            field,
            why: why.to_string(),
        };
        if !(8..=4_000_000_000_000).contains(&self.rate_bps) {
            return Err(invalid(
                "rate",
                &format!(
                    "{} bit/s is out of range: must be from 8bit to 4tbit",
                    self.rate_bps
                ),
            ));
        }
        if !(1500..=1 << 30).contains(&self.limit_bytes) {
            return Err(invalid(
                "limit",
                &format!(
                    "{} bytes is out of range: must be from 1500 bytes to 1gb",
                    self.limit_bytes
                ),
            ));
        }
        for (field, v) in [("k-alpha", self.k_alpha_ns), ("k-c", self.k_c_ns)] {
            if !(1_000..=1_000_000_000).contains(&v) {
                return Err(invalid(
                    field,
                    &format!("{v} ns is out of range: must be from 1us to 1s"),
                ));
            }
        }
        let threshold = self.threshold_bytes.unwrap_or(self.limit_bytes / 2);
        if threshold > self.limit_bytes {
            return Err(invalid("threshold", "must not exceed the limit"));
        }
        let tick = tick_ns();
        if self.coarse_clock && tick == 0 {
            return Err(invalid("clock", "the kernel's tick could not be read"));
        }
        if self.coarse_clock {
            let drain_ns = u64::from(self.limit_bytes) * 8_000_000_000 / self.rate_bps;
            for (field, what, v) in [
                ("limit", "the limit's drain time at the rate", drain_ns),
                ("k-alpha", "K_alpha", self.k_alpha_ns),
                ("k-c", "K_c", self.k_c_ns),
            ] {
                if v < 4 * tick {
                    return Err(invalid(
                        field,
                        &format!(
                            "with the coarse clock, whose tick is {} us here, {what} \
                             ({} us) must be at least four ticks: the virtual queue \
                             drains once a tick (use the fine clock, or a larger value)",
                            tick / 1000,
                            v / 1000
                        ),
                    ));
                }
            }
        }
        let mut trusted = [0u32; crate::abi::MAX_TRUSTED];
        if let CoreTrust::Interfaces(names) = &self.trust {
            if names.is_empty() || names.len() > crate::abi::MAX_TRUSTED {
                return Err(invalid(
                    "trusted-from",
                    &format!(
                        "{} interfaces: name from 1 to {}",
                        names.len(),
                        crate::abi::MAX_TRUSTED
                    ),
                ));
            }
            for (slot, name) in trusted.iter_mut().zip(names) {
                *slot = ifindex(name)?;
            }
        }
        Ok(CoreConfigRaw {
            capacity_bps: self.rate_bps,
            k_alpha_ns: self.k_alpha_ns,
            k_c_ns: self.k_c_ns,
            threshold_bytes: threshold,
            limit_bytes: self.limit_bytes,
            overflow_budget: self.overflow_budget,
            estimator: match self.estimator {
                csfq_algo::csfq::Estimator::Paper => crate::abi::EST_PAPER,
                csfq_algo::csfq::Estimator::Histogram => crate::abi::EST_HISTOGRAM,
            },
            trust: match self.trust {
                CoreTrust::Any => crate::abi::TRUST_ANY,
                CoreTrust::Interfaces(_) => crate::abi::TRUST_LISTED,
            },
            trusted,
            clock: if self.coarse_clock {
                CLOCK_COARSE
            } else {
                CLOCK_FINE
            },
            tick_ns: tick,
            ..Default::default()
        })
    }
}

/// MAY's settings (the MAY paper's Table I; defaults from its Section IV).
#[derive(Debug, Clone, PartialEq)]
pub struct MaySettings {
    /// `C`, bit/s: the rate of the shaper (tbf, htb) on this interface.
    pub rate_bps: u64,
    /// The table's size, entries, rounded up to whole sets of [`FLOW_WAYS`] (a flow sampled
    /// into a full set takes the entry of the flow, of its two sets' eight, whose last
    /// drop is the oldest) [default: [`DEFAULT_FLOWS`] on a new attach; an attached MAY
    /// keeps its table].
    pub table: Option<u32>,
    /// `Delta`, ns (1 s).
    pub interval_ns: u64,
    /// `u0` (0.98).
    pub target_utilization: f64,
    /// `kappa` (0.1).
    pub gain: f64,
    /// `q_w` (0.05).
    pub q_w: f64,
    /// `T0`, ns (64 s).
    pub timeout_ns: u64,
    /// `S0`: a packet of a flow not in the table is sampled with probability `1/S0`
    /// (1000).
    pub s0: f64,
    /// Count only the bytes MAY passes in the utilization (the default: Eq. 3's rate into
    /// the queue); off, every arriving byte counts, MAY's own drops included.
    pub passed_only: bool,
    /// Read the coarse clock (the kernel's tick counter, see [`tick_ns`]) instead of the
    /// fine one. Each interval's length and each entry's age are then known to a tick, so
    /// it is refused unless `Delta` and `T0` are each at least a hundred ticks (the
    /// utilization within 1%). Default: the fine clock.
    pub coarse_clock: bool,
}

impl MaySettings {
    /// The paper's parameters for a link of `rate_bps`.
    pub fn new(rate_bps: u64) -> Self {
        let p = csfq_algo::may::MayParams::new(rate_bps as f64, 0);
        MaySettings {
            rate_bps,
            table: None,
            interval_ns: p.update_interval.0,
            target_utilization: p.target_utilization,
            gain: p.gain,
            q_w: p.q_w,
            timeout_ns: p.timeout.0,
            s0: p.s0,
            passed_only: p.utilization == csfq_algo::may::MayUtilization::Passed,
            coarse_clock: false,
        }
    }

    /// The program's configuration: `csfq_algo::may_fixed`'s conversion, after the
    /// ranges the command line offers.
    pub fn raw(&self) -> Result<MayConfigRaw, DpError> {
        let invalid = |field, why: String| DpError::Invalid { field, why };
        if !(1_000..=4_000_000_000_000).contains(&self.rate_bps) {
            return Err(invalid(
                "rate",
                format!(
                    "{} bit/s is out of range: must be from 1kbit to 4tbit",
                    self.rate_bps
                ),
            ));
        }
        if !(1_000_000..=60_000_000_000).contains(&self.interval_ns) {
            return Err(invalid(
                "interval",
                format!(
                    "{} ns is out of range: must be from 1ms to 60s",
                    self.interval_ns
                ),
            ));
        }
        if !(1_000_000..=3_600_000_000_000).contains(&self.timeout_ns) {
            return Err(invalid(
                "timeout",
                format!(
                    "{} ns is out of range: must be from 1ms to 1h",
                    self.timeout_ns
                ),
            ));
        }
        // The interval's arrivals are counted up to 2^40 bytes: four times the link's rate
        // over an interval must fit.
        let bytes_at_4c = self.rate_bps as f64 / 8.0 * (self.interval_ns as f64 / 1e9) * 4.0;
        if bytes_at_4c > csfq_algo::may_fixed::ARRIVED_MAX as f64 {
            return Err(invalid(
                "interval",
                format!(
                    "{} ns at {} bit/s: an interval's arrivals could pass the 2^40 bytes it \
                     counts; shorten the interval",
                    self.interval_ns, self.rate_bps
                ),
            ));
        }
        let tick = tick_ns();
        if self.coarse_clock && tick == 0 {
            return Err(invalid(
                "clock",
                "the kernel's tick could not be read".into(),
            ));
        }
        if self.coarse_clock {
            for (field, what, v) in [
                ("interval", "Delta", self.interval_ns),
                ("timeout", "T0", self.timeout_ns),
            ] {
                if v < 100 * tick {
                    return Err(invalid(
                        field,
                        format!(
                            "with the coarse clock, whose tick is {} us here, {what} ({} us) \
                             must be at least a hundred ticks, so that it is measured to 1% \
                             (use the fine clock, or a larger value)",
                            tick / 1000,
                            v / 1000
                        ),
                    ));
                }
            }
        }
        if let Some(n) = self.table {
            if !(16..=1 << 24).contains(&n) {
                return Err(invalid(
                    "table",
                    format!("{n} entries is out of range: must be from 16 to 16777216"),
                ));
            }
        }
        let p = csfq_algo::may::MayParams {
            update_interval: csfq_algo::Nanos(self.interval_ns),
            target_utilization: self.target_utilization,
            gain: self.gain,
            q_w: self.q_w,
            timeout: csfq_algo::Nanos(self.timeout_ns),
            s0: self.s0,
            ..csfq_algo::may::MayParams::new(self.rate_bps as f64, 0)
        };
        let fixed = csfq_algo::may_fixed::FixedMayParams::from_params(&p).map_err(|e| {
            let field = match e.field {
                "target_utilization" => "target-utilization",
                "q_w" => "q-w",
                "s0" => "s0",
                "gain" => "gain",
                other => other,
            };
            invalid(field, format!("must be {}", e.expected))
        })?;
        Ok(MayConfigRaw {
            clock: if self.coarse_clock {
                CLOCK_COARSE
            } else {
                CLOCK_FINE
            },
            tick_ns: tick,
            ..MayConfigRaw::from_params(&csfq_algo::may_fixed::FixedMayParams {
                passed_only: self.passed_only,
                ..fixed
            })
        })
    }
}

impl EdgeSettings {
    fn raw(&self) -> Result<EdgeConfigRaw, DpError> {
        if self.coarse_clock && tick_ns() == 0 {
            return Err(DpError::Invalid {
                field: "clock",
                why: "the kernel's tick could not be read".into(),
            });
        }
        if !(1_000..=1_000_000_000).contains(&self.k_ns) {
            return Err(DpError::Invalid {
                field: "k",
                why: "must be from 1us to 1s".into(),
            });
        }
        if !(self.default_weight >= 0.001 && self.default_weight <= 1e6) {
            return Err(DpError::Invalid {
                field: "default-weight",
                why: "must be in [0.001, 1e6]".into(),
            });
        }
        if self.flows.is_some_and(|n| !(16..=1 << 24).contains(&n)) {
            return Err(DpError::Invalid {
                field: "flows",
                why: "must be from 16 to 16777216".into(),
            });
        }
        let (unlabelable, police_rate_bps, police_burst_bytes) = match self.unlabelable {
            Unlabelable::Pass => (UNLABELABLE_PASS, 0, 0),
            Unlabelable::Drop => (UNLABELABLE_DROP, 0, 0),
            Unlabelable::Police {
                rate_bps,
                burst_bytes,
            } => {
                if !(8..=4_000_000_000_000).contains(&rate_bps) {
                    return Err(DpError::Invalid {
                        field: "unlabelable",
                        why: format!(
                            "{rate_bps} bit/s is out of range: must be from 8bit to 4tbit"
                        ),
                    });
                }
                if !(1500..=csfq_algo::policer::MAX_BURST_BYTES).contains(&burst_bytes) {
                    return Err(DpError::Invalid {
                        field: "unlabelable-burst",
                        why: format!(
                            "{burst_bytes} bytes is out of range: must be from 1500 bytes to 1gb"
                        ),
                    });
                }
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
            clock: if self.coarse_clock {
                CLOCK_COARSE
            } else {
                CLOCK_FINE
            },
            tick_ns: tick_ns(),
            ..Default::default()
        })
    }
}

/// What an attach did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachOutcome {
    /// Loaded and attached the program.
    Attached,
    /// It was attached already: its settings were updated in place, state kept.
    Updated,
}

pub(crate) fn dir(dev: &str, role: Role) -> PathBuf {
    Path::new(BPFFS)
        .join("csfq")
        .join(scope())
        .join(dev)
        .join(role.name())
}

pub(crate) fn preflight(what: &'static str, dev: &str) -> Result<(), DpError> {
    crate::require(what)?;
    ifindex(dev)?;
    ensure_bpffs()
}

pub(crate) fn ifindex(dev: &str) -> Result<u32, DpError> {
    let c = CString::new(dev).map_err(|_| DpError::NoSuchInterface(dev.to_string()))?;
    // SAFETY: a valid NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 || dev.contains('/') {
        return Err(DpError::NoSuchInterface(dev.to_string()));
    }
    Ok(i)
}

/// The name of the interface with this index in the current namespace, if there is one.
pub(crate) fn ifname(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` holds IF_NAMESIZE bytes, as if_indextoname requires.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success if_indextoname wrote a NUL-terminated name into `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

/// Mounts the BPF filesystem at /sys/fs/bpf unless it is there.
fn ensure_bpffs() -> Result<(), DpError> {
    if is_bpffs(Path::new(BPFFS)) {
        return Ok(());
    }
    let path = CString::new(BPFFS).expect("path");
    let bpf = CString::new("bpf").expect("fstype");
    // SAFETY: mount with valid NUL-terminated strings and no data.
    let r = unsafe {
        libc::mount(
            bpf.as_ptr(),
            path.as_ptr(),
            bpf.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(DpError::Io {
            what: "mounting the BPF filesystem at",
            path: BPFFS.into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

fn pin_map(ebpf: &mut aya::Ebpf, name: &str, path: &Path) -> Result<(), DpError> {
    map(ebpf, name)
        .pin(path)
        .map_err(|e| DpError::kernel(format!("pinning {}", path.display()), e))
}

/// A pinned map seen as the type this csfq reads it as, or an error: a pin whose layout
/// differs (made by another version of csfq, still attached across an upgrade) is refused,
/// never read.
pub(crate) fn typed<M, T>(m: M, path: &Path) -> Result<T, DpError>
where
    T: TryFrom<M, Error = aya::maps::MapError>,
{
    T::try_from(m).map_err(|e| {
        DpError::kernel(
            format!(
                "reading {} (pinned by another version of csfq? `csfq dp detach --dev IF` \
                 it, with `--netns NAME` if it is in one, and attach again)",
                path.display()
            ),
            e,
        )
    })
}

pub(crate) fn open_pinned(path: &Path) -> Result<Map, DpError> {
    let data = MapData::from_pin(path)
        .map_err(|e| DpError::kernel(format!("opening {}", path.display()), e))?;
    Map::from_map_data(data).map_err(|e| DpError::kernel(format!("opening {}", path.display()), e))
}

/// Loads, attaches and pins `role`'s program, or removes everything it made on failure.
pub(crate) fn attach(
    dev: &str,
    role: Role,
    ingress: bool,
    mut ebpf: aya::Ebpf,
    maps: &[&str],
) -> Result<(), DpError> {
    let d = dir(dev, role);
    fs::create_dir_all(&d).map_err(|source| DpError::Io {
        what: "creating",
        path: d.clone(),
        source,
    })?;
    let result = (|| {
        for m in maps {
            pin_map(&mut ebpf, m, &d.join(pin_name(m)))?;
        }
        let prog: &mut SchedClassifier = ebpf
            .program_mut(role.program())
            .expect("program")
            .try_into()
            .expect("classifier");
        let at = if ingress {
            TcAttachType::Ingress
        } else {
            TcAttachType::Egress
        };
        let id = prog
            .attach_with_options(dev, at, TcAttachOptions::TcxOrder(LinkOrder::default()))
            .map_err(|e| {
                DpError::kernel(
                    format!(
                        "attaching the {} to {dev} (tcx needs Linux 6.6 or later)",
                        role.name()
                    ),
                    e,
                )
            })?;
        let link = prog
            .take_link(id)
            .map_err(|e| DpError::kernel("taking the link", e))?;
        let fd: FdLink = link
            .try_into()
            .map_err(|e| DpError::kernel("the link is not a tcx link", e))?;
        let p = d.join("link");
        fd.pin(&p)
            .map_err(|e| DpError::kernel(format!("pinning {}", p.display()), e))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = remove_pins(&d);
    }
    result
}

/// The interface index a pinned tcx link is attached to, as the kernel reports it: 0
/// once the interface is gone (deleted, or its namespace deleted), when the link stays
/// pinned but runs nowhere. `None` if the pin is not a readable tcx link.
///
/// aya does not give a link's type-specific information, so this asks the kernel
/// directly: `BPF_OBJ_GET` on the pin, then `BPF_OBJ_GET_INFO_BY_FD`, whose
/// `struct bpf_link_info` holds `type`, `id`, `prog_id`, then a union aligned to 8 bytes
/// (it has 64-bit members) whose tcx member starts with `ifindex`: byte 16.
fn link_ifindex(pin: &Path) -> Option<u32> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    const BPF_OBJ_GET: libc::c_long = 7;
    const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
    const BPF_LINK_TYPE_TCX: u32 = 11;
    #[repr(C)]
    struct ObjGet {
        pathname: u64,
        bpf_fd: u32,
        file_flags: u32,
    }
    #[repr(C)]
    struct InfoByFd {
        bpf_fd: u32,
        info_len: u32,
        info: u64,
    }
    let path = CString::new(pin.as_os_str().as_encoded_bytes()).ok()?;
    let get = ObjGet {
        pathname: path.as_ptr() as u64,
        bpf_fd: 0,
        file_flags: 0,
    };
    // SAFETY: `get` and the path it points to outlive the call; the kernel reads
    // `size_of::<ObjGet>()` bytes of it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET,
            &get as *const ObjGet,
            std::mem::size_of::<ObjGet>(),
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // Room for the whole of struct bpf_link_info in any kernel; what the kernel does not
    // fill stays zero, as it requires.
    let mut info = [0u8; 256];
    let by_fd = InfoByFd {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: info.len() as u32,
        info: info.as_mut_ptr() as u64,
    };
    // SAFETY: `info` is writable for `info_len` bytes and outlives the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET_INFO_BY_FD,
            &by_fd as *const InfoByFd,
            std::mem::size_of::<InfoByFd>(),
        )
    };
    let word = |i: usize| u32::from_ne_bytes(info[i..i + 4].try_into().expect("4 bytes"));
    (r == 0 && word(0) == BPF_LINK_TYPE_TCX).then(|| word(16))
}

/// Whether the pins in `d` are stale: their link is attached nowhere, because its
/// interface or its namespace was deleted without `csfq dp detach`.
fn stale(d: &Path) -> bool {
    link_ifindex(&d.join("link")) == Some(0)
}

/// Whether the link pinned in `d` still runs on `dev`: a namespace or interface deleted
/// under it leaves the pins of a link that is attached nowhere.
fn live(dev: &str, d: &Path) -> bool {
    let Ok(pinned) = PinnedLink::from_pin(d.join("link")) else {
        return false;
    };
    let Ok(info) = FdLink::from(pinned).info() else {
        return false;
    };
    [TcAttachType::Ingress, TcAttachType::Egress]
        .iter()
        .any(|&at| {
            SchedClassifier::query_tcx(dev, at)
                .map(|(_, progs)| progs.iter().any(|p| p.id() == info.program_id()))
                .unwrap_or(false)
        })
}

/// Whether `d` holds the pins of a live link on `dev`; stale pins are removed.
pub(crate) fn existing(dev: &str, d: &Path) -> Result<bool, DpError> {
    if !d.exists() {
        return Ok(false);
    }
    if live(dev, d) {
        return Ok(true);
    }
    remove_pins(d).map_err(|source| DpError::Io {
        what: "removing stale pins in",
        path: d.to_path_buf(),
        source,
    })?;
    Ok(false)
}

fn pin_name(map: &str) -> &str {
    match map {
        "edge_config" | "core_config" | "may_config" | "loop_config" => "config",
        "core_state" | "may_state" | "loop_state" => "state",
        "loop_prefixes" => "prefixes",
        "loop_counts" => "counts",
        "may_flows" => "flows",
        other => other,
    }
}

/// The edge's flow-table size when none is given.
pub const DEFAULT_FLOWS: u32 = 65_536;

/// One `csfq dp` change at a time on this host. Attaching, updating and detaching read
/// the pins and then write them; two at once could each find nothing attached, and the
/// loser's clean-up would remove the winner's pins (and so its program) after the winner
/// had reported success. Held until the returned file is dropped.
pub(crate) fn change_lock() -> Result<fs::File, DpError> {
    let dir = Path::new("/run/lock");
    let path = if dir.is_dir() {
        dir.join("csfq-dp.lock")
    } else {
        std::env::temp_dir().join("csfq-dp.lock")
    };
    let io = |what, source| DpError::Io {
        what,
        path: path.clone(),
        source,
    };
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io("opening the lock file", e))?;
    f.lock().map_err(|e| io("locking", e))?;
    Ok(f)
}

/// After an attach: the program must be running on `dev`, or the command must not say
/// it attached it.
fn confirm_live(dev: &str, role: Role) -> Result<(), DpError> {
    if live(dev, &dir(dev, role)) {
        Ok(())
    } else {
        Err(DpError::Invalid {
            field: "dev",
            why: format!(
                "the {} was attached to {dev} but is not running there (was the interface \
                 removed meanwhile?)",
                role.name()
            ),
        })
    }
}

/// Attaches the edge to `dev`, or updates its settings if it is attached already.
pub fn attach_edge(dev: &str, s: &EdgeSettings) -> Result<AttachOutcome, DpError> {
    let raw = s.raw()?;
    preflight("csfq dp edge attach", dev)?;
    let _lock = change_lock()?;
    let d = dir(dev, Role::Edge);
    if existing(dev, &d)? {
        check_pinned_table(dev, &d, "the edge", "flows", s.flows)?;
        let mut cfg = open_pinned(&d.join("config"))?;
        let mut a: Array<&mut MapData, EdgeConfigRaw> = typed(&mut cfg, &d.join("config"))?;
        a.set(0, raw, 0)
            .map_err(|e| DpError::kernel("writing the edge configuration", e))?;
        let mut w = open_pinned(&d.join("weights"))?;
        let mut trie = typed(&mut w, &d.join("weights"))?;
        for c in &s.weights {
            insert_weight(&mut trie, &c.key(), milli(c.weight))?;
        }
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = load_flows(Role::Edge, s.flows.unwrap_or(DEFAULT_FLOWS))?;
    set_edge_config(&mut ebpf, &raw)?;
    {
        let mut trie = LpmTrie::try_from(map(&mut ebpf, "weights")).expect("lpm trie");
        for c in &s.weights {
            insert_weight(&mut trie, &c.key(), milli(c.weight))?;
        }
    }
    attach(
        dev,
        Role::Edge,
        s.ingress,
        ebpf,
        &["edge_config", "counters", "flows", "weights"],
    )?;
    confirm_live(dev, Role::Edge)?;
    Ok(AttachOutcome::Attached)
}

/// Attaches the core to `dev`'s egress, or updates its settings if attached already.
pub fn attach_core(dev: &str, s: &CoreSettings) -> Result<AttachOutcome, DpError> {
    let raw = s.raw()?;
    preflight("csfq dp core attach", dev)?;
    let _lock = change_lock()?;
    refuse_beside(dev, Role::Core, Role::May)?;
    let d = dir(dev, Role::Core);
    if existing(dev, &d)? {
        let mut cfg = open_pinned(&d.join("config"))?;
        let mut a: Array<&mut MapData, CoreConfigRaw> = typed(&mut cfg, &d.join("config"))?;
        a.set(0, raw, 0)
            .map_err(|e| DpError::kernel("writing the core configuration", e))?;
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = load(Role::Core, None)?;
    set_core_config(&mut ebpf, &raw)?;
    attach(
        dev,
        Role::Core,
        false,
        ebpf,
        &["core_config", "counters", "core_state"],
    )?;
    confirm_live(dev, Role::Core)?;
    Ok(AttachOutcome::Attached)
}

/// Refuses `role` on `dev` while `other` runs there: a core and MAY on one egress would
/// each drop on its own, by rules that ignore the other's.
fn refuse_beside(dev: &str, role: Role, other: Role) -> Result<(), DpError> {
    if existing(dev, &dir(dev, other))? {
        return Err(DpError::Invalid {
            field: "dev",
            why: format!(
                "{dev} runs csfq's {} already; one queue is judged by one scheme: detach it \
                 first (csfq dp detach --dev {dev}) to attach the {}",
                other.name(),
                role.name()
            ),
        });
    }
    Ok(())
}

/// The flow table pinned in `d` (the edge's, or MAY's: `who`) is this version's (an array
/// of sets) and, if the operator asked for a size (`--{field} N`), of that size: a table
/// cannot be resized in place.
fn check_pinned_table(
    dev: &str,
    d: &Path,
    who: &str,
    field: &'static str,
    asked: Option<u32>,
) -> Result<(), DpError> {
    let info = MapData::from_pin(d.join("flows"))
        .and_then(|m| m.info())
        .map_err(|e| DpError::kernel("reading the flow table's size", e))?;
    if !matches!(info.map_type(), Ok(aya::maps::MapType::Array)) {
        return Err(DpError::Invalid {
            field,
            why: format!(
                "{who} on {dev} was attached by another version of csfq (its flow table is \
                 not this version's); detach it first (csfq dp detach --dev {dev}) and \
                 attach again"
            ),
        });
    }
    let table = info.max_entries();
    if let Some(n) = asked {
        let want = flow_table::sets_for(n) * FLOW_WAYS;
        if table != want {
            return Err(DpError::Invalid {
                field,
                why: format!(
                    "{who} on {dev} has a flow table of {table} entries (--{field} {n} asks \
                     for {want}, whole sets of {FLOW_WAYS}), which cannot be resized in \
                     place; detach it first (csfq dp detach --dev {dev}), which forgets its \
                     flows, or leave out --{field}"
                ),
            });
        }
    }
    Ok(())
}

/// Attaches MAY to `dev`'s egress, or updates its settings if attached already (its
/// table and `v` kept).
pub fn attach_may(dev: &str, s: &MaySettings) -> Result<AttachOutcome, DpError> {
    let raw = s.raw()?;
    preflight("csfq dp may attach", dev)?;
    let _lock = change_lock()?;
    refuse_beside(dev, Role::May, Role::Core)?;
    let d = dir(dev, Role::May);
    if existing(dev, &d)? {
        check_pinned_table(dev, &d, "MAY", "table", s.table)?;
        let mut cfg = open_pinned(&d.join("config"))?;
        let mut a: Array<&mut MapData, MayConfigRaw> = typed(&mut cfg, &d.join("config"))?;
        a.set(0, raw, 0)
            .map_err(|e| DpError::kernel("writing the MAY configuration", e))?;
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = load_flows(Role::May, s.table.unwrap_or(DEFAULT_FLOWS))?;
    set_may_config(&mut ebpf, &raw)?;
    attach(
        dev,
        Role::May,
        false,
        ebpf,
        &["may_config", "counters", "may_state", "may_flows"],
    )?;
    confirm_live(dev, Role::May)?;
    Ok(AttachOutcome::Attached)
}

pub(crate) fn remove_pins(d: &Path) -> std::io::Result<()> {
    // The link first: removing its pin detaches the program.
    let link = d.join("link");
    if link.exists() {
        fs::remove_file(&link)?;
    }
    if let Ok(entries) = fs::read_dir(d) {
        for e in entries.flatten() {
            fs::remove_file(e.path())?;
        }
    }
    fs::remove_dir(d)?;
    // The interface's and the scope's directories too, when nothing else is in them.
    for parent in d.ancestors().skip(1).take(2) {
        if fs::remove_dir(parent).is_err() {
            break;
        }
    }
    Ok(())
}

/// Detaches whatever csfq attached to `dev` (edge, core or both); returns what it removed.
pub fn detach(dev: &str) -> Result<Vec<Role>, DpError> {
    crate::require("csfq dp detach")?;
    let _lock = change_lock()?;
    let mut removed = Vec::new();
    for role in Role::ALL {
        let d = dir(dev, role);
        if d.exists() && matches!(role, Role::LoopIngress | Role::LoopEgress) {
            // A running loop daemon owns these: pulled from under it, it would stop
            // anyway, and its exit would remove what a new daemon had made meanwhile.
            if let Some(l) = crate::loops::read_stats(&d)
                .ok()
                .and_then(|v| v.into_iter().find(|l| l.daemon_running))
            {
                return Err(DpError::Invalid {
                    field: "dev",
                    why: format!(
                        "a {} daemon (pid {}) runs on {dev}: stop it (Ctrl-C, or kill {}); it \
                         removes what it made",
                        role.name(),
                        l.pid,
                        l.pid
                    ),
                });
            }
        }
        if d.exists() {
            // Opening the pinned link first checks it is a link before unpinning it.
            if let Ok(l) = PinnedLink::from_pin(d.join("link")) {
                drop(l);
            }
            remove_pins(&d).map_err(|source| DpError::Io {
                what: "removing",
                path: d.clone(),
                source,
            })?;
            if role == Role::LoopIngress {
                // The shaper a loop ingress left (it removes it itself when it stops).
                if let Ok(mut tc) = crate::htb::Tc::open(ifindex(dev)?) {
                    let _ = tc.del_root(crate::loops::HTB_MAJOR);
                }
            }
            removed.push(role);
        }
    }
    if removed.is_empty() {
        return Err(DpError::NotAttached(dev.to_string()));
    }
    Ok(removed)
}

/// A program's counters and state on one interface.
#[derive(Debug, Clone, Serialize)]
pub struct InterfaceStats {
    /// `host` or `netns-NAME`.
    pub scope: String,
    /// The interface.
    pub interface: String,
    /// Edge or core.
    pub role: Role,
    /// Attached nowhere: its interface or namespace was deleted without `csfq dp detach`
    /// (its counters and state are as they were then; `csfq dp detach --stale` removes it).
    pub stale: bool,
    /// Packets and bytes by what happened to them.
    pub counters: BTreeMap<&'static str, CountJson>,
    /// The edge's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<EdgeStats>,
    /// The core's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core: Option<CoreStats>,
    /// MAY's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may: Option<MayStats>,
    /// The overlay loops at this edge, as their daemon last published them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<Vec<crate::loops::LoopStats>>,
}

/// MAY's state: `v`, the utilization and the table, as of its last packet.
#[derive(Debug, Clone, Serialize)]
pub struct MayStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `v`, the drop probability per unit of `delta`.
    pub v: f64,
    /// The last interval's utilization over `C`: what `utilization_counts` says.
    pub utilization: f64,
    /// `u0`.
    pub target_utilization: f64,
    /// What the utilization counts: `passed` (the bytes MAY passes on, Eq. 3's rate into
    /// the queue, the default) or `arrivals` (every byte, MAY's drops included).
    pub utilization_counts: &'static str,
    /// `Delta`, ns.
    pub interval_ns: u64,
    /// Intervals ended since the attach.
    pub intervals: u64,
    /// Entries in the table, live or idle past `T0` (removed at their flow's next packet,
    /// or evicted by newer ones).
    pub table_entries: u64,
    /// Entries whose flow lost a packet within `T0` of the last interval's end.
    pub table_live: u64,
    /// The table's size.
    pub table_size: u32,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
}

/// A counter.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct CountJson {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

impl From<Count> for CountJson {
    fn from(c: Count) -> Self {
        CountJson {
            packets: c.packets,
            bytes: c.bytes,
        }
    }
}

/// The edge's state.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeStats {
    /// Flows in the table.
    pub flows: u64,
    /// `K`, ns.
    pub k_ns: u64,
    /// What the edge does with IPv4 that cannot carry a label: `pass`, `police` or
    /// `drop`.
    pub unlabelable: &'static str,
    /// `police`: the rate, bit/s (0 otherwise).
    pub police_rate_bps: u64,
    /// `police`: the bucket, bytes (0 otherwise).
    pub police_burst_bytes: u32,
    /// What makes a flow: `5-tuple`, `host-pair` or `source`.
    pub flow_key: &'static str,
    /// The clock Eq. (3) reads: `fine` or `coarse`.
    pub clock: &'static str,
}

/// The core's state: `A`, `F` and `alpha` as of its last packet.
#[derive(Debug, Clone, Serialize)]
pub struct CoreStats {
    /// `C`, bit/s.
    pub capacity_bps: u64,
    /// `A`: the arrival rate, bit/s.
    pub arrival_bps: u64,
    /// `F`: the accepted rate, bit/s.
    pub accepted_bps: u64,
    /// `alpha`: the fair share, bit/s (0: not congested, nothing dropped).
    pub alpha_bps: u64,
    /// The clock it reads: `fine` or `coarse`.
    pub clock: &'static str,
    /// In a congested window.
    pub congested: bool,
    /// The virtual queue now, bytes.
    pub queue_bytes: u64,
    /// The virtual queue's limit, bytes: the shaper's, read at attach unless given.
    pub limit_bytes: u64,
    /// The shaper on the interface as it is now (read where this process runs in the
    /// core's namespace; `None` elsewhere): a rate or limit that differs from the core's
    /// means the shaper changed since the attach, or was overridden.
    pub shaper_now: Option<ShaperNow>,
    /// The interfaces (ifindexes, in the core's namespace) whose packets' labels count;
    /// `None`: every interface's.
    pub trusted_ifindexes: Option<Vec<u32>>,
    /// Each trusted ifindex's interface now, by name (read where this process runs in the
    /// core's namespace; empty elsewhere): `None` for an index no interface has any more
    /// (deleted; one made again under its name has another index, and its labels are not
    /// believed until the core is attached again).
    pub trusted_now: Vec<(u32, Option<String>)>,
}

/// What the shaper in front of which a core runs says now.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ShaperNow {
    /// The root qdisc, in words (`crate::shaper::Shaper::what`).
    pub what: String,
    /// Its rate, bit/s, if it has one.
    pub rate_bps: Option<u64>,
    /// Its queue's limit, bytes, if it has one.
    pub limit_bytes: Option<u64>,
}

pub(crate) fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime into a zeroed struct we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn read_one(scope: &str, dev: &str, role: Role, d: &Path) -> Result<InterfaceStats, DpError> {
    // The loops' programs keep per-loop counts instead (in `loops`).
    let counters = if d.join("counters").exists() {
        read_counters(&open_pinned(&d.join("counters"))?)?
            .into_iter()
            .map(|(c, v)| (c.name(), v.into()))
            .collect()
    } else {
        BTreeMap::new()
    };
    let (mut edge, mut core, mut may, mut loops) = (None, None, None, None);
    match role {
        Role::Edge => {
            let cfg = open_pinned(&d.join("config"))?;
            let a: Array<&MapData, EdgeConfigRaw> = typed(&cfg, &d.join("config"))?;
            let c = a
                .get(&0, 0)
                .map_err(|e| DpError::kernel("reading the edge configuration", e))?;
            // Entries are never emptied, only taken over: the flows in the table are
            // those that entered it less those evicted.
            let entered = |name| counters.get(name).map_or(0, |c: &CountJson| c.packets);
            let n =
                entered(Counter::NewFlow.name()).saturating_sub(entered(Counter::Evicted.name()));
            edge = Some(EdgeStats {
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
                clock: if c.clock == CLOCK_COARSE {
                    "coarse"
                } else {
                    "fine"
                },
            });
        }
        Role::Core => {
            let cfg = open_pinned(&d.join("config"))?;
            let a: Array<&MapData, CoreConfigRaw> = typed(&cfg, &d.join("config"))?;
            let c = a
                .get(&0, 0)
                .map_err(|e| DpError::kernel("reading the core configuration", e))?;
            let st = open_pinned(&d.join("state"))?;
            let s: Array<&MapData, CoreStateRaw> = typed(&st, &d.join("state"))?;
            let s = s
                .get(&0, BPF_F_LOCK)
                .map_err(|e| DpError::kernel("reading the core state", e))?;
            let now = monotonic_ns();
            let queue_bytes = if s.vq_finish_ns > now {
                ((s.vq_finish_ns - now) as u128 * c.capacity_bps as u128 / 8_000_000_000) as u64
            } else {
                0
            };
            core = Some(CoreStats {
                capacity_bps: c.capacity_bps,
                arrival_bps: s.arrival.rate_bps,
                accepted_bps: s.accepted.rate_bps,
                alpha_bps: s.alpha_bps,
                clock: if c.clock == CLOCK_COARSE {
                    "coarse"
                } else {
                    "fine"
                },
                congested: s.congested != 0,
                queue_bytes,
                limit_bytes: u64::from(c.limit_bytes),
                shaper_now: (scope == self::scope())
                    .then(|| crate::shaper::read_shaper(dev).ok())
                    .flatten()
                    .map(|s| ShaperNow {
                        what: s.what,
                        rate_bps: s.rate_bps,
                        limit_bytes: s.limit_bytes,
                    }),
                trusted_ifindexes: (c.trust == crate::abi::TRUST_LISTED)
                    .then(|| c.trusted.iter().copied().take_while(|&i| i != 0).collect()),
                trusted_now: if c.trust == crate::abi::TRUST_LISTED && scope == self::scope() {
                    c.trusted
                        .iter()
                        .copied()
                        .take_while(|&i| i != 0)
                        .map(|i| (i, ifname(i)))
                        .collect()
                } else {
                    Vec::new()
                },
            });
        }
        Role::May => may = Some(read_may(d)?),
        Role::LoopIngress | Role::LoopEgress => loops = Some(crate::loops::read_stats(d)?),
    }
    Ok(InterfaceStats {
        scope: scope.to_string(),
        interface: dev.to_string(),
        role,
        stale: stale(d),
        counters,
        edge,
        core,
        may,
        loops,
    })
}

fn read_may(d: &Path) -> Result<MayStats, DpError> {
    let cfg = open_pinned(&d.join("config"))?;
    let a: Array<&MapData, MayConfigRaw> = typed(&cfg, &d.join("config"))?;
    let c = a
        .get(&0, 0)
        .map_err(|e| DpError::kernel("reading the MAY configuration", e))?;
    let st = open_pinned(&d.join("state"))?;
    let s: Array<&MapData, MayStateRaw> = typed(&st, &d.join("state"))?;
    let s = s
        .get(&0, BPF_F_LOCK)
        .map_err(|e| DpError::kernel("reading the MAY state", e))?;
    let flows = MapData::from_pin(d.join("flows"))
        .map_err(|e| DpError::kernel("opening MAY's table", e))?;
    let table_size = flows
        .info()
        .map_err(|e| DpError::kernel("reading the table's size", e))?
        .max_entries();
    let flows = Map::from_map_data(flows).map_err(|e| DpError::kernel("opening MAY's table", e))?;
    let slots: Array<&MapData, MaySlotRaw> =
        Array::try_from(&flows).map_err(|e| DpError::kernel("opening MAY's table", e))?;
    let (mut entries, mut live) = (0u64, 0u64);
    for i in 0..table_size {
        let slot = slots
            .get(&i, 0)
            .map_err(|e| DpError::kernel("reading MAY's table", e))?;
        if slot.key.family == 0 {
            continue;
        }
        entries += 1;
        if s.last_update_ns.saturating_sub(slot.entry.ts_ns) <= c.timeout_ns {
            live += 1;
        }
    }
    Ok(MayStats {
        capacity_bps: c.capacity_bps,
        v: s.v_q32 as f64 / (1u64 << 32) as f64,
        utilization: s.util_q16 as f64 / 65536.0,
        target_utilization: c.u0_q16 as f64 / 65536.0,
        utilization_counts: if c.passed_only != 0 {
            "passed"
        } else {
            "arrivals"
        },
        interval_ns: c.interval_ns,
        intervals: s.epoch,
        table_entries: entries,
        table_live: live,
        table_size,
        clock: if c.clock == CLOCK_COARSE {
            "coarse"
        } else {
            "fine"
        },
    })
}

/// A directory's entries as (name, path), sorted; none if it cannot be read.
fn entries(p: &Path) -> Vec<(String, PathBuf)> {
    let mut v: Vec<_> = fs::read_dir(p)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    v.sort();
    v
}

/// Counters and state of every program csfq attached, in every scope (only the current
/// one's under `--netns NAME` or `ip netns exec NAME`), sorted; stale ones marked.
pub fn stats() -> Result<Vec<InterfaceStats>, DpError> {
    crate::require("csfq dp stats")?;
    let root = Path::new(BPFFS).join("csfq");
    let only = SCOPE.get();
    let mut out = Vec::new();
    for (scope, sp) in entries(&root) {
        if only.is_some_and(|o| *o != scope) {
            continue;
        }
        for (dev, dp) in entries(&sp) {
            for role in Role::ALL {
                let d = dp.join(role.name());
                if !d.join("link").exists() {
                    continue;
                }
                match read_one(&scope, &dev, role, &d) {
                    Ok(one) => out.push(one),
                    // What is attached nowhere is shown as stale even if this version
                    // cannot read its maps (`detach --stale` removes it); a live one that
                    // cannot be read is an error.
                    Err(_) if stale(&d) => out.push(InterfaceStats {
                        scope: scope.clone(),
                        interface: dev.clone(),
                        role,
                        stale: true,
                        counters: BTreeMap::new(),
                        edge: None,
                        core: None,
                        may: None,
                        loops: None,
                    }),
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(out)
}

/// Removes the pins of every stale attachment, in every scope (only the current one's
/// under `--netns NAME` or `ip netns exec NAME`, as [`stats`] shows; see
/// [`InterfaceStats::stale`]); returns what it removed as (scope, interface, role).
pub fn detach_stale() -> Result<Vec<(String, String, Role)>, DpError> {
    crate::require("csfq dp detach --stale")?;
    let _lock = change_lock()?;
    let root = Path::new(BPFFS).join("csfq");
    let only = SCOPE.get();
    let mut removed = Vec::new();
    for (scope, sp) in entries(&root) {
        if only.is_some_and(|o| *o != scope) {
            continue;
        }
        for (dev, dp) in entries(&sp) {
            for role in Role::ALL {
                let d = dp.join(role.name());
                if d.join("link").exists() && stale(&d) {
                    remove_pins(&d).map_err(|source| DpError::Io {
                        what: "removing stale pins in",
                        path: d.clone(),
                        source,
                    })?;
                    removed.push((scope.clone(), dev.clone(), role));
                }
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coarse clock's virtual queue drains once a tick, so the core refuses it unless a
    /// tick is at most a quarter of the limit's drain time, `K_alpha` and `K_c`, naming the
    /// setting; at 10 Mbit/s with 64 KB (52 ms to drain) it is taken, and written with the
    /// tick.
    #[test]
    fn the_coarse_clock_needs_a_limit_and_windows_of_four_ticks() {
        let tick = tick_ns();
        assert!(tick > 0);
        let ok = CoreSettings {
            coarse_clock: true,
            ..CoreSettings::new(10_000_000)
        };
        let raw = ok.raw().unwrap();
        assert_eq!((raw.clock, raw.tick_ns), (CLOCK_COARSE, tick));
        let field = |s: &CoreSettings| match s.raw() {
            Err(DpError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        // The limit drains in just under four ticks.
        let limit = (4 * tick * ok.rate_bps / 8_000_000_000 - 1) as u32;
        let short = CoreSettings {
            limit_bytes: limit,
            ..ok.clone()
        };
        assert_eq!(field(&short), "limit");
        assert!(CoreSettings {
            coarse_clock: false,
            ..short
        }
        .raw()
        .is_ok());
        let k = 4 * tick - 1;
        assert_eq!(
            field(&CoreSettings {
                k_alpha_ns: k,
                ..ok.clone()
            }),
            "k-alpha"
        );
        assert_eq!(field(&CoreSettings { k_c_ns: k, ..ok }), "k-c");
    }

    /// MAY on the coarse clock: the paper's `Delta` (1 s) and `T0` (64 s) are far above a
    /// hundred ticks; one tick short of a hundred, each is refused, naming its field, and
    /// accepted on the fine clock.
    #[test]
    fn may_on_the_coarse_clock_needs_a_hundred_ticks() {
        let tick = tick_ns();
        assert!(tick > 0);
        let ok = MaySettings {
            coarse_clock: true,
            ..MaySettings::new(10_000_000)
        };
        let raw = ok.raw().unwrap();
        assert_eq!((raw.clock, raw.tick_ns), (CLOCK_COARSE, tick));
        assert_eq!(
            MaySettings::new(10_000_000).raw().unwrap().clock,
            CLOCK_FINE
        );
        let field = |s: &MaySettings| match s.raw() {
            Err(DpError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let short = 100 * tick - 1;
        for (s, want) in [
            (
                MaySettings {
                    interval_ns: short,
                    ..ok.clone()
                },
                "interval",
            ),
            (
                MaySettings {
                    timeout_ns: short,
                    ..ok.clone()
                },
                "timeout",
            ),
        ] {
            assert_eq!(field(&s), want);
            assert!(MaySettings {
                coarse_clock: false,
                ..s
            }
            .raw()
            .is_ok());
        }
    }
}
