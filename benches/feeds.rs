//! The feed renderers (`render::atom::render`, `render::ics::render`) on a
//! generated worst case: 2,000 records, every shape, long texts.
//!
//! "kept" is a request against a view whose fragments (and, for the
//! default calendar, whole body) were already made by an earlier request:
//! what every request but the first after a publish costs. "first" is the
//! first request after a publish (a fresh view each iteration, its making
//! nor its dropping, timed): what rendering on demand, without keeping
//! anything, would cost every request. The figures decide which variants are kept
//! (docs/benchmarks.md).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use resetctl::feeds::{atom, ics, AsOf, BaseUrl};
use resetctl::model::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, ScheduleWindow, Scope, Source, Timestamp,
};
use resetctl::query::{parse_atom_query, parse_ics_query, PublishedView};
use resetctl::snapshot::{Mode, Snapshot, SNAPSHOT_FORMAT};

const NOW: i64 = 1_795_000_000_000;

/// The matcher's default tolerance, 180 minutes.
const TOLERANCE_MS: i64 = 180 * 60_000;

/// The words of `view` at [`NOW`] (what a request asks first).
fn as_of(view: &PublishedView) -> AsOf {
    AsOf::of(view, TOLERANCE_MS, Timestamp::from_millis(NOW))
}

/// `n` records: pending, elapsed and fulfilled schedules (a quarter of
/// them date-precision) and completions, with a 300-byte multi-script text.
fn records(n: usize) -> Vec<Record> {
    let text =
        "Limits reset for everyone; thanks, all! リセット完了 ✅ 重置已完成，感谢大家的耐心等待。 \
                Лимиты сброшены для всех планов. "
            .repeat(2);
    (0..n)
        .map(|i| {
            let id = (3_000_000_000_000_000_000u64 + i as u64).to_string();
            let at = Timestamp::from_millis(NOW - (n - i) as i64 * 3_600_000);
            let schedule = i % 2 == 0;
            let state = match i % 6 {
                0 => ScheduleState::Pending,
                2 => ScheduleState::Elapsed,
                _ => ScheduleState::Fulfilled,
            };
            let window = if i % 8 == 0 {
                ScheduleWindow {
                    start_at: at,
                    end_at: at.add_millis(25 * 3_600_000),
                }
            } else {
                ScheduleWindow {
                    start_at: at,
                    end_at: at,
                }
            };
            Record {
                id: id.clone(),
                kind: if schedule {
                    Kind::Scheduled
                } else {
                    Kind::Completed
                },
                reset_type: ResetType::Global,
                announced_at: Some(at.add_millis(-86_400_000)),
                effective_at: Some(at),
                text: Some(format!("{text}#{i}")),
                confidence: Some(0.9),
                scope: Some(Scope {
                    plans: vec![["all", "pro", "plus", "unknown"][i % 4].into()],
                    windows: vec!["weekly".into()],
                }),
                source: Source {
                    origin: Origin::X,
                    url: Some(format!("https://x.com/gen/status/{id}")),
                    post_id: Some(id),
                    handle: Some("gen".into()),
                },
                schedule_precision: schedule.then_some(if i % 8 == 0 {
                    SchedulePrecision::Date
                } else {
                    SchedulePrecision::Datetime
                }),
                schedule_basis: schedule.then_some(ScheduleBasis::Explicit),
                schedule_window: schedule.then_some(window),
                schedule_state: schedule.then_some(state),
                completed_at: (!schedule || state == ScheduleState::Fulfilled)
                    .then_some(at.add_millis(600_000)),
                completion_record_id: None,
                fulfillment_origin: (schedule && state == ScheduleState::Fulfilled)
                    .then_some(FulfillmentOrigin::Auto),
                related_record_ids: vec![],
            }
        })
        .collect()
}

fn view(snapshot: &Snapshot) -> PublishedView {
    PublishedView::build(snapshot, None)
}

fn bench(c: &mut Criterion) {
    let snapshot = Snapshot {
        format: SNAPSHOT_FORMAT.into(),
        sequence: 1,
        published_at: Timestamp::from_millis(NOW),
        mode: Mode::Standalone,
        generated_at: Timestamp::from_millis(NOW),
        last_successful_check_at: None,
        ledger_entry: None,
        sync: None,
        records: records(2_000),
    };
    let base = BaseUrl::parse("https://resets.example.com").unwrap();
    let atom_default = parse_atom_query("").unwrap();
    let atom_plan = parse_atom_query("plan=pro").unwrap();
    let ics_default = parse_ics_query("").unwrap();
    let ics_alarm = parse_ics_query("alarm=15").unwrap();
    let ics_plan = parse_ics_query("plan=pro").unwrap();

    let kept = view(&snapshot);
    eprintln!(
        "body sizes: atom {} bytes, ics {} bytes (alarm=15: {}, plan=pro: {})",
        atom::render(&kept, &atom_default, &base, None, as_of(&kept)).len(),
        ics::render(&kept, &ics_default, None, as_of(&kept)).len(),
        ics::render(&kept, &ics_alarm, None, as_of(&kept)).len(),
        ics::render(&kept, &ics_plan, None, as_of(&kept)).len(),
    );
    let _ = atom::render(&kept, &atom_plan, &base, None, as_of(&kept));

    let mut group = c.benchmark_group("feeds");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("atom kept", |b| {
        b.iter(|| atom::render(black_box(&kept), &atom_default, &base, None, as_of(&kept)))
    });
    group.bench_function("atom kept plan=pro", |b| {
        b.iter(|| atom::render(black_box(&kept), &atom_plan, &base, None, as_of(&kept)))
    });
    group.bench_function("atom first", |b| {
        b.iter_batched_ref(
            || view(&snapshot),
            |v| atom::render(v, &atom_default, &base, None, as_of(v)).len(),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("ics kept", |b| {
        b.iter(|| ics::render(black_box(&kept), &ics_default, None, as_of(&kept)))
    });
    group.bench_function("ics kept alarm=15", |b| {
        b.iter(|| ics::render(black_box(&kept), &ics_alarm, None, as_of(&kept)))
    });
    group.bench_function("ics kept plan=pro", |b| {
        b.iter(|| ics::render(black_box(&kept), &ics_plan, None, as_of(&kept)))
    });
    group.bench_function("ics first", |b| {
        b.iter_batched_ref(
            || view(&snapshot),
            |v| ics::render(v, &ics_default, None, as_of(v)).len(),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
