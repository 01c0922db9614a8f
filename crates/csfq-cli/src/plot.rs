//! Charts as SVG (text left to the viewer's fonts), and PNG rendered from the same SVG
//! with resvg and the system's fonts.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

pub use csfq_papers::chart::{Chart, Series};

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

/// A tick label: at most six decimals, trailing zeros dropped (1.2, not
/// 1.2000000000000002).
fn tick(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Charts with more points get no PNG.
pub const PNG_MAX_POINTS: usize = 20_000;

const PLOT_W: u32 = 900;
const HEIGHT: u32 = 540;
const FONT: &str = "sans-serif";

/// Draws series `i`'s points as markers on `chart` in `color`: four shapes, filled for
/// the first four series and hollow for the next, so series stay apart in grey too.
macro_rules! markers {
    ($chart:expr, $i:expr, $points:expr, $color:expr) => {{
        let pts = $points;
        let style = if ($i / 4) % 2 == 0 {
            $color.filled()
        } else {
            $color.stroke_width(2)
        };
        match $i % 4 {
            0 => $chart.draw_series(pts.map(|p| Circle::new(p, 4, style))),
            1 => $chart.draw_series(pts.map(|p| TriangleMarker::new(p, 5, style))),
            2 => $chart.draw_series(
                pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)),
            ),
            _ => $chart.draw_series(pts.map(|p| Cross::new(p, 4, style.stroke_width(2)))),
        }
        .context("drawing markers")?;
    }};
}

/// Drawing a [`Chart`] (a data type of the papers crate): SVG, and PNG from it.
pub trait Draw {
    /// Writes the chart as SVG at `path`, and as PNG beside it (same name, `.png`) unless
    /// it has more than [`PNG_MAX_POINTS`] points.
    fn write_svg(&self, path: &Path) -> Result<()>;
    /// The legend's entries: the reference first, then the series.
    fn legend_names(&self) -> Vec<&str>;
    /// The SVG alone.
    fn draw_svg(&self, path: &Path) -> Result<()>;
    /// The legend, right of the plot.
    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()>;
}

