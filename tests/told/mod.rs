//! What a person is told, checked against a reference model
//! ([`model`]) on random days ([`generate`]) run through the real binary
//! ([`drive`]), and on every day that once differed (a regression case
//! each, `tests/fixtures/told/*.json`).
//!
//! `make test` runs as many random days as fit in
//! `RESETCTL_MODEL_SECONDS` (120 by default); `make soak` thousands.
//! `RESETCTL_TEST_SEED` replays a run. A difference is shrunk to a
//! smallest day, printed as JSON: save it under `tests/fixtures/told/`.

pub mod drive;
pub mod generate;
pub mod model;

use std::time::{Duration, Instant};

use crate::util::Rng;

/// Seconds of random days a run spends (`RESETCTL_MODEL_SECONDS`).
fn budget() -> Duration {
    let seconds = std::env::var("RESETCTL_MODEL_SECONDS")
        .ok()
        .map(|s| {
            s.parse()
                .expect("RESETCTL_MODEL_SECONDS is a number of seconds")
        })
        .unwrap_or(120);
    Duration::from_secs(seconds)
}

/// Shrinks a day that differs and fails with the smallest one, as JSON.
fn fail_with(timeline: &model::Timeline, difference: &str, seed: Option<u64>) -> ! {
    let deadline = Instant::now() + Duration::from_secs(300);
    let smallest = generate::shrink(timeline, model::TEST_CLOCK, |t| {
        Instant::now() < deadline && drive::differences(t).is_some()
    });
    let again = drive::differences(&smallest).unwrap_or_else(|| difference.to_owned());
    panic!(
        "the product and the model differ{}.\nSmallest day found (save it under tests/fixtures/told/):\n{}\n\nDifference:\n{again}",
        seed.map(|s| format!(" (seed {s})")).unwrap_or_default(),
        serde_json::to_string_pretty(&smallest).unwrap()
    );
}

#[test]
fn random_days_on_the_test_clock_are_told_as_the_model_says() {
    let mut rng = Rng::from_time();
    let started = Instant::now();
    let mut days = 0;
    while days == 0 || started.elapsed() < budget() {
        let day = generate::day(&mut rng, 12);
        let told = model::told(&day, &model::TEST_CLOCK);
        eprintln!(
            "day {}: {} actions; {} English, {} Chinese messages, {} events",
            days + 1,
            day.ops.len(),
            told.en.len(),
            told.zh.len(),
            told.machine.len()
        );
        if let Some(difference) = drive::differences(&day) {
            fail_with(&day, &difference, None);
        }
        days += 1;
    }
    eprintln!(
        "{days} random days told as the model says, in {:?}",
        started.elapsed()
    );
}

#[test]
fn every_day_that_once_differed_is_told_as_the_model_says() {
    let dir = crate::util::fixture("told");
    let mut days: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    days.sort();
    assert!(!days.is_empty(), "no recorded days in {}", dir.display());
    for path in days {
        let day: model::Timeline = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Some(difference) = drive::differences(&day) {
            panic!("{}:\n{difference}", path.display());
        }
    }
}

/// Days on the real clock at once (`RESETCTL_MODEL_REAL_DAYS`, 2 by default).
fn real_days() -> usize {
    std::env::var("RESETCTL_MODEL_REAL_DAYS")
        .ok()
        .map(|s| s.parse().expect("RESETCTL_MODEL_REAL_DAYS is a number"))
        .unwrap_or(2)
}

#[test]
fn random_minutes_on_the_real_clock_against_the_release_build_are_told_as_the_model_says() {
    let mut rng = Rng::from_time();
    let start = drive::now_ms() + 3000;
    let days: Vec<model::Timeline> = (0..real_days())
        .map(|_| generate::real_day(&mut rng, start))
        .collect();
    let differences: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = days
            .iter()
            .map(|day| s.spawn(move || drive::real_differences(day)))
            .collect();
        runs.into_iter()
            .zip(&days)
            .filter_map(|(run, day)| {
                let difference = run.join().unwrap()?;
                Some(format!(
                    "{}\n{difference}",
                    serde_json::to_string_pretty(day).unwrap()
                ))
            })
            .collect()
    });
    assert!(
        differences.is_empty(),
        "on the real clock the product and the model differ:\n{}",
        differences.join("\n\n")
    );
}
