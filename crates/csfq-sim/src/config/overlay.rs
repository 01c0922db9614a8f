//! Edge-to-edge overlay loops in scenarios (`csfq_algo::overlay`; SPEC §5): the `[[loop]]`
//! tables, the `[overlay]` parameters, their validation, and what a loop reports.
//!
//! A loop joins an ingress router to an egress router. The flows that name it
//! (`loop = "NAME"` in their `[[flow]]` table) must enter the network at its ingress and
//! leave at its egress (`from` and `to`): there their packets wait in the loop's shaper
//! queue (`queue`, `buffer_bytes`) and leave at the loop's rate. Control messages are real
//! packets of `control_bytes` that follow the loop's route (and the reverse route back),
//! queued, delayed and dropped like any other packet. Interior routers stay as they are.

use serde::{Deserialize, Serialize};

use super::{DisciplineKind, LinkSpec, ScenarioFile};

/// The loops' shared parameters (the overlay paper, Section 7: 1000-byte packets,
/// `beta = 0.95`, `alpha = 1` packet per `tau`, `H_thresh = 2`, `L_thresh = 1.5`,
/// `W_max = 0.2` packets, `T = tau` = the largest edge-to-edge propagation delay).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OverlayConfig {
    /// `tau = T`, ms; the largest one-way propagation delay over the loops' routes if
    /// absent (at least 1 ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tau_ms: Option<f64>,
    /// `beta`, the decrease factor, in (0, 1).
    pub beta: f64,
    /// `gamma` of the assured service, in (beta, 1). The paper gives none; 0.99 by default:
    /// `gamma mu` undercuts `A + beta (mu - A)` whenever `mu < A (1 - beta) / (gamma - beta)`,
    /// which for 0.975 would be twice the assured rate, taking the assurance away.
    pub gamma: f64,
    /// The assured service backs off the ingress departure rate `lambda` (Section 7.4's
    /// prose) instead of the egress rate `mu` (its formula, the default).
    pub assured_on_ingress_rate: bool,
    /// `alpha`, the increase per `tau`, packets.
    pub alpha_pkts: f64,
    /// `H_thresh`, packets.
    pub h_thresh_pkts: f64,
    /// `L_thresh`, packets, at most `H_thresh`.
    pub l_thresh_pkts: f64,
    /// `W_max`, the hold-down drained per interval, packets.
    pub w_max_pkts: f64,
    /// The packet size thresholds count in, and the shaper's burst, bytes.
    pub packet_bytes: u32,
    /// Size of a control or feedback packet on the wire, bytes.
    pub control_bytes: u32,
    /// The rate a best-effort or assured loop starts at, Mbit/s (`alpha` per `tau` if
    /// absent: the paper's loops start slow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_rate_mbps: Option<f64>,
}

impl Default for OverlayConfig {
    fn default() -> Self {
        OverlayConfig {
            tau_ms: None,
            beta: 0.95,
            gamma: 0.99,
            assured_on_ingress_rate: false,
            alpha_pkts: 1.0,
            h_thresh_pkts: 2.0,
            l_thresh_pkts: 1.5,
            w_max_pkts: 0.2,
            packet_bytes: 1000,
            control_bytes: 64,
            start_rate_mbps: None,
        }
    }
}

/// What a loop sells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceKind {
    /// AIMD-ER as is.
    #[default]
    BestEffort,
    /// An assured rate `rate_mbps` plus a share of the rest.
    Assured,
    /// A quasi-leased line of `rate_mbps` (admission-controlled: the lines crossing a
    /// link may not sum to more than its rate).
    QuasiLeased,
}

impl ServiceKind {
    /// Its name in files.
    pub fn name(self) -> &'static str {
        match self {
            ServiceKind::BestEffort => "best-effort",
            ServiceKind::Assured => "assured",
            ServiceKind::QuasiLeased => "quasi-leased",
        }
    }
}

/// One `[[loop]]` table.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// Its name, which flows refer to.
    pub name: String,
    /// The ingress edge router.
    pub ingress: String,
    /// The egress edge router.
    pub egress: String,
    /// best-effort (default), assured or quasi-leased.
    #[serde(default)]
    pub service: ServiceKind,
    /// The assured rate or the leased line's rate, Mbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// When the loop starts, s.
    #[serde(default)]
    pub start_s: f64,
    /// The shaper queue's discipline at the ingress (fifo, red, fred1, fred2, drr, ared,
    /// las).
    #[serde(default = "fifo")]
    pub queue: DisciplineKind,
    /// The shaper queue's buffer, bytes.
    #[serde(default = "default_buffer")]
    pub buffer_bytes: u32,
}

