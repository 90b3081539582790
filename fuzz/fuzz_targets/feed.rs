//! The public status feed's converter: never a panic, and whatever it
//! yields is publishable as a whole (each record valid, ids unique).
#![no_main]

use libfuzzer_sys::fuzz_target;
use resetctl::upstream::{decode_upstream, UpstreamDocument};
use resetctl::model::validate::validate_records;
use resetctl::model::Timestamp;

fuzz_target!(|data: &[u8]| {
    let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
    if let Ok(UpstreamDocument::Feed(converted)) = decode_upstream(data, now) {
        validate_records(&converted.records).expect("converted records publish");
    }
});
