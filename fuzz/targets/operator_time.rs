//! Times and days an operator types: never a panic, and an accepted time
//! is one the service can write.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/operator_time.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::model::{parse_operator_time, Timestamp};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(at) = parse_operator_time(text) {
        assert!(at.is_writable(), "{text:?} gave {at}");
    }
    let _ = Timestamp::parse(text);
    let (date, tz) = text.split_once('|').unwrap_or((text, "UTC"));
    if let Ok((day, zone)) = resetctl::civil::parse_day(date, tz) {
        let _ = resetctl::civil::civil_day(day, zone);
    }
}
