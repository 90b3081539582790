//! One line of the operator ledger: never a panic, and an entry that
//! reads writes back to the same entry.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/ledger_line.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::ledger::Entry;

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let Ok(entry) = serde_json::from_slice::<Entry>(data) else {
        return;
    };
    let line = serde_json::to_vec(&entry).expect("a read entry writes");
    let again: Entry = serde_json::from_slice(&line).unwrap();
    assert_eq!(again, entry);
    let _ = entry.action.describe();
}
