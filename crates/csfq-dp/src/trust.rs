//! What a core's trust rests on, checked where this host can see it: a label is believed
//! on packets received from a `--trusted-from` interface, so the router at that
//! interface's other end must label (or judge) everything it sends this way. An edge
//! router's edge at its host-facing ingress labels what enters there; traffic born on the
//! router itself, or entering it where no edge is attached, leaves towards the core with
//! whatever label it carries, and the core believes it. The safe configuration attaches
//! the edge also at the island-facing egress (`csfq dp edge attach --egress`), or has a
//! core there (an interior router, whose core prices untrusted labels as unlabeled).
//!
//! Nothing is said where an edge is attached at the trusted interface's own ingress (edge
//! and core in one router: the edge labels all that comes in there). Otherwise, where the
//! trusted interface is one end of a veth pair whose other end is in this
//! namespace or a named one (`ip netns`), [`unguarded_trusted`] finds that end and says if
//! it carries neither an edge at its egress nor a core: the namespace test beds and the
//! demo are built this way. A physical interface's far end is another machine: nothing is
//! said about it.

use std::path::Path;
use std::process::Command;

use crate::role::Role;
use crate::sys::{ip_link_details, link_tcx, BPF_TCX_EGRESS, BPF_TCX_INGRESS};

/// A trusted interface whose far end labels nothing it sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unguarded {
    /// The trusted interface.
    pub trusted: String,
    /// The far end's name.
    pub peer: String,
    /// The far end's namespace (`None`: this one).
    pub netns: Option<String>,
}

impl std::fmt::Display for Unguarded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (at, flag) = match &self.netns {
            Some(n) => (format!(" in namespace {n}"), format!(" --netns {n}")),
            None => (String::new(), String::new()),
        };
        write!(
            f,
            "labels from {t} are believed, but its other end, {p}{at}, has no edge at its \
             egress and no core: what is born on that router, or enters it where no edge \
             is attached, arrives with whatever label it carries. Attach `csfq dp{flag} \
             edge attach --dev {p} --egress` (or a core there, if it is an interior router)",
            t = self.trusted,
            p = self.peer,
        )
    }
}

/// The trusted interfaces (by name, in this namespace) whose far end is visible here and
/// carries neither an edge at its egress nor a core (CSFQ, CS-FNE or TUF). Interfaces
/// whose far end cannot be seen (not a veth, or its peer in an unnamed namespace) are not
/// listed.
pub fn unguarded_trusted(trusted: &[String]) -> Vec<Unguarded> {
    trusted
        .iter()
        .filter_map(|t| {
            // An edge on the trusted interface's own ingress (edge and core in one router)
            // labels everything that comes in there.
            let here = crate::pins::root().join(crate::netns::scope()).join(t);
            if edge_at(&here, BPF_TCX_INGRESS) {
                return None;
            }
            let (peer, netns) = veth_peer(t)?;
            let scope = match &netns {
                Some(n) => format!("netns-{n}"),
                None => crate::netns::scope().to_string(),
            };
            let dir = crate::pins::root().join(scope).join(&peer);
            (!guarded(&dir)).then(|| Unguarded {
                trusted: t.clone(),
                peer,
                netns,
            })
        })
        .collect()
}

/// The live tcx link of `role` pinned under an interface's directory: (ifindex, attach
/// type).
fn live(dir: &Path, role: Role) -> Option<(u32, u32)> {
    link_tcx(&dir.join(role.name()).join("link")).filter(|l| l.0 != 0)
}

/// Whether an interface's directory holds a live edge attached as `attach_type` says.
fn edge_at(dir: &Path, attach_type: u32) -> bool {
    live(dir, Role::Edge).is_some_and(|(_, at)| at == attach_type)
}

/// Whether the pins under an interface's directory hold a live edge at its egress or a
/// live core.
fn guarded(dir: &Path) -> bool {
    edge_at(dir, BPF_TCX_EGRESS)
        || [Role::Core, Role::Csfne, Role::Tuf]
            .iter()
            .any(|&r| live(dir, r).is_some())
}

