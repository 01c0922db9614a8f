//! Topologies from GraphML files, as the Internet Topology Zoo ships them (and ns-3 and
//! Mininet users load them): a scenario's `[graphml]` table names the file, and its nodes
//! become routers and its edges links; the flows stay in the scenario.
//!
//! ```toml
//! [graphml]
//! file = "topology-zoo/Abilene.graphml"   # relative to the scenario file
//! rate_scale = 0.001                      # OC-192 (9953 Mbit/s) becomes 9.95 Mbit/s
//! rate_mbps = 10                          # edges the file gives no speed
//! delay_ms = 1                            # edges between nodes without coordinates
//! buffer_bytes = 64000
//! ```
//!
//! - **Routers** are named by their node's `label` where it is a valid, unique router name,
//!   else by the node's `id`.
//! - **Rates** come from an edge's `LinkSpeedRaw` (bit/s), else `LinkSpeed` with
//!   `LinkSpeedUnits` (`G`, `M`, `K`), else an `OC-n` in its `LinkType` or `LinkLabel`
//!   (n x 51.84 Mbit/s), else `rate_mbps`; times `rate_scale`.
//! - **Delays** are the great-circle distance between the two nodes' `Latitude` and
//!   `Longitude` at two thirds of the speed of light (light in fibre, 5 us per km), else
//!   `delay_ms`.
//! - Edges are undirected (every link carries both directions). A scenario has one link
//!   per pair of routers: a second edge between the same two nodes (a multigraph's
//!   parallel links) adds its rate to the first's; an edge from a node to itself is left
//!   out.
//! - Values the file gives are checked here, against the ranges every link is held to, so
//!   that a fault names the GraphML file, the node's or edge's line and the attribute.
//! - The file is found relative to the scenario file; a scenario given as text (the Python
//!   package's `dict` or string) has none, and it is found from the working directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{LinkSpec, ScenarioError};

/// The most bytes a GraphML file may have: a scenario file's limit (Topology Zoo files are
/// tens of kilobytes).
pub const MAX_GRAPHML_BYTES: u64 = super::MAX_FILE_BYTES;

/// The deepest nesting of elements read: GraphML nests five deep (graphml, graph, node or
/// edge, data, and a value's markup); a file far deeper is not a topology, and a parser or
/// a walk over it must not run out of stack.
pub const MAX_GRAPHML_DEPTH: usize = 64;

/// Where an XML text's elements first nest deeper than `max`, as (line, column), 1-based;
/// `None` if they never do. Comments, CDATA sections, processing instructions and
/// declarations are skipped; an empty element (`<a/>`) opens nothing. Only a bound, checked
/// before the parser sees the text: a malformed file is the parser's to report.
fn nesting_beyond(text: &str, max: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    let skip_to = |from: usize, end: &[u8]| {
        b[from..]
            .windows(end.len())
            .position(|w| w == end)
            .map_or(b.len(), |k| from + k + end.len())
    };
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = skip_to(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(i + 2, b"?>");
        } else if rest.starts_with(b"<!") {
            i = skip_to(i + 2, b">");
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = skip_to(i + 2, b">");
        } else {
            let end = skip_to(i + 1, b">");
            let empty = end >= 2 && b[end - 2] == b'/';
            if !empty {
                depth += 1;
                if depth > max {
                    let line = 1 + b[..i].iter().filter(|&&c| c == b'\n').count();
                    let col = 1 + i
                        - b[..i]
                            .iter()
                            .rposition(|&c| c == b'\n')
                            .map_or(0, |p| p + 1);
                    return Some((line, col));
                }
            }
            i = end;
        }
    }
    None
}

/// A scenario's `[graphml]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphmlSpec {
    /// The GraphML file, relative to the scenario file.
    pub file: PathBuf,
    /// The rate of edges the file gives no speed, Mbit/s.
    #[serde(default = "default_rate_mbps")]
    pub rate_mbps: f64,
    /// Every rate (the file's and `rate_mbps`) is multiplied by this.
    #[serde(default = "one")]
    pub rate_scale: f64,
    /// The delay of edges whose ends lack coordinates, ms.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: f64,
    /// Every link's buffer per direction, bytes.
    #[serde(default = "default_buffer_bytes")]
    pub buffer_bytes: u32,
}

