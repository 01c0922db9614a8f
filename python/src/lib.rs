//! `csfq._csfq`: the simulator in-process, for the `csfq` Python package.
//!
//! Each function takes plain values (scenario text, names, seeds), runs with the
//! interpreter released, and returns JSON text that `csfq/__init__.py` turns into pandas
//! DataFrames. A scenario that fails to load raises `csfq.ScenarioError` with the file,
//! line, column and field; anything else that fails raises `csfq.SimulationError`.

use std::path::Path;

use csfq_papers::experiments::{find, EXPERIMENTS};
use csfq_papers::{analyze_seeds, run_experiments, Progress, DEFAULT_SEEDS};
use csfq_sim::net::References;
use csfq_sim::{DisciplineKind, Refused, Scenario, ScenarioFile, Simulation, Topology};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{json, Value};

// The module is named as Python imports it, so exceptions pickle (a process pool or Dask
// sends them back to the caller).
create_exception!(
    csfq._csfq,
    ScenarioError,
    PyValueError,
    "A scenario that failed to load: `file`, `line`, `column` (1-based; 0 when the error is about the whole file), `field` (or None) and `message`."
);
create_exception!(
    csfq._csfq,
    SimulationError,
    PyRuntimeError,
    "A run that could not be built or finished (a network without a route, an unknown experiment)."
);

fn scenario_error(py: Python<'_>, e: &csfq_sim::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let v = err.value(py);
    let set = |k: &str, o: Bound<'_, PyAny>| v.setattr(k, o);
    let result = (|| -> PyResult<()> {
        set(
            "file",
            e.file.display().to_string().into_pyobject(py)?.into_any(),
        )?;
        set("line", e.line.into_pyobject(py)?.into_any())?;
        set("column", e.column.into_pyobject(py)?.into_any())?;
        set("field", e.field.clone().into_pyobject(py)?.into_any())?;
        set("message", e.message.clone().into_pyobject(py)?.into_any())?;
        Ok(())
    })();
    match result {
        Ok(()) => err,
        Err(other) => other,
    }
}

fn sim_error(e: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(e.to_string())
}

fn discipline(name: Option<&str>) -> PyResult<Option<DisciplineKind>> {
    name.map(|n| {
        DisciplineKind::from_name(n).ok_or_else(|| {
            let names: Vec<_> = DisciplineKind::ALL.iter().map(|d| d.name()).collect();
            PyValueError::new_err(format!(
                "unknown discipline `{n}`: expected one of {}",
                names.join(", ")
            ))
        })
    })
    .transpose()
}

/// Loads scenario text; `file` names it in errors.
fn load(
    py: Python<'_>,
    text: &str,
    file: &str,
    d: Option<&str>,
    seed: Option<u64>,
) -> PyResult<Scenario> {
    let d = discipline(d)?;
    let s = ScenarioFile::parse(text, Path::new(file)).map_err(|e| scenario_error(py, &e))?;
    Ok(s.with_run_options(seed, d))
}

