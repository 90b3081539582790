//! Publish and load of a generated 100,000-record snapshot.
//!
//! Loading must be bounded by JSON parsing: the `load` figure is reported
//! as bytes/s next to a bare `serde_json::Value` parse of the same bytes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use resetctl::model::{Kind, Origin, Record, ResetType, Scope, Source, Timestamp};
use resetctl::snapshot::{Draft, Mode, Snapshot, SnapshotStore};

fn records(n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let id = (3_000_000_000_000_000_000u64 + i as u64).to_string();
            let at = Timestamp::from_millis(1_780_000_000_000 + i as i64 * 60_000);
            Record {
                id: id.clone(),
                kind: Kind::Completed,
                reset_type: ResetType::Global,
                announced_at: Some(at),
                effective_at: Some(at),
                text: Some(format!(
                    "Generated completion {i}: usage limits were reset."
                )),
                confidence: Some(0.9),
                scope: Some(Scope {
                    plans: vec!["all".into()],
                    windows: vec!["weekly".into()],
                }),
                source: Source {
                    origin: Origin::X,
                    url: Some(format!("https://x.com/gen/status/{id}")),
                    post_id: Some(id),
                    handle: Some("gen".into()),
                },
                schedule_precision: None,
                schedule_basis: None,
                schedule_window: None,
                schedule_state: None,
                completed_at: Some(at),
                completion_record_id: None,
                fulfillment_origin: None,
                related_record_ids: vec![],
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let recs = records(100_000);
    let dir = tempfile::tempdir().unwrap();
    let store = SnapshotStore::new(dir.path());
    let now = Timestamp::from_millis(1_790_000_000_000);
    let draft = || Draft {
        mode: Mode::Standalone,
        generated_at: now,
        last_successful_check_at: None,
        ledger_entry: None,
        sync: None,
        records: recs.clone(),
    };
    let lock = store.lock(Duration::from_secs(5), "bench").unwrap();
    let snap = resetctl::publish::publish(&store, &lock, draft(), now, 3).unwrap();
    let bytes = std::fs::read(store.path_of(snap.sequence)).unwrap();
    eprintln!("100,000-record snapshot: {} bytes", bytes.len());

    let mut group = c.benchmark_group("snapshot_100k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("load (decode + validate)", |b| {
        b.iter(|| black_box(Snapshot::from_slice(&bytes).unwrap()))
    });
    group.bench_function("parse only (serde_json::Value)", |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()))
    });
    group.bench_function("publish (validate + encode + fsync + rename)", |b| {
        b.iter(|| black_box(resetctl::publish::publish(&store, &lock, draft(), now, 3).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
