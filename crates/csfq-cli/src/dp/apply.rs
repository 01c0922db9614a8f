//! `csfq dp apply FILE`: the dataplane a file describes, attached the way `tc` scripts and
//! netplan are re-applied. Each `[[edge]]`, `[[core]]`, `[[may]]`, `[[csfne]]`, `[[tuf]]` or
//! `[[tuf-source]]` table is one `csfq dp KIND attach`, its keys that command's long options (`k_alpha` or
//! `k-alpha`; a list repeats its option; `true` gives a flag, `false` leaves it out), so
//! the file is checked by the very parser the command line is, and means what the command
//! line means. Every table is checked before any is applied; an attached program is updated
//! in place (its flow table, `alpha`, MAY's table and `v` kept), so applying a file twice
//! changes nothing the second time.
//!
//! ```toml
//! [[edge]]
//! dev = "veth-in"
//!
//! [[core]]
//! dev = "eth1"
//! trusted_from = ["veth-in"]
//! ```

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use clap::Parser;
use csfq_dp::Role;

use crate::dp::DpCommand;

/// The kinds of table, the `csfq dp` subcommand of each and what it attaches.
const KINDS: [(&str, Role); 6] = [
    ("edge", Role::Edge),
    ("core", Role::Core),
    ("may", Role::May),
    ("csfne", Role::Csfne),
    ("tuf", Role::Tuf),
    ("tuf-source", Role::TufSource),
];

/// The largest file read (a dataplane of a few hundred interfaces is a few tens of KB).
const MAX_FILE: u64 = 1 << 20;

/// `csfq dp` as the file's tables are parsed.
#[derive(Parser)]
#[command(name = "csfq dp", no_binary_name = true)]
struct One {
    #[command(subcommand)]
    cmd: DpCommand,
}

/// Each kind's tables, each key's value, with their places in the text.
type Spans = std::collections::BTreeMap<
    String,
    toml::Spanned<
        Vec<toml::Spanned<std::collections::BTreeMap<String, toml::Spanned<toml::Value>>>>,
    >,
>;

/// One table: where it is, what it attaches, and the command it stands for.
struct Entry {
    kind: &'static str,
    role: Role,
    line: usize,
    dev: String,
    cmd: DpCommand,
}

/// The 1-based line of byte `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The command-line words for one key and its value, or why the value cannot be one.
fn words(key: &str, value: &toml::Value, out: &mut Vec<String>) -> Result<(), String> {
    let flag = format!("--{}", key.replace('_', "-"));
    let scalar = |v: &toml::Value| -> Result<String, String> {
        match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            _ => Err(format!(
                "`{key}` takes a string or a number (or a list of them), not {}",
                v.type_str()
            )),
        }
    };
    match value {
        toml::Value::Boolean(true) => out.push(flag),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(items) => {
            for v in items {
                out.push(flag.clone());
                out.push(scalar(v)?);
            }
        }
        v => {
            out.push(flag);
            out.push(scalar(v)?);
        }
    }
    Ok(())
}

/// Every table of `text` checked and parsed as its attach command; errors name the file,
/// the line and the key.
fn entries(file: &str, text: &str) -> Result<Vec<Entry>> {
    type Table = toml::map::Map<String, toml::Value>;
    let doc: toml::map::Map<String, toml::Value> =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    // Spans of each table and of each key's value, for the errors' lines.
    let spanned: Spans = toml::from_str(text).unwrap_or_default(); // a table of another shape: checked below
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (kind, value) in &doc {
        let at = spanned.get(kind).map_or(0, |s| s.span().start);
        let Some(&(kind, role)) = KINDS.iter().find(|(k, _)| k == kind) else {
            bail!(
                "{file}:{}: unknown table `{kind}`: expected [[edge]], [[core]], [[may]], \
                 [[csfne]], [[tuf]] or [[tuf-source]]",
                line_of(text, at)
            );
        };
        let Some(tables) = value.as_array() else {
            bail!(
                "{file}:{}: `{kind}` must be an array of tables ([[{kind}]])",
                line_of(text, at)
            );
        };
        let spans = spanned.get(kind).map(|s| s.get_ref());
        for (i, t) in tables.iter().enumerate() {
            let table_span = spans.and_then(|s| s.get(i));
            let line = line_of(text, table_span.map_or(at, |t| t.span().start));
            let key_line = |key: &str| {
                table_span
                    .and_then(|t| t.get_ref().get(key))
                    .map_or(line, |v| line_of(text, v.span().start))
            };
            let Some(t): Option<&Table> = t.as_table() else {
                bail!("{file}:{line}: [[{kind}]] must be a table");
            };
            let Some(dev) = t.get("dev").and_then(|d| d.as_str()) else {
                bail!("{file}:{line}: [[{kind}]] needs `dev`, the interface, as a string");
            };
            if !seen.insert((role, dev.to_string())) {
                bail!("{file}:{line}: [[{kind}]] names {dev} a second time");
            }
            let mut argv = vec![kind.to_string(), "attach".to_string()];
            for (key, v) in t {
                words(key, v, &mut argv)
                    .map_err(|e| anyhow::anyhow!("{file}:{}: [[{kind}]] {e}", key_line(key)))?;
            }
            let cmd = One::try_parse_from(&argv)
                .map_err(|e| {
                    // clap's first line names the option (`--k-alpha`): the key's line.
                    let msg = e.to_string();
                    let first = msg
                        .lines()
                        .next()
                        .unwrap_or("")
                        .trim_start_matches("error: ")
                        .to_string();
                    let named = t
                        .keys()
                        .find(|k| first.contains(&format!("--{}", k.replace('_', "-"))));
                    let at = named.map_or(line, |k| key_line(k));
                    anyhow::anyhow!("{file}:{at}: [[{kind}]] on {dev}: {first}")
                })?
                .cmd;
            out.push(Entry {
                kind,
                role,
                line,
                dev: dev.to_string(),
                cmd,
            });
        }
    }
    // In the file's order.
    out.sort_by_key(|e| e.line);
    Ok(out)
}