/// The text of a scenario file, read as the `csfq` command reads it (at most 16 MiB,
/// UTF-8; errors name the file, and the line of a bad byte).
#[pyfunction]
fn read_scenario(py: Python<'_>, path: &str) -> PyResult<String> {
    ScenarioFile::read_text(Path::new(path)).map_err(|e| scenario_error(py, &e))
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// Runs scenario text and returns the report as JSON: `summary`, `flows` (records, with
/// each flow's reference allocations), `links` (records) and the time series.
#[pyfunction]
#[pyo3(signature = (text, file, discipline=None, seed=None, long=false))]
fn run(
    py: Python<'_>,
    text: &str,
    file: &str,
    discipline: Option<&str>,
    seed: Option<u64>,
    long: bool,
) -> PyResult<String> {
    let s = load(py, text, file, discipline, seed)?;
    py.detach(move || {
        // The CLI's guard: memory, the network, a day's work unless `long`.
        let sim = match Simulation::admit(&s, long) {
            Ok(a) => a.sim,
            Err(e @ Refused::TooLarge(_)) => return Err(PyValueError::new_err(e.to_string())),
            Err(e) => return Err(sim_error(e)),
        };
        let refs = References::of(sim.topology());
        let started = std::time::Instant::now();
        let r = sim.run();
        let wall = started.elapsed().as_secs_f64();
        let flows: Vec<Value> = r
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut drops = serde_json::Map::new();
                for (why, n) in &f.drops {
                    drops.insert(why.to_string(), json!(n));
                }
                let mut row = json!({
                    "flow": f.flow,
                    "kind": f.kind,
                    "src": f.src,
                    "dst": f.dst,
                    "weight": f.weight,
                    "offered_mbps": f.offered_mbps,
                    "max_min_mbps": finite(refs.max_min[i] / 1e6),
                    "per_hop_mbps": refs.per_hop.as_ref().map(|h| finite(h[i] / 1e6)),
                    "reference_mbps": finite(refs.reference[i] / 1e6),
                    "throughput_mbps": f.throughput_mbps,
                    "sent_pkts": f.sent_pkts,
                    "delivered_pkts": f.delivered_pkts,
                    "dropped_pkts": f.dropped_pkts,
                    "ack_drops": f.ack_drops,
                    "retransmits": f.retransmits,
                    "timeouts": f.timeouts,
                    "size_pkts": f.size_pkts,
                    "fct_s": f.fct_s,
                    "drops": drops,
                    "delay_pkts": f.delay.map_or(0, |d| d.packets),
                    "jitter_ms": f.delay.map(|d| d.jitter_ms),
                });
                stats_columns(&mut row, "delay", f.delay.map(|d| d.one_way_ms));
                stats_columns(&mut row, "queueing", f.delay.map(|d| d.queueing_ms));
                row
            })
            .collect();
        let links: Vec<Value> = r
            .links
            .iter()
            .map(|l| {
                let mut row = json!({
                    "from": l.from,
                    "to": l.to,
                    "discipline": l.discipline,
                    "rate_mbps": l.rate_mbps,
                    "tx_pkts": l.tx_pkts,
                    "utilization": l.utilization,
                    "dropped_pkts": l.dropped_pkts,
                    "mean_queue_bytes": l.mean_queue_bytes,
                    "peak_queue_pkts": l.peak_queue_pkts,
                });
                stats_columns(&mut row, "sojourn", l.sojourn_ms);
                row
            })
            .collect();
        // Every histogram's buckets as rows: flows' queueing delay, links' sojourn.
        let mut delays: Vec<Value> = Vec::new();
        let mut rows =
            |kind: &str, id: Value, what: &str, h: &csfq_sim::observe::delay::DelayHistogram| {
                let e = h.precision().relative_error();
                for (lo, hi, count) in h.buckets() {
                    delays.push(json!({
                        "kind": kind,
                        "id": id,
                        "what": what,
                        "low_ms": lo as f64 / 1e6,
                        "high_ms": hi as f64 / 1e6,
                        "count": count,
                        "relative_error": e,
                    }));
                }
            };
        for f in &r.flows {
            if let Some(h) = &f.queueing_histogram {
                rows("flow", json!(f.flow), "queueing", h);
            }
        }
        for l in &r.links {
            rows(
                "link",
                json!(format!("{}->{}", l.from, l.to)),
                "sojourn",
                &l.sojourn,
            );
        }
        let flow_series: Vec<&Vec<f64>> = r.flows.iter().map(|f| &f.series_mbps).collect();
        let link_series: Vec<Value> = r
            .links
            .iter()
            .map(|l| {
                json!({
                    "queue_bytes": l.queue_bytes,
                    "alpha_mbps": l.alpha_mbps,
                    "table_entries": l.table_entries,
                })
            })
            .collect();
        let out = json!({
            "summary": {
                "scenario": r.scenario,
                "discipline": r.discipline,
                "seed": r.seed,
                "duration_s": r.duration_s,
                "sample_interval_s": r.sample_interval_s,
                "jain_index": r.jain_index,
                "events": r.events,
                "packet_hops": r.packet_hops,
                "unused_links": r.unused_links.len(),
                "wall_s": wall,
            },
            "flows": flows,
            "links": links,
            "flow_series": flow_series,
            "link_series": link_series,
            "delays": delays,
        });
        Ok(out.to_string())
    })
}

/// Adds `{prefix}_mean_ms`, `_p50_ms`, `_p95_ms`, `_p99_ms` and `_max_ms` to a JSON row
/// (null when there were no packets).
fn stats_columns(row: &mut Value, prefix: &str, s: Option<csfq_sim::observe::delay::DelayStats>) {
    let obj = row.as_object_mut().expect("rows are objects");
    let values = s.map(|s| [s.mean, s.p50, s.p95, s.p99, s.max]);
    for (i, name) in ["mean", "p50", "p95", "p99", "max"].iter().enumerate() {
        obj.insert(format!("{prefix}_{name}_ms"), json!(values.map(|v| v[i])));
    }
}