impl Draw for Chart {
    /// Writes the chart as SVG at `path`, and as PNG beside it (same name, `.png`) unless
    /// it has more than [`PNG_MAX_POINTS`] points (a chart of 100 000 flows renders in
    /// hundreds of megabytes and shows nothing a reader can pick out).
    fn write_svg(&self, path: &Path) -> Result<()> {
        self.draw_svg(path)?;
        let png = path.with_extension("png");
        let points: usize = self.series.iter().map(|s| s.points.len()).sum();
        if points > PNG_MAX_POINTS {
            // An older PNG of the same name would no longer match the SVG.
            let _ = std::fs::remove_file(&png);
            return Ok(());
        }
        if !svg_to_png(path, &png, 2.0)? {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "note: no fonts on this system, so no PNG figures (SVG only); on Debian: \
                     apt-get install fonts-dejavu-core"
                )
            });
        }
        Ok(())
    }

    /// The legend's entries: the reference first, then the series.
    fn legend_names(&self) -> Vec<&str> {
        self.reference
            .iter()
            .map(|(_, l)| l.as_str())
            .chain(self.series.iter().map(|s| s.name.as_str()))
            .collect()
    }

    fn draw_svg(&self, path: &Path) -> Result<()> {
        let longest = self
            .legend_names()
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0) as u32;
        let legend_w = if longest == 0 { 0 } else { 50 + 8 * longest };
        // Drawn in memory, then written whole (see `crate::write_atomic`).
        let mut svg_text = String::new();
        {
            let root = SVGBackend::with_string(&mut svg_text, (PLOT_W + legend_w, HEIGHT))
                .into_drawing_area();
            root.fill(&WHITE).context("drawing the plot")?;
            let (plot, legend) = root.split_horizontally(PLOT_W);
            let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
            let mut ymin = f64::INFINITY;
            for &(x, y) in self.series.iter().flat_map(|s| s.points.iter()) {
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
            // Integer x (flow numbers, counts): integer ticks only.
            let integral = self
                .series
                .iter()
                .flat_map(|s| s.points.iter())
                .all(|&(x, _)| x.fract() == 0.0);
            if self.per_flow {
                (x0, x1) = (x0 - 0.5, x1 + 0.5);
            }
            let x_ticks = if integral {
                ((x1 - x0).floor() as usize + 1).clamp(2, 17)
            } else {
                10
            };
            let x_format = move |x: &f64| {
                if !integral {
                    tick(*x)
                } else if (x - x.round()).abs() < 1e-9 {
                    format!("{}", x.round() as i64)
                } else {
                    String::new()
                }
            };
            let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
            let mut builder = ChartBuilder::on(&plot);
            builder
                .caption(self.title.as_str(), (FONT, 20))
                .margin(15)
                .x_label_area_size(50)
                .y_label_area_size(75);
            macro_rules! draw {
                ($chart:expr) => {{
                    let mut chart = $chart;
                    chart
                        .configure_mesh()
                        .x_desc(self.x_label.as_str())
                        .y_desc(self.y_label.as_str())
                        .x_labels(x_ticks)
                        .x_label_formatter(&x_format)
                        .axis_desc_style((FONT, 16))
                        .label_style((FONT, 13))
                        .light_line_style(RGBColor(240, 240, 240))
                        .bold_line_style(RGBColor(215, 215, 215))
                        .draw()
                        .context("drawing the axes")?;
                    if let Some((h, _)) = &self.reference {
                        let h = *h;
                        chart
                            .draw_series(DashedLineSeries::new(
                                vec![(x0, h), (x1, h)],
                                6,
                                4,
                                BLACK.stroke_width(1),
                            ))
                            .context("drawing the reference")?;
                    }
                    for (i, s) in self.series.iter().enumerate() {
                        let color = COLORS[i % COLORS.len()];
                        if self.per_flow && s.markers {
                            markers!(chart, i, s.points.iter().copied(), color);
                        } else if self.per_flow {
                            chart
                                .draw_series(s.points.iter().map(|&(x, y)| {
                                    PathElement::new(
                                        vec![(x - 0.35, y), (x + 0.35, y)],
                                        color.stroke_width(2),
                                    )
                                }))
                                .context("drawing dashes")?;
                        } else {
                            if s.line {
                                chart
                                    .draw_series(LineSeries::new(
                                        s.points.iter().copied(),
                                        color.stroke_width(2),
                                    ))
                                    .context("drawing a series")?;
                            }
                            if s.markers || !s.line {
                                markers!(chart, i, s.points.iter().copied(), color);
                            }
                        }
                    }
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
            self.draw_legend(&legend)?;
            root.present().context("drawing the plot")?;
        }
        crate::write_atomic(path, svg_text)
    }

    /// The legend, one entry a line, beside the plot: a sample of how each is drawn.
    fn draw_legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<()> {
        let text = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
        let mut y = 55;
        let row = 22;
        let draw = |e: DynElement<'_, DB, (i32, i32)>| {
            area.draw(&e)
                .map_err(|e| anyhow::anyhow!("drawing the legend: {e}"))
        };
        if let Some((_, label)) = &self.reference {
            for (a, b) in [(6, 14), (20, 28)] {
                draw(PathElement::new(vec![(a, y), (b, y)], BLACK.stroke_width(1)).into_dyn())?;
            }
            draw(Text::new(label.clone(), (40, y - 8), text.clone()).into_dyn())?;
            y += row;
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            if !self.per_flow || !s.markers {
                draw(PathElement::new(vec![(6, y), (30, y)], color.stroke_width(2)).into_dyn())?;
            }
            if s.markers {
                let style = if (i / 4) % 2 == 0 {
                    color.filled()
                } else {
                    color.stroke_width(2)
                };
                let m: DynElement<'_, DB, (i32, i32)> = match i % 4 {
                    0 => Circle::new((18, y), 4, style).into_dyn(),
                    1 => TriangleMarker::new((18, y), 5, style).into_dyn(),
                    2 => Rectangle::new([(14, y - 4), (22, y + 4)], style).into_dyn(),
                    _ => Cross::new((18, y), 4, style.stroke_width(2)).into_dyn(),
                };
                draw(m)?;
            }
            draw(Text::new(s.name.clone(), (40, y - 8), text.clone()).into_dyn())?;
            y += row;
        }
        Ok(())
    }
}

