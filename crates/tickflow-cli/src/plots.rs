//! The demo's plots, drawn with plotters (SVG, and PNG through its bitmap backend) and the
//! pure-Rust ab_glyph text renderer with an embedded DejaVu Sans, so no system font library
//! is needed.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use plotters::coord::Shift;
use plotters::prelude::*;
use tickflow::prelude::*;

use crate::CliError;

/// Stages of the frame as the plot groups them: (label, indices into `FrameReport::stage_times`).
const GROUPS: [(&str, &[usize]); 7] = [
    ("PrePhysics (move, think)", &[0]),
    ("Start/During/EndPhysics", &[1, 2, 3]),
    ("PostPhysics (reap)", &[4]),
    ("Timers", &[5]),
    ("Tickables", &[6]),
    ("Latent actions + tasks", &[7]),
    ("PostUpdateWork, LastDemotable, spawned", &[8, 9, 10]),
];

const COLORS: [RGBColor; 7] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

fn font() -> Result<(), CliError> {
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

/// `frames.svg` and `frames.png`: frame time per stage over the run, stacked (µs, averaged
/// over buckets of frames so that long runs stay readable).
pub(crate) fn frames(
    svg: &Path,
    png: &Path,
    times: &[[Duration; 11]],
    hz: u32,
) -> Result<(), CliError> {
    font()?;
    let stacked = stack(times, hz);
    let size = (1000, 520);
    draw_frames(SVGBackend::new(svg, size).into_drawing_area(), &stacked)
        .map_err(plot_error("frames.svg"))?;
    draw_frames(BitMapBackend::new(png, size).into_drawing_area(), &stacked)
        .map_err(plot_error("frames.png"))
}

/// Per bucket: its start in game seconds and the cumulative µs of each group.
fn stack(times: &[[Duration; 11]], hz: u32) -> Vec<(f64, [f64; 7])> {
    let bucket = times.len().div_ceil(400).max(1);
    times
        .chunks(bucket)
        .enumerate()
        .map(|(k, chunk)| {
            let mut cum = [0.0; 7];
            let mut sum = 0.0;
            for (g, (_, stages)) in GROUPS.iter().enumerate() {
                let us: f64 = chunk
                    .iter()
                    .flat_map(|frame| stages.iter().map(|&s| frame[s].as_secs_f64() * 1e6))
                    .sum();
                sum += us / chunk.len() as f64;
                cum[g] = sum;
            }
            ((k * bucket) as f64 / f64::from(hz), cum)
        })
        .collect()
}

fn draw_frames<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    data: &[(f64, [f64; 7])],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let x_max = data.last().map_or(1.0, |d| d.0).max(1e-3);
    let y_max = data.iter().map(|d| d.1[6]).fold(1.0, f64::max) * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption("Frame time per stage (stacked)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("game time (s)")
        .y_desc("µs per frame")
        .light_line_style(WHITE)
        .draw()
        .map_err(e)?;
    // Top of the stack first, so each lower area paints over the one above it.
    for g in (0..GROUPS.len()).rev() {
        let color = COLORS[g];
        chart
            .draw_series(AreaSeries::new(
                data.iter().map(|d| (d.0, d.1[g])),
                0.0,
                color.mix(0.85),
            ))
            .map_err(e)?
            .label(GROUPS[g].0)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

/// The scene of `catch-up.svg`: one looping timer of 0.1 s at 60 Hz, and a 0.5 s hitch.
pub(crate) const HITCH_FRAME: usize = 30;
const CATCH_UP_FRAMES: usize = 90;

/// Calls per frame of a 0.1 s looping timer through a 0.5 s hitch, for each catch-up policy.
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
                let dt = if f == HITCH_FRAME {
                    secs(0.5)
                } else {
                    Span::frames(1, 60)
                };
                timers.tick(dt, &mut calls);
            }
            (mode, calls)
        })
        .collect()
}

/// `catch-up.svg`: the three policies side by side.
pub(crate) fn catch_up(svg: &Path) -> Result<(), CliError> {
    font()?;
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
            "A 0.1 s looping timer at 60 Hz through a 0.5 s hitch (frame 30): calls per frame",
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
            CatchUp::Burst => "Burst: every missed call, in the hitch frame",
            CatchUp::Once => "Once: one call, then back on the original grid",
            _ => "Delay: one call, then a new grid from the late call",
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
            .x_desc("frame")
            .y_labels(y_max as usize + 1)
            .light_line_style(WHITE)
            .draw()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catch_up_policies_differ_only_after_the_hitch() {
        let runs = catch_up_calls();
        let total = |v: &[u32]| v.iter().sum::<u32>();
        let (burst, once, delay) = (&runs[0].1, &runs[1].1, &runs[2].1);
        assert_eq!(burst[..HITCH_FRAME], once[..HITCH_FRAME]);
        assert_eq!(burst[..HITCH_FRAME], delay[..HITCH_FRAME]);
        // The hitch spans five periods: Burst makes them all at once, the others one.
        assert!(burst[HITCH_FRAME] >= 5, "{burst:?}");
        assert_eq!(once[HITCH_FRAME], 1);
        assert_eq!(delay[HITCH_FRAME], 1);
        assert!(total(burst) > total(once));
    }

    #[test]
    fn stacking_is_cumulative() {
        let mut frame = [Duration::ZERO; 11];
        frame[0] = Duration::from_micros(10);
        frame[5] = Duration::from_micros(5);
        // 800 frames make 400 buckets of two.
        let s = stack(&vec![frame; 800], 60);
        assert_eq!(s.len(), 400);
        assert!((s[1].0 - 2.0 / 60.0).abs() < 1e-12);
        let cum = s[0].1;
        assert!((cum[0] - 10.0).abs() < 1e-9);
        assert!((cum[3] - 15.0).abs() < 1e-9);
        assert!((cum[6] - 15.0).abs() < 1e-9);
    }
}