/// The other end of the veth `dev` (in this namespace): its name, and its namespace's
/// name where it is in another. `None` when `dev` is no veth or its peer cannot be named.
fn veth_peer(dev: &str) -> Option<(String, Option<String>)> {
    let (peer, netns) = parse_link(&ip_link_details(dev)?)?;
    match (peer, netns) {
        (Peer::Name(p), None) => Some((p, None)),
        (Peer::Index(i), Some(n)) => {
            let out = Command::new("ip")
                .args(["-n", &n, "-o", "link", "show"])
                .output()
                .ok()?;
            let name = String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
                let (index, rest) = l.split_once(": ")?;
                (index.trim().parse::<u32>().ok()? == i).then(|| {
                    let name = rest.split([':', ' ']).next().unwrap_or("");
                    name.split('@').next().unwrap_or("").to_string()
                })
            })?;
            Some((name, Some(n)))
        }
        _ => None,
    }
}

/// A veth's other end as `ip link` names it: by name in the same namespace, by index
/// (`ifN`) in another.
#[derive(Debug, PartialEq, Eq)]
enum Peer {
    Name(String),
    Index(u32),
}

/// From one line of `ip -o -d link show dev DEV`: the peer, and the `link-netns` name if
/// given; `None` unless the link is a veth.
fn parse_link(line: &str) -> Option<(Peer, Option<String>)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    // A peer in a namespace with no name (`link-netnsid N`: the host's, seen from a named
    // one, or a container's) cannot be looked at.
    if !words.contains(&"veth") || words.contains(&"link-netnsid") {
        return None;
    }
    // "5: e1@if4: <...>": the name, then the peer after '@'.
    let first = words.get(1)?.strip_suffix(':')?;
    let (_, peer) = first.split_once('@')?;
    let netns = words
        .iter()
        .position(|w| *w == "link-netns")
        .and_then(|i| words.get(i + 1))
        .map(|s| s.to_string());
    let peer = match (peer.strip_prefix("if").and_then(|i| i.parse().ok()), &netns) {
        (Some(i), Some(_)) => Peer::Index(i),
        (None, Some(_)) => return None,
        (_, None) => Peer::Name(peer.to_string()),
    };
    Some((peer, netns))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip -o -d link show` lines as iproute2 prints them (6.x): a veth whose peer is in a
    /// named namespace, one whose peer is here, and a device that is no veth.
    #[test]
    fn a_veths_other_end_is_read_from_ip_link() {
        let other = "2: za0@if2: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode \
                     DEFAULT group default qlen 1000\\    link/ether 56:34:7e:e8:a4:70 brd \
                     ff:ff:ff:ff:ff:ff link-netns zzb promiscuity 0  allmulti 0 minmtu 68 \
                     maxmtu 65535 \\    veth addrgenmode eui64 numtxqueues 2";
        assert_eq!(
            parse_link(other),
            Some((Peer::Index(2), Some("zzb".to_string())))
        );
        let here = "4: zx0@zx1: <BROADCAST,MULTICAST,M-DOWN> mtu 1500 qdisc noop state DOWN \
                    \\    link/ether c2:fa:38:06:3f:f9 brd ff:ff:ff:ff:ff:ff promiscuity 0 \
                    \\    veth addrgenmode eui64";
        assert_eq!(parse_link(here), Some((Peer::Name("zx1".into()), None)));
        let not = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN \
                   \\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00";
        assert_eq!(parse_link(not), None);
        // A peer in a namespace with no name is not looked at.
        let unnamed = "3: c0@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 \\    \
                       link/ether 56:34:7e:e8:a4:70 brd ff:ff:ff:ff:ff:ff link-netnsid 0 \
                       promiscuity 0 \\    veth addrgenmode eui64";
        assert_eq!(parse_link(unnamed), None);
        // A same-namespace peer named like an index is a name.
        let odd = "4: a@if9: <BROADCAST> mtu 1500 \\    veth addrgenmode eui64";
        assert_eq!(parse_link(odd), Some((Peer::Name("if9".into()), None)));
    }
}
