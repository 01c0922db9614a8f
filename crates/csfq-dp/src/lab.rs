//! Network namespaces joined by veth pairs, for `csfq demo`, the namespace tests and
//! `csfq dp bench`: made with `ip` (iproute2, and `ethtool` for offloads), and removed when
//! the [`Lab`] is dropped (also after an error, a panic or Ctrl-C) with every process
//! started in them and every pin csfq made in them.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use thiserror::Error;

/// A command of the lab that failed.
#[derive(Debug, Error)]
#[error("{command}: {why}")]
pub struct LabError {
    /// The command, as typed.
    pub command: String,
    /// What it said, or why it could not run.
    pub why: String,
}

/// Which offloads a veth keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offloads {
    /// As the kernel sets them.
    Keep,
    /// Segmentation and receive offloads off (`tso gso gro`): otherwise the programs see
    /// 64 KB super-packets, and a tbf a burst of them.
    NoSegmentation,
    /// Those and the checksum offloads (`tx rx`) off: every frame as it is on a wire.
    None,
}

/// One end of a veth pair: the namespace's short name, the interface, its address
/// (`ADDR/LEN`).
pub type End<'a> = (&'a str, &'a str, &'a str);

/// Namespaces named `PREFIX` + a short name, and the processes started in them.
pub struct Lab {
    prefix: String,
    namespaces: Vec<String>,
    children: Vec<Child>,
}

impl Lab {
    /// A lab whose namespaces are named `prefix` + a short name; nothing is made yet.
    /// Dropping it removes the pins csfq made in exactly its namespaces.
    pub fn new(prefix: impl Into<String>) -> Lab {
        Lab {
            prefix: prefix.into(),
            namespaces: Vec::new(),
            children: Vec::new(),
        }
    }

    /// The prefix of its namespaces' names.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The full name of namespace `n`.
    pub fn ns(&self, n: &str) -> String {
        format!("{}{n}", self.prefix)
    }

    /// Makes namespace `n`, its loopback up.
    pub fn add(&mut self, n: &str) -> Result<(), LabError> {
        let ns = self.ns(n);
        run("ip", &["netns", "add", &ns])?;
        self.namespaces.push(ns);
        self.exec(n, &["ip", "link", "set", "lo", "up"])?;
        Ok(())
    }

    /// A veth pair between two namespaces of the lab, each end addressed and up.
    pub fn wire(&self, a: End<'_>, b: End<'_>, offloads: Offloads) -> Result<(), LabError> {
        let (na, nb) = (self.ns(a.0), self.ns(b.0));
        run(
            "ip",
            &[
                "link", "add", a.1, "netns", &na, "type", "veth", "peer", "name", b.1, "netns", &nb,
            ],
        )?;
        for (n, dev, addr) in [a, b] {
            self.exec(n, &["ip", "addr", "add", addr, "dev", dev])?;
            self.exec(n, &["ip", "link", "set", dev, "up"])?;
            let off: &[&str] = match offloads {
                Offloads::Keep => &[],
                Offloads::NoSegmentation => &["tso", "off", "gso", "off", "gro", "off"],
                Offloads::None => &[
                    "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off",
                ],
            };
            if !off.is_empty() {
                let mut args = vec!["ethtool", "-K", dev];
                args.extend_from_slice(off);
                self.exec(n, &args)?;
            }
        }
        Ok(())
    }

    /// Makes `n` a router: IPv4 forwarding on.
    pub fn forward(&self, n: &str) -> Result<(), LabError> {
        self.exec(n, &["sysctl", "-qw", "net.ipv4.ip_forward=1"])
            .map(drop)
    }

    /// A route in `n` to `to` (`default` or `ADDR/LEN`) via `via`.
    pub fn route(&self, n: &str, to: &str, via: &str) -> Result<(), LabError> {
        self.exec(n, &["ip", "route", "add", to, "via", via])
            .map(drop)
    }

