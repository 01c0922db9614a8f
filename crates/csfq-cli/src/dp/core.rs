//! `csfq dp core`: the core router's program in front of a link's shaper, and the shaper's
//! rate and limit read from the interface (`link_of`), followed when asked.

use anyhow::Result;
use clap::Subcommand;
use csfq_dp::units::{parse_size, parse_time};
use csfq_dp::CoreSettings;

use super::core_outcome;
use super::cores::{bytes, BottleneckArgs};

#[derive(Subcommand)]
pub(crate) enum CoreCommand {
    /// Attach the core to an interface's egress (again: update its settings).
    Attach {
        #[command(flatten)]
        at: BottleneckArgs,
        /// Queue below which alpha = 0 is kept [default: half the limit].
        #[arg(long, value_parser = parse_size)]
        threshold: Option<u64>,
        /// K_alpha, in tc's time units [default: twice the limit's drain time at the
        /// rate, within 1ms and 1s].
        #[arg(long, value_parser = parse_time)]
        k_alpha: Option<u64>,
        /// K_c, in tc's time units [default: as --k-alpha].
        #[arg(long, value_parser = parse_time)]
        k_c: Option<u64>,
        /// How alpha is estimated: `histogram` (solved from the labels of each window)
        /// or `paper` (alpha *= C/F per congested window, the paper's).
        #[arg(long, default_value = "histogram", value_parser = ["histogram", "paper"])]
        estimator: String,
        #[command(flatten)]
        trust: super::cores::TrustArgs,
        /// The clock the core reads: `fine` (bpf_ktime_get_ns), `coarse` (the kernel's
        /// tick counter, cheaper; the virtual queue then drains once a tick, so a tick must
        /// be at most a quarter of the limit's drain time, K_alpha and K_c) or `auto`, the
        /// coarse one where a tick is that short, else the fine one (`csfq dp stats` shows
        /// which runs; README "The programs' clock").
        #[arg(long, default_value = "auto", value_parser = super::clock_parser())]
        clock: csfq_dp::Clock,
        /// Stay in the foreground and follow the shaper: read IF's root qdisc every
        /// --follow-interval and, when its rate or limit changes, update the core with
        /// them (and the K_alpha, K_c and threshold that follow, where not given), saying
        /// so. Values given on the command line stay. A trusted interface deleted and made
        /// again (another index) is trusted again. Stops on Ctrl-C or SIGTERM, leaving the
        /// core attached, or when the core is detached.
        #[arg(long)]
        follow: bool,
        /// How often --follow reads the shaper, in tc's time units.
        #[arg(long, default_value = "1s", value_parser = parse_time, requires = "follow")]
        follow_interval: u64,
    },
}

/// The link's rate C and the bytes its queue holds, for a program in front of the shaper
/// on `dev`: each as given, else read from the shaper (csfq_dp::shaper). A value given
/// that differs from the shaper's is kept, with a warning; one neither given nor readable
/// is an error that says what was found. Without `need_limit` (MAY) the limit is 0.
pub(crate) fn link_of(
    dev: &str,
    rate: Option<u64>,
    limit: Option<u64>,
    need_limit: bool,
) -> Result<(u64, u64)> {
    let shaper = match csfq_dp::read_shaper(dev) {
        Ok(s) => Some(s),
        Err(e @ csfq_dp::SysError::NoSuchInterface(_)) => return Err(e.into()),
        Err(e) if rate.is_none() || (need_limit && limit.is_none()) => {
            return Err(anyhow::Error::new(e).context(format!(
                "reading the shaper on {dev} (give {} to attach without it)",
                if need_limit {
                    "--rate and --limit"
                } else {
                    "--rate"
                }
            )))
        }
        Err(_) => None,
    };
    let what = shaper.as_ref().map_or("?".to_string(), |s| s.what.clone());
    let pick = |given: Option<u64>,
                found: Option<u64>,
                flag: &str,
                show: fn(u64) -> String|
     -> Result<u64> {
        match (given, found) {
            (Some(g), Some(f)) if g != f => {
                eprintln!(
                    "warning: --{flag} {} on {dev}, whose root qdisc ({what}) has {}: the \
                     core models a link that is not there (leave out --{flag} to use the \
                     qdisc's)",
                    show(g),
                    show(f)
                );
                Ok(g)
            }
            (Some(g), _) => Ok(g),
            (None, Some(f)) => Ok(f),
            (None, None) => anyhow::bail!(
                "the root qdisc on {dev} ({what}) gives no {}: give --{flag} (csfq reads \
                 tbf, htb with a default class, bfifo and pfifo)",
                if flag == "rate" { "rate" } else { "byte limit" }
            ),
        }
    };
    let rate = pick(
        rate,
        shaper.as_ref().and_then(|s| s.rate_bps),
        "rate",
        |v| format!("{} Mbit/s", v as f64 / 1e6),
    )?;
    if !need_limit {
        return Ok((rate, 0));
    }
    let limit = pick(
        limit,
        shaper.as_ref().and_then(|s| s.limit_bytes),
        "limit",
        |v| format!("{v} bytes"),
    )?;
    Ok((rate, limit))
}