/// The system's fonts, loaded once, with a sans-serif family that exists (`None`: no
/// font at all, so no PNG can show text).
fn fonts() -> Option<std::sync::Arc<resvg::usvg::fontdb::Database>> {
    static FONTS: std::sync::OnceLock<Option<std::sync::Arc<resvg::usvg::fontdb::Database>>> =
        std::sync::OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_system_fonts();
            let families: Vec<String> = db
                .faces()
                .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
                .collect();
            let preferred = [
                "DejaVu Sans",
                "Liberation Sans",
                "Noto Sans",
                "FreeSans",
                "Arial",
            ];
            let family = preferred
                .iter()
                .find(|p| families.iter().any(|f| f == *p))
                .map(|p| p.to_string())
                .or_else(|| families.first().cloned())?;
            db.set_sans_serif_family(family);
            Some(std::sync::Arc::new(db))
        })
        .clone()
}

/// Renders an SVG file to PNG at `scale` (2: 1800 x 1080 for our charts). Returns false,
/// writing nothing, when the system has no fonts to draw the text with.
pub fn svg_to_png(svg: &Path, png: &Path, scale: f32) -> Result<bool> {
    let Some(fontdb) = fonts() else {
        return Ok(false);
    };
    let data = std::fs::read(svg).with_context(|| format!("reading {}", svg.display()))?;
    let opt = resvg::usvg::Options {
        fontdb,
        ..Default::default()
    };
    let tree = resvg::usvg::Tree::from_data(&data, &opt)
        .with_context(|| format!("reading {} as SVG", svg.display()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .context("an empty chart")?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).context("an empty chart")?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let bytes = pixmap
        .encode_png()
        .with_context(|| format!("encoding {}", png.display()))?;
    crate::write_atomic(png, bytes)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_written_as_svg_and_as_png_of_twice_its_size() {
        let dir = std::env::temp_dir().join(format!("csfq-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = Chart {
            title: "t".into(),
            x_label: "flow number".into(),
            y_label: "throughput (Mbps)".into(),
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)],
                markers: true,
                line: true,
            }],
            reference: Some((1.0, "fair".into())),
            log_y: false,
            per_flow: true,
        };
        let svg = dir.join("c.svg");
        chart.write_svg(&svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        // Integer ticks only on a flow-number axis (y ticks step by 0.2 here); the legend
        // beside the plot.
        let labels: Vec<&str> = text.lines().map(str::trim).collect();
        assert!(labels.contains(&"1") && labels.contains(&"2"), "{text}");
        assert!(
            !labels.contains(&"0.5") && !labels.contains(&"1.5"),
            "{text}"
        );
        let width: u32 = text
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        assert!(width > PLOT_W, "the legend widens the figure: {width}");
        let png = dir.join("c.png");
        if fonts().is_some() {
            let bytes = std::fs::read(&png).unwrap();
            assert_eq!(&bytes[1..4], b"PNG");
            let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
            assert_eq!((dim(16), dim(20)), (2 * width, 2 * HEIGHT));
        } else {
            assert!(!png.exists());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tick_labels_are_short_decimals() {
        assert_eq!(super::tick(0.1 + 0.2), "0.3");
        assert_eq!(super::tick(1.2000000000000002), "1.2");
        assert_eq!(super::tick(40.0), "40");
        assert_eq!(super::tick(-0.0000001), "0");
        assert_eq!(super::tick(0.000125), "0.000125");
    }
}
