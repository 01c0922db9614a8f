//! TUF's TCP tagger at the source (`bpf/tuf_source.bpf.c`), on a sending host's egress:
//! each packet of a local TCP socket is tagged `T(B(X_n) / w)` with Padhye's throughput
//! from the kernel's own round trip for the socket (`csfq_algo::tuf_source`, the TUF
//! report's Section 3.4.1). Its edge keeps these tags (`EdgeSettings::keep_source_tags`)
//! and tags the rest; its core is the TUF filter.

use aya::maps::{HashMap, MapData};

use crate::abi::{FixedPadhyeParams, TufSourceConfigRaw, TufSourceSocketRaw};
use crate::attach::AttachOutcome;
use crate::error::{AttachError, InvalidSetting, SysError};
use crate::loader::{configure, load, reconfigure};
use crate::pins::{attach, confirm_live, dir, existing, open_pinned, preflight, read_entry};
use crate::program::{nothing_after, nothing_before, Pinned, Program};
use crate::report::{InterfaceStats, TufSourceSocket, TufSourceStats};
use crate::role::Role;
use crate::settings::milli;
use crate::sys::{change_lock, ip_link_details};
use csfq_algo::tuf_source::MAX_WINDOW;

/// The source tagger's program.
pub(crate) static TUF_SOURCE: Program = tagger("csfq_tuf_source");

/// The program in the same object that tags from inputs in a test packet (the tests'
/// bit-for-bit check: `BPF_PROG_TEST_RUN` gives a program no socket); its maps are the
/// tagger's.
pub(crate) static TUF_SOURCE_VECTOR: Program = tagger("csfq_tuf_source_vector");

static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/tuf_source.bpf.o"));

const fn tagger(function: &'static str) -> Program {
    Program {
        role: Role::TufSource,
        object: OBJECT,
        function,
        config: "tuf_source_config",
        flows: None,
        seeded: false,
        pins: &[
            ("tuf_source_config", "config"),
            ("counters", "counters"),
            ("tuf_source_sockets", "sockets"),
        ],
        read,
        before_detach: nothing_before,
        after_detach: nothing_after,
    }
}

/// The source tagger's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TufSourceSettings {
    /// Padhye's `b`, segments acknowledged per ACK (1 to 64). Default 2: a Linux receiver
    /// acknowledges every second full segment (RFC 1122's delayed ACKs; Padhye's own).
    pub per_ack: u32,
    /// Padhye's `W_max`, segments, 1 to 2^24 (`None`: no cap; a Linux receiver's window is
    /// bounded by its buffers, megabytes, far above the rates tags tell apart on these
    /// paths).
    pub max_window: Option<u32>,
    /// Linux's minimum RTO, ns: `t0 = RTT + rto_min` (Linux's RTO while the round trip
    /// varies less than this; `bpf_tcp_sock` carries no `rttvar`). Default 200 ms, the
    /// kernel's `TCP_RTO_MIN`; 1 ms prices a timeout at about a round trip (README: with
    /// it, kernel TCPs and a UDP got their shares; with 200 ms the TCPs took the UDP's).
    pub rto_min_ns: u64,
    /// The flows' weight `w` (tags `T(B / w)`), 0.001 to 1e6. Default 1.
    pub weight: f64,
}

impl Default for TufSourceSettings {
    fn default() -> Self {
        TufSourceSettings {
            per_ack: 2,
            max_window: None,
            rto_min_ns: 200_000_000,
            weight: 1.0,
        }
    }
}

impl TufSourceSettings {
    /// The program's configuration, after the ranges the command line offers.
    pub(crate) fn raw(&self) -> Result<TufSourceConfigRaw, InvalidSetting> {
        if !(1..=64).contains(&self.per_ack) {
            return Err(InvalidSetting::new(
                "per-ack",
                format!("{} is out of range: must be from 1 to 64", self.per_ack),
            ));
        }
        if let Some(w) = self.max_window {
            if !(1..=MAX_WINDOW).contains(&w) {
                return Err(InvalidSetting::new(
                    "max-window",
                    format!(
                        "{w} segments is out of range: must be from 1 to {MAX_WINDOW} (leave it \
                         out for no cap)"
                    ),
                ));
            }
        }
        if !(1_000_000..=10_000_000_000).contains(&self.rto_min_ns) {
            return Err(InvalidSetting::new(
                "rto-min",
                format!(
                    "{} ms is out of range: must be from 1ms to 10s",
                    self.rto_min_ns as f64 / 1e6
                ),
            ));
        }
        if !(self.weight >= 0.001 && self.weight <= 1e6) {
            return Err(InvalidSetting::new(
                "weight",
                format!("{} is out of range: must be from 0.001 to 1e6", self.weight),
            ));
        }
        Ok(TufSourceConfigRaw {
            params: FixedPadhyeParams::new(
                self.per_ack,
                self.max_window.unwrap_or(0),
                (self.rto_min_ns / 1000) as u32,
                milli(self.weight),
            ),
        })
    }
}

