//! The `csfq` command as a library: what its subcommands do, for the binary and for the
//! Python package (`python/`), which runs experiments and reads their analyses in-process.

pub mod bench;
pub mod dp;
pub mod exporter;
pub mod plot;
pub mod reproduce;
pub mod run;
pub mod sweep;

use csfq_sim::DisciplineKind;

/// A table in the style every command prints.
pub fn table<T: Into<comfy_table::Row>>(header: T) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
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
