//! The demo's plots, drawn with plotters (SVG, and PNG through its bitmap backend) and the
//! pure-Rust ab_glyph text renderer with an embedded DejaVu Sans, so no system font library
//! is needed.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use plotters::coord::Shift;
use plotters::prelude::*;
use tickflow::prelude::*;
use tickflow::Stage;

use crate::CliError;

/// The plot's bands: stages of the frame as the plot groups them, bottom of the stack first.
const GROUPS: [(&str, &[Stage]); 7] = [
    (
        "PrePhysics (move, think)",
        &[Stage::Group(TickGroup::PrePhysics)],
    ),
    (
        "Start/During/EndPhysics",
        &[
            Stage::Group(TickGroup::StartPhysics),
            Stage::Group(TickGroup::DuringPhysics),
            Stage::Group(TickGroup::EndPhysics),
        ],
    ),
    (
        "PostPhysics (reap)",
        &[Stage::Group(TickGroup::PostPhysics)],
    ),
    ("Timers", &[Stage::Timers]),
    ("Tickables", &[Stage::Tickables]),
    ("Latent actions + tasks", &[Stage::Latent]),
    (
        "Frame start, PostUpdateWork and later",
        &[
            Stage::FrameStart,
            Stage::Group(TickGroup::PostUpdateWork),
            Stage::Group(TickGroup::LastDemotable),
            Stage::NewlySpawned,
        ],
    ),
];
/// Bands in the plot.
const BANDS: usize = GROUPS.len();

const COLORS: [RGBColor; BANDS] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

pub(crate) fn register_font() -> Result<(), CliError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(CliError::internal("the embedded font did not load"))
    }
}

fn plot_error(what: &str) -> impl Fn(String) -> CliError + '_ {
    move |e| CliError::internal(format!("drawing {what}: {e}"))
}

/// `frames.svg` and `frames.png`: the frames of the run in buckets of consecutive frames
/// (at most 400 buckets, so long runs stay readable). Top: the worst whole frame of each
/// bucket on a log scale, against the frame budget (`1/hz`). Bottom: that worst frame's time
/// per stage, stacked. The worst frame, not the mean: an average of 9 frames hides the spike
/// a player feels.
pub(crate) fn frames(
    svg: &Path,
    png: &Path,
    times: &[[Duration; Stage::COUNT]],
    hz: u32,
) -> Result<(), CliError> {
    register_font()?;
    let plot = FramePlot::new(times, hz);
    let size = (1000, 620);
    draw_frames(SVGBackend::new(svg, size).into_drawing_area(), &plot)
        .map_err(plot_error("frames.svg"))?;
    draw_frames(BitMapBackend::new(png, size).into_drawing_area(), &plot)
        .map_err(plot_error("frames.png"))
}

/// What `frames.svg` draws.
struct FramePlot {
    /// Frames per bucket.
    bucket: usize,
    hz: u32,
    /// Per bucket: its start in game seconds and the cumulative µs of each group in the
    /// bucket's worst frame (the last one is the whole frame).
    worst: Vec<(f64, [f64; BANDS])>,
}

impl FramePlot {
    fn new(times: &[[Duration; Stage::COUNT]], hz: u32) -> FramePlot {
        let bucket = times.len().div_ceil(400).max(1);
        let worst = times
            .chunks(bucket)
            .enumerate()
            .map(|(k, chunk)| {
                let worst = chunk
                    .iter()
                    .map(cumulative)
                    .max_by(|a, b| a[BANDS - 1].total_cmp(&b[BANDS - 1]))
                    .expect("chunks are not empty");
                ((k * bucket) as f64 / f64::from(hz), worst)
            })
            .collect();
        FramePlot { bucket, hz, worst }
    }

    /// The frame budget, µs: one frame at `hz`.
    fn budget_us(&self) -> f64 {
        1e6 / f64::from(self.hz)
    }
}

