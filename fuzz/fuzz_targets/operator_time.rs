//! Times and days an operator types: never a panic, and an accepted time
//! is one the service can write.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resetctl::model::{parse_operator_time, Timestamp};

fuzz_target!(|data: &[u8]| {
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
});