/// `csfq dp core attach --follow`: every `interval_ns`, reads the shaper on `dev` and
/// the indexes of the trusted interfaces' names; when either changes, updates the core
/// with `settings()` (which reads the shaper and resolves the names again, as the attach
/// did). Returns on Ctrl-C or SIGTERM, or once the core is no longer attached.
fn follow_shaper(
    dev: &str,
    mut current: CoreSettings,
    interval_ns: u64,
    settings: impl Fn() -> Result<CoreSettings>,
) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static STOP: AtomicBool = AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed));
    let names: Vec<String> = match &current.trust {
        csfq_dp::CoreTrust::Interfaces(n) => n.clone(),
        csfq_dp::CoreTrust::Any => Vec::new(),
    };
    // What the core depends on: the shaper's rate and limit, each trusted name's index.
    let read = || {
        let shaper = csfq_dp::read_shaper(dev)
            .ok()
            .map(|s| (s.rate_bps, s.limit_bytes));
        let trusted: Vec<Option<u32>> = names.iter().map(|n| csfq_dp::ifindex(n).ok()).collect();
        (shaper, trusted)
    };
    let mut seen = read();
    eprintln!(
        "following the shaper on {dev}{} every {} ms (Ctrl-C stops; the core stays)",
        if names.is_empty() {
            ""
        } else {
            " and the trusted interfaces"
        },
        interval_ns / 1_000_000
    );
    let step = std::time::Duration::from_millis(50);
    loop {
        let wake = std::time::Instant::now() + std::time::Duration::from_nanos(interval_ns);
        while std::time::Instant::now() < wake {
            if STOP.load(Ordering::Relaxed) {
                eprintln!("stopped following; the core stays on {dev}");
                return Ok(());
            }
            std::thread::sleep(step);
        }
        if !csfq_dp::is_attached(dev, csfq_dp::Role::Core) {
            eprintln!("the core on {dev} was detached: no longer following");
            return Ok(());
        }
        let now = read();
        if now == seen {
            continue;
        }
        let (shaper_changed, trust_changed) = (now.0 != seen.0, now.1 != seen.1);
        seen = now.clone();
        if now.0.is_none() {
            eprintln!("warning: no shaper to read on {dev}: the core keeps its settings");
            continue;
        }
        let gone: Vec<&str> = names
            .iter()
            .zip(&now.1)
            .filter(|(_, i)| i.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        if !gone.is_empty() {
            eprintln!(
                "warning: trusted interface(s) {} gone: their labels are not believed until \
                 they are back; the core keeps its settings",
                gone.join(", ")
            );
            continue;
        }
        let s = match settings() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("warning: the core keeps its settings: {e:#}");
                continue;
            }
        };
        if s == current && !trust_changed {
            continue;
        }
        csfq_dp::attach_core(dev, &s)?;
        if shaper_changed {
            eprintln!(
                "the shaper on {dev} changed: the core now has C = {} Mbit/s, limit {} \
                 bytes, K_alpha {:.1} ms, K_c {:.1} ms",
                s.rate_bps as f64 / 1e6,
                s.limit_bytes,
                s.k_alpha_ns as f64 / 1e6,
                s.k_c_ns as f64 / 1e6
            );
        }
        if trust_changed {
            let now: Vec<String> = names
                .iter()
                .zip(&now.1)
                .map(|(n, i)| format!("{n} = ifindex {}", i.unwrap_or(0)))
                .collect();
            eprintln!("the trusted interfaces are now {}", now.join(", "));
        }
        current = s;
    }
}

/// Runs `csfq dp core attach`.
pub(crate) fn run(cmd: CoreCommand) -> Result<()> {
    let CoreCommand::Attach {
        at,
        threshold,
        k_alpha,
        k_c,
        estimator,
        trust,
        clock,
        follow,
        follow_interval,
    } = cmd;
    let settings = || -> Result<CoreSettings> {
        let (rate, limit) = at.link()?;
        let mut s = CoreSettings::with_limit(rate, limit);
        s.threshold_bytes = threshold.map(|t| bytes("threshold", t)).transpose()?;
        s.k_alpha_ns = k_alpha.unwrap_or(s.k_alpha_ns);
        s.k_c_ns = k_c.or(k_alpha).unwrap_or(s.k_c_ns);
        s.estimator = if estimator == "paper" {
            csfq_algo::csfq::Estimator::Paper
        } else {
            csfq_algo::csfq::Estimator::Histogram
        };
        s.trust = trust.trust();
        s.drop_unparsed = trust.drop_unparsed();
        s.clock = clock;
        Ok(s)
    };
    let s = settings()?;
    core_outcome(
        csfq_dp::attach_core(&at.dev, &s)?,
        "core",
        &at.dev,
        &s.trust,
    );
    if follow {
        follow_shaper(&at.dev, s, follow_interval, settings)?;
    }
    Ok(())
}