/// One frame's µs per group, summed up the stack.
fn cumulative(frame: &[Duration; Stage::COUNT]) -> [f64; BANDS] {
    let mut cum = [0.0; BANDS];
    let mut sum = 0.0;
    for (g, (_, stages)) in GROUPS.iter().enumerate() {
        sum += stages
            .iter()
            .map(|s| frame[s.index()].as_secs_f64() * 1e6)
            .sum::<f64>();
        cum[g] = sum;
    }
    cum
}

const BUDGET: RGBColor = RGBColor(200, 0, 0);

fn draw_frames<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    plot: &FramePlot,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let frames = if plot.bucket == 1 {
        "each frame".to_string()
    } else {
        format!("the worst of every {} frames", plot.bucket)
    };
    let root = root
        .titled(&format!("Frame time, {frames}"), ("sans-serif", 22))
        .map_err(e)?;
    // The legend has a column of its own: drawn over the areas it would hide the data.
    let (charts, legend) = root.split_horizontally(760);
    let (top, bottom) = charts.split_vertically(250);
    let data = &plot.worst;
    let x_max = data.last().map_or(1.0, |d| d.0).max(1e-3);

    // Top: whole frame against the budget, log scale so both are readable.
    let worst = data.iter().map(|d| d.1[BANDS - 1]).fold(1.0, f64::max);
    let y_top = (worst.max(plot.budget_us()) * 3.0).max(10.0);
    let mut chart = ChartBuilder::on(&top)
        .caption(
            "whole frame (log scale) and the frame budget",
            ("sans-serif", 15),
        )
        .margin(8)
        .x_label_area_size(24)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, (1.0..y_top).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .y_desc("µs")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE)
        .draw()
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(
            data.iter().map(|d| (d.0, d.1[BANDS - 1].max(1.0))),
            BLACK.stroke_width(1),
        ))
        .map_err(e)?;
    chart
        .draw_series(LineSeries::new(
            [(0.0, plot.budget_us()), (x_max, plot.budget_us())],
            BUDGET.stroke_width(2),
        ))
        .map_err(e)?;

    // Bottom: the same worst frames, stage by stage.
    let y_max = worst * 1.1;
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            "time per stage of those frames (stacked)",
            ("sans-serif", 15),
        )
        .margin(8)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("game time (s)")
        .y_desc("µs")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE)
        .draw()
        .map_err(e)?;
    // Top of the stack first, so each lower area paints over the one above it.
    for g in (0..GROUPS.len()).rev() {
        chart
            .draw_series(AreaSeries::new(
                data.iter().map(|d| (d.0, d.1[g])),
                0.0,
                COLORS[g].mix(0.85),
            ))
            .map_err(e)?;
    }
    draw_legend(&legend, plot).map_err(e)?;
    root.present().map_err(e)
}

/// The legend column: the two lines of the top chart, then the stages from the top of the
/// stack down, as they appear in the bottom chart.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plot: &FramePlot,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let text = ("sans-serif", 13).into_font().color(&BLACK);
    let line = |color: RGBColor, label: String, y: i32| -> Result<(), _> {
        area.draw(&PathElement::new([(10, y), (34, y)], color.stroke_width(2)))?;
        area.draw(&Text::new(label, (42, y - 7), text.clone()))
    };
    line(BLACK, "worst whole frame".to_string(), 50)?;
    line(
        BUDGET,
        format!(
            "frame budget: {:.1} ms ({} Hz)",
            plot.budget_us() / 1e3,
            plot.hz
        ),
        72,
    )?;
    // Level with the bottom chart.
    let mut y = 270;
    for g in (0..GROUPS.len()).rev() {
        area.draw(&Rectangle::new(
            [(10, y - 6), (34, y + 6)],
            COLORS[g].mix(0.85).filled(),
        ))?;
        area.draw(&Text::new(GROUPS[g].0, (42, y - 7), text.clone()))?;
        y += 22;
    }
    Ok(())
}

