//! The record of how the last syncs went, as `sync-state.json` holds it and
//! as every upstream snapshot carries it: the vocabulary that the sync, the
//! snapshot format, the server and `status` share. Reading and writing the
//! file is the sync's (`sync::state`); what it means (the effective status,
//! the served `dataSource`) is decided here, once.

use serde::{Deserialize, Serialize};

use super::{DataSource, DataSourceStatus, Timestamp, TranslationStatus};

/// The feed's own health (`monitor` of the public feed), shown by `status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamMonitor {
    /// `ok` or `degraded`, as the feed says.
    pub status: String,
    /// The feed's error code, if any.
    pub error_code: Option<String>,
}

/// Where the upstream is and how often it is synced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceSettings {
    /// `dataSource.sourceId`.
    pub source_id: String,
    /// `dataSource.name`.
    pub name: String,
    /// The upstream document's URL.
    pub url: String,
    /// The upstream's public page.
    pub page_url: String,
    /// Sync interval (≥ 5).
    pub interval_minutes: u32,
    /// After this long without a good sync the cache is `stale`.
    pub max_age_minutes: u32,
}

/// Everything a sync remembers between runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncState {
    /// The source settings of the last run.
    pub source: SourceSettings,
    /// Which upstream request the validators belong to: a fingerprint of
    /// the fetch URL and headers (never the URL itself, which may carry a
    /// secret). A validator is only sent to the upstream it came from.
    #[serde(default)]
    pub validators_for: Option<String>,
    /// The validator to send as `If-None-Match`.
    pub etag: Option<String>,
    /// The validator to send as `If-Modified-Since`.
    pub last_modified: Option<String>,
    /// Last fetch or successful conditional validation.
    pub synced_at: Option<Timestamp>,
    /// Last time a body was fetched.
    pub fetched_at: Option<Timestamp>,
    /// The upstream document's `generatedAt`.
    pub upstream_generated_at: Option<Timestamp>,
    /// Status as of the last run.
    pub status: DataSourceStatus,
    /// The last error as published (`dataSource.lastError`): the kind of
    /// problem only, never upstream content; null after a good sync.
    pub last_error: Option<String>,
    /// The whole text of the last error, when it says more than the
    /// published one (the field's value, the host, the library's detail):
    /// for `status` and the operator, never served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error_detail: Option<String>,
    /// Which upstream request the attempts below were made to (the same
    /// fingerprint as `validators_for`): failures and back-off belong to
    /// that upstream, and a sync to another one starts afresh. Absent in a
    /// state written before it was kept: then taken to be the configured
    /// upstream's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts_for: Option<String>,
    /// Failures in a row.
    pub consecutive_failures: u32,
    /// While backing off: the next permitted attempt.
    pub next_attempt_at: Option<Timestamp>,
    /// When the last attempt (good or bad) ran.
    pub last_attempt_at: Option<Timestamp>,
    /// The feed's own monitor status (public feed only).
    #[serde(default)]
    pub upstream_monitor: Option<UpstreamMonitor>,
    /// Records the last document yielded but that could not be converted.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// SHA-256 (hex) of the kept public feed (`upstream-feed.json`) this
    /// state was derived from; none for a records document. The server
    /// mirrors that file only while its bytes have this digest, so a feed
    /// written ahead of its snapshot (or left by a killed sync) is never served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_sha256: Option<String>,
    /// What the upstream serves as its own `dataSource`, when the upstream
    /// is another resetctl instance's `/export.json`: this instance then
    /// serves the same (see [`SyncState::data_source`]). From the last
    /// fetched body; none for a feed or a plain records document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<UpstreamOrigin>,
}

/// The `dataSource` an upstream resetctl instance serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamOrigin {
    /// Its `meta.dataSource`; `None` when it serves none (a standalone
    /// instance), and then neither does its mirror.
    pub data_source: Option<DataSource>,
}

/// The digest [`SyncState::feed_sha256`] records for `bytes`.
pub fn feed_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    digest_hex(&Sha256::digest(bytes))
}

/// A SHA-256 digest as [`SyncState::feed_sha256`] writes it (lower-case hex).
pub fn digest_hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl SyncState {
    /// The state before the first sync.
    pub fn pending(source: SourceSettings) -> Self {
        Self {
            source,
            validators_for: None,
            etag: None,
            last_modified: None,
            synced_at: None,
            fetched_at: None,
            upstream_generated_at: None,
            status: DataSourceStatus::Pending,
            last_error: None,
            last_error_detail: None,
            attempts_for: None,
            consecutive_failures: 0,
            next_attempt_at: None,
            last_attempt_at: None,
            upstream_monitor: None,
            skipped: Vec::new(),
            feed_sha256: None,
            origin: None,
        }
    }

    /// The status at `now`: an `ok` cache older than its maximum age is `stale`.
    pub fn effective_status(&self, now: Timestamp) -> DataSourceStatus {
        let max_age_ms = i64::from(self.source.max_age_minutes) * 60_000;
        match (self.status, self.synced_at) {
            (DataSourceStatus::Ok, Some(at)) if now.as_millis() - at.as_millis() > max_age_ms => {
                DataSourceStatus::Stale
            }
            (status, _) => status,
        }
    }

    /// `meta.dataSource` (section 2.8) at `now`; `cached` says whether a
    /// usable upstream snapshot is being served.
    ///
    /// A mirror of another resetctl instance (an [`UpstreamOrigin`]) serves the
    /// origin's, so its bodies and entity tags are the origin's byte for
    /// byte: the origin's own `dataSource`, or none when it serves none.
    /// While this instance's own sync is not `ok` (the origin cannot be
    /// reached, or was last reached longer ago than the maximum age) the
    /// origin's is served with `status` `stale` and this instance's own
    /// `lastError` and `nextAttemptAt`: its copy may be behind.
    pub fn data_source(&self, now: Timestamp, cached: bool) -> Option<DataSource> {
        let own = self.effective_status(now);
        if let Some(origin) = &self.origin {
            return origin.data_source.clone().map(|mut relayed| {
                if own != DataSourceStatus::Ok {
                    relayed.status = DataSourceStatus::Stale;
                    relayed.last_error = self.last_error.clone();
                    relayed.next_attempt_at = self.next_attempt_at;
                }
                relayed.cached = cached;
                relayed
            });
        }
        Some(DataSource {
            type_: "upstream".into(),
            mode: "upstream".into(),
            source_id: self.source.source_id.clone(),
            name: self.source.name.clone(),
            url: self.source.url.clone(),
            page_url: self.source.page_url.clone(),
            synced_at: self.synced_at,
            last_synced_at: self.synced_at,
            fetched_at: self.fetched_at,
            upstream_generated_at: self.upstream_generated_at,
            status: own,
            last_error: self.last_error.clone(),
            next_attempt_at: self.next_attempt_at,
            interval_minutes: self.source.interval_minutes,
            cached,
            translation_status: TranslationStatus::Ok,
            translation_error: None,
        })
    }
}

/// The newer of two records of the sync outcome: the state file and the
/// one the served snapshot carries. They differ only when a sync was
/// killed between publishing and saving its state (the snapshot's is then
/// newer) or when later syncs only revalidated or failed (the file's is).
pub fn newest(file: Option<SyncState>, snapshot: Option<SyncState>) -> Option<SyncState> {
    match (file, snapshot) {
        (Some(f), Some(s)) if s.last_attempt_at > f.last_attempt_at => Some(s),
        (Some(f), _) => Some(f),
        (None, s) => s,
    }
}