    /// A command that runs `program` in namespace `n` (`ip netns exec`), to be given
    /// arguments and run or spawned by the caller.
    pub fn command(&self, n: &str, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(n), program]);
        c
    }

    /// Runs `args` in namespace `n`; it must succeed.
    pub fn exec(&self, n: &str, args: &[&str]) -> Result<Output, LabError> {
        let ns = self.ns(n);
        let mut a = vec!["netns", "exec", ns.as_str()];
        a.extend_from_slice(args);
        run("ip", &a)
    }

    /// Starts `args` in namespace `n`, its output discarded; it is waited for by
    /// [`Lab::wait`], and killed when the lab is dropped if it still runs.
    pub fn spawn(&mut self, n: &str, args: &[&str]) -> Result<(), LabError> {
        let (program, rest) = args.split_first().expect("a command");
        let child = self
            .command(n, program)
            .args(rest)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| LabError {
                command: format!("ip netns exec {} {}", self.ns(n), args.join(" ")),
                why: e.to_string(),
            })?;
        self.children.push(child);
        Ok(())
    }

    /// Waits for every process [`Lab::spawn`] started; one still running at `deadline`
    /// is killed. Stops early, with an error, when `interrupted()` says so (polled every
    /// 100 ms); the processes are then killed on drop.
    pub fn wait(
        &mut self,
        deadline: Instant,
        interrupted: impl Fn() -> bool,
    ) -> Result<(), LabError> {
        for c in &mut self.children {
            loop {
                if interrupted() {
                    return Err(LabError {
                        command: "waiting for the lab's processes".into(),
                        why: "interrupted".into(),
                    });
                }
                match c.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > deadline => {
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        }
        self.children.clear();
        Ok(())
    }
}

impl Drop for Lab {
    /// Kills what it started, removes every pin csfq made in its namespaces (which
    /// detaches the programs), then the namespaces. The commands run in their own process
    /// group, so a second Ctrl-C at the terminal does not stop the clean-up halfway.
    fn drop(&mut self) {
        use std::os::unix::process::CommandExt as _;
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let root = crate::pins::root();
        for ns in &self.namespaces {
            remove_tree(&root.join(format!("netns-{ns}")));
        }
        for ns in self.namespaces.iter().rev() {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .process_group(0)
                .status();
        }
    }
}

/// Whether `name` is namespace `BASE PID N` of a lab (`N` one of `short`) whose process
/// `alive` says is gone: one it could not remove, being killed.
fn left_by_a_dead_run(name: &str, base: &str, short: &[&str], alive: impl Fn(u32) -> bool) -> bool {
    name.strip_prefix(base)
        .and_then(|rest| short.iter().find_map(|n| rest.strip_suffix(n)))
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| !alive(pid))
}

/// Removes the namespaces `BASE PID N` (`N` one of `short`), and the pins made in them,
/// that a lab of a process killed halfway (`kill -9`: no drop ran) left behind. Best
/// effort: what cannot be listed or removed stays.
pub fn remove_abandoned(base: &str, short: &[&str]) {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    let alive = |pid: u32| Path::new("/proc").join(pid.to_string()).exists();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        if left_by_a_dead_run(name, base, short, alive) {
            remove_tree(&crate::pins::root().join(format!("netns-{name}")));
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

/// Removes a tree of the BPF filesystem, as much of it as can be: files unlinked one by
/// one, then the directories (removing a link's pin detaches its program). An entry gone
/// meanwhile (a daemon removing its own pins) or one that cannot be removed does not stop
/// the rest.
fn remove_tree(p: &Path) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            remove_tree(&e.path());
        }
        let _ = std::fs::remove_dir(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Runs `cmd args`; it must succeed.
fn run(cmd: &str, args: &[&str]) -> Result<Output, LabError> {
    let command = || format!("{cmd} {}", args.join(" "));
    let o = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| LabError {
            command: command(),
            why: format!("{e} (Debian: apt-get install iproute2 ethtool)"),
        })?;
    if !o.status.success() {
        return Err(LabError {
            command: command(),
            why: String::from_utf8_lossy(&o.stderr).trim().to_string(),
        });
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::left_by_a_dead_run;

    /// Only a lab's own names, and only when their process is gone.
    #[test]
    fn namespaces_left_by_a_killed_run_are_recognized() {
        let alive = |pid: u32| pid == 42;
        let left = |name| left_by_a_dead_run(name, "csfqbench", &["a", "b"], alive);
        assert!(left("csfqbench30426a"));
        assert!(left("csfqbench30426b"));
        assert!(!left("csfqbench42a"), "a run still going");
        for other in [
            "csfqbench30426c",
            "csfqbencha",
            "csfqbench30426",
            "ns1",
            "csfqbenchxa",
        ] {
            assert!(!left(other), "{other}");
        }
    }
}