/// The scene of `catch-up.svg`: one looping timer of 0.1 s at 60 Hz, and a 0.45 s hitch in
/// frame 30, from 0.5 s to 0.95 s. The hitch ends between two calls of the grid (0.9 s and
/// 1.0 s), where `Once` and `Delay` part: `Once` calls next at 1.0 s, on the original grid;
/// `Delay` at 1.05 s, a period after the late call. (A hitch that ends on the grid makes the
/// two the same picture.)
pub(crate) const HITCH_FRAME: usize = 30;
const HITCH: Span = Span::from_millis(450);
const CATCH_UP_FRAMES: usize = 90;

/// The length of frame `f` of the scene.
fn frame_dt(f: usize) -> Span {
    if f == HITCH_FRAME {
        HITCH
    } else {
        Span::frames(1, 60)
    }
}

/// Calls per frame of a 0.1 s looping timer through the hitch, for each catch-up policy.
pub(crate) fn catch_up_calls() -> Vec<(CatchUp, Vec<u32>)> {
    [CatchUp::Burst, CatchUp::Once, CatchUp::Delay]
        .into_iter()
        .map(|mode| {
            let mut timers = TimerManager::<Vec<u32>>::new();
            timers
                .every(secs(0.1))
                .catch_up(mode)
                .call(|calls: &mut Vec<u32>, _| *calls.last_mut().expect("pushed") += 1);
            let mut calls = Vec::new();
            for f in 0..CATCH_UP_FRAMES {
                calls.push(0);
                timers.tick(frame_dt(f), &mut calls);
            }
            (mode, calls)
        })
        .collect()
}

/// `catch-up.svg`: the three policies one above the other, on the same frames.
pub(crate) fn catch_up(svg: &Path) -> Result<(), CliError> {
    register_font()?;
    let root = SVGBackend::new(svg, (1000, 640)).into_drawing_area();
    draw_catch_up(root, &catch_up_calls()).map_err(plot_error("catch-up.svg"))
}

fn draw_catch_up<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    series: &[(CatchUp, Vec<u32>)],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let root = root
        .titled(
            "A 0.1 s looping timer at 60 Hz through a 0.45 s hitch (frame 30): calls per frame",
            ("sans-serif", 20),
        )
        .map_err(e)?;
    let y_max = series
        .iter()
        .flat_map(|s| s.1.iter())
        .copied()
        .max()
        .unwrap_or(1)
        + 1;
    for (area, (mode, calls)) in root.split_evenly((3, 1)).iter().zip(series) {
        let what = match mode {
            CatchUp::Burst => "Burst: every missed call (0.6 to 0.9 s), in the hitch frame",
            CatchUp::Once => "Once: one call, then back on the original grid (1.0 s, 1.1 s, ...)",
            _ => "Delay: one call, then a new grid from the late call (1.05 s, 1.15 s, ...)",
        };
        let mut chart = ChartBuilder::on(area)
            .caption(what, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(40)
            .build_cartesian_2d(0u32..calls.len() as u32, 0u32..y_max)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("frame (gray: the original 0.1 s grid; the hitch frame is orange)")
            .y_labels(y_max as usize + 1)
            .light_line_style(WHITE)
            .draw()
            .map_err(e)?;
        // The original grid, where Burst and Once call (and Delay no longer does).
        chart
            .draw_series(grid_frames(calls.len()).map(|f| {
                Rectangle::new([(f, 0), (f + 1, y_max)], RGBColor(225, 225, 225).filled())
            }))
            .map_err(e)?;
        chart
            .draw_series([Rectangle::new(
                [(HITCH_FRAME as u32, 0), (HITCH_FRAME as u32 + 1, y_max)],
                COLORS[1].mix(0.35).filled(),
            )])
            .map_err(e)?;
        let color = if *mode == CatchUp::Burst {
            COLORS[3]
        } else {
            COLORS[0]
        };
        chart
            .draw_series(
                calls.iter().enumerate().map(|(f, &c)| {
                    Rectangle::new([(f as u32, 0), (f as u32 + 1, c)], color.filled())
                }),
            )
            .map_err(e)?;
    }
    root.present().map_err(e)
}

