//! `csfq dp loop`: the overlay loops' ingress and egress daemons (they run until stopped
//! and remove what they made).

use anyhow::Result;
use clap::Subcommand;
use csfq_dp::units::{parse_rate, parse_time};

#[derive(Subcommand)]
pub(crate) enum LoopCommand {
    /// The ingress edge: an htb class per loop on IF (towards the interior) at the rate
    /// lambda the loop's controller sets every tau, and a control message per loop every
    /// tau, in band. IF must have no root qdisc of its own. The defaults are the overlay
    /// paper's (Section 7), with a full-size frame as its packet.
    Ingress {
        /// The interface towards the interior.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// The egress daemon's address.
        #[arg(long, value_name = "ADDR:PORT")]
        egress: std::net::SocketAddr,
        /// A loop: the destinations it carries, and its service:
        /// PREFIX/LEN[,assured=RATE[,gamma=G]] or PREFIX/LEN,leased=RATE. Repeat for more
        /// loops, in the same order as at the egress.
        #[arg(long = "loop", value_name = "SPEC", required = true)]
        loops: Vec<csfq_dp::loops::LoopSpec>,
        /// The rate of IF, the most a loop may get, in tc's units (e.g. 100mbit).
        #[arg(long, value_parser = parse_rate)]
        rate: u64,
        /// tau: how often the ingress sends a control message and measures its rate, in
        /// tc's time units.
        #[arg(long, default_value = "10ms", value_parser = parse_time)]
        tau: u64,
        /// sigma, the packet the thresholds and the increase are counted in, bytes.
        #[arg(long, default_value_t = 1514)]
        packet_bytes: u32,
        /// Each loop's ingress queue, packets.
        #[arg(long, default_value_t = 1000)]
        queue: u32,
        /// Stop after this long, in tc's time units (default: until Ctrl-C or SIGTERM).
        #[arg(long, value_parser = parse_time)]
        duration: Option<u64>,
    },
    /// The egress edge: counts each loop's bytes arriving on IF (from the interior) and
    /// answers the ingress every interval T with the loop's output rate mu and its
    /// accumulation.
    Egress {
        /// The interface from the interior.
        #[arg(long, value_name = "IF")]
        dev: String,
        /// Where control messages come to.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: std::net::SocketAddr,
        /// A loop's destination prefix (PREFIX/LEN, options ignored), in the same order
        /// as at the ingress.
        #[arg(long = "loop", value_name = "SPEC", required = true)]
        loops: Vec<csfq_dp::loops::LoopSpec>,
        /// T: the measurement interval (the ingress's tau), in tc's time units.
        #[arg(long, default_value = "10ms", value_parser = parse_time)]
        interval: u64,
        /// Stop after this long, in tc's time units (default: until Ctrl-C or SIGTERM).
        #[arg(long, value_parser = parse_time)]
        duration: Option<u64>,
    },
}

/// Runs `csfq dp loop ingress` or `egress` until interrupted.
pub(crate) fn run(cmd: LoopCommand) -> Result<()> {
    static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| STOP.store(true, std::sync::atomic::Ordering::Relaxed));
    let ns = std::time::Duration::from_nanos;
    let say = |line: &str| eprintln!("{line}");
    match cmd {
        LoopCommand::Ingress {
            dev,
            egress,
            loops,
            rate,
            tau,
            packet_bytes,
            queue,
            duration,
        } => {
            let s = csfq_dp::loops::IngressSettings {
                dev: dev.clone(),
                egress,
                loops,
                tau: ns(tau),
                max_rate_bps: rate,
                packet_bytes,
                queue_packets: queue,
                duration: duration.map(ns),
            };
            eprintln!(
                "csfq loop ingress on {dev}: {} loop(s) to {egress}",
                s.loops.len()
            );
            csfq_dp::loops::run_ingress(&s, &STOP, say)?;
            println!("csfq loop ingress on {dev} stopped; its htb and program removed");
        }
        LoopCommand::Egress {
            dev,
            listen,
            loops,
            interval,
            duration,
        } => {
            let s = csfq_dp::loops::EgressSettings {
                dev: dev.clone(),
                listen,
                loops,
                interval: ns(interval),
                duration: duration.map(ns),
            };
            eprintln!(
                "csfq loop egress on {dev}: {} loop(s), listening on {listen}",
                s.loops.len()
            );
            csfq_dp::loops::run_egress(&s, &STOP, say)?;
            println!("csfq loop egress on {dev} stopped; its program removed");
        }
    }
    Ok(())
}