/// Attaches the source tagger to `dev`'s egress, or updates its settings if attached
/// already (each socket's counter kept).
pub fn attach_tuf_source(dev: &str, s: &TufSourceSettings) -> Result<AttachOutcome, AttachError> {
    let raw = s.raw()?;
    preflight("csfq dp tuf-source attach", dev)?;
    let _lock = change_lock()?;
    let d = dir(dev, Role::TufSource);
    if existing(dev, &d)? {
        reconfigure(&TUF_SOURCE, &d, &raw)?;
        return Ok(AttachOutcome::Updated);
    }
    let mut ebpf = load(&TUF_SOURCE, None)?;
    configure(&mut ebpf, &TUF_SOURCE, &raw)?;
    attach(dev, &TUF_SOURCE, false, ebpf)?;
    confirm_live(dev, Role::TufSource)?;
    Ok(AttachOutcome::Attached)
}

/// The most segments `dev`'s packets may carry (`gso_max_segs`, as `ip -d link` shows it;
/// `None` if it cannot be read). Linux's TCP builds GSO super-packets whatever the
/// interface's offloads (segmenting them in software after tc), and the tagger leaves them
/// untagged: above 1, not every packet is tagged.
pub fn segments_per_packet(dev: &str) -> Option<u32> {
    let text = ip_link_details(dev)?;
    let mut words = text.split_whitespace();
    words.find(|w| *w == "gso_max_segs")?;
    words.next()?.parse().ok()
}

/// Sockets listed in the stats at most (those with the most packets tagged).
const LISTED: usize = 64;

/// Reads the settings and the sockets tagged.
fn read(p: &Pinned<'_>, stats: &mut InterfaceStats) -> Result<(), SysError> {
    let c: TufSourceConfigRaw = read_entry(
        &TUF_SOURCE.config_pin(p.dir),
        0,
        "the TUF source tagger's configuration",
    )?;
    let path = p.path(TUF_SOURCE.pin_of("tuf_source_sockets"));
    let m = open_pinned(&path)?;
    let h: HashMap<&MapData, u64, TufSourceSocketRaw> = crate::pins::typed(&m, &path)?;
    let mut sockets: Vec<TufSourceSocket> = h
        .iter()
        .filter_map(Result::ok)
        .map(|(cookie, f)| TufSourceSocket {
            cookie,
            n: f.n,
            srtt8_us: f.srtt8_us,
            srtt_us: f64::from(f.srtt8_us) / 8.0,
            mss: f.mss,
            tag: f.tag,
            tag_bps: csfq_algo::tuf::rate_of_tag(f.tag.min(csfq_algo::tuf::TAGS as u32 - 1) as u16),
            packets: f.packets,
        })
        .collect();
    let total = sockets.len();
    sockets.sort_by(|a, b| b.packets.cmp(&a.packets).then(a.cookie.cmp(&b.cookie)));
    sockets.truncate(LISTED);
    let q = c.params;
    stats.tuf_source = Some(TufSourceStats {
        per_ack: q.per_ack,
        max_window: (q.max_window != 0).then_some(q.max_window),
        rto_min_us: q.rto_min_us,
        weight: f64::from(q.weight_milli) / 1000.0,
        sockets_total: total,
        sockets,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InvalidSetting;

    /// The defaults give Padhye's constants for b = 2; each setting out of range is
    /// refused naming its flag.
    #[test]
    fn settings_are_checked_naming_the_field() {
        let raw = TufSourceSettings::default().raw().unwrap();
        assert_eq!(raw.params, FixedPadhyeParams::new(2, 0, 200_000, 1000));
        for (s, field) in [
            (
                TufSourceSettings {
                    per_ack: 0,
                    ..Default::default()
                },
                "per-ack",
            ),
            (
                TufSourceSettings {
                    max_window: Some(0),
                    ..Default::default()
                },
                "max-window",
            ),
            (
                TufSourceSettings {
                    max_window: Some(MAX_WINDOW + 1),
                    ..Default::default()
                },
                "max-window",
            ),
            (
                TufSourceSettings {
                    rto_min_ns: 999_999,
                    ..Default::default()
                },
                "rto-min",
            ),
            (
                TufSourceSettings {
                    weight: f64::NAN,
                    ..Default::default()
                },
                "weight",
            ),
        ] {
            match s.raw() {
                Err(InvalidSetting { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
