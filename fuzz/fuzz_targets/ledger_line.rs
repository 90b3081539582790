//! One line of the operator ledger: never a panic, and an entry that
//! reads writes back to the same entry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resetctl::ledger::Entry;

fuzz_target!(|data: &[u8]| {
    let Ok(entry) = serde_json::from_slice::<Entry>(data) else {
        return;
    };
    let line = serde_json::to_vec(&entry).expect("a read entry writes");
    let again: Entry = serde_json::from_slice(&line).unwrap();
    assert_eq!(again, entry);
    let _ = entry.action.describe();
});
