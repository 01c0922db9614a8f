//! Reading a scenario file: TOML into [`ScenarioFile`], then validation; every fault as a
//! [`ScenarioError`] with the file, the line and column, and the field.

use std::fmt;
use std::path::{Path, PathBuf};

use super::*;

/// A scenario that failed to load: where, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    /// The file (or a name standing for the text).
    pub file: PathBuf,
    /// 1-based line; 0 when the error is about the whole file (it cannot be read).
    pub line: usize,
    /// 1-based column; 0 with line 0.
    pub column: usize,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.file.display())?;
        if self.line > 0 {
            write!(f, "{}:{}:", self.line, self.column)?;
        }
        if let Some(field) = &self.field {
            write!(f, " field `{field}`:")?;
        }
        write!(f, " {}", self.message)
    }
}

/// Line and column (1-based) of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Line and column (1-based) of a byte offset in bytes that may not be text.
fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
    (line, col)
}

/// The key assigned on the line at `offset` (`key = value`), if any.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

impl ScenarioFile {
    /// Parses and checks scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Scenario, ScenarioError> {
        let parsed: ScenarioFile = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let (line, column) = line_col(text, offset);
            let message = e.message().to_string();
            // serde names a missing field in its message and points at the table that
            // lacks it (the whole file for a top-level field), not at a key.
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next())
                .map(str::to_string);
            let (field, message) = match missing {
                Some(name) => {
                    let in_table = text[offset.min(text.len())..].trim_start().starts_with('[');
                    let place = if in_table {
                        "from the table that starts here"
                    } else {
                        "from the top level of the file"
                    };
                    (Some(name), format!("required, and missing {place}"))
                }
                None => (key_at(text, offset), message),
            };
            ScenarioError {
                file: file.to_path_buf(),
                line,
                column,
                field,
                message,
            }
        })?;
        let mut parsed = parsed;
        if let Some(g) = parsed.graphml.take() {
            let span = g.span();
            // A fault in the GraphML file names that file and its line; one about the file
            // as a whole (it cannot be read) or a value of the table points at the table.
            let t = g.get_ref().read(file).map_err(|e| {
                if e.line > 0 {
                    return e;
                }
                let (line, column) = line_col(text, span.start);
                let message = if e.file == file {
                    e.message
                } else {
                    format!("{}: {}", e.file.display(), e.message)
                };
                ScenarioError {
                    file: file.to_path_buf(),
                    line,
                    column,
                    field: e.field.or_else(|| Some("graphml.file".into())),
                    message,
                }
            })?;
            parsed.routers.extend(t.routers);
            parsed
                .links
                .extend(t.links.into_iter().map(|l| Spanned::new(span.clone(), l)));
        }
        parsed.validate(text, file)?;
        Ok(Scenario::checked(parsed))
    }

    /// Reads and parses a scenario file of at most [`MAX_FILE_BYTES`] (read no further, so
    /// `/dev/zero` or a runaway pipe is an error, not an exhausted memory).
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Self::parse(&Self::read_text(path)?, path)
    }

    /// The text of a scenario file, read as [`ScenarioFile::load`] reads it: at most
    /// [`MAX_FILE_BYTES`], UTF-8, errors with the file (and the line of a bad byte).
    pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
        use std::io::Read as _;
        let whole = |message: String| ScenarioError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: None,
            message,
        };
        let file = std::fs::File::open(path).map_err(|e| whole(format!("cannot read: {e}")))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| whole(format!("cannot read: {e}")))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(whole(format!(
                "larger than {} MiB: not a scenario file",
                MAX_FILE_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|e| {
            let (line, column) = line_col_bytes(e.as_bytes(), e.utf8_error().valid_up_to());
            ScenarioError {
                file: path.to_path_buf(),
                line,
                column,
                field: None,
                message: "not UTF-8 text: a scenario is a TOML file".into(),
            }
        })
    }

    /// The relative error asked of the run's delay percentiles: the file's
    /// `delay_precision`, else [`DEFAULT_DELAY_PRECISION`].
    pub fn delay_precision(&self) -> f64 {
        self.delay_precision.unwrap_or(DEFAULT_DELAY_PRECISION)
    }

    /// The interval of the time series, ms: the file's, else [`DEFAULT_SAMPLE_MS`] or the
    /// smallest multiple of it that keeps the run's series within bounds.
    pub fn sample_interval_ms(&self) -> f64 {
        self.sample_interval.unwrap_or_else(|| {
            let least = self.least_sample_interval_ms();
            (least / DEFAULT_SAMPLE_MS).ceil().max(1.0) * DEFAULT_SAMPLE_MS
        })
    }

    /// The smallest sample interval that keeps every series within [`MAX_SAMPLES`] and all
    /// of them within [`MAX_SAMPLE_POINTS`], ms.
    pub fn least_sample_interval_ms(&self) -> f64 {
        // One throughput series per flow; queue, fair-share and table series per link
        // direction; four series per overlay loop.
        let series = self.flow_count() as f64
            + 6.0 * self.links.len() as f64
            + 4.0 * self.loops.len() as f64;
        let ms = self.duration_s * 1e3;
        (ms / MAX_SAMPLES).max(ms * series / MAX_SAMPLE_POINTS)
    }

    /// The number of flows, every table's `count` added up.
    pub fn flow_count(&self) -> u64 {
        self.flows.iter().map(|f| f.get_ref().count as u64).sum()
    }

    /// Serializes back to TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a scenario always serializes")
    }

    /// The same scenario with every link's discipline set to `d`.
    pub fn with_discipline(&self, d: DisciplineKind) -> Self {
        let mut s = self.clone();
        s.discipline = d;
        for l in &mut s.links {
            l.get_mut().discipline = None;
        }
        s
    }

    /// Checks a scenario changed or built in code as its file would be checked. The value
    /// is checked as it is, with no text written or read; only a refused one is written as
    /// the TOML it stands for and read back, so that its error names the line of that
    /// text, the same message its file would get. (A value that still holds a `graphml`
    /// table, which only parsing a file reads, is written out and read back, as before.)
    pub fn check(&self) -> Result<Scenario, ScenarioError> {
        self.clone()
            .checked_as(&format!("<{} as changed>", self.name))
    }

    /// [`ScenarioFile::check`], its errors naming the text `name`.
    pub(super) fn checked_as(self, name: &str) -> Result<Scenario, ScenarioError> {
        if self.graphml.is_none() && self.validate("", Path::new(name)).is_ok() {
            return Ok(Scenario::checked(self));
        }
        ScenarioFile::parse(&self.to_toml(), Path::new(name))
    }
}
