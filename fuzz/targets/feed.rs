//! The public status feed's converter: never a panic, and whatever it
//! yields is publishable as a whole (each record valid, ids unique).
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/feed.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::model::validate::validate_records;
use resetctl::model::Timestamp;
use resetctl::upstream::{decode_upstream, UpstreamDocument};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
    if let Ok(UpstreamDocument::Feed(converted)) = decode_upstream(data, now) {
        validate_records(&converted.records).expect("converted records publish");
    }
}
