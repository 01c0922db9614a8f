//! Validation of a parsed scenario: every value in a range the simulator handles exactly,
//! every name known, every flow routable. The first fault is reported with the file, the
//! line and the field.
//!
//! Here: the entry point, the scenario's own fields, the links, the buffers against the
//! largest packet, the routes, and `Locate`, which finds a field's line. The `[[flow]]`
//! tables are checked in `validate_flows.rs`, the discipline and `[tcp]` tables in
//! `validate_tables.rs`.

use std::ops::Range;
use std::path::Path;

use super::parse::line_col;
use super::*;

impl ScenarioFile {
    /// Checks every value of a parsed scenario; `text` is what it was parsed from.
    pub(super) fn validate(&self, text: &str, file: &Path) -> Result<(), ScenarioError> {
        let at = Locate { text, file };
        let err =
            |span: Range<usize>, field: &str, message: String| at.in_table(span, field, message);
        let table_key = |table: &str, key: &str| at.table_key(table, key);
        self.validate_top(&at)?;
        self.validate_tables(&at)?;
        let total: u64 = self.flows.iter().map(|f| f.get_ref().count as u64).sum();
        if total > MAX_FLOWS {
            let s = self.flows[0].span();
            return Err(err(
                s,
                "count",
                format!("{total} flows in all; at most {MAX_FLOWS}"),
            ));
        }
        self.validate_links(&at)?;
        self.validate_flows(&at)?;
        self.validate_buffers(&at)?;
        self.validate_routes(&at)?;
        overlay::validate(self).map_err(|(span, field, message)| {
            let short = field.trim_start_matches("overlay.").to_string();
            let span = span.unwrap_or_else(|| table_key("overlay", &short));
            let key = if field.starts_with("overlay.") {
                short
            } else {
                field.clone()
            };
            let mut e = err(span, &key, message);
            e.field = Some(field);
            e
        })
    }
}

impl ScenarioFile {
    /// Links: known routers, rates, delays and buffers in range.
    fn validate_links(&self, at: &Locate) -> Result<(), ScenarioError> {
        let err =
            |span: Range<usize>, field: &str, message: String| at.in_table(span, field, message);
        let routers = self.router_index();
        let known = |n: &str| routers.contains_key(n);
        for l in &self.links {
            let s = l.span();
            let spec = l.get_ref();
            for end in &spec.between {
                if !known(end) {
                    return Err(err(
                        s,
                        "between",
                        format!(
                            "unknown router `{end}` (routers: {})",
                            some_routers(&self.routers)
                        ),
                    ));
                }
            }
            if spec.between[0] == spec.between[1] {
                return Err(err(
                    s,
                    "between",
                    "a link joins two different routers".into(),
                ));
            }
            if !within(spec.rate_mbps, MIN_RATE_MBPS, MAX_RATE_MBPS) {
                return Err(err(s, "rate_mbps", RATE_RANGE.into()));
            }
            if !within(spec.delay_ms, 0.0, MAX_DELAY_MS) {
                return Err(err(s, "delay_ms", DELAY_RANGE.into()));
            }
            if spec.buffer_bytes < 1500 {
                return Err(err(
                    s,
                    "buffer_bytes",
                    "must hold at least one 1500-byte packet".into(),
                ));
            }
        }
        Ok(())
    }
}

impl ScenarioFile {
    /// The scenario's own fields: its name, length, sampling and routers.
    fn validate_top(&self, at: &Locate) -> Result<(), ScenarioError> {
        let bad = |key: &str, message: String| Err(at.in_table(at.top_key(key), key, message));
        if let Err(why) = check_name(&self.name) {
            return bad("name", why);
        }
        if !within(self.duration_s, MIN_TIME_MS / 1e3, MAX_DURATION_S) {
            return bad(
                "duration_s",
                format!("must be 0.000001..={MAX_DURATION_S} seconds"),
            );
        }
        if let Some(ms) = self.sample_interval {
            let least = self.least_sample_interval_ms();
            if !(within(ms, MIN_TIME_MS, MAX_DURATION_S * 1e3) && ms >= least) {
                return bad(
                    "sample_interval_ms",
                    format!(
                        "must be at least {least} ms here: {} flows and {} link(s) over {} s keep \
                         at most {MAX_SAMPLES} samples per series and {MAX_SAMPLE_POINTS} values \
                         in all (leave it out for the smallest allowed multiple of 100 ms)",
                        self.flow_count(),
                        self.links.len(),
                        self.duration_s
                    ),
                );
            }
        }
        if let Some(e) = self.delay_precision {
            if !DELAY_PRECISION.contains(&e) {
                return bad(
                    "delay_precision",
                    format!(
                        "must be {}..={} (a relative error: 0.01 is 1%)",
                        DELAY_PRECISION.start(),
                        DELAY_PRECISION.end()
                    ),
                );
            }
        }
        if self.routers.is_empty() {
            return bad("routers", "at least one router is needed".into());
        }
        let mut seen = std::collections::HashSet::with_capacity(self.routers.len());
        for r in &self.routers {
            if r.is_empty() || r.len() > MAX_NAME_BYTES {
                return bad(
                    "routers",
                    format!("router names must be 1..={MAX_NAME_BYTES} bytes"),
                );
            }
            if let Some(c) = r.chars().find(|&c| !printable(c)) {
                return bad(
                    "routers",
                    format!(
                        "router name {r:?} holds {c:?}: names are printed and written to files, so control and direction-changing characters are refused"
                    ),
                );
            }
            if !seen.insert(r.as_str()) {
                return bad("routers", format!("router `{r}` is listed twice"));
            }
        }
        Ok(())
    }

