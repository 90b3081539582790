//! Standalone mode's operator ledger: an append-only log of every operator
//! action (`<data-dir>/ledger.jsonl`), and the records derived from it.
//!
//! - [`entry`]: what an entry holds (who, when, what);
//! - [`mod@line`]: one line's format, an entry and a check of its bytes;
//! - [`file`](mod@file): appending (fsync, under the data-dir lock) and reading back,
//!   reporting a torn last line instead of dropping it;
//! - [`derive`](mod@derive): folding seeded history and the ledger into records, with
//!   fulfilment (auto, link, manual) and states at the publish time.

pub mod derive;
pub mod entry;
pub mod file;
pub mod line;

pub use derive::{derive_records, Derived, DerivedRecord, RecordStatus};
pub use entry::{Action, Edit, Entry};
pub use file::{append, read_ledger, replace, BadLine, LedgerError, LedgerRead};
