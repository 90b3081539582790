//! One line of the operator ledger: never a panic, and an entry that reads
//! (checked or from a ledger written before checks) writes back to a
//! checked line that reads as the same entry.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/ledger_line.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::ledger::line::{decode, encode, Line};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let (Ok(Line::Checked(entry)) | Ok(Line::Unchecked(entry))) = decode(data) else {
        return;
    };
    let line = encode(&entry);
    assert_eq!(decode(&line), Ok(Line::Checked(entry.clone())));
    let _ = entry.action.describe();
}