    /// Every link's buffer holds the largest packet a flow of the scenario sends: a packet
    /// larger than the buffer could never be queued, and its flow would get nothing.
    fn validate_buffers(&self, at: &Locate) -> Result<(), ScenarioError> {
        let mut largest: Option<(u32, String)> = None;
        for (i, f) in self.flows.iter().enumerate() {
            let spec = f.get_ref();
            let (bytes, what) = match spec.kind {
                FlowKind::Tcp | FlowKind::Web => (
                    self.tcp.segment_bytes.max(self.tcp.ack_bytes),
                    "its TCP segments and ACKs ([tcp] segment_bytes, ack_bytes)",
                ),
                _ => (spec.packet_bytes, "its packet_bytes"),
            };
            if largest.as_ref().is_none_or(|(b, _)| bytes > *b) {
                largest = Some((
                    bytes,
                    format!("flow table {} sends {bytes}-byte packets: {what}", i + 1),
                ));
            }
        }
        let Some((bytes, why)) = largest else {
            return Ok(());
        };
        for l in &self.links {
            if l.get_ref().buffer_bytes < bytes {
                return Err(at.in_table(
                    l.span(),
                    "buffer_bytes",
                    format!("must hold the largest packet of the scenario ({why})"),
                ));
            }
        }
        Ok(())
    }

    /// Every flow's endpoints are joined by links (links are duplex).
    fn validate_routes(&self, at: &Locate) -> Result<(), ScenarioError> {
        let routers = self.router_index();
        let index = |name: &str| routers.get(name).copied();
        // Connected components: union-find over the links, with path halving.
        let mut parent: Vec<usize> = (0..self.routers.len()).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for l in &self.links {
            let l = l.get_ref();
            if let (Some(a), Some(b)) = (index(&l.between[0]), index(&l.between[1])) {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
            }
        }
        let comp: Vec<usize> = (0..parent.len()).map(|x| root(&mut parent, x)).collect();
        for f in &self.flows {
            let spec = f.get_ref();
            if let (Some(a), Some(b)) = (index(&spec.from), index(&spec.to)) {
                if comp[a] != comp[b] {
                    return Err(at.in_table(
                        f.span(),
                        "to",
                        format!(
                            "no route from `{}` to `{}`: no chain of [[link]] tables joins them",
                            spec.from, spec.to
                        ),
                    ));
                }
            }
        }
        self.validate_path_lengths(at)
    }

