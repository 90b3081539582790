//! The feed's wire shapes, read leniently: unknown fields are ignored (the
//! producer adds fields without bumping the version), every part is
//! optional where the versions differ, and kinds stay strings so an unknown
//! kind is skipped, not fatal.

use serde::Deserialize;

use crate::model::{Scope, Timestamp};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedSource {
    #[serde(default)]
    pub handle: Option<String>,
    pub post_id: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub origin: Option<String>,
}

/// One event (also the shape of timeline and grace schedules).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedEvent {
    pub kind: String,
    #[serde(default)]
    pub reset_type: Option<String>,
    #[serde(default)]
    pub announced_at: Option<Timestamp>,
    #[serde(default)]
    pub effective_at: Option<Timestamp>,
    #[serde(default)]
    pub scope: Option<Scope>,
    pub source: FeedSource,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub schedule_precision: Option<String>,
    #[serde(default)]
    pub schedule_basis: Option<String>,
}

impl FeedEvent {
    /// How many optional facts this copy carries (to keep the most complete duplicate).
    pub fn completeness(&self) -> usize {
        [
            self.reset_type.is_some(),
            self.announced_at.is_some(),
            self.effective_at.is_some(),
            self.scope.is_some(),
            self.confidence.is_some(),
            self.text.is_some(),
            self.schedule_precision.is_some(),
            self.schedule_basis.is_some(),
            self.source.handle.is_some(),
            self.source.url.is_some(),
            self.source.origin.is_some(),
        ]
        .into_iter()
        .filter(|b| *b)
        .count()
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedWindow {
    pub start_at: Timestamp,
    pub end_at: Timestamp,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FulfilledSchedule {
    pub schedule: serde_json::Value,
    #[serde(default)]
    pub window: Option<FeedWindow>,
    #[serde(default)]
    pub completion_post_id: Option<String>,
    #[serde(default)]
    pub completed_at: Option<Timestamp>,
    #[serde(default)]
    pub fulfillment_origin: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManualCompletion {
    pub id: String,
    pub completed_at: Timestamp,
    #[serde(default)]
    pub schedule_post_ids: Vec<String>,
    #[serde(default)]
    pub schedules: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    #[serde(default)]
    pub next_schedule: Option<serde_json::Value>,
    #[serde(default)]
    pub fulfilled_schedules: Vec<serde_json::Value>,
    #[serde(default)]
    pub manual_completions: Vec<serde_json::Value>,
    #[serde(default)]
    pub suppressed_post_ids: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeatmapSource {
    pub post_id: String,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub reset_type: Option<String>,
    #[serde(default)]
    pub announced_at: Option<Timestamp>,
    #[serde(default)]
    pub effective_at: Option<Timestamp>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct HeatmapDay {
    #[serde(default)]
    pub sources: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Heatmap {
    #[serde(default)]
    pub days: Vec<HeatmapDay>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Monitor {
    pub status: String,
    #[serde(default)]
    pub error_code: Option<String>,
}

/// The top level; the event lists stay raw so each item is read on its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Feed {
    pub schema_version: u32,
    pub generated_at: Timestamp,
    #[serde(default)]
    pub last_successful_check_at: Option<Timestamp>,
    #[serde(default)]
    pub monitor: Option<Monitor>,
    pub events: Vec<serde_json::Value>,
    #[serde(default)]
    pub grace_schedules: Vec<serde_json::Value>,
    #[serde(default)]
    pub reset_timeline: Option<Timeline>,
    #[serde(default)]
    pub heatmap: Option<Heatmap>,
}
