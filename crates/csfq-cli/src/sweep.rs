//! `csfq sweep`: campaigns are the Python package's (`python/csfq/sweep.py`: the Parquet
//! store keyed by run, the local thread pool and the Dask backend), so this runs
//! `python3 -m csfq sweep` with the same arguments, in the same terminal.

use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// The interpreter: `CSFQ_PYTHON` if set, else `python3` on the PATH.
fn python() -> String {
    std::env::var("CSFQ_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// What `--help` prints when the package is not installed (the package's own help has the
/// same options).
const HELP: &str = "\
Run a campaign: a scenario x a grid of overrides x seeds, each run stored once as Parquet in
STORE (a rerun computes only what is missing), on all local cores or on a Dask cluster.

Usage: csfq sweep SCENARIO [--set FIELD=V1,V2]... [--seeds 1-8] [--store DIR]
                  [--backend local|dask] [--scheduler ADDRESS] [--workers N] [--csv FILE] [--quiet]

It runs the Python package csfq (python3 -m csfq sweep), which is not installed for this
interpreter: pip install ./python (from this repository), or set CSFQ_PYTHON to an
interpreter that has it.";

/// Runs `python -m csfq sweep ARGS`; returns its exit status.
pub fn sweep(args: &[String]) -> Result<ExitCode> {
    let py = python();
    let probe = Command::new(&py)
        .args(["-c", "import csfq._csfq"])
        .output()
        .with_context(|| {
            format!("csfq sweep runs the Python package with `{py}`, which could not be started")
        })?;
    if !probe.status.success() {
        if args.iter().any(|a| a == "-h" || a == "--help") {
            // The help is the package's; without it, say what the command takes and needs.
            println!("{HELP}");
            return Ok(ExitCode::SUCCESS);
        }
        bail!(
            "csfq sweep needs the Python package csfq in `{py}`: pip install ./python (from \
             this repository), or set CSFQ_PYTHON to an interpreter that has it"
        );
    }
    let status = Command::new(&py)
        .args(["-m", "csfq", "sweep"])
        .args(args)
        .status()
        .with_context(|| format!("running {py} -m csfq sweep"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}
