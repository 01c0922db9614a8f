//! Watching packets cross chosen ports: a [`Tracer`] is told of every packet a traced port
//! starts to send and every packet it drops, with the simulated time.
//!
//! Tracing is off unless [`crate::Simulation::trace`] is called; an untraced port costs one
//! branch per packet. [`crate::observe::pcap::PcapTrace`] writes what it is told as a pcapng file.

use csfq_algo::{DropReason, Nanos};

use crate::config::Scenario;
use crate::packet::SimPacket;

/// Receives the packets of traced ports, in simulated-time order.
pub trait Tracer: Send + std::fmt::Debug {
    /// `port` starts sending `p` at `now` (its first bit leaves; labels as written).
    fn sent(&mut self, now: Nanos, port: usize, p: &SimPacket);

    /// `port` dropped `p` at `now` (on arrival, or pushed out or dropped at the head later).
    fn dropped(&mut self, now: Nanos, port: usize, p: &SimPacket, reason: DropReason);

    /// The run is over (or stopped): flush; returns what was recorded, or the first error
    /// met.
    fn finish(&mut self) -> std::io::Result<TraceEnd>;
}

/// What a finished trace holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEnd {
    /// Packets recorded (sent and dropped).
    pub packets: u64,
    /// The simulated time it stopped recording at, if it reached its size limit before the
    /// run ended: packets after that are not in it.
    pub stopped_at: Option<Nanos>,
}

/// [`crate::Simulation::trace`] was given a port it cannot trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CannotTrace {
    /// The network has no such port.
    #[error("port {port} does not exist: the network has {ports} ports")]
    NoSuchPort {
        /// The port asked for.
        port: usize,
        /// How many ports there are.
        ports: usize,
    },
    /// The port is a private hop (a host's access port that one flow's packets alone
    /// cross): the run queues each packet there when it leaves the port before, ahead of
    /// its arrival, so its sends could not be recorded in time order.
    #[error(
        "port {port} is a host's private access port: its packets are queued there when \
         they leave the hop before it, so they cannot be traced in time order; trace the \
         link before it"
    )]
    PrivateHop {
        /// The port asked for.
        port: usize,
    },
    /// The run has started and its hosts have taken packets ahead of their arrival that
    /// the trace would need to recover the ports' queues, which it was not told to keep
    /// ([`crate::Simulation::keep_for_a_later_trace`]).
    #[error(
        "the run has started without keeping the packets a trace begun now would need: \
         call keep_for_a_later_trace before running, or trace from the start"
    )]
    NotKept,
}

/// A link named on the command line that the scenario does not have, or names twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownLink {
    /// No link has that index or those routers.
    #[error("no link `{name}`: give its index or its two routers as A-B; the links are {known}")]
    Missing {
        /// What was asked for.
        name: String,
        /// The scenario's links, `index (A-B)`, comma-separated.
        known: String,
    },
    /// Router names with '-' let `A-B` be read as more than one link.
    #[error("`{name}` is ambiguous: it names {matches}; give the link's index instead")]
    Ambiguous {
        /// What was asked for.
        name: String,
        /// The links it could be, `index (A-B)`, comma-separated.
        matches: String,
    },
}

/// The two ports (both directions) of a scenario's link, named by its index in the file
/// (`0` for the first `[[link]]`) or by its routers, `A-B` in either order.
pub fn link_ports(s: &Scenario, name: &str) -> Result<[usize; 2], UnknownLink> {
    let links: Vec<_> = s.links.iter().map(|l| &l.get_ref().between).collect();
    let by_index = name.parse::<usize>().ok().filter(|&i| i < links.len());
    let show = |i: usize| format!("{i} ({}-{})", links[i][0], links[i][1]);
    if let Some(i) = by_index {
        return Ok([2 * i, 2 * i + 1]);
    }
    // Router names may contain '-': try every split, and refuse a name two links fit.
    let mut found: Vec<usize> = name
        .match_indices('-')
        .filter_map(|(at, _)| {
            let (a, b) = (&name[..at], &name[at + 1..]);
            links
                .iter()
                .position(|[x, y]| (x == a && y == b) || (x == b && y == a))
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [i] => Ok([2 * i, 2 * i + 1]),
        [] => Err(UnknownLink::Missing {
            name: name.to_string(),
            known: (0..links.len()).map(show).collect::<Vec<_>>().join(", "),
        }),
        many => Err(UnknownLink::Ambiguous {
            name: name.to_string(),
            matches: many
                .iter()
                .map(|&i| format!("link {i} (`{}` and `{}`)", links[i][0], links[i][1]))
                .collect::<Vec<_>>()
                .join(" and "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScenarioFile;

    #[test]
    fn links_are_found_by_index_or_by_routers() {
        let s = ScenarioFile::parse(
            "name = \"t\"\nduration_s = 1\ndiscipline = \"fifo\"\nrouters = [\"a-1\", \"b\", \"c\"]\n\
             [[link]]\nbetween = [\"a-1\", \"b\"]\nrate_mbps = 10\n\
             [[link]]\nbetween = [\"b\", \"c\"]\nrate_mbps = 10\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a-1\"\nto = \"c\"\nrate_mbps = 1\n",
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        assert_eq!(link_ports(&s, "0"), Ok([0, 1]));
        assert_eq!(link_ports(&s, "1"), Ok([2, 3]));
        assert_eq!(link_ports(&s, "a-1-b"), Ok([0, 1]));
        assert_eq!(link_ports(&s, "c-b"), Ok([2, 3]));
        let e = link_ports(&s, "a-c").unwrap_err();
        assert!(
            matches!(&e, UnknownLink::Missing { known, .. } if known == "0 (a-1-b), 1 (b-c)"),
            "{e}"
        );
        assert!(link_ports(&s, "2").is_err());
    }

    /// Routers `a-b`, `c`, `a` and `b-c`: `a-b-c` reads as a-b + c (link 0) and as a + b-c
    /// (link 1); refused as ambiguous, naming both, where it used to pick one silently.
    #[test]
    fn an_ambiguous_name_is_refused() {
        let s = ScenarioFile::parse(
            "name = \"t\"\nduration_s = 1\ndiscipline = \"fifo\"\nrouters = [\"a-b\", \"c\", \"a\", \"b-c\"]\n\
             [[link]]\nbetween = [\"a-b\", \"c\"]\nrate_mbps = 10\n\
             [[link]]\nbetween = [\"a\", \"b-c\"]\nrate_mbps = 10\n\
             [[link]]\nbetween = [\"c\", \"a\"]\nrate_mbps = 10\n\
             [[flow]]\nkind = \"udp\"\nfrom = \"a-b\"\nto = \"b-c\"\nrate_mbps = 1\n",
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        let e = link_ports(&s, "a-b-c").unwrap_err();
        assert_eq!(
            e,
            UnknownLink::Ambiguous {
                name: "a-b-c".into(),
                matches: "link 0 (`a-b` and `c`) and link 1 (`a` and `b-c`)".into()
            }
        );
        assert_eq!(link_ports(&s, "1"), Ok([2, 3]));
        assert_eq!(link_ports(&s, "c-a"), Ok([4, 5]));
    }
}
