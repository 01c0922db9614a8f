//! What a figure shows, as data: the analyses describe their figures with these, and the
//! command draws them (SVG and PNG).

/// One series of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Draw a marker at each point (per-flow charts: a marker, else a short dash).
    pub markers: bool,
    /// Join the points with a line (a time series); without, markers only (a scatter of
    /// independent samples). Per-flow charts never join flows.
    pub line: bool,
}

/// A chart: title, axis labels with units, series, an optional dashed reference line
/// `y = h`; the legend to the right of the plot, outside the data.
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis label, with its unit.
    pub x_label: String,
    /// y-axis label, with its unit.
    pub y_label: String,
    /// Series.
    pub series: Vec<Series>,
    /// Reference line and its label.
    pub reference: Option<(f64, String)>,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// x is a flow number: integer ticks, each series as points (markers, or dashes for
    /// series without markers), never lines joining flows.
    pub per_flow: bool,
}
