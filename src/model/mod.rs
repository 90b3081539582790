//! The data model of section 2: records, their parts, meta and timestamps.
//!
//! Everything here is plain data with exact serde mappings; validation rules
//! that span fields live in [`validate`].

mod link;
mod meta;
mod record;
mod timestamp;
pub mod validate;

pub use link::Link;
pub use meta::{DataSource, DataSourceStatus, Meta, TranslationStatus};
pub use record::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, ScheduleWindow, Scope, Source,
};
pub use timestamp::{parse_operator_time, OutOfRange, Timestamp, TimestampError};
