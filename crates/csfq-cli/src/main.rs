//! `csfq`: run scenarios, reproduce the papers' experiments, compute max-min allocations,
//! measure the simulator's speed, and run CSFQ on real interfaces (`csfq dp`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use csfq_cli::{bench, compare, discipline_parser, dp, reproduce, run};
use csfq_sim::DisciplineKind;

/// `csfq --version`: the package's version and the commit it was built from, marked
/// `modified` when tracked files differed from it (`unknown` outside a git work tree, where
/// vergen writes a placeholder).
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let sha = env!("VERGEN_GIT_SHA");
    format!(
        "{} (commit {}{})",
        env!("CARGO_PKG_VERSION"),
        if sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            sha
        } else {
            "unknown"
        },
        if env!("VERGEN_GIT_DIRTY") == "true" {
            ", modified"
        } else {
            ""
        }
    )
});

/// Core-stateless fair queueing: simulator and experiments.
#[derive(Parser)]
#[command(name = "csfq", version = VERSION.as_str(), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file: per-flow table, fairness summary, CSV, JSON and a plot.
    Run {
        /// The scenario (TOML).
        scenario: PathBuf,
        /// Where to write flows.csv, delays.csv, summary.json, throughput.svg and throughput.png (and
        /// trace.pcapng) [default: out/NAME].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Seed, overriding the file's.
        #[arg(long)]
        seed: Option<u64>,
        /// Run every link with this discipline instead of the file's.
        #[arg(long, value_parser = discipline_parser())]
        discipline: Option<DisciplineKind>,
        /// Write every packet that crosses this link (both directions; its index in the
        /// file or its routers as A-B; repeatable) to OUT/trace.pcapng, labels in the IPv4
        /// Identification field as the dataplane writes them.
        #[arg(long, value_name = "LINK")]
        pcap: Vec<String>,
        /// The most the trace file may hold (bytes; K, M, G suffixes are powers of 1024):
        /// past it the trace stops, whole, and the run goes on [default: 1G].
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        pcap_limit: Option<u64>,
        /// Print summary.json (the report, with each flow's reference shares) to standard
        /// output instead of the tables.
        #[arg(long)]
        json: bool,
        /// Run even if the run is estimated to take more than a day (from each flow's
        /// share, packet size and duration).
        #[arg(long)]
        long: bool,
        /// Every column of the per-flow table: on a terminal narrower than the table
        /// (or COLUMNS) the least needed columns are left out, and said so.
        #[arg(long)]
        wide: bool,
        /// Which figure of the flows' throughput to draw: the SVG and a PNG from it, the
        /// SVG alone, or none (the tables only, for sweeps and scripts).
        #[arg(long, value_enum, default_value_t = run::Figure::Png)]
        figure: run::Figure,
    },
    /// Reproduce a published experiment beside the paper's numbers.
    Reproduce {
        /// Experiment id (see --list).
        #[arg(required_unless_present_any = ["list", "all"], conflicts_with_all = ["list", "all"])]
        id: Option<String>,
        /// List the experiments.
        #[arg(long, conflicts_with = "all")]
        list: bool,
        /// Run every experiment and write DIR/report.md and DIR/report.html [default DIR:
        /// out/report].
        #[arg(long)]
        all: bool,
        /// Where to write results.csv, summary.json and the plot [default:
        /// out/reproduce/ID].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Judge the verdicts at one seed only (the same as --seeds S).
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// The seeds each verdict is judged over, as a range or a list ("1-8", "1,3,5"):
        /// every run is repeated at each, and each verdict is the mean, with the seeds'
        /// range beside it [default: 1-8].
        #[arg(long, value_parser = parse_seeds)]
        seeds: Option<SeedList>,
        /// Print the experiment's summary.json (verdicts, notes, numbers) to standard output
        /// instead of the table.
        #[arg(long, conflicts_with_all = ["list", "all"])]
        json: bool,
    },
    /// Compare two reproductions' verdicts (two `reproduce --all` directories, or two of one
    /// experiment): which moved, by how many standard errors of the difference of their
    /// means over the seeds, and which changed outcome.
    Compare {
        /// The reproduction before (e.g. docs/report).
        old: PathBuf,
        /// The reproduction after.
        new: PathBuf,
        /// The standard errors of the difference a move may span and count as the seeds'
        /// noise.
        #[arg(long, default_value_t = 2.0, value_parser = positive_finite)]
        k: f64,
        /// Print every verdict compared as JSON instead of the table of those that moved.
        #[arg(long)]
        json: bool,
    },
    /// Campaigns are the Python package's: `python3 -m csfq sweep` (this says so).
    #[command(hide = true, disable_help_flag = true)]
    Sweep {
        /// Whatever was given.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print the exact max-min fair allocation of a scenario's flows (TCP flows greedy).
    Maxmin {
        /// The scenario (TOML).
        scenario: PathBuf,
        /// Print the allocations as JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Measure simulator speed: events and packets per second on csfq-fig3b and csfq-fig3a.
    Bench {
        /// Runs per measurement (the fastest counts).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Also run 1 UDP + 999 TCP flows over a 1 Gbps link for 10 s (FIFO, CSFQ, DRR).
        #[arg(long)]
        large: bool,
        /// Instead: FLOWS long-lived TCP flows through one bottleneck under FIFO, CSFQ and
        /// DRR, each in its own process: wall time, events/s and peak memory.
        #[arg(long, value_name = "FLOWS", value_parser = clap::value_parser!(u32).range(1..=csfq_sim::config::MAX_FLOWS as i64), conflicts_with = "large")]
        scale: Option<u32>,
        /// The scale run's bottleneck, Gbit/s. Below about 0.8 Mbit/s per flow its buffer
        /// (10 ms of it) cannot hold every flow's first packet, and the flows whose first
        /// packets are dropped send nothing more until TCP's 1 s initial timeout (the table
        /// counts the flows served).
        #[arg(long, value_name = "GBPS", default_value_t = 100.0, requires = "scale", value_parser = scale_gbps)]
        scale_gbps: f64,
        /// The scale run's simulated seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 1.0, requires = "scale", value_parser = scale_seconds)]
        scale_seconds: f64,
        /// Run one discipline of the scale benchmark in this process (how `--scale` runs
        /// each).
        #[arg(long, hide = true, requires = "scale", value_parser = discipline_parser())]
        scale_one: Option<DisciplineKind>,
        /// Run the scale benchmark even if each of its runs is estimated to take more than
        /// a day.
        #[arg(long, requires = "scale")]
        long: bool,
    },
    /// The eBPF dataplane on real interfaces: attach, stats, detach (needs root).
    Dp(dp::Dp),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell), e.g.
    /// `csfq completions bash > /etc/bash_completion.d/csfq`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `csfq man > /usr/local/share/man/man1/csfq.1`;
    /// with `--dir`, write it and one page per subcommand (`csfq-run.1`,
    /// `csfq-dp-core-attach.1`, ...) there.
    Man {
        /// Write every page into this directory (made if missing) instead of printing the
        /// top-level one.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// The seeds of `--seeds`.
#[derive(Debug, Clone)]
struct SeedList(Vec<u64>);

/// Seeds as "A-B" (a range, both ends included) or "A,B,C": at most 1000 of them, no
/// repeats, in increasing order as given.
/// A size in bytes: a whole number, optionally followed by K, M or G (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("`{s}`: expected a size like 500M or 2G")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{s}`: expected a size like 500M or 2G"))?;
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{s}`: a size between 1 byte and 16 EiB"))
}

fn parse_seeds(s: &str) -> Result<SeedList, String> {
    const MAX: u64 = 1000;
    let num = |t: &str| {
        let t = t.trim();
        if t.is_empty() {
            return Err("a seed is missing: give a range as 1-8 or a list as 1,3,5".to_string());
        }
        if !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "`{t}` is not a seed (a whole number from 0 to {})",
                u64::MAX
            ));
        }
        t.parse::<u64>().map_err(|_| {
            format!(
                "`{t}` is not a seed (a whole number from 0 to {})",
                u64::MAX
            )
        })
    };
    if s.contains('-') && s.contains(',') {
        return Err("give a range (1-8) or a list (1,3,5), not both".into());
    }
    let seeds: Vec<u64> = match s.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(format!("the range {a}-{b} is empty"));
            }
            if b - a >= MAX {
                return Err(format!("{} seeds; at most {MAX}", u128::from(b - a) + 1));
            }
            (a..=b).collect()
        }
        None => s.split(',').map(num).collect::<Result<_, _>>()?,
    };
    if seeds.len() as u64 > MAX {
        return Err(format!("{} seeds; at most {MAX}", seeds.len()));
    }
    if seeds.windows(2).any(|w| w[1] <= w[0]) {
        return Err("list the seeds in increasing order, each once".into());
    }
    Ok(SeedList(seeds))
}

/// A positive, finite number.
fn positive_finite(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("expected a positive number".into()),
    }
}

/// The scale run's bottleneck, Gbit/s: from 1.2 Mbit/s (its buffer, 10 ms of it, then
/// holds the 1500 bytes a link's buffer must) to 1 Tbit/s (the most a scenario's link
/// takes).
fn scale_gbps(s: &str) -> Result<f64, String> {
    let v = positive_finite(s)?;
    if (bench::MIN_SCALE_GBPS..=bench::MAX_SCALE_GBPS).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "expected {} to {} Gbit/s (1.2 Mbit/s, whose 10 ms buffer holds 1500 bytes, to a link's most, 1 Tbit/s)",
            bench::MIN_SCALE_GBPS,
            bench::MAX_SCALE_GBPS
        ))
    }
}

/// The scale run's simulated seconds: what a scenario's duration takes.
fn scale_seconds(s: &str) -> Result<f64, String> {
    let v = positive_finite(s)?;
    if bench::SCALE_SECONDS.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "expected {} to {} seconds",
            bench::SCALE_SECONDS.start(),
            bench::SCALE_SECONDS.end()
        ))
    }
}

fn main() -> ExitCode {
    // A closed pipe (`csfq run ... | head -1`) ends the program quietly, as it does any
    // Unix filter, instead of a panic in `println!`. Commands write their files before
    // they print, so nothing is lost.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            out,
            seed,
            discipline,
            pcap,
            pcap_limit,
            json,
            long,
            wide,
            figure,
        } => run::run(
            &scenario,
            run::RunOptions {
                out,
                seed,
                discipline,
                pcap,
                pcap_limit: pcap_limit.unwrap_or(run::DEFAULT_PCAP_LIMIT),
                json,
                long,
                wide,
                figure,
            },
        ),
        Command::Compare { old, new, k, json } => compare::run(&old, &new, k, json),
        Command::Reproduce {
            id,
            list,
            all,
            out,
            seed,
            seeds,
            json,
        } => {
            let seeds = match (seed, seeds) {
                (Some(s), _) => vec![s],
                (None, Some(v)) => v.0,
                (None, None) => csfq_papers::DEFAULT_SEEDS.collect(),
            };
            if list {
                reproduce::list();
                Ok(())
            } else if all {
                reproduce::reproduce_all(out, &seeds)
            } else {
                reproduce::reproduce(id.as_deref().unwrap_or_default(), out, &seeds, json)
            }
        }
        Command::Maxmin { scenario, json } => run::maxmin(&scenario, json),
        Command::Sweep { args } => Err(anyhow::anyhow!(
            "campaigns are the Python package's: run `python3 -m csfq sweep{}` (pip install \
             ./python from this repository; `python3 -m csfq sweep --help` for its options)",
            args.iter().map(|a| format!(" {a}")).collect::<String>()
        )),
        Command::Bench {
            repeat,
            large,
            scale,
            scale_gbps,
            scale_seconds,
            scale_one,
            long,
        } => match scale {
            Some(flows) => {
                let sc = bench::Scale {
                    flows,
                    gbps: scale_gbps,
                    seconds: scale_seconds,
                };
                match scale_one {
                    Some(d) => bench::scale_child(sc, d),
                    None => bench::bench_scale(sc, long),
                }
            }
            None => bench::bench(repeat, large),
        },
        Command::Dp(args) => dp::dp(args),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "csfq", &mut std::io::stdout());
            Ok(())
        }
        Command::Man { dir: None } => {
            // As `generate_to` writes it: no csfq-help(1), which has no page.
            let cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .map_err(anyhow::Error::from)
        }
        Command::Man { dir: Some(dir) } => std::fs::create_dir_all(&dir)
            .and_then(|()| clap_mangen::generate_to(<Cli as clap::CommandFactory>::command(), &dir))
            .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<run::Interrupted>().is_some() => {
            eprintln!("{e}");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