/// The frames in which a multiple of 0.1 s of game time falls (the frame that ends at or
/// just past it), given the hitch.
fn grid_frames(frames: usize) -> impl Iterator<Item = u32> {
    let mut t = Span::ZERO;
    let mut next = Span::from_millis(100);
    (0..frames).filter_map(move |f| {
        t += frame_dt(f);
        let hit = t >= next && f != HITCH_FRAME;
        while t >= next {
            next += Span::from_millis(100);
        }
        hit.then_some(f as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catch_up_policies_differ_after_the_hitch() {
        let runs = catch_up_calls();
        let total = |v: &[u32]| v.iter().sum::<u32>();
        let (burst, once, delay) = (&runs[0].1, &runs[1].1, &runs[2].1);
        assert_eq!(burst[..HITCH_FRAME], once[..HITCH_FRAME]);
        assert_eq!(burst[..HITCH_FRAME], delay[..HITCH_FRAME]);
        // The hitch covers the calls of 0.6, 0.7, 0.8 and 0.9 s.
        assert_eq!(burst[HITCH_FRAME], 4, "{burst:?}");
        assert_eq!(once[HITCH_FRAME], 1);
        assert_eq!(delay[HITCH_FRAME], 1);
        assert!(total(burst) > total(once));
        // Once calls next at 1.0 s (frame 33, three frames on), Delay at 1.05 s (frame 36):
        // the pictures must differ.
        let next =
            |v: &[u32]| HITCH_FRAME + 1 + v[HITCH_FRAME + 1..].iter().position(|&c| c > 0).unwrap();
        assert_eq!(
            (next(once), next(delay)),
            (HITCH_FRAME + 3, HITCH_FRAME + 6)
        );
        assert_ne!(once, delay);
        // The grid marks: every 6th frame before the hitch, then on Once's calls.
        let grid: Vec<u32> = grid_frames(CATCH_UP_FRAMES).collect();
        assert_eq!(grid[..5], [5, 11, 17, 23, 29]);
        let once_calls: Vec<u32> = (HITCH_FRAME + 1..CATCH_UP_FRAMES)
            .filter(|&f| once[f] > 0)
            .map(|f| f as u32)
            .collect();
        assert_eq!(grid[5..], once_calls[..]);
    }

    #[test]
    fn each_bucket_shows_its_worst_frame_stacked() {
        let at = |g: TickGroup| Stage::Group(g).index();
        let mut calm = [Duration::ZERO; Stage::COUNT];
        calm[at(TickGroup::PrePhysics)] = Duration::from_micros(10);
        calm[Stage::Timers.index()] = Duration::from_micros(5);
        let mut spike = calm;
        spike[Stage::Latent.index()] = Duration::from_micros(1_000);
        let mut frames = vec![calm; 800];
        frames[3] = spike;
        // 800 frames make 400 buckets of two; the spike is the second bucket's worst.
        let plot = FramePlot::new(&frames, 60);
        assert_eq!((plot.bucket, plot.worst.len()), (2, 400));
        assert!((plot.worst[1].0 - 2.0 / 60.0).abs() < 1e-12);
        assert!((plot.budget_us() - 16_666.666).abs() < 1e-2);
        let [pre, .., timers, _, latent, last] = plot.worst[1].1;
        assert_eq!((pre, timers, latent, last), (10.0, 15.0, 1_015.0, 1_015.0));
        assert_eq!(plot.worst[0].1[BANDS - 1], 15.0, "a calm bucket");
    }

    #[test]
    fn every_stage_is_in_one_band() {
        let mut banded: Vec<Stage> = GROUPS.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        banded.sort();
        let mut all = Stage::ALL.to_vec();
        all.sort();
        assert_eq!(banded, all);
    }
}
