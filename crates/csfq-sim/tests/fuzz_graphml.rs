//! The GraphML reader on mutated topologies: the Topology Zoo's Abilene file (with
//! `scenarios/abilene.toml`'s flows) with attribute values and `<data>` values replaced by
//! extremes and bad names, lines wrapped in elements nested up to 20 000 deep (also inside
//! an entity the document declares), lines duplicated up to a thousand times, lines
//! deleted, markup inserted (duplicate ids, self-loops, edges to no node, odd keys,
//! unterminated comments, entity expansions) and the text cut short. Each case either
//! fails to load with an error naming the GraphML file (its line and column where the
//! fault has one) or the scenario's `[graphml]` table, or builds, gets its allocations and
//! runs its first 2 simulated ms: never a panic, never a stack overflow (which would abort
//! the whole test binary).
//!
//! Cases: `CSFQ_FUZZ_CASES` (default 3000; the README gives the long run).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use csfq_sim::{ScenarioFile, Simulation, Topology};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("CSFQ_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

const VALUES: &[&str] = &[
    "",
    "0",
    "-1",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e300",
    "1e-300",
    "18446744073709551616",
    "4e12",
    "OC-0",
    "OC-999999999",
    "Seattle",
    "nosuch",
    "a b",
    "..",
    "&amp;",
    "&lt;node&gt;",
    "G",
    "x",
    "90.5",
    "-180",
    "1e9",
];

const SNIPPETS: &[&str] = &[
    "<node id=\"0\"/>",
    "<node id=\"\"/>",
    "<node/>",
    "<node id=\"zz\"><data key=\"d33\">Seattle</data></node>",
    "<node id=\"yy\"><data key=\"d29\">nan</data><data key=\"d32\">1e308</data></node>",
    "<edge source=\"0\" target=\"0\"/>",
    "<edge source=\"0\" target=\"nosuch\"/>",
    "<edge/>",
    "<edge source=\"0\" target=\"1\"><data key=\"d34\">OC-192</data></edge>",
    "<edge source=\"1\" target=\"2\"><data key=\"ls\">-5</data></edge>",
    "<key attr.name=\"LinkSpeedRaw\" attr.type=\"double\" for=\"edge\" id=\"ls\"/>",
    "<key attr.name=\"LinkSpeed\" for=\"edge\" id=\"d34\"/>",
    "<key attr.name=\"label\" for=\"node\" id=\"d33\"/>",
    "<graph edgedefault=\"directed\">",
    "</graph>",
    "<!-- unterminated",
    "<![CDATA[ <node id=\"c\"/> ]]>",
    "<?pi x?>",
    "&undefined;",
    "&#0;",
    "<",
    "]]>",
];