fn default_rate_mbps() -> f64 {
    10.0
}
fn one() -> f64 {
    1.0
}
fn default_delay_ms() -> f64 {
    1.0
}
fn default_buffer_bytes() -> u32 {
    64_000
}

/// Routers and links read from a GraphML file.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphmlTopology {
    /// Router names, in the file's node order.
    pub routers: Vec<String>,
    /// Links, in the file's edge order.
    pub links: Vec<LinkSpec>,
    /// Edges not made links of their own: self-loops, and parallel edges (whose capacity
    /// was added to their pair's link).
    pub skipped_edges: usize,
}

/// Earth's mean radius, km.
const EARTH_KM: f64 = 6371.0;
/// Propagation in fibre: two thirds of c, so 5 us per km.
const MS_PER_KM: f64 = 0.005;

/// The great-circle distance between two (latitude, longitude) points in degrees, km.
pub fn great_circle_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, lo1, la2, lo2) = (
        a.0.to_radians(),
        a.1.to_radians(),
        b.0.to_radians(),
        b.1.to_radians(),
    );
    let h = ((la2 - la1) / 2.0).sin().powi(2)
        + la1.cos() * la2.cos() * ((lo2 - lo1) / 2.0).sin().powi(2);
    2.0 * EARTH_KM * h.sqrt().min(1.0).asin()
}

/// An `OC-n` rate in a label ("OC-192", "OC-48c"), bit/s.
fn oc_rate(label: &str) -> Option<f64> {
    let up = label.to_ascii_uppercase();
    let at = up.find("OC-")?;
    let digits: String = up[at + 3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n: f64 = digits.parse().ok()?;
    (n > 0.0).then_some(n * 51.84e6)
}

/// A node's or edge's `<data>` values by attribute name (`kind`: `node` or `edge`).
fn data_of<'a>(
    n: roxmltree::Node<'a, '_>,
    kind: &str,
    keys: &HashMap<(&str, &str), &'a str>,
) -> HashMap<&'a str, &'a str> {
    n.children()
        .filter(|c| c.has_tag_name("data"))
        .filter_map(|c| {
            let key = c.attribute("key")?;
            let name = keys.get(&(kind, key)).or_else(|| keys.get(&("all", key)))?;
            Some((*name, c.text().unwrap_or("").trim()))
        })
        .collect()
}

