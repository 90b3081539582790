//! Meta (section 2.7) and the upstream-sync DataSource object (section 2.8).

use serde::{Deserialize, Serialize};

use super::Timestamp;

/// Meta of a published snapshot: describes the data, not the request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// When the published snapshot was generated (the upstream's time in sync mode).
    pub generated_at: Timestamp,
    /// The last successful monitor check, when one is known.
    pub last_successful_check_at: Option<Timestamp>,
    /// Present only in upstream-sync mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_source: Option<DataSource>,
}

/// The sync status of section 3.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSourceStatus {
    /// The cache is fresh.
    Ok,
    /// A cache exists but the last sync failed or the cache expired.
    Stale,
    /// No usable cache and the sync failed.
    Error,
    /// Waiting for the first sync.
    Pending,
}

impl DataSourceStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DataSourceStatus::Ok => "ok",
            DataSourceStatus::Stale => "stale",
            DataSourceStatus::Error => "error",
            DataSourceStatus::Pending => "pending",
        }
    }

    /// Whether a cache in this state may be behind its upstream (`stale`
    /// or `error`): what `status`'s exit code and `/healthz?ready=fresh`
    /// report as stale.
    pub fn is_behind(self) -> bool {
        matches!(self, DataSourceStatus::Stale | DataSourceStatus::Error)
    }
}

impl std::fmt::Display for DataSourceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Translation status of the upstream texts (no translation exists yet: always `ok`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranslationStatus {
    /// Translated (or nothing to translate).
    Ok,
    /// Translation failed.
    Error,
    /// Translation not done yet.
    Pending,
}

/// The 17 fields of section 2.8, all always written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataSource {
    /// Always `upstream`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Always `upstream`.
    pub mode: String,
    /// Id of the upstream source.
    pub source_id: String,
    /// Name of the upstream source.
    pub name: String,
    /// Address of the upstream status document.
    pub url: String,
    /// Address of the upstream public page.
    pub page_url: String,
    /// Latest fetch or conditional validation.
    pub synced_at: Option<Timestamp>,
    /// Compatibility alias of `synced_at`.
    pub last_synced_at: Option<Timestamp>,
    /// Latest time a body was fetched (a 304 does not move it).
    pub fetched_at: Option<Timestamp>,
    /// The upstream document's own generation time.
    pub upstream_generated_at: Option<Timestamp>,
    /// This instance's sync status.
    pub status: DataSourceStatus,
    /// Last sync error text.
    pub last_error: Option<String>,
    /// Next permitted attempt while backing off.
    pub next_attempt_at: Option<Timestamp>,
    /// Sync interval in minutes (at least 5).
    pub interval_minutes: u32,
    /// Whether a usable upstream snapshot exists.
    pub cached: bool,
    /// Translation status.
    pub translation_status: TranslationStatus,
    /// Translation error text.
    pub translation_error: Option<String>,
}
