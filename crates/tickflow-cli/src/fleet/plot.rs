//! The fleet run's summary and its plot (`fleet.svg`, `fleet.png`): actors per zone over
//! time with the faults marked, and the lateness of every durable call in frames.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::args::{zone_name, Fault, FleetArgs};
use super::check::{quantile, Report};
use crate::CliError;

/// Takeover times: for each kill, from the SIGKILL to the last adoption of the killed zone's
/// actors before it started again (ms); kills whose zone came back before its lease ran out
/// adopted nothing and are left out.
pub(crate) fn takeovers(report: &Report, faults: &[Fault]) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, f) in faults.iter().enumerate().filter(|(_, f)| f.kind == "kill") {
        let back = (faults[i..].iter())
            .find(|g| g.kind == "start" && g.zone == f.zone)
            .map_or(i64::MAX, |g| g.at_us);
        let name = zone_name(f.zone);
        let last = (report.adoptions.iter())
            .filter(|(z, at)| *z == name && *at > f.at_us && *at <= back)
            .map(|(_, at)| *at)
            .max();
        if let Some(last) = last {
            out.push(((last - f.at_us).max(0) / 1000) as u64);
        }
    }
    out
}

/// The text the run prints and keeps in `summary.txt`.
pub(crate) fn summary(
    a: &FleetArgs,
    store: &str,
    r: &Report,
    faults: &[Fault],
    skewed: bool,
) -> String {
    let mut s = String::new();
    let count = |k: &str| faults.iter().filter(|f| f.kind == k).count();
    let ev = |k: &str| r.events.get(k).copied().unwrap_or(0);
    let frame_us = 1e6 / f64::from(a.world.hz.max(1));
    let fr = |us: u64| us as f64 / frame_us;
    let _ = writeln!(
        s,
        "fleet: {} zones x {} actors, {:.0} s at {} Hz on {store}, no director",
        a.zones, a.world.actors, a.seconds, a.world.hz
    );
    let skew = match (a.skew_ms, skewed) {
        (0, _) => "no clock skew".to_string(),
        (ms, true) => format!("clocks of alternate zones shifted +/-{ms} ms"),
        (_, false) => "clock skew asked for but `faketime` is not installed: none".to_string(),
    };
    let _ = writeln!(
        s,
        "faults: {} SIGKILL, {} SIGSTOP past the lease, {} cut off from the database; {skew}",
        count("kill"),
        count("stop"),
        count("cut")
    );
    let _ = writeln!(
        s,
        "moves: {} arrivals by handover, {} adoptions of lost zones' actors, {} rejoins of \
         fenced zones",
        ev("arrive"),
        ev("adopt"),
        ev("rejoin")
    );
    let _ = writeln!(
        s,
        "actors: {}; in no zone {}, in two zones {}",
        r.actors, r.nowhere, r.twice_held
    );
    let _ = writeln!(
        s,
        "durable calls: {}; lost {}, made twice {}, early {} (closest to its due time: {:+.1} ms)",
        r.calls,
        r.lost,
        r.doubled,
        r.early,
        r.min_margin_us as f64 / 1000.0
    );
    let mut late = r.late.clone();
    let names = [
        "steady and handed over",
        "first after adoption",
        "first after a resume",
    ];
    for (v, name) in late.iter_mut().zip(names) {
        if v.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "lateness in frames, {name} ({} calls): p50 {:.2}, p99 {:.2}, p99.99 {:.2}, max {:.2}",
            v.len(),
            fr(quantile(v, 0.5)),
            fr(quantile(v, 0.99)),
            fr(quantile(v, 0.9999)),
            fr(quantile(v, 1.0))
        );
    }
    let mut t = takeovers(r, faults);
    if !t.is_empty() {
        let _ = writeln!(
            s,
            "takeover, SIGKILL to the last actor's adoption ({} kills): p50 {} ms, p99 {} ms, \
             max {} ms",
            t.len(),
            quantile(&mut t, 0.5),
            quantile(&mut t, 0.99),
            quantile(&mut t, 1.0)
        );
    }
    if let Some(f) = faults.iter().find(|f| f.kind == "failover") {
        let mut back: Vec<i64> = (r.recovered.iter())
            .filter(|&&t| t > f.at_us)
            .copied()
            .collect();
        back.sort_unstable();
        let ms = |t: Option<&i64>| t.map_or(-1, |t| (t - f.at_us) / 1000);
        let _ = writeln!(
            s,
            "failover: primary killed and standby promoted; first commit on the new primary \
             {} ms after the kill, the last zone's {} ms after",
            ms(back.first()),
            ms(back.last())
        );
    }
    for e in &r.zone_errors {
        let _ = writeln!(s, "zone stopped: {e}");
    }
    let mut p99: Vec<u64> = r.load.values().flatten().map(|l| l.p99_us).collect();
    let calls: u64 = r.load.values().flatten().map(|l| l.calls).sum();
    let frames: u64 = r.load.values().flatten().map(|l| l.frames).sum();
    let slow: u64 = r.load.values().flatten().map(|l| l.slow).sum();
    let _ = writeln!(
        s,
        "frames: per-second p99 median {:.1} ms, worst {:.1} ms; {slow} of {frames} ({:.2} %) \
         longer than a frame ({:.1} ms), so the p99 of all frames is {} one; {:.0} durable \
         calls/s in all",
        quantile(&mut p99, 0.5) as f64 / 1000.0,
        quantile(&mut p99, 1.0) as f64 / 1000.0,
        100.0 * slow as f64 / frames.max(1) as f64,
        frame_us / 1000.0,
        if slow * 100 <= frames {
            "within"
        } else {
            "past"
        },
        calls as f64 / a.seconds.max(1.0)
    );
    let _ = writeln!(
        s,
        "checker: {} violations; plots: {}",
        r.violations(),
        a.out.join("fleet.svg").display()
    );
    s
}

