//! The data model of section 2: records, their parts, meta and timestamps.
//!
//! Everything here is plain data with exact serde mappings; validation rules
//! that span fields live in [`validate`].

mod bidi;
mod filter;
mod link;
mod meta;
mod mode;
mod record;
mod sync_state;
mod timestamp;
pub mod validate;

pub use bidi::{is_bidi_control, without_bidi_controls};
pub use filter::{compare_ids, concerns_plan, visible_in, KindFilter, PlanId};
pub use link::{record_page_path, record_pages_base, BaseUrl, BaseUrlError, Link};
pub use meta::{DataSource, DataSourceStatus, Meta, TranslationStatus};
pub use mode::Mode;
pub use record::{
    FulfillmentOrigin, Kind, Origin, Record, ResetType, ScheduleBasis, SchedulePrecision,
    ScheduleState, ScheduleWindow, Scope, Source,
};
pub use sync_state::{
    digest_hex, feed_digest, newest, SourceSettings, SyncState, UpstreamMonitor, UpstreamOrigin,
};
pub use timestamp::{
    parse_operator_time, OperatorTimeError, OutOfRange, Timestamp, TimestampError,
};
