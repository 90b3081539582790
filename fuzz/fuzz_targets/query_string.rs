//! The strict query-string parser of both data endpoints: never a panic,
//! and a query it accepts has only the parameters it knows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resetctl::query::{parse_latest_query, parse_list_query};

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(list) = parse_list_query(raw) {
        assert!((1..=10).contains(&list.page_size), "{raw:?}");
        assert!(list.page >= 1, "{raw:?}");
    }
    let _ = parse_latest_query(raw);
});