impl GraphmlSpec {
    /// Reads the file (relative to `scenario`, the scenario file's path) into routers and
    /// links. Errors name the GraphML file, and the line and column in it.
    pub fn read(&self, scenario: &Path) -> Result<GraphmlTopology, ScenarioError> {
        let path = if self.file.is_absolute() {
            self.file.clone()
        } else {
            scenario.parent().unwrap_or(Path::new(".")).join(&self.file)
        };
        let whole = |message: String| ScenarioError {
            file: path.clone(),
            line: 0,
            column: 0,
            field: None,
            message,
        };
        for (field, v, ok) in [
            ("graphml.rate_mbps", self.rate_mbps, self.rate_mbps > 0.0),
            ("graphml.rate_scale", self.rate_scale, self.rate_scale > 0.0),
            ("graphml.delay_ms", self.delay_ms, self.delay_ms >= 0.0),
        ] {
            if !(v.is_finite() && ok) {
                return Err(ScenarioError {
                    file: scenario.to_path_buf(),
                    line: 0,
                    column: 0,
                    field: Some(field.into()),
                    message: format!("{v} is out of range"),
                });
            }
        }
        let text = {
            use std::io::Read as _;
            // Only a regular file: a FIFO or a device would block the read or never end.
            let meta = std::fs::metadata(&path).map_err(|e| whole(format!("cannot read: {e}")))?;
            if !meta.is_file() {
                return Err(whole("not a regular file".to_string()));
            }
            let f = std::fs::File::open(&path).map_err(|e| whole(format!("cannot read: {e}")))?;
            let mut s = String::new();
            f.take(MAX_GRAPHML_BYTES + 1)
                .read_to_string(&mut s)
                .map_err(|e| whole(format!("cannot read: {e}")))?;
            if s.len() as u64 > MAX_GRAPHML_BYTES {
                return Err(whole(format!(
                    "larger than {} MiB: not a topology",
                    MAX_GRAPHML_BYTES >> 20
                )));
            }
            s
        };
        if let Some((line, column)) = nesting_beyond(&text, MAX_GRAPHML_DEPTH) {
            return Err(ScenarioError {
                file: path.clone(),
                line,
                column,
                field: None,
                message: format!(
                    "elements nest deeper than {MAX_GRAPHML_DEPTH}: not a topology (nesting too deep)"
                ),
            });
        }
        let doc = roxmltree::Document::parse(&text).map_err(|e| {
            let p = e.pos();
            ScenarioError {
                file: path.clone(),
                line: p.row as usize,
                column: p.col as usize,
                field: None,
                message: format!("not GraphML: {e}"),
            }
        })?;
        let at = |node: roxmltree::Node, field: &str, message: String| {
            let p = doc.text_pos_at(node.range().start);
            ScenarioError {
                file: path.clone(),
                line: p.row as usize,
                column: p.col as usize,
                field: Some(field.to_string()),
                message,
            }
        };
        // Keys: id -> attribute name, for nodes and for edges.
        let mut keys: HashMap<(&str, &str), &str> = HashMap::new();
        for k in doc.descendants().filter(|n| n.has_tag_name("key")) {
            if let (Some(id), Some(name)) = (k.attribute("id"), k.attribute("attr.name")) {
                keys.insert((k.attribute("for").unwrap_or("all"), id), name);
            }
        }
        let graph = doc
            .descendants()
            .find(|n| n.has_tag_name("graph"))
            .ok_or_else(|| whole("no <graph> element".into()))?;
        // Nodes.
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut labels = Vec::new();
        let mut coords = Vec::new();
        for n in graph.children().filter(|n| n.has_tag_name("node")) {
            let id = n
                .attribute("id")
                .ok_or_else(|| at(n, "id", "a node without an id".into()))?;
            if id.is_empty()
                || id.len() > super::MAX_NAME_BYTES
                || !id.chars().all(super::validate::printable)
            {
                return Err(at(
                    n,
                    "id",
                    format!(
                        "node id {id:?}: ids name routers, so 1..={} printable bytes",
                        super::MAX_NAME_BYTES
                    ),
                ));
            }
            if index.insert(id, labels.len()).is_some() {
                return Err(at(n, "id", format!("node id `{id}` appears twice")));
            }
            let d = data_of(n, "node", &keys);
            let num = |k: &str| d.get(k).and_then(|v| v.parse::<f64>().ok());
            coords.push(match (num("Latitude"), num("Longitude")) {
                (Some(la), Some(lo))
                    if (-90.0..=90.0).contains(&la) && (-180.0..=180.0).contains(&lo) =>
                {
                    Some((la, lo))
                }
                _ => None,
            });
            labels.push((id, d.get("label").map(|s| s.to_string())));
        }
        if labels.is_empty() {
            return Err(at(graph, "node", "the graph has no nodes".into()));
        }
        // Names: the label where it is a valid name no other node has, else the id.
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, l) in &labels {
            if let Some(l) = l {
                *count.entry(l.as_str()).or_default() += 1;
            }
        }
        let ok_name = |s: &str| {
            !s.is_empty()
                && s.len() <= super::MAX_NAME_BYTES
                && s.chars().all(super::validate::printable)
        };
        let ids: std::collections::HashSet<&str> = labels.iter().map(|(id, _)| *id).collect();
        let routers: Vec<String> = labels
            .iter()
            .map(|(id, l)| match l {
                Some(l)
                    if ok_name(l)
                        && count[l.as_str()] == 1
                        && (!ids.contains(l.as_str()) || l == id) =>
                {
                    l.clone()
                }
                _ => id.to_string(),
            })
            .collect();
        // Edges. A second edge between the same two nodes adds its capacity to the
        // first's (a multigraph's parallel links); an edge from a node to itself is left
        // out.
        let mut links: Vec<LinkSpec> = Vec::new();
        let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
        let mut skipped_edges = 0;
        let positive = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
        for e in graph.children().filter(|n| n.has_tag_name("edge")) {
            let end = |attr: &str| -> Result<usize, ScenarioError> {
                let id = e
                    .attribute(attr)
                    .ok_or_else(|| at(e, attr, format!("an edge without a {attr}")))?;
                index
                    .get(id)
                    .copied()
                    .ok_or_else(|| at(e, attr, format!("no node `{id}`")))
            };
            let (a, b) = (end("source")?, end("target")?);
            if a == b {
                skipped_edges += 1;
                continue;
            }
            let d = data_of(e, "edge", &keys);
            // A number that is no speed (NaN, infinite, negative) is an error at its edge,
            // not the default rate in silence; 0 is the Topology Zoo's "unknown".
            for k in ["LinkSpeedRaw", "LinkSpeed"] {
                if let Some(v) = d.get(k).and_then(|v| v.parse::<f64>().ok()) {
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(at(
                            e,
                            k,
                            format!("{v} is not a speed (a finite number >= 0; 0 for unknown)"),
                        ));
                    }
                }
            }
            let raw = d
                .get("LinkSpeedRaw")
                .and_then(|v| v.parse::<f64>().ok())
                .and_then(positive);
            let unit = |u: &str| match u.trim() {
                "G" | "g" => Some(1e9),
                "M" | "m" => Some(1e6),
                "K" | "k" => Some(1e3),
                _ => None,
            };
            let speed = d
                .get("LinkSpeed")
                .and_then(|v| v.parse::<f64>().ok())
                .zip(d.get("LinkSpeedUnits").and_then(|u| unit(u)))
                .map(|(v, u)| v * u)
                .and_then(positive);
            let oc = ["LinkType", "LinkLabel"]
                .iter()
                .find_map(|k| d.get(k).and_then(|l| oc_rate(l)));
            let bps = raw.or(speed).or(oc).unwrap_or(self.rate_mbps * 1e6);
            let rate_mbps = bps * self.rate_scale / 1e6;
            // The ranges every scenario's links are held to, checked here so that the
            // fault names the edge.
            if !(0.001..=1_000_000.0).contains(&rate_mbps) {
                return Err(at(
                    e,
                    "rate",
                    format!(
                        "{rate_mbps} Mbit/s (the file's {bps} bit/s times rate_scale {}) is \
                         out of range: 0.001..=1000000",
                        self.rate_scale
                    ),
                ));
            }
            let delay_ms = match (coords[a], coords[b]) {
                (Some(p), Some(q)) => great_circle_km(p, q) * MS_PER_KM,
                _ => self.delay_ms,
            };
            if delay_ms > 1_000_000.0 {
                return Err(at(
                    e,
                    "delay",
                    format!("{delay_ms} ms is out of range: 0..=1000000"),
                ));
            }
            let pair = (a.min(b), a.max(b));
            if let Some(&i) = pairs.get(&pair) {
                skipped_edges += 1;
                links[i].rate_mbps += rate_mbps;
                // The sum is held to the range every link is, at the edge that passed it.
                if links[i].rate_mbps > 1_000_000.0 {
                    return Err(at(
                        e,
                        "rate",
                        format!(
                            "the parallel edges between {} and {} sum to {} Mbit/s, out of \
                             range: 0.001..=1000000",
                            routers[pair.0], routers[pair.1], links[i].rate_mbps
                        ),
                    ));
                }
                continue;
            }
            pairs.insert(pair, links.len());
            links.push(LinkSpec {
                between: [routers[a].clone(), routers[b].clone()],
                rate_mbps,
                delay_ms,
                buffer_bytes: self.buffer_bytes,
                discipline: None,
            });
        }
        Ok(GraphmlTopology {
            routers,
            links,
            skipped_edges,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New York to Chicago: 1145 km by the haversine formula on a 6371 km sphere.
    #[test]
    fn great_circle_by_hand() {
        let km = great_circle_km((40.71427, -74.00597), (41.85003, -87.65005));
        assert!((km - 1145.0).abs() < 2.0, "{km}");
        assert_eq!(great_circle_km((10.0, 20.0), (10.0, 20.0)), 0.0);
    }

    #[test]
    fn oc_rates() {
        assert_eq!(oc_rate("OC-192"), Some(192.0 * 51.84e6));
        assert_eq!(oc_rate("oc-48c"), Some(48.0 * 51.84e6));
        assert_eq!(oc_rate("Ethernet"), None);
    }

    fn spec() -> GraphmlSpec {
        GraphmlSpec {
            file: "t.graphml".into(),
            rate_mbps: 10.0,
            rate_scale: 1.0,
            delay_ms: 2.0,
            buffer_bytes: 64_000,
        }
    }

    fn read(xml: &str) -> Result<GraphmlTopology, ScenarioError> {
        let dir = std::env::temp_dir().join(format!("csfq-graphml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!("t{}.graphml", xml.len());
        std::fs::write(dir.join(&name), xml).unwrap();
        GraphmlSpec {
            file: name.into(),
            ..spec()
        }
        .read(&dir.join("s.toml"))
    }

    /// A file nested 20 000 deep (which overflowed the stack and killed the process, or the
    /// Python interpreter that ran it) is refused at the element that goes too deep, with
    /// its line and column; comments, CDATA and empty elements do not count; a GraphML
    /// file's own depth passes.
    #[test]
    fn nesting_too_deep_is_an_error_not_a_crash() {
        let n = 20_000;
        let xml = format!(
            "<graphml>\n{}{}</graphml>",
            "<a>".repeat(n),
            "</a>".repeat(n)
        );
        let e = read(&xml).unwrap_err();
        assert!(e.message.contains("nesting too deep"), "{e}");
        // <graphml> is depth 1 on line 1; the 64th <a> (depth 65) starts at column 190
        // of line 2.
        assert_eq!((e.line, e.column), (2, 1 + 3 * 63));
        assert_eq!(
            nesting_beyond("<a><!-- <b><c> --><![CDATA[<d><e>]]><f/><?x <g>?></a>", 1),
            None
        );
        assert_eq!(nesting_beyond("<a><b></b></a>", 1), Some((1, 4)));
        assert_eq!(
            nesting_beyond(
                &format!("{HEAD}<node id=\"0\"><data key=\"d0\">x</data></node></graph></graphml>"),
                4
            ),
            None
        );
    }

    /// A GraphML path that is a FIFO is refused at once (it used to block the run for
    /// ever).
    #[test]
    fn a_fifo_is_not_read() {
        let dir = std::env::temp_dir().join(format!("csfq-graphml-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("f.graphml");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED a_fifo_is_not_read: mkfifo unavailable");
            return;
        }
        let e = GraphmlSpec {
            file: "f.graphml".into(),
            ..spec()
        }
        .read(&dir.join("s.toml"))
        .unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    const HEAD: &str = r#"<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
<key attr.name="label" attr.type="string" for="node" id="d0"/>
<key attr.name="Latitude" attr.type="double" for="node" id="d1"/>
<key attr.name="Longitude" attr.type="double" for="node" id="d2"/>
<key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="d3"/>
<key attr.name="LinkLabel" attr.type="string" for="edge" id="d4"/>
<graph edgedefault="undirected">
"#;

    /// Names, rates and delays as documented: a speed in bit/s, an OC-n label, the
    /// default; coordinates give the delay, a node without them the default; a duplicate
    /// label falls back to ids; a self-loop is left out and a parallel edge's rate added.
    #[test]
    fn reads_names_rates_and_delays() {
        let xml = format!(
            "{HEAD}<node id=\"0\"><data key=\"d0\">New York</data><data key=\"d1\">40.71427</data><data key=\"d2\">-74.00597</data></node>
<node id=\"1\"><data key=\"d0\">Chicago</data><data key=\"d1\">41.85003</data><data key=\"d2\">-87.65005</data></node>
<node id=\"2\"><data key=\"d0\">Twin</data></node>
<node id=\"3\"><data key=\"d0\">Twin</data></node>
<edge source=\"0\" target=\"1\"><data key=\"d3\">2500000000</data></edge>
<edge source=\"1\" target=\"2\"><data key=\"d4\">OC-48</data></edge>
<edge source=\"2\" target=\"3\"/>
<edge source=\"3\" target=\"3\"/>
<edge source=\"1\" target=\"0\"/>
</graph></graphml>"
        );
        let t = read(&xml).unwrap();
        assert_eq!(t.routers, ["New York", "Chicago", "2", "3"]);
        assert_eq!(t.links.len(), 3);
        assert_eq!(t.skipped_edges, 2);
        assert_eq!(
            t.links[0].between,
            ["New York".to_string(), "Chicago".into()]
        );
        // The parallel edge (no speed: the default 10) adds to the pair's link.
        assert_eq!(t.links[0].rate_mbps, 2510.0);
        assert!(
            (t.links[0].delay_ms - 5.72).abs() < 0.02,
            "{}",
            t.links[0].delay_ms
        );
        assert!((t.links[1].rate_mbps - 48.0 * 51.84).abs() < 1e-9);
        assert_eq!(t.links[1].delay_ms, 2.0);
        assert_eq!(t.links[2].rate_mbps, 10.0);
    }

    /// A speed of 0 is no speed: the next source (here an OC-48 label) gives the rate.
    #[test]
    fn a_zero_speed_falls_through_to_the_label() {
        let xml = format!(
            "{HEAD}<node id=\"0\"/><node id=\"1\"/>
<edge source=\"0\" target=\"1\"><data key=\"d3\">0</data><data key=\"d4\">OC-48</data></edge>
</graph></graphml>"
        );
        let t = read(&xml).unwrap();
        assert!((t.links[0].rate_mbps - 48.0 * 51.84).abs() < 1e-9);
    }

    /// A speed that is NaN, infinite or negative is an error at its edge, naming the
    /// field (it became the default rate in silence).
    #[test]
    fn a_speed_that_is_no_number_is_an_error() {
        for bad in ["NaN", "inf", "-1e9"] {
            let e = read(&format!(
                "{HEAD}<node id=\"0\"/><node id=\"1\"/>\n<edge source=\"0\" target=\"1\"><data key=\"d3\">{bad}</data></edge>\n</graph></graphml>"
            ))
            .unwrap_err();
            assert_eq!(
                (e.line, e.field.as_deref()),
                (9, Some("LinkSpeedRaw")),
                "{bad}: {e}"
            );
            assert!(e.message.contains("not a speed"), "{e}");
        }
    }

    /// Parallel edges whose rates sum past the links' range are an error at the edge that
    /// passed it (600 Gbit/s twice: 1.2 Tbit/s), not a later one at the scenario's link.
    #[test]
    fn parallel_edges_summing_out_of_range_are_an_error_at_the_edge() {
        let edge = |line: &str| {
            format!("<edge source=\"0\" target=\"1\"><data key=\"d3\">{line}</data></edge>\n")
        };
        let e = read(&format!(
            "{HEAD}<node id=\"0\"/><node id=\"1\"/>\n{}{}</graph></graphml>",
            edge("6e11"),
            edge("6e11")
        ))
        .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (10, Some("rate")), "{e}");
        assert!(
            e.message.contains("parallel edges") && e.message.contains("1200000"),
            "{e}"
        );
        // Within the range they add up.
        assert!(read(&format!(
            "{HEAD}<node id=\"0\"/><node id=\"1\"/>\n{}{}</graph></graphml>",
            edge("4e11"),
            edge("4e11")
        ))
        .is_ok());
    }

    /// Bad files are errors naming the GraphML file and the line of the fault.
    #[test]
    fn bad_files_name_file_and_line() {
        // A rate out of range names the edge's line, not the scenario's table.
        let e = read(&format!(
            "{HEAD}<node id=\"0\"/><node id=\"1\"/>\n<edge source=\"0\" target=\"1\"><data key=\"d3\">1</data></edge>\n</graph></graphml>"
        ))
        .unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (9, Some("rate")), "{e}");
        let e = read(&format!("{HEAD}<node id=\"a&#10;b\"/>\n</graph></graphml>")).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (8, Some("id")), "{e}");
        let e = read(&format!(
            "{HEAD}<node id=\"0\"/>\n<edge source=\"0\" target=\"9\"/>\n</graph></graphml>"
        ))
        .unwrap_err();
        assert_eq!(
            e.file.extension().and_then(|x| x.to_str()),
            Some("graphml"),
            "{e}"
        );
        assert_eq!((e.line, e.field.as_deref()), (9, Some("target")), "{e}");
        assert!(e.message.contains("no node `9`"), "{e}");
        let e = read("<graphml><graph><node id=\"0\"></graph>").unwrap_err();
        assert!(e.line >= 1 && e.message.starts_with("not GraphML"), "{e}");
        let e = read(&format!("{HEAD}</graph></graphml>")).unwrap_err();
        assert!(e.message.contains("no nodes"), "{e}");
        let e = GraphmlSpec {
            file: "nosuch.graphml".into(),
            ..spec()
        }
        .read(Path::new("/tmp/s.toml"))
        .unwrap_err();
        assert!(e.message.starts_with("cannot read"), "{e}");
    }
}