fn fifo() -> DisciplineKind {
    DisciplineKind::Fifo
}
fn default_buffer() -> u32 {
    64_000
}

/// The route between two routers over the routers' links only, as port indices (link
/// `i` gives ports `2i` (first to second router) and `2i + 1`): fewest hops, ties to the
/// link listed first, as [`crate::net`] routes flows.
pub fn router_route(
    routers: &[String],
    links: &[&LinkSpec],
    from: &str,
    to: &str,
) -> Option<Vec<usize>> {
    let idx = |n: &str| routers.iter().position(|r| r == n);
    let (from, to) = (idx(from)?, idx(to)?);
    let mut ports = Vec::new();
    for l in links {
        let (a, b) = (idx(&l.between[0])?, idx(&l.between[1])?);
        ports.push((a, b));
        ports.push((b, a));
    }
    crate::routes::RouterRoutes::over(routers.len(), ports.into_iter()).search(from, to)
}

/// A loop problem found while validating: the span of the table at fault (or `None` for
/// the `[overlay]` table), the field, and what is wrong.
pub(crate) type LoopIssue = (Option<std::ops::Range<usize>>, String, String);

/// Checks the `[overlay]` table, the `[[loop]]` tables and the flows that name loops.
pub(crate) fn validate(s: &ScenarioFile) -> Result<(), LoopIssue> {
    let o = &s.overlay;
    let table = |field: &str, what: &str| Err((None, format!("overlay.{field}"), what.to_string()));
    if o.tau_ms.is_some_and(|t| !(0.001..=1e6).contains(&t)) {
        return table("tau_ms", "must be 0.001..=1000000 ms");
    }
    if !(o.beta > 0.0 && o.beta < 1.0) {
        return table("beta", "must be in (0, 1)");
    }
    if !(o.gamma > o.beta && o.gamma < 1.0) {
        return table("gamma", "must be in (beta, 1)");
    }
    if !(o.alpha_pkts.is_finite() && o.alpha_pkts > 0.0 && o.alpha_pkts <= 1e6) {
        return table("alpha_pkts", "must be a positive number of packets");
    }
    if !(o.h_thresh_pkts.is_finite() && o.h_thresh_pkts > 0.0) {
        return table("h_thresh_pkts", "must be a positive number of packets");
    }
    if !(o.l_thresh_pkts.is_finite() && o.l_thresh_pkts > 0.0 && o.l_thresh_pkts <= o.h_thresh_pkts)
    {
        return table(
            "l_thresh_pkts",
            "must be positive and at most h_thresh_pkts",
        );
    }
    if !(o.w_max_pkts.is_finite() && o.w_max_pkts >= 0.0 && o.w_max_pkts < o.alpha_pkts) {
        return table(
            "w_max_pkts",
            "must be at least 0 and below alpha_pkts (the paper: w_max / T < alpha)",
        );
    }
    if !(64..=65_535).contains(&o.packet_bytes) {
        return table("packet_bytes", "must be 64..=65535 bytes");
    }
    if !(20..=65_535).contains(&o.control_bytes) {
        return table("control_bytes", "must be 20..=65535 bytes");
    }
    if o.start_rate_mbps
        .is_some_and(|r| !(r.is_finite() && r > 0.0))
    {
        return table("start_rate_mbps", "must be a positive rate");
    }
    let links: Vec<&LinkSpec> = s.links.iter().map(|l| l.get_ref()).collect();
    let routers = s.router_index();
    let known = |n: &str| routers.contains_key(n);
    let mut leased = vec![0.0f64; 2 * links.len()];
    for (i, l) in s.loops.iter().enumerate() {
        let span = Some(l.span());
        let spec = l.get_ref();
        let bad = |field: &str, what: String| Err((span.clone(), field.to_string(), what));
        if let Some(c) = spec.name.chars().find(|&c| !super::printable(c)) {
            return bad(
                "name",
                format!("holds {c:?}: control and direction-changing characters are refused"),
            );
        }
        if spec.name.is_empty() || s.loops[..i].iter().any(|o| o.get_ref().name == spec.name) {
            return bad(
                "name",
                format!("loop names must be unique and non-empty (`{}`)", spec.name),
            );
        }
        for (end, field) in [(&spec.ingress, "ingress"), (&spec.egress, "egress")] {
            if !known(end) {
                return bad(
                    field,
                    format!("unknown router `{end}` (routers: {})", s.routers.join(", ")),
                );
            }
        }
        if spec.ingress == spec.egress {
            return bad("egress", "a loop joins two different routers".into());
        }
        let Some(route) = router_route(&s.routers, &links, &spec.ingress, &spec.egress)
            .filter(|_| router_route(&s.routers, &links, &spec.egress, &spec.ingress).is_some())
        else {
            return bad(
                "egress",
                format!(
                    "no path joins `{}` and `{}`: the loop would cross no link",
                    spec.ingress, spec.egress
                ),
            );
        };
        match (spec.service, spec.rate_mbps) {
            (ServiceKind::BestEffort, Some(_)) => {
                return bad(
                    "rate_mbps",
                    "a best-effort loop has no rate; use service = \"assured\" or \"quasi-leased\""
                        .into(),
                )
            }
            (ServiceKind::BestEffort, None) => {}
            (_, Some(r)) if r.is_finite() && r > 0.0 => {}
            (kind, _) => {
                return bad(
                    "rate_mbps",
                    format!("a {} loop needs a positive rate_mbps", kind.name()),
                )
            }
        }
        if spec.service == ServiceKind::QuasiLeased {
            let a = spec.rate_mbps.unwrap_or(0.0) * 1e6;
            for &p in &route {
                let cap = links[p / 2].rate_mbps * 1e6;
                if !csfq_algo::overlay::admit_leased(cap, leased[p], a) {
                    let (from, to) = if p % 2 == 0 { (0, 1) } else { (1, 0) };
                    return bad(
                        "rate_mbps",
                        format!(
                            "admission control: a {:.3} Mbps quasi-leased line does not fit on {}->{} ({} Mbps, {:.3} Mbps already leased)",
                            a / 1e6, links[p / 2].between[from], links[p / 2].between[to], links[p / 2].rate_mbps, leased[p] / 1e6
                        ),
                    );
                }
                leased[p] += a;
            }
        }
        if !(spec.start_s.is_finite() && spec.start_s >= 0.0 && spec.start_s < s.duration_s) {
            return bad("start_s", "must be in [0, duration_s)".into());
        }
        if !spec.queue.shapes_loops() {
            let names: Vec<_> = DisciplineKind::ALL
                .iter()
                .filter(|d| d.shapes_loops())
                .map(|d| d.name())
                .collect();
            return bad(
                "queue",
                format!("the shaper queue is one of {}", names.join(", ")),
            );
        }
        if spec.buffer_bytes < 1500 {
            return bad(
                "buffer_bytes",
                "must hold at least one 1500-byte packet".into(),
            );
        }
    }
    for f in &s.flows {
        let spec = f.get_ref();
        let Some(name) = &spec.overlay_loop else {
            continue;
        };
        let bad = |what: String| Err((Some(f.span()), "loop".to_string(), what));
        let Some(l) = s
            .loops
            .iter()
            .map(|l| l.get_ref())
            .find(|l| &l.name == name)
        else {
            let names: Vec<_> = s.loops.iter().map(|l| l.get_ref().name.as_str()).collect();
            return bad(format!(
                "unknown loop `{name}` (loops: {})",
                names.join(", ")
            ));
        };
        if spec.from != l.ingress || spec.to != l.egress {
            return bad(format!(
                "loop `{name}` runs from `{}` to `{}`; a flow it carries must enter at its ingress and leave at its egress (from = \"{}\", to = \"{}\")",
                l.ingress, l.egress, l.ingress, l.egress
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{Scenario, ScenarioError, ScenarioFile};

    const GOOD: &str = r#"name = "t"
duration_s = 1.0
discipline = "fifo"
routers = ["a", "b", "c", "z"]

[[link]]
between = ["a", "b"]
rate_mbps = 10

[[link]]
between = ["b", "c"]
rate_mbps = 10

[[loop]]
name = "l"
ingress = "a"
egress = "c"

[[flow]]
kind = "udp"
from = "a"
to = "c"
rate_mbps = 1
loop = "l"
"#;

    fn parse(s: &str) -> Result<Scenario, ScenarioError> {
        ScenarioFile::parse(s, Path::new("t.toml"))
    }

    #[test]
    fn a_loop_declaration_parses_and_builds() {
        let s = parse(GOOD).unwrap();
        let t = crate::Topology::build(&s).unwrap();
        assert_eq!(t.loops.len(), 1);
        assert_eq!(t.loops[0].fwd.len(), 2);
        let hops = t.flows[0].overlay.unwrap();
        assert_eq!((hops.entry, hops.exit), (0, 2));
        // tau = T = the loop's propagation delay (2 x 1 ms), alpha one packet per tau.
        assert_eq!(t.loops[0].params.tau, csfq_algo::Nanos::from_millis(2));
        assert!((t.loops[0].params.alpha_bps - 4e6).abs() < 1e-6);
    }

    /// Malformed loops name the file, the line of the field at fault, and say what is wrong.
    #[test]
    fn malformed_loops_name_file_line_and_field() {
        let cases = [
            // (replace, with, line, field, message fragment)
            (
                "ingress = \"a\"",
                "ingress = \"q\"",
                16,
                "ingress",
                "unknown router `q`",
            ),
            (
                "egress = \"c\"",
                "egress = \"z\"",
                17,
                "egress",
                "no path joins",
            ),
            (
                "egress = \"c\"",
                "egress = \"a\"",
                17,
                "egress",
                "two different routers",
            ),
            (
                "egress = \"c\"\n",
                "egress = \"c\"\nservice = \"assured\"\nrate_mbps = -3\n",
                19,
                "rate_mbps",
                "positive rate_mbps",
            ),
            (
                "egress = \"c\"\n",
                "egress = \"c\"\nrate_mbps = 3\n",
                18,
                "rate_mbps",
                "best-effort loop has no rate",
            ),
            (
                "egress = \"c\"\n",
                "egress = \"c\"\nqueue = \"csfq\"\n",
                18,
                "queue",
                "shaper queue is one of",
            ),
            (
                "loop = \"l\"",
                "loop = \"m\"",
                24,
                "loop",
                "unknown loop `m`",
            ),
            (
                "to = \"c\"",
                "to = \"b\"",
                24,
                "loop",
                "must enter at its ingress",
            ),
            (
                "egress = \"c\"\n",
                "egress = \"c\"\nservice = \"quasi-leased\"\nrate_mbps = 11\n",
                19,
                "rate_mbps",
                "admission control",
            ),
            (
                "routers = [\"a\", \"b\", \"c\", \"z\"]\n",
                "routers = [\"a\", \"b\", \"c\", \"z\"]\n[overlay]\nbeta = 1.5\n",
                6,
                "overlay.beta",
                "(0, 1)",
            ),
        ];
        for (from, to, line, field, msg) in cases {
            let bad = GOOD.replacen(from, to, 1);
            assert_ne!(bad, GOOD, "{from}");
            let e = parse(&bad).expect_err(to);
            assert_eq!(e.file, Path::new("t.toml"));
            assert_eq!((e.line, e.field.as_deref()), (line, Some(field)), "{e}");
            assert!(e.message.contains(msg), "{e}");
            assert!(e.to_string().starts_with(&format!("t.toml:{line}:")), "{e}");
        }
    }

    /// Two quasi-leased lines that together overbook a link are refused; each alone fits.
    #[test]
    fn admission_control_counts_every_leased_line_on_a_link() {
        let two = GOOD.replace(
            "[[flow]]",
            "[[loop]]\nname = \"q1\"\ningress = \"a\"\negress = \"b\"\nservice = \"quasi-leased\"\nrate_mbps = 6\n\n\
             [[loop]]\nname = \"q2\"\ningress = \"a\"\negress = \"c\"\nservice = \"quasi-leased\"\nrate_mbps = 5\n\n[[flow]]",
        );
        let e = parse(&two).unwrap_err();
        assert!(e.message.contains("6.000 Mbps already leased"), "{e}");
        assert!(parse(&two.replace("rate_mbps = 5", "rate_mbps = 4")).is_ok());
    }
}