/// `csfq dp apply FILE [--prune]` in the namespace already entered.
pub(crate) fn apply(path: &Path, prune: bool) -> Result<()> {
    let file = path.display().to_string();
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {file}"))?;
    if !meta.is_file() {
        bail!("{file} is not a regular file");
    }
    if meta.len() > MAX_FILE {
        bail!("{file} is {} bytes: at most {MAX_FILE}", meta.len());
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {file}"))?;
    let all = entries(&file, &text)?;
    let named: BTreeSet<(Role, String)> = all.iter().map(|e| (e.role, e.dev.clone())).collect();
    let total = all.len();
    for (i, e) in all.into_iter().enumerate() {
        let (kind, dev, line) = (e.kind, e.dev.clone(), e.line);
        crate::dp::run(e.cmd).map_err(|err| {
            let mut m = format!("{file}:{line}: [[{kind}]] on {dev}: {err:#}");
            let _ = write!(
                m,
                " ({i} of the file's {total} entries applied before it, the rest not)"
            );
            anyhow::anyhow!(m)
        })?;
    }
    if prune {
        // Only this namespace's: in the host, stats lists every namespace's programs too.
        let here = csfq_dp::current_scope();
        for s in csfq_dp::stats()? {
            let ours = KINDS.iter().any(|(_, r)| *r == s.role);
            if ours
                && s.scope == here
                && !s.stale
                && !named.contains(&(s.role, s.interface.clone()))
            {
                csfq_dp::detach_role(&s.interface, s.role)?;
                println!(
                    "csfq {} detached from {} ({file} does not name it)",
                    s.role.name(),
                    s.interface
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match entries("dp.toml", text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// A file parses into the attach commands its tables stand for, in its order.
    #[test]
    fn tables_are_attach_commands() {
        let text = "[[core]]\ndev = \"c1\"\ntrusted_from = [\"c0\", \"c2\"]\nrate = \"10mbit\"\n\n\
                    [[edge]]\ndev = \"e0\"\nk = \"50ms\"\n\n[[may]]\ndev = \"m1\"\n";
        let e = entries("dp.toml", text).unwrap();
        let got: Vec<_> = e.iter().map(|e| (e.kind, e.dev.as_str(), e.line)).collect();
        assert_eq!(
            got,
            [("core", "c1", 1), ("edge", "e0", 6), ("may", "m1", 10)]
        );
    }

    /// Bad input names the file, the line and the key, before anything is applied.
    #[test]
    fn errors_name_file_line_and_key() {
        let e = err("[[core]]\ndev = \"c1\"\nrat = \"10mbit\"\n");
        assert!(
            e.starts_with("dp.toml:3: [[core]] on c1:") && e.contains("--rat"),
            "{e}"
        );
        let e = err("[[core]]\ndev = \"c1\"\nrate = \"fast\"\n");
        assert!(e.starts_with("dp.toml:3:") && e.contains("--rate"), "{e}");
        let e = err("[[edge]]\nk = \"50ms\"\n");
        assert!(e.contains("dp.toml:1: [[edge]] needs `dev`"), "{e}");
        let e = err("[[qdisc]]\ndev = \"x\"\n");
        assert!(e.contains("dp.toml:1: unknown table `qdisc`"), "{e}");
        let e = err("[[edge]]\ndev = \"e\"\n[[edge]]\ndev = \"e\"\n");
        assert!(
            e.contains("dp.toml:3: [[edge]] names e a second time"),
            "{e}"
        );
        let e = err("[[edge]]\ndev = \"e\"\nk = { a = 1 }\n");
        assert!(e.contains("dp.toml:3: [[edge]] `k` takes a string"), "{e}");
        let e = err("[[edge]]\ndev = \"e\"\nk = \n");
        assert!(e.starts_with("dp.toml:") && e.contains("line 3"), "{e}");
        let e = err("edge = 3\n");
        assert!(e.contains("must be an array of tables"), "{e}");
    }

    /// The shipped example parses, and the systemd unit's command is one `csfq dp` takes.
    #[test]
    fn the_contrib_files_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../contrib/systemd");
        let text = std::fs::read_to_string(format!("{dir}/dataplane.toml")).unwrap();
        let e = entries("dataplane.toml", &text).unwrap();
        let got: Vec<_> = e.iter().map(|e| (e.kind, e.dev.as_str())).collect();
        assert_eq!(got, [("edge", "eth0"), ("core", "eth1")]);
        let unit = std::fs::read_to_string(format!("{dir}/csfq-dataplane.service")).unwrap();
        for line in unit.lines().filter(|l| l.starts_with("Exec")) {
            let cmd = line.split_once('=').unwrap().1;
            let words: Vec<&str> = cmd.split_whitespace().collect();
            assert_eq!(words[..2], ["/usr/local/bin/csfq", "dp"], "{line}");
            let one = One::try_parse_from(&words[2..]).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(
                matches!(one.cmd, DpCommand::Apply { prune: true, .. }),
                "{line}"
            );
        }
    }
}