/// Checks scenario text as a run would (parse, validate, build the network) without
/// running it; returns the scenario as the simulator read it, every default explicit
/// (`6` and `6.0` read the same): what a campaign's keys hash.
#[pyfunction]
fn check(py: Python<'_>, text: &str, file: &str) -> PyResult<String> {
    let s = load(py, text, file, None, None)?;
    py.detach(move || {
        Topology::build(&s).map_err(sim_error)?;
        toml::to_string(&*s).map_err(|e| SimulationError::new_err(e.to_string()))
    })
}

/// The exact allocations of scenario text's flows, as JSON records.
#[pyfunction]
fn maxmin(py: Python<'_>, text: &str, file: &str) -> PyResult<String> {
    let s = load(py, text, file, None, None)?;
    py.detach(move || {
        let topo = Topology::build(&s).map_err(sim_error)?;
        let refs = References::of(&topo);
        let rows: Vec<Value> = (0..refs.max_min.len())
            .map(|i| {
                json!({
                    "flow": i,
                    "max_min_mbps": finite(refs.max_min[i] / 1e6),
                    "per_hop_mbps": refs.per_hop.as_ref().map(|h| finite(h[i] / 1e6)),
                    "reference_mbps": finite(refs.reference[i] / 1e6),
                })
            })
            .collect();
        Ok(Value::Array(rows).to_string())
    })
}

/// The published experiments, as JSON records.
#[pyfunction]
fn experiments() -> String {
    let rows: Vec<Value> = EXPERIMENTS
        .iter()
        .map(|e| {
            json!({
                "id": e.id,
                "setup": e.setup,
                "published": e.published,
                "disciplines": e.disciplines.iter().map(|d| d.name()).collect::<Vec<_>>(),
                "runs": e.disciplines.iter().map(|&d| e.runs(d).len()).sum::<usize>(),
            })
        })
        .collect();
    Value::Array(rows).to_string()
}

/// Runs one experiment (its runs on all cores) and returns its analysis as JSON: the
/// table beside the paper's numbers, the verdicts, the notes and the numbers.
#[pyfunction]
#[pyo3(signature = (id, seeds=None))]
fn reproduce(py: Python<'_>, id: &str, seeds: Option<Vec<u64>>) -> PyResult<String> {
    let Some(e) = find(id) else {
        let ids: Vec<_> = EXPERIMENTS.iter().map(|e| e.id).collect();
        return Err(SimulationError::new_err(format!(
            "unknown experiment `{id}`; expected one of: {}",
            ids.join(", ")
        )));
    };
    let seeds = seeds.unwrap_or_else(|| DEFAULT_SEEDS.collect());
    if seeds.is_empty() || seeds.len() > 1000 || seeds.windows(2).any(|w| w[1] <= w[0]) {
        return Err(PyValueError::new_err(
            "seeds: from 1 to 1000 of them, increasing, each once",
        ));
    }
    py.detach(move || {
        let results = run_experiments(&[e], &seeds, &Progress::none())
            .map_err(|e| sim_error(format!("{e}")))?
            .remove(0);
        let judged = analyze_seeds(e, &results);
        let a = &judged.analysis;
        Ok(json!({
            "id": e.id,
            "seeds": judged.seeds,
            "setup": e.setup,
            "published": e.published,
            "header": a.header,
            "rows": a.rows,
            "checks": a.checks.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
            "notes": a.notes,
            "numbers": a.json,
        })
        .to_string())
    })
}

/// The discipline names a scenario takes.
/// Every reason a packet can be dropped for, by name (`drops_NAME` columns).
#[pyfunction]
fn drop_reasons() -> Vec<&'static str> {
    csfq_algo::DropReason::ALL
        .iter()
        .map(|r| r.name())
        .collect()
}

#[pyfunction]
fn disciplines() -> Vec<&'static str> {
    DisciplineKind::ALL.iter().map(|d| d.name()).collect()
}

/// The native module.
#[pymodule]
fn _csfq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(disciplines, m)?)?;
    m.add_function(wrap_pyfunction!(drop_reasons, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The commit the module was built from, ", modified" when tracked files differed from
    // it; "unknown" outside a git work tree (vergen's placeholder).
    let sha = env!("VERGEN_GIT_SHA");
    let commit = if sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        sha
    } else {
        "unknown"
    };
    let modified = if env!("VERGEN_GIT_DIRTY") == "true" {
        ", modified"
    } else {
        ""
    };
    m.add("__build__", format!("{commit}{modified}"))?;
    Ok(())
}
