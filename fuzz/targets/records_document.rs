//! The records document (seed files, upstream bodies, snapshots): what
//! decodes and validates also publishes, and reads back the same.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/records_document.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use resetctl::document::{parse_seed, RecordsDocument};
use resetctl::model::Timestamp;
use resetctl::snapshot::{encode, Draft, Mode, Snapshot};

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let _ = parse_seed(data);
    let _ = Snapshot::from_slice(data);
    let Ok(doc) = RecordsDocument::from_slice(data) else {
        return;
    };
    let draft = Draft {
        mode: Mode::Upstream,
        generated_at: doc.generated_at,
        last_successful_check_at: doc.last_successful_check_at,
        ledger_entry: None,
        sync: None,
        records: doc.records,
    };
    let (snapshot, bytes) = encode(draft, 1, Timestamp::from_millis(0))
        .expect("a valid records document always publishes");
    assert_eq!(Snapshot::from_slice(&bytes).unwrap(), snapshot);
}