#[derive(Debug, Clone)]
enum Edit {
    Attribute(usize, &'static str),
    Data(usize, &'static str),
    Nest(usize, usize),
    Duplicate(usize, usize),
    DeleteLine(usize),
    Insert(usize, &'static str),
    /// An entity declared in the prolog holding `depth` nested elements (or, with
    /// `laughs`, ten references to the previous entity, nine levels), referenced in the
    /// graph.
    Entity(usize, bool),
    Cut(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let depth = select(vec![1usize, 5, 63, 64, 65, 1000, 20_000]);
    prop_oneof![
        4 => (any::<usize>(), select(VALUES)).prop_map(|(i, v)| Edit::Attribute(i, v)),
        3 => (any::<usize>(), select(VALUES)).prop_map(|(i, v)| Edit::Data(i, v)),
        2 => (any::<usize>(), depth.clone()).prop_map(|(i, d)| Edit::Nest(i, d)),
        1 => (any::<usize>(), select(vec![1usize, 10, 1000])).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        2 => (any::<usize>(), select(SNIPPETS)).prop_map(|(i, s)| Edit::Insert(i, s)),
        1 => (depth, any::<bool>()).prop_map(|(d, l)| Edit::Entity(d, l)),
        1 => any::<usize>().prop_map(Edit::Cut),
    ]
}

/// Byte ranges of attribute values (`="..."`) or of `<data>` values (`>...</data>`).
fn values(text: &str, data: bool) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    if data {
        let mut from = 0;
        while let Some(k) = text[from..].find("</data>") {
            let end = from + k;
            let start = text[..end].rfind('>').map_or(end, |s| s + 1);
            out.push(start..end);
            from = end + 7;
        }
    } else {
        let mut from = 0;
        while let Some(k) = text[from..].find("=\"") {
            let start = from + k + 2;
            let end = text[start..].find('"').map_or(text.len(), |e| start + e);
            out.push(start..end);
            from = (end + 1).min(text.len());
        }
    }
    out
}

fn apply(text: &str, e: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = |i: &usize, n: usize| if n == 0 { 0 } else { i % n };
    match e {
        Edit::Attribute(i, v) | Edit::Data(i, v) => {
            let r = values(text, matches!(e, Edit::Data(..)));
            if r.is_empty() {
                return text.to_string();
            }
            let r = r[i % r.len()].clone();
            return format!("{}{}{}", &text[..r.start], v, &text[r.end..]);
        }
        Edit::Nest(i, depth) => {
            let k = at(i, lines.len());
            if let Some(l) = lines.get_mut(k) {
                *l = format!("{}{l}{}", "<x>".repeat(*depth), "</x>".repeat(*depth));
            }
        }
        Edit::Duplicate(i, n) => {
            let k = at(i, lines.len());
            if let Some(l) = lines.get(k).cloned() {
                for _ in 0..*n {
                    lines.insert(k, l.clone());
                }
            }
        }
        Edit::DeleteLine(i) => {
            let k = at(i, lines.len());
            if k < lines.len() {
                lines.remove(k);
            }
        }
        Edit::Insert(i, s) => {
            let k = at(i, lines.len() + 1);
            lines.insert(k, s.to_string());
        }
        Edit::Entity(depth, laughs) => {
            let decl = if *laughs {
                let mut d = String::from("<!ENTITY l0 \"lol\">");
                for k in 1..10 {
                    d += &format!("<!ENTITY l{k} \"{}\">", format!("&l{};", k - 1).repeat(10));
                }
                d + "<!ENTITY a \"&l9;\">"
            } else {
                format!(
                    "<!ENTITY a \"{}{}\">",
                    "<x>".repeat(*depth),
                    "</x>".repeat(*depth)
                )
            };
            let graph = lines.iter().position(|l| l.starts_with("<graph "));
            if let Some(g) = graph {
                lines.insert(g + 1, "&a;".into());
            }
            lines.insert(0, format!("<!DOCTYPE graphml [{decl}]>"));
        }
        Edit::Cut(i) => {
            let mut k = i % (text.len() + 1);
            while !text.is_char_boundary(k) {
                k -= 1;
            }
            return text[..k].to_string();
        }
    }
    lines.join("\n") + "\n"
}

/// A run estimated above this many events in its first 2 ms is not run: its cost per case
/// is time, not safety.
const SHORT_RUN_EVENTS: f64 = 1_000_000.0;

/// Cases refused with an error, and cases run: the fuzzer reaches both.
static REFUSED: AtomicUsize = AtomicUsize::new(0);
static RAN: AtomicUsize = AtomicUsize::new(0);

fn check(dir: &Path, scenario: &str, graphml: &str) -> Result<(), TestCaseError> {
    let g = dir.join("t.graphml");
    std::fs::write(&g, graphml).unwrap();
    let file = dir.join("t.toml");
    let s = match ScenarioFile::parse(scenario, &file) {
        Ok(s) => s,
        Err(e) => {
            let shown = e.to_string();
            // A fault in the topology names the GraphML file; one that is the scenario's
            // (a flow's router the file no longer has) names the scenario and its line.
            prop_assert!(e.file == g || e.file == file, "{}", shown);
            prop_assert!(
                shown.starts_with(&format!("{}:", e.file.display())),
                "{}",
                shown
            );
            prop_assert!(e.file == g || e.line >= 1, "{}", shown);
            REFUSED.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
    };
    let topo = Topology::build(&s).map_err(|e| TestCaseError::fail(format!("valid but {e}")))?;
    let alloc = topo.max_min_allocation();
    prop_assert!(alloc.iter().all(|a| *a >= 0.0), "{:?}", alloc);
    // Its first 2 ms (the scenario run until then: one cut short could hold flows that
    // start after its end, which no file may).
    let until_s = s.duration_s.min(0.002);
    let mut sim = Simulation::new(&s).map_err(|e| TestCaseError::fail(format!("valid but {e}")))?;
    let est = sim.topology().work_estimate_of(&s);
    prop_assert!(est.events.is_finite() && est.events >= 0.0, "{:?}", est);
    // The estimate is of the whole run; a part of it costs about its share of the time.
    if est.events * (until_s / s.duration_s) > SHORT_RUN_EVENTS {
        return Ok(());
    }
    sim.run_until(csfq_algo::Nanos::from_secs_f64(until_s));
    let r = sim.report();
    RAN.fetch_add(1, Ordering::Relaxed);
    for l in &r.links {
        prop_assert!(l.utilization <= 1.0 + 1e-9, "utilization {}", l.utilization);
    }
    Ok(())
}

#[test]
fn mutated_graphml_loads_cleanly_or_fails_cleanly() {
    let base = std::fs::read_to_string(scenarios().join("topology-zoo/Abilene.graphml")).unwrap();
    let scenario = std::fs::read_to_string(scenarios().join("abilene.toml"))
        .unwrap()
        .replace("topology-zoo/Abilene.graphml", "t.graphml");
    let dir = std::env::temp_dir().join(format!("csfq-fuzz-graphml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The unmutated file loads (the harness is not failing everything at the start).
    check(&dir, &scenario, &base).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&proptest::collection::vec(edit(), 1..4), |edits| {
        let mutated = edits.iter().fold(base.clone(), |t, e| apply(&t, e));
        check(&dir, &scenario, &mutated)
    });
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        panic!("{e}");
    }
    let (refused, ran) = (REFUSED.load(Ordering::Relaxed), RAN.load(Ordering::Relaxed));
    eprintln!("{refused} cases refused with an error, {ran} run");
    assert!(refused > 0 && ran > 1, "the mutations reach both outcomes");
}

/// The mutations do what they say (the harness itself can fail).
#[test]
fn mutations_change_the_text() {
    let text = "<graph a=\"1\">\n<node id=\"n\"><data key=\"k\">5</data></node>\n</graph>\n";
    assert_eq!(
        apply(text, &Edit::Attribute(1, "nan")),
        "<graph a=\"1\">\n<node id=\"nan\"><data key=\"k\">5</data></node>\n</graph>\n"
    );
    assert_eq!(
        apply(text, &Edit::Data(0, "-1")),
        "<graph a=\"1\">\n<node id=\"n\"><data key=\"k\">-1</data></node>\n</graph>\n"
    );
    assert_eq!(
        apply(text, &Edit::Nest(2, 2)),
        "<graph a=\"1\">\n<node id=\"n\"><data key=\"k\">5</data></node>\n<x><x></graph></x></x>\n"
    );
    assert!(apply(text, &Edit::Entity(3, false))
        .starts_with("<!DOCTYPE graphml [<!ENTITY a \"<x><x><x></x></x></x>\">]>\n"));
}
