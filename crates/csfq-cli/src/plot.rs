//! SVG line charts (no fonts needed: text is left to the SVG viewer).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

/// One line of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Draw a marker at each point.
    pub markers: bool,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A chart: title, axis labels, lines, an optional dashed reference line `y = h`.
pub struct Chart {
    /// Title.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Lines.
    pub series: Vec<Series>,
    /// Reference line and its label.
    pub reference: Option<(f64, String)>,
    /// Logarithmic y axis.
    pub log_y: bool,
}

impl Chart {
    /// Writes the chart as SVG.
    pub fn write_svg(&self, path: &Path) -> Result<()> {
        let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
        root.fill(&WHITE).context("drawing the plot")?;
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        let mut ymin = f64::INFINITY;
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
            if y > 0.0 {
                ymin = ymin.min(y);
            }
        }
        if let Some((h, _)) = &self.reference {
            y1 = y1.max(*h);
        }
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(self.title.as_str(), ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(self.x_label.as_str())
                    .y_desc(self.y_label.as_str())
                    .light_line_style(RGBColor(235, 235, 235))
                    .draw()
                    .context("drawing the axes")?;
                if let Some((h, label)) = &self.reference {
                    let h = *h;
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(x0, h), (x1, h)],
                            6,
                            4,
                            BLACK.stroke_width(1),
                        ))
                        .context("drawing the reference")?
                        .label(label.as_str())
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
                }
                for (i, s) in self.series.iter().enumerate() {
                    let color = COLORS[i % COLORS.len()];
                    chart
                        .draw_series(LineSeries::new(
                            s.points.iter().copied(),
                            color.stroke_width(2),
                        ))
                        .context("drawing a series")?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                    if s.markers {
                        chart
                            .draw_series(
                                s.points.iter().map(|&p| Circle::new(p, 3, color.filled())),
                            )
                            .context("drawing markers")?;
                    }
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .position(SeriesLabelPosition::UpperLeft)
                    .draw()
                    .context("drawing the legend")?;
            }};
        }
        if self.log_y {
            let lo = if ymin.is_finite() { ymin / 2.0 } else { 1e-3 };
            draw!(builder
                .build_cartesian_2d(x0..x1, (lo..y1).log_scale())
                .context("building the chart")?);
        } else {
            draw!(builder
                .build_cartesian_2d(x0..x1, 0.0..y1)
                .context("building the chart")?);
        }
        root.present()
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}
