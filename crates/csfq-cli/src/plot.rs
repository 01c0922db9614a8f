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
/// The legend under the plot: its top margin and its rows' height, pixels.
const LEGEND_TOP: u32 = 16;
const LEGEND_ROW: u32 = 22;
/// The legend's entry for the error bars.
const BARS_LABEL: &str = "bar: range over the seeds";
const HEIGHT: u32 = 540;
const FONT: &str = "sans-serif";

/// Draws series `i`'s points as markers on `chart` in `color`: four shapes, filled for
/// the first four series and hollow for the next, so series stay apart in grey too. A
/// point that falls on the pixel of one before it in the series is drawn once: the same
/// marker again would add only a darker anti-aliased edge (10 000 flows' markers fall on
/// about 800 pixels).
macro_rules! markers {
    ($chart:expr, $i:expr, $points:expr, $color:expr) => {{
        let pts = once_per_pixel($points, |p| $chart.backend_coord(p)).into_iter();
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

/// The `items` whose place in pixels (`at`) none before them had: what a chart draws of
/// a series, since the same shape again at the same pixels adds nothing to see.
fn once_per_pixel<T, K: std::hash::Hash + Eq>(
    items: impl Iterator<Item = T>,
    mut at: impl FnMut(&T) -> K,
) -> Vec<T> {
    let mut seen = std::collections::HashSet::new();
    items.filter(|x| seen.insert(at(x))).collect()
}

/// Drawing a [`Chart`] (a data type of the papers crate): SVG, and PNG from it.
pub trait Draw {
    /// Writes the chart as SVG at `path`, and as PNG beside it (same name, `.png`) unless
    /// it has more than [`PNG_MAX_POINTS`] points.
    fn write_svg(&self, path: &Path) -> Result<()> {
        self.write_svg_spread(path, &[])
    }
    /// As [`Draw::write_svg`], with each point's range over seeds
    /// (`spread[series][point]`, as `csfq_papers::Judged::spread`) as an error bar.
    fn write_svg_spread(&self, path: &Path, spread: &[Vec<Option<(f64, f64)>>]) -> Result<()>;
    /// The legend's entries: the reference first, then the series.
    fn legend_names(&self) -> Vec<&str>;
    /// The SVG alone.
    fn draw_svg(&self, path: &Path, spread: &[Vec<Option<(f64, f64)>>]) -> Result<()>;
    /// The legend, under the plot in columns (with an entry for the error bars if
    /// `bars`); `longest`: its longest entry, characters.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        bars: bool,
        longest: u32,
    ) -> Result<()>;
}

impl Draw for Chart {
    /// Writes the chart as SVG at `path`, and as PNG beside it (same name, `.png`) unless
    /// it has more than [`PNG_MAX_POINTS`] points (a chart of 100 000 flows renders in
    /// hundreds of megabytes and shows nothing a reader can pick out).
    fn write_svg_spread(&self, path: &Path, spread: &[Vec<Option<(f64, f64)>>]) -> Result<()> {
        self.draw_svg(path, spread)?;
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

    fn draw_svg(&self, path: &Path, spread: &[Vec<Option<(f64, f64)>>]) -> Result<()> {
        let bars = spread.iter().flatten().any(Option::is_some);
        let longest = self
            .legend_names()
            .iter()
            .map(|n| n.chars().count())
            .chain(bars.then_some(BARS_LABEL.len()))
            .max()
            .unwrap_or(0) as u32;
        let entries = self.legend_names().len() + usize::from(bars);
        let (_, _, rows) = legend_grid(longest, entries);
        let legend_h = if rows == 0 {
            0
        } else {
            LEGEND_TOP + LEGEND_ROW * rows
        };
        // Drawn in memory, then written whole (see `crate::write_atomic`).
        let mut svg_text = String::new();
        {
            let root = SVGBackend::with_string(&mut svg_text, (PLOT_W, HEIGHT + legend_h))
                .into_drawing_area();
            root.fill(&WHITE).context("drawing the plot")?;
            let (plot, legend) = root.split_vertically(HEIGHT);
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
            for &(lo, hi) in spread.iter().flatten().flatten() {
                y1 = y1.max(hi);
                if lo > 0.0 {
                    ymin = ymin.min(lo);
                }
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
                        // One light line between two labelled ones, not plotters' ten: a
                        // grid every few pixels is noise on the page, and its hundreds of
                        // lines were most of a small run's PNG (csfq-fig3b: 300 of 341).
                        .x_max_light_lines(1)
                        .y_max_light_lines(1)
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
                        // The seeds' range, under the markers.
                        if let Some(sp) = spread.get(i) {
                            let w = if self.per_flow {
                                0.15
                            } else {
                                (x1 - x0) * 0.004
                            };
                            chart
                                .draw_series(s.points.iter().zip(sp).filter_map(|(&(x, _), r)| {
                                    let (lo, hi) = (*r)?;
                                    (hi > lo).then(|| {
                                        PathElement::new(
                                            vec![
                                                (x - w, lo),
                                                (x + w, lo),
                                                (x, lo),
                                                (x, hi),
                                                (x - w, hi),
                                                (x + w, hi),
                                            ],
                                            color.mix(0.55).stroke_width(1),
                                        )
                                    })
                                }))
                                .context("drawing the seeds' ranges")?;
                        }
                        if self.per_flow && s.markers {
                            markers!(chart, i, s.points.iter().copied(), color);
                        } else if self.per_flow {
                            // A dash between the pixels of one before it is drawn once,
                            // as markers are.
                            let dashes = once_per_pixel(
                                s.points
                                    .iter()
                                    .map(|&(x, y)| [(x - 0.35, y), (x + 0.35, y)]),
                                |[a, b]| (chart.backend_coord(a), chart.backend_coord(b)),
                            );
                            chart
                                .draw_series(dashes.into_iter().map(|ends| {
                                    PathElement::new(ends.to_vec(), color.stroke_width(2))
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
            self.draw_legend(&legend, bars, longest)?;
            root.present().context("drawing the plot")?;
        }
        crate::write_atomic(path, svg_text)
    }

    /// The legend, under the plot, in as many columns as fit its width: a sample of how
    /// each entry is drawn, then its name.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        bars: bool,
        longest: u32,
    ) -> Result<()> {
        let text = TextStyle::from((FONT, 14).into_font()).color(&BLACK);
        let entries = self.legend_names().len() + usize::from(bars);
        let (cols, col_w, _) = legend_grid(longest, entries);
        let at = |k: usize| -> (i32, i32) {
            let (col, row) = ((k % cols) as i32, (k / cols) as i32);
            // Centred under the plot's area (its y labels take the left 90 pixels).
            (
                90 + col * col_w as i32,
                LEGEND_TOP as i32 / 2 + 10 + row * LEGEND_ROW as i32,
            )
        };
        let draw = |e: DynElement<'_, DB, (i32, i32)>| {
            area.draw(&e)
                .map_err(|e| anyhow::anyhow!("drawing the legend: {e}"))
        };
        let mut k = 0;
        if let Some((_, label)) = &self.reference {
            let (x, y) = at(k);
            for (a, b) in [(6, 14), (20, 28)] {
                draw(
                    PathElement::new(vec![(x + a, y), (x + b, y)], BLACK.stroke_width(1))
                        .into_dyn(),
                )?;
            }
            draw(Text::new(label.clone(), (x + 40, y - 8), text.clone()).into_dyn())?;
            k += 1;
        }
        for (i, s) in self.series.iter().enumerate() {
            let (x, y) = at(k);
            let color = COLORS[i % COLORS.len()];
            if !self.per_flow || !s.markers {
                draw(
                    PathElement::new(vec![(x + 6, y), (x + 30, y)], color.stroke_width(2))
                        .into_dyn(),
                )?;
            }
            if s.markers {
                let style = if (i / 4) % 2 == 0 {
                    color.filled()
                } else {
                    color.stroke_width(2)
                };
                let m: DynElement<'_, DB, (i32, i32)> = match i % 4 {
                    0 => Circle::new((x + 18, y), 4, style).into_dyn(),
                    1 => TriangleMarker::new((x + 18, y), 5, style).into_dyn(),
                    2 => Rectangle::new([(x + 14, y - 4), (x + 22, y + 4)], style).into_dyn(),
                    _ => Cross::new((x + 18, y), 4, style.stroke_width(2)).into_dyn(),
                };
                draw(m)?;
            }
            draw(Text::new(s.name.clone(), (x + 40, y - 8), text.clone()).into_dyn())?;
            k += 1;
        }
        if bars {
            let (x, y) = at(k);
            let grey = RGBColor(120, 120, 120);
            draw(
                PathElement::new(
                    vec![
                        (x + 14, y - 7),
                        (x + 22, y - 7),
                        (x + 18, y - 7),
                        (x + 18, y + 7),
                        (x + 14, y + 7),
                        (x + 22, y + 7),
                    ],
                    grey.stroke_width(1),
                )
                .into_dyn(),
            )?;
            draw(Text::new(BARS_LABEL, (x + 40, y - 8), text.clone()).into_dyn())?;
        }
        Ok(())
    }
}

/// The legend's layout under the plot for `entries` entries whose longest has `longest`
/// characters: (columns, column width in pixels, rows).
fn legend_grid(longest: u32, entries: usize) -> (usize, u32, u32) {
    if entries == 0 {
        return (1, 0, 0);
    }
    let col_w = 50 + 8 * longest;
    let cols = (((PLOT_W - 90) / col_w.max(1)) as usize).clamp(1, entries);
    (cols, col_w, entries.div_ceil(cols) as u32)
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
            keep_sans_serif_in_memory(&mut db);
            Some(std::sync::Arc::new(db))
        })
        .clone()
}

/// Reads the sans-serif family's regular face (the one every chart's text is set in) into
/// memory. A system font is otherwise a file that fontdb maps and unmaps each time a text
/// is shaped: a few hundred times a chart, each unmapping a 0.7 MB file (more than half
/// the time to read csfq-fig3b's chart into a tree). The other faces stay on disk.
fn keep_sans_serif_in_memory(db: &mut resvg::usvg::fontdb::Database) {
    use resvg::usvg::fontdb::{Family, Query, Source};
    let query = Query {
        families: &[Family::SansSerif],
        ..Default::default()
    };
    let Some(Source::File(path)) = db
        .query(&query)
        .and_then(|id| db.face_source(id))
        .map(|(source, _)| source)
    else {
        return;
    };
    // Unreadable now: left as it was, to be read (or not) as before.
    let Ok(data) = std::fs::read(&path) else {
        return;
    };
    let faces: Vec<_> = db
        .faces()
        .filter(|f| matches!(&f.source, Source::File(p) if *p == path))
        .map(|f| f.id)
        .collect();
    for id in faces {
        db.remove_face(id);
    }
    db.load_font_data(data);
}

/// A canvas for the next PNG drawn, its memory already written ([`prepare_in_background`]).
static CANVAS: std::sync::Mutex<Option<Vec<u8>>> = std::sync::Mutex::new(None);

/// The bytes of the canvas made ready ahead: a chart at twice its size with up to four rows
/// of legend.
const CANVAS_BYTES: usize =
    4 * (2 * PLOT_W as usize) * (2 * (HEIGHT + LEGEND_TOP + 4 * LEGEND_ROW) as usize);

/// Starts loading the system's fonts, and making a canvas ready, on a thread of their own,
/// so that a figure drawn later finds them there (or waits for the fonts' load to end)
/// instead of making them then. The canvas is written all over: a new pixmap's memory is
/// mapped page by page at its first writes, which took about half the time of drawing a
/// chart's PNG (some 2000 page faults for 8 MB). With one CPU to run on, nothing is done
/// ahead: the thread would take its time from the simulation's.
pub fn prepare_in_background() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return;
    }
    std::thread::spawn(|| {
        fonts();
        // Opaque white (premultiplied, every byte 255), as a chart's page paints it.
        let canvas = vec![255u8; CANVAS_BYTES];
        if let Ok(mut slot) = CANVAS.lock() {
            *slot = Some(canvas);
        }
    });
}

/// A pixmap of `size`: the canvas made ready ahead if it is there and large enough, else a
/// new one. Its pixels are either transparent black or opaque white.
fn pixmap(size: resvg::tiny_skia::IntSize) -> Option<resvg::tiny_skia::Pixmap> {
    let bytes = 4 * size.width() as usize * size.height() as usize;
    let ready = CANVAS.lock().ok().and_then(|mut slot| slot.take());
    let mut data = ready
        .filter(|c| c.len() >= bytes)
        .unwrap_or_else(|| vec![0; bytes]);
    data.truncate(bytes);
    resvg::tiny_skia::Pixmap::from_vec(data, size)
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
    let mut pixmap = pixmap(size).context("an empty chart")?;
    draw_on_white(&data, &tree, scale, &mut pixmap);
    let bytes =
        encode_opaque_png(&pixmap).with_context(|| format!("encoding {}", png.display()))?;
    crate::write_atomic(png, bytes)?;
    Ok(true)
}

/// Draws the SVG (`data`, read into `tree`) at `scale` on white, over whatever `pixmap`
/// held.
fn draw_on_white(
    data: &[u8],
    tree: &resvg::usvg::Tree,
    scale: f32,
    pixmap: &mut resvg::tiny_skia::Pixmap,
) {
    // A chart's SVG paints its whole canvas opaque white first (plotters' `fill(&WHITE)`
    // on the root), which at a whole-number scale covers every pixel: filling the pixmap
    // white beforehand would write its 8 MB twice. Any other SVG gets the white page.
    if scale.fract() != 0.0 || !paints_white_page(data, tree) {
        pixmap.fill(resvg::tiny_skia::Color::WHITE);
    }
    resvg::render(
        tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
}

/// Whether the SVG's first element is an opaque white rectangle over its whole canvas, as
/// plotters writes it for a root filled white.
fn paints_white_page(data: &[u8], tree: &resvg::usvg::Tree) -> bool {
    let size = tree.size();
    let page = format!(
        "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" opacity=\"1\" fill=\"#FFFFFF\" \
         stroke=\"none\"/>",
        size.width(),
        size.height()
    );
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    lines.next().is_some_and(|l| l.starts_with("<svg ")) && lines.next() == Some(page.as_str())
}

/// A pixmap drawn on an opaque background as an 8-bit RGB PNG: every pixel's alpha is 255,
/// so its premultiplied colour is its colour and the alpha channel says nothing. Encoded
/// with the PNG crate's fast DEFLATE (fdeflate), which takes a fraction of the time of
/// the default level for charts of flat colour (most of a chart's pixels).
fn encode_opaque_png(pixmap: &resvg::tiny_skia::Pixmap) -> Result<Vec<u8>> {
    use std::io::Write as _;
    let width = pixmap.width() as usize;
    let mut out = Vec::with_capacity(width * pixmap.height() as usize / 4);
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    // Row by row: no second image-sized buffer.
    let mut stream = writer.stream_writer()?;
    let mut row = vec![0u8; 3 * width];
    for pixels in pixmap.data().chunks_exact(4 * width) {
        for (rgb, px) in row.chunks_exact_mut(3).zip(pixels.chunks_exact(4)) {
            debug_assert_eq!(px[3], 255, "drawn on an opaque background");
            rgb.copy_from_slice(&px[..3]);
        }
        stream.write_all(&row)?;
    }
    stream.finish()?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A per-flow chart of one series of three points, with a reference line.
    fn small_chart(title: &str) -> Chart {
        Chart {
            title: title.into(),
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
        }
    }

    #[test]
    fn a_chart_is_written_as_svg_and_as_png_of_twice_its_size() {
        let dir = std::env::temp_dir().join(format!("csfq-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = small_chart("t");
        let svg = dir.join("c.svg");
        chart.write_svg(&svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        // Integer ticks only on a flow-number axis (y ticks step by 0.2 here); the legend
        // under the plot.
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
        assert_eq!(
            width, PLOT_W,
            "the legend goes under the plot, not beside it"
        );
        let height: u32 = text
            .split("height=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .unwrap();
        // Two entries (the reference and one series) fit one row.
        assert_eq!(height, HEIGHT + LEGEND_TOP + LEGEND_ROW);
        let png = dir.join("c.png");
        if fonts().is_some() {
            let bytes = std::fs::read(&png).unwrap();
            assert_eq!(&bytes[1..4], b"PNG");
            let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
            assert_eq!((dim(16), dim(20)), (2 * width, 2 * height));
        } else {
            assert!(!png.exists());
        }
        // The chart paints its own white page, so the PNG is drawn without filling the
        // pixmap first.
        let data = std::fs::read(&svg).unwrap();
        let tree = resvg::usvg::Tree::from_data(&data, &resvg::usvg::Options::default()).unwrap();
        assert!(paints_white_page(&data, &tree), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A point at the pixel of one before it in its series, as many flows' are on a
    /// per-flow chart of thousands, is drawn once, as a marker or as a dash: the SVG is
    /// the one without it, to the byte; a point a few pixels away is still drawn.
    #[test]
    fn points_on_one_pixel_are_drawn_once() {
        let dir = std::env::temp_dir().join(format!("csfq-plot-once-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for markers in [true, false] {
            let svg = |name: &str, points: Vec<(f64, f64)>| {
                let chart = Chart {
                    series: vec![Series {
                        name: "a".into(),
                        points,
                        markers,
                        line: false,
                    }],
                    ..small_chart("t")
                };
                let path = dir.join(name);
                chart.draw_svg(&path, &[]).unwrap();
                std::fs::read_to_string(&path).unwrap()
            };
            let once = svg("once.svg", vec![(0.0, 1.0), (1.0, 2.0)]);
            let again = svg(
                "again.svg",
                vec![
                    (0.0, 1.0),
                    (0.0, 1.0),
                    (0.0, 1.0 + 1e-9),
                    (1.0, 2.0),
                    (1.0, 2.0),
                ],
            );
            assert_eq!(once, again, "markers: {markers}");
            let apart = svg("apart.svg", vec![(0.0, 1.0), (0.0, 1.1), (1.0, 2.0)]);
            assert_ne!(once, apart, "markers: {markers}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The face every chart's text is set in is read into memory once, not mapped from its
    /// file again for each text (the other faces stay files).
    #[test]
    fn the_charts_face_is_held_in_memory() {
        use resvg::usvg::fontdb::{Family, Query, Source};
        let Some(db) = fonts() else {
            return;
        };
        let query = Query {
            families: &[Family::SansSerif],
            ..Default::default()
        };
        let (source, _) = db.query(&query).and_then(|id| db.face_source(id)).unwrap();
        assert!(matches!(source, Source::Binary(_)), "{source:?}");
    }

    /// A picture drawn on the canvas made ready ahead (written opaque white, or left from
    /// another picture) is the picture drawn on a new pixmap, pixel for pixel: a chart,
    /// which paints its own page, and an SVG that does not.
    #[test]
    fn a_picture_on_a_used_canvas_is_the_picture_on_a_new_one() {
        let Some(fontdb) = fonts() else {
            return;
        };
        let dir = std::env::temp_dir().join(format!("csfq-canvas-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = small_chart("canvas");
        let svg = dir.join("c.svg");
        chart.draw_svg(&svg, &[]).unwrap();
        let page = "<svg width=\"90\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\">\n\
                    <circle cx=\"40\" cy=\"30\" r=\"20\" fill=\"#c81e5a\" opacity=\"0.5\"/>\n</svg>\n";
        let opt = resvg::usvg::Options {
            fontdb,
            ..Default::default()
        };
        for data in [std::fs::read(&svg).unwrap(), page.into()] {
            let tree = resvg::usvg::Tree::from_data(&data, &opt).unwrap();
            let size = tree.size().to_int_size().scale_by(2.0).unwrap();
            let mut new = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
            draw_on_white(&data, &tree, 2.0, &mut new);
            let n = new.data().len();
            for old in [
                vec![255u8; n],
                (0..n).map(|i| (i * 7919 % 251) as u8).collect(),
            ] {
                let mut used = resvg::tiny_skia::Pixmap::from_vec(old, size).unwrap();
                draw_on_white(&data, &tree, 2.0, &mut used);
                assert!(used.data() == new.data());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An SVG that paints no page of its own is drawn on white all the same: its PNG's
    /// pixels outside the one black square are white, not the transparent pixmap's black.
    #[test]
    fn an_svg_without_a_page_is_drawn_on_white() {
        if fonts().is_none() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("csfq-page-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (svg, png) = (dir.join("p.svg"), dir.join("p.png"));
        let text = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" \
                    xmlns=\"http://www.w3.org/2000/svg\">\n\
                    <rect x=\"0\" y=\"0\" width=\"5\" height=\"5\" fill=\"#000000\"/>\n</svg>\n";
        std::fs::write(&svg, text).unwrap();
        let tree = resvg::usvg::Tree::from_data(text.as_bytes(), &resvg::usvg::Options::default())
            .unwrap();
        assert!(!paints_white_page(text.as_bytes(), &tree));
        assert!(svg_to_png(&svg, &png, 2.0).unwrap());
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let px = |x: usize, y: usize| &buf[(y * info.width as usize + x) * 3..][..3];
        assert_eq!(px(0, 0), [0, 0, 0]);
        assert_eq!(px(19, 19), [255, 255, 255]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The RGB PNG decodes to the pixmap's colours exactly: a white background under a
    /// half-transparent, anti-aliased circle (every blend of the two, premultiplied).
    #[test]
    fn an_opaque_pixmap_encodes_losslessly_as_rgb() {
        use resvg::tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, Transform};
        let mut pixmap = Pixmap::new(97, 61).unwrap();
        pixmap.fill(Color::WHITE);
        let mut paint = Paint::default();
        paint.set_color_rgba8(200, 30, 90, 128);
        paint.anti_alias = true;
        let circle = PathBuilder::from_circle(40.0, 30.0, 25.3).unwrap();
        pixmap.fill_path(
            &circle,
            &paint,
            FillRule::Winding,
            Transform::identity(),
            None,
        );
        let bytes = encode_opaque_png(&pixmap).unwrap();
        assert_eq!(
            &bytes[bytes.len() - 8..bytes.len() - 4],
            b"IEND",
            "ends whole"
        );
        assert_eq!(bytes.windows(4).filter(|w| w == b"IEND").count(), 1);
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut decoded = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut decoded).unwrap();
        assert_eq!(
            (info.width, info.height, info.color_type),
            (97, 61, png::ColorType::Rgb)
        );
        let want: Vec<u8> = pixmap
            .data()
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        assert_eq!(&decoded[..info.buffer_size()], &want[..]);
        let blended = want
            .chunks_exact(3)
            .filter(|p| p != &[255, 255, 255])
            .count();
        assert!(blended > 1000, "the circle was drawn: {blended} pixels");
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