    /// A packet counts its hops in 16 bits: a flow's path (its access links included) may
    /// have at most 65535. Only a network of that many routers can have a longer one, so
    /// only then are the paths' lengths found here (breadth first, as routes are), for the
    /// error to name the flow's table.
    fn validate_path_lengths(&self, at: &Locate) -> Result<(), ScenarioError> {
        const MAX_HOPS: usize = u16::MAX as usize;
        if self.routers.len() < MAX_HOPS - 2 {
            return Ok(());
        }
        let routers = self.router_index();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); self.routers.len()];
        for l in &self.links {
            let l = l.get_ref();
            if let (Some(&a), Some(&b)) = (
                routers.get(l.between[0].as_str()),
                routers.get(l.between[1].as_str()),
            ) {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
        // Flows grouped by source router, each group's distances found once into one
        // buffer: memory stays one distance per router however many sources there are.
        let mut by_source: std::collections::BTreeMap<usize, Vec<(usize, usize)>> =
            Default::default();
        for (i, f) in self.flows.iter().enumerate() {
            let spec = f.get_ref();
            if let (Some(&a), Some(&b)) = (
                routers.get(spec.from.as_str()),
                routers.get(spec.to.as_str()),
            ) {
                by_source.entry(a).or_default().push((i, b));
            }
        }
        let mut dist = vec![u32::MAX; adj.len()];
        let mut queue = std::collections::VecDeque::new();
        // The first offending flow in file order, with its length.
        let mut worst: Option<(usize, usize)> = None;
        for (a, flows) in by_source {
            dist.fill(u32::MAX);
            dist[a] = 0;
            queue.push_back(a);
            while let Some(x) = queue.pop_front() {
                for &y in &adj[x] {
                    if dist[y] == u32::MAX {
                        dist[y] = dist[x] + 1;
                        queue.push_back(y);
                    }
                }
            }
            for (i, b) in flows {
                let access = if self.flows[i].get_ref().access.is_some() {
                    2
                } else {
                    0
                };
                let hops = dist[b] as usize + access;
                if dist[b] != u32::MAX && hops > MAX_HOPS && worst.is_none_or(|(w, _)| i < w) {
                    worst = Some((i, hops));
                }
            }
        }
        if let Some((i, hops)) = worst {
            let (f, spec) = (&self.flows[i], self.flows[i].get_ref());
            return Err(at.in_table(
                f.span(),
                "to",
                format!(
                    "the path from `{}` to `{}` has {hops} hops: a packet counts at most \
                     {MAX_HOPS}",
                    spec.from, spec.to
                ),
            ));
        }
        Ok(())
    }
}

/// The routers for an error message: all of them if few, else the first ten and a count.
pub(super) fn some_routers(routers: &[String]) -> String {
    if routers.len() <= 10 {
        routers.join(", ")
    } else {
        format!(
            "{}, ... ({} in all)",
            routers[..10].join(", "),
            routers.len()
        )
    }
}

/// A character a name may hold: not a control character, and not one of Unicode's
/// direction overrides and isolates (U+202A..U+202E, U+2066..U+2069), which would make a
/// terminal show text other than what is there.
pub(crate) fn printable(c: char) -> bool {
    !c.is_control() && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A scenario's name becomes a directory name (`out/NAME`): one path component of
/// letters, digits, `-`, `_` and `.`, not starting with `.`.
fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        Err(format!("must be 1..={MAX_NAME_BYTES} characters"))
    } else if name.starts_with('.') || !name.chars().all(ok_char) {
        Err(format!(
            "`{name}` is used as a directory name: letters, digits, `-`, `_` and `.` only, \
             not starting with `.`"
        ))
    } else {
        Ok(())
    }
}

pub(super) use crate::limits::within;

/// Finds where a field is written, to point errors at its line.
pub(super) struct Locate<'a> {
    pub text: &'a str,
    pub file: &'a Path,
}

impl Locate<'_> {
    /// An error at `field` inside the table spanning `span` (at the table's header if the
    /// field is not written there).
    pub fn in_table(&self, span: Range<usize>, field: &str, message: String) -> ScenarioError {
        let text = self.text;
        // A table's span covers its header; its keys run to the next header.
        let mut at = span.start;
        let mut pos = span.start;
        for (i, l) in text[span.start.min(text.len())..]
            .split_inclusive('\n')
            .enumerate()
        {
            if i > 0 && l.trim_start().starts_with('[') {
                break;
            }
            let key = l.split('=').next().unwrap_or("").trim();
            if key == field {
                at = pos + (l.len() - l.trim_start().len());
                break;
            }
            pos += l.len();
        }
        let (line, column) = line_col(text, at);
        ScenarioError {
            file: self.file.to_path_buf(),
            line,
            column,
            field: Some(field.to_string()),
            message,
        }
    }

    /// The line of a top-level `key`, else the file's start.
    pub fn top_key(&self, key: &str) -> Range<usize> {
        let mut pos = 0usize;
        for l in self.text.split_inclusive('\n') {
            let t = l.trim_start();
            if t.starts_with('[') {
                break;
            }
            if t.split('=').next().unwrap_or("").trim() == key {
                return pos..pos;
            }
            pos += l.len();
        }
        0..0
    }

    /// The line of `key` inside the `[table]` section, else the section's header.
    pub fn table_key(&self, table: &str, key: &str) -> Range<usize> {
        let header = format!("[{table}]");
        let mut pos = 0usize;
        let mut inside = false;
        let mut found = None;
        for l in self.text.split_inclusive('\n') {
            let t = l.trim_start();
            if t.starts_with('[') {
                inside = t.trim_end().starts_with(&header);
                if inside && found.is_none() {
                    found = Some(pos);
                }
            } else if inside && t.split('=').next().unwrap_or("").trim() == key {
                found = Some(pos + (l.len() - t.len()));
                break;
            }
            pos += l.len();
        }
        let at = found.unwrap_or(0);
        at..at
    }
}
