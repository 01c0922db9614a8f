//! The `csfq` command as a library: what its subcommands do, for the binary and for the
//! Python package (`python/`), which runs experiments and reads their analyses in-process.

pub mod bench;
pub mod compare;
pub mod demo;
pub mod dp;
pub mod exporter;
pub mod plot;
pub mod reproduce;
pub mod run;
pub mod twin;

use csfq_sim::DisciplineKind;

/// The width output is fitted to: `COLUMNS` when it is exported (a number from 20), else the
/// terminal's when standard output is one; none when piped (rows and lines stay whole).
pub fn output_width() -> Option<u16> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&w| w >= 20)
        .or_else(|| comfy_table::Table::new().width())
}

/// A table in the style every command prints.
/// Its columns wrap to fit [`output_width`]; piped, rows stay whole.
pub fn table<T: Into<comfy_table::Row>>(header: T) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    if let Some(w) = output_width() {
        t.set_width(w);
    }
    t.set_header(header);
    t
}

/// The columns of a table of `header` and `rows` that fit in `width` unwrapped, taken in
/// `priority` order (indices into `header`; columns not named there come last, left to
/// right), each kept if it fits beside those kept before it (a wide one left out, narrower
/// ones after it may still fit), returned in table order. The first column of `priority` is kept
/// whatever its width. Widths are counted as [`table`] draws them: each cell's text and one
/// space either side, and one border between and around columns.
pub fn fit_columns(
    header: &[&str],
    rows: &[Vec<String>],
    priority: &[usize],
    width: u16,
) -> Vec<usize> {
    let widest = |c: usize| {
        rows.iter()
            .map(|r| r[c].chars().count())
            .chain(std::iter::once(header[c].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let order = priority
        .iter()
        .copied()
        .chain((0..header.len()).filter(|c| !priority.contains(c)));
    let (mut used, mut kept) = (1, Vec::new());
    for c in order {
        let need = widest(c) + 3;
        if kept.is_empty() || used + need <= usize::from(width) {
            used += need;
            kept.push(c);
        }
    }
    kept.sort_unstable();
    kept
}

/// `prefix` and `text` as a paragraph: wrapped to [`output_width`] (continuation lines
/// indented), one line when piped.
pub fn paragraph(prefix: &str, text: &str) -> String {
    let line = format!("{prefix}{text}");
    match output_width() {
        Some(width) => {
            let indent = " ".repeat(prefix.chars().count().min(8));
            // A path or a number longer than the line stays whole.
            let opts = textwrap::Options::new(usize::from(width).max(40))
                .subsequent_indent(&indent)
                .break_words(false);
            textwrap::fill(&line, opts)
        }
        None => line,
    }
}

/// Writes `path` whole or not at all: `write` fills a temporary file beside it, which is
/// renamed over `path` once complete and flushed. On an error (a full disk) the error names
/// `path`, the temporary file is removed, and an older `path` is left as it was: no output
/// looks complete when it is not.
pub fn write_atomic_with(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.partial"));
    let result = (|| -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write(&mut out)?;
        out.flush()?;
        out.get_ref().sync_all()?;
        drop(out);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// [`write_atomic_with`] of bytes.
pub fn write_atomic(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes.as_ref()))
}

/// The name of a staging directory, before the process's ID: outputs are written there
/// and moved into place once whole ([`write_set`], `reproduce --all`).
pub(crate) const STAGE_PREFIX: &str = ".partial-";

/// Writes a set of files into `dir` as a whole or not at all: `write` fills a staging
/// directory inside `dir` (`.partial-PID`); once it succeeded each file is moved into
/// place (a rename takes no space, so a full disk cannot stop it halfway), and the files
/// of the set that this writing did not produce (`is_member` names them: an older run's
/// PNG where no PNG could be drawn now) are removed. On an error the staging directory is
/// removed and `dir` holds the older set untouched: a new run's `flows.csv` never stands
/// beside an older run's `summary.json`.
pub fn write_set(
    dir: &std::path::Path,
    is_member: impl Fn(&str) -> bool,
    write: impl FnOnce(&std::path::Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    remove_abandoned_stages(dir);
    let stage = dir.join(format!("{STAGE_PREFIX}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).with_context(|| format!("creating {}", stage.display()))?;
    let names = |d: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    let moved = write(&stage).and_then(|()| {
        let new = names(&stage);
        for old in names(dir) {
            if is_member(&old) && !new.contains(&old) {
                std::fs::remove_file(dir.join(&old))
                    .with_context(|| format!("removing {}", dir.join(&old).display()))?;
            }
        }
        for f in &new {
            let (from, to) = (stage.join(f), dir.join(f));
            std::fs::rename(&from, &to)
                .with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
        }
        Ok(())
    });
    let removed = std::fs::remove_dir_all(&stage);
    moved?;
    removed.with_context(|| format!("removing {}", stage.display()))
}

/// Removes the staging directories in `dir` that a killed or crashed run left behind:
/// `.partial-PID` where no process PID lives (or PID is not a number), and one bearing this
/// process's own PID (made by an earlier process that had it: a container's PID 1 every
/// time), which is called before this process makes its own stage. A live process's stage
/// (a run writing into the same directory now) is left to it. Best effort: a stage that
/// cannot be removed (another user's, or one another run removed first) is only warned
/// about, never a reason to lose this run's results. PIDs are those of this PID namespace:
/// runs in two containers sharing one output directory cannot see each other's, and
/// should not share it.
pub(crate) fn remove_abandoned_stages(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(STAGE_PREFIX) else {
            continue;
        };
        let pid = pid.parse::<u32>().ok();
        if pid.is_some_and(|p| p != std::process::id() && process_lives(p)) {
            continue;
        }
        // Only a directory (never a link, which would lead elsewhere) is removed.
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let path = e.path();
            match std::fs::remove_dir_all(&path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => eprintln!(
                    "warning: cannot remove {} (left by an interrupted run): {err}",
                    path.display()
                ),
                _ => {}
            }
        }
    }
}

/// Whether a process with this ID exists (this one included). `kill(pid, 0)` sends
/// nothing; it fails with `ESRCH` where no such process is, and with `EPERM` where one is
/// that we may not signal.
fn process_lives(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission checks.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Makes sure `dir` exists and takes files, before any simulation runs: a bad `--out`
/// fails in a moment, not after minutes of work whose results it would lose.
pub fn prepare_out_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let probe = dir.join(format!(".csfq-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write into the output directory {}", dir.display()))?;
    std::fs::remove_file(&probe).with_context(|| format!("cannot remove {}", probe.display()))?;
    Ok(())
}

/// `--discipline`'s parser: [`parse_discipline`], with the names listed as clap's possible
/// values, so that `--help` shows them and shell completion offers them (not file names).
pub fn discipline_parser() -> impl clap::builder::TypedValueParser<Value = DisciplineKind> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(DisciplineKind::ALL.map(|d| d.name()))
        .try_map(|s| parse_discipline(&s))
}

/// A discipline by its scenario-file name.
pub fn parse_discipline(s: &str) -> Result<DisciplineKind, String> {
    DisciplineKind::from_name(s).ok_or_else(|| {
        let names: Vec<_> = DisciplineKind::ALL.iter().map(|d| d.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set written over an older one replaces its files, removes the older set's
    /// files this one did not produce, leaves files of no set alone; a set whose writing
    /// fails leaves the older one as it was and no staging directory.
    #[test]
    fn a_set_of_files_is_written_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("csfq-write-set-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (f, t) in [
            ("a.csv", "old a"),
            ("a.png", "old png"),
            ("notes.txt", "mine"),
        ] {
            std::fs::write(dir.join(f), t).unwrap();
        }
        let member = |n: &str| n.starts_with("a.");
        write_set(&dir, member, |stage| {
            write_atomic(&stage.join("a.csv"), "new a")
        })
        .unwrap();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        assert_eq!(read("a.csv").as_deref(), Some("new a"));
        assert_eq!(
            read("a.png"),
            None,
            "the older set's PNG is not left beside the new"
        );
        assert_eq!(read("notes.txt").as_deref(), Some("mine"));
        let failed = write_set(&dir, member, |stage| {
            write_atomic(&stage.join("a.csv"), "newer a")?;
            anyhow::bail!("the disk is full")
        });
        assert!(failed.is_err());
        assert_eq!(read("a.csv").as_deref(), Some("new a"));
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!left.iter().any(|n| n.starts_with(".partial")), "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A run killed while writing leaves its stage behind; the next writing into that
    /// directory removes the stages of processes that no longer live, and no other.
    #[test]
    fn stages_left_by_dead_runs_are_removed_and_no_other() {
        let dir = std::env::temp_dir().join(format!("csfq-stages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // A child that has exited and been waited for: its PID names no process (the
        // kernel reuses PIDs only after wrapping round, far beyond this test).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let live = sleeper.id();
        let elsewhere = dir.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep"), "x").unwrap();
        for d in [
            format!(".partial-{dead}"),
            format!(".partial-{live}"),
            ".partial-notapid".into(),
        ] {
            std::fs::create_dir_all(dir.join(&d)).unwrap();
            std::fs::write(dir.join(&d).join("flows.csv"), "half").unwrap();
        }
        std::os::unix::fs::symlink(&elsewhere, dir.join(".partial-1234567890")).unwrap();
        // An earlier process with this one's PID (a container's PID 1 every time) left its
        // stage, with a file this writing does not make: it must not be published.
        let own = dir.join(format!(".partial-{}", std::process::id()));
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("stale.csv"), "old").unwrap();
        write_set(
            &dir,
            |_| false,
            |stage| write_atomic(&stage.join("a.csv"), "a"),
        )
        .unwrap();
        assert!(
            std::fs::symlink_metadata(dir.join("stale.csv")).is_err(),
            "an earlier process's file published"
        );
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        let exists = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok();
        assert!(
            !exists(&format!(".partial-{dead}")),
            "a dead run's stage is removed"
        );
        assert!(!exists(".partial-notapid"));
        assert!(
            exists(&format!(".partial-{live}")),
            "a live run's stage is its own"
        );
        assert!(
            exists(".partial-1234567890"),
            "a link is not followed or removed"
        );
        assert!(elsewhere.join("keep").exists());
        assert!(exists("a.csv"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
