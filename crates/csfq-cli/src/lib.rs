//! The `csfq` command as a library: what its subcommands do, for the binary and for the
//! Python package (`python/`), which runs experiments and reads their analyses in-process.

pub mod bench;
pub mod demo;
pub mod dp;
pub mod exporter;
pub mod plot;
pub mod reproduce;
pub mod run;
pub mod twin;

use csfq_sim::DisciplineKind;

/// A table in the style every command prints.
/// On a terminal its columns wrap to fit the terminal's width; piped, rows stay whole.
pub fn table<T: Into<comfy_table::Row>>(header: T) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    t.set_header(header);
    t
}

/// `prefix` and `text` as a paragraph: wrapped to the terminal's width when standard output
/// is a terminal (continuation lines indented), one line when piped.
pub fn paragraph(prefix: &str, text: &str) -> String {
    let line = format!("{prefix}{text}");
    match comfy_table::Table::new().width() {
        Some(width) => {
            let indent = " ".repeat(prefix.chars().count().min(8));
            let opts =
                textwrap::Options::new(usize::from(width).max(40)).subsequent_indent(&indent);
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

/// A discipline by its scenario-file name.
pub fn parse_discipline(s: &str) -> Result<DisciplineKind, String> {
    DisciplineKind::from_name(s).ok_or_else(|| {
        let names: Vec<_> = DisciplineKind::ALL.iter().map(|d| d.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}
