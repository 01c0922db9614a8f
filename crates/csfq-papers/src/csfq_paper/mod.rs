//! Analyses of the CSFQ paper's experiments (Stoica, Shenker and Zhang, SIGCOMM 1998,
//! Section 3) and of weighted CSFQ.
//!
//! The paper's published numbers are here; each section's analyses are in a module of
//! their own.

use csfq_sim::DisciplineKind;

use crate::{Analysis, RunResult};

mod latency;
mod multiple_links;
mod single_link;
mod traffic;

pub(crate) use latency::{table3, table4};
pub(crate) use multiple_links::{fig6, weighted};
pub(crate) use single_link::{fig3a, fig3b, fig4, range_ends};
pub(crate) use traffic::{fig7, table1, table2};

/// The UDP throughput (Mbit/s) the CSFQ paper reports for csfq-fig3b, per discipline;
/// `(value, is_lower_bound)`.
pub fn fig3b_published_udp(d: DisciplineKind) -> Option<(f64, bool)> {
    use DisciplineKind::*;
    match d {
        Fifo | Red => Some((8.0, true)),
        Fred1 | Fred2 => Some((1.8, false)),
        Drr => Some((0.396, false)),
        Csfq => Some((0.361, false)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table1: the ON-OFF source's (delivered, dropped) packets as published.
pub fn table1_published(d: DisciplineKind) -> Option<(u64, u64)> {
    use DisciplineKind::*;
    match d {
        Drr => Some((601, 6157)),
        Csfq => Some((1680, 5078)),
        Red => Some((5322, 1436)),
        Fifo => Some((5452, 1306)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table3: mean and standard deviation of packets delivered per TCP, as published.
pub fn table3_published(d: DisciplineKind) -> Option<(f64, f64)> {
    use DisciplineKind::*;
    match d {
        Drr => Some((6080.0, 64.0)),
        Csfq => Some((5761.0, 220.0)),
        Fred1 | Fred2 => Some((4974.0, 190.0)),
        Red => Some((628.0, 80.0)),
        Fifo => Some((378.0, 69.0)),
        // The paper reports no number for the others.
        _ => None,
    }
}

/// csfq-table4: link-2 throughputs (Mbit/s) of flows 1-3 as published, UDP then TCP.
pub const TABLE4_PUBLISHED: [[f64; 3]; 2] = [[3.36, 3.32, 3.28], [3.43, 3.13, 3.43]];

/// csfq-fig6a's analysis.
pub(crate) fn fig6a(results: &[RunResult]) -> Analysis {
    fig6("csfq-fig6a", results)
}

/// csfq-fig6b's analysis.
pub(crate) fn fig6b(results: &[RunResult]) -> Analysis {
    fig6("csfq-fig6b", results)
}

/// weighted-1link's analysis.
pub(crate) fn weighted_1link(results: &[RunResult]) -> Analysis {
    weighted("weighted-1link", results)
}

/// weighted-2links' analysis.
pub(crate) fn weighted_2links(results: &[RunResult]) -> Analysis {
    weighted("weighted-2links", results)
}
