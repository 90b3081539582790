//! The strict query-string parser of both data endpoints: never a panic,
//! and a query it accepts has only the parameters it knows.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/query_string.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::query::{parse_latest_query, parse_list_query};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(list) = parse_list_query(raw) {
        assert!((1..=10).contains(&list.page_size), "{raw:?}");
        assert!(list.page >= 1, "{raw:?}");
    }
    let _ = parse_latest_query(raw);
}