/// `fleet.svg` and `fleet.png`.
pub(crate) fn draw(out: &Path, r: &Report, faults: &[Fault], hz: u32) -> Result<(), CliError> {
    crate::plots::register_font()?;
    let size = (1000, 640);
    let svg = out.join("fleet.svg");
    let png = out.join("fleet.png");
    let e = |what: &'static str| move |e: String| CliError::internal(format!("{what}: {e}"));
    draw_on(
        SVGBackend::new(&svg, size).into_drawing_area(),
        r,
        faults,
        hz,
    )
    .map_err(e("fleet.svg"))?;
    draw_on(
        BitMapBackend::new(&png, size).into_drawing_area(),
        r,
        faults,
        hz,
    )
    .map_err(e("fleet.png"))
}

fn draw_on<B: DrawingBackend>(
    area: DrawingArea<B, plotters::coord::Shift>,
    r: &Report,
    faults: &[Fault],
    hz: u32,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<B::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(err)?;
    let (top, bottom) = area.split_vertically(400);
    let t0 = (r.load.values().flatten().map(|l| l.at_us))
        .chain(faults.iter().map(|f| f.at_us))
        .min()
        .unwrap_or(0);
    let secs = |us: i64| (us - t0) as f64 / 1e6;
    let end = (r.load.values().flatten().map(|l| secs(l.at_us))).fold(1.0, f64::max);
    let most = (r.load.values().flatten().map(|l| l.actors))
        .max()
        .unwrap_or(1) as f64
        * 1.1;
    let mut chart = ChartBuilder::on(&top)
        .caption(
            "actors per zone; faults: kill (red), stop (orange), cut (purple)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..end, 0.0..most)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("actors")
        .draw()
        .map_err(err)?;
    let mut zones: Vec<_> = r.load.iter().collect();
    zones.sort_by(|a, b| a.0.cmp(b.0));
    for (i, (zone, samples)) in zones.into_iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        // One line per stretch the zone ran: a gap of two seconds is a zone that was down.
        let mut parts: Vec<Vec<(f64, f64)>> = Vec::new();
        for l in samples.iter() {
            let p = (secs(l.at_us), l.actors as f64);
            match parts.last_mut() {
                Some(part) if part.last().is_some_and(|q| p.0 - q.0 < 2.0) => part.push(p),
                _ => parts.push(vec![p]),
            }
        }
        for (k, part) in parts.into_iter().enumerate() {
            let drawn = chart
                .draw_series(LineSeries::new(part, color.stroke_width(2)))
                .map_err(err)?;
            if k == 0 {
                drawn
                    .label(zone.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
        }
    }
    for f in faults {
        let color = match f.kind {
            "kill" => RED,
            "stop" => RGBColor(230, 140, 0),
            "cut" => RGBColor(140, 60, 200),
            _ => continue,
        };
        let x = secs(f.at_us);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, most)],
                color.stroke_width(1),
            )))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    // Lateness: calls per bucket of a tenth of a frame, log scale.
    let frame_us = 1e6 / f64::from(hz.max(1));
    let all: Vec<f64> = r
        .late
        .iter()
        .flatten()
        .map(|&us| us as f64 / frame_us)
        .collect();
    let max = all.iter().copied().fold(1.0, f64::max).ceil();
    let buckets = ((max * 10.0) as usize).clamp(10, 400);
    let mut counts = vec![0u64; buckets + 1];
    for v in &all {
        counts[((v / max * buckets as f64) as usize).min(buckets)] += 1;
    }
    let top_count = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            "lateness of every durable call, in frames",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max, (0.5..top_count * 2.0).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("frames late")
        .y_desc("calls")
        .draw()
        .map_err(err)?;
    let w = max / buckets as f64;
    chart
        .draw_series(
            (counts.iter().enumerate())
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| {
                    let x = i as f64 * w;
                    Rectangle::new([(x, 0.5), (x + w, c as f64)], BLUE.filled())
                }),
        )
        .map_err(err)?;
    area.present().map_err(err)
}
