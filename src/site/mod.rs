//! The human side of a view: the status page ("did it reset?"), the
//! per-record pages and the README badge.
//!
//! - [`verdict`]: the rules of the verdict and the next reset (pure);
//! - [`heatmap`]: a year of completions per day;
//! - [`i18n`]: the languages and their one table of strings each;
//! - [`html`]: the `maud` templates of the pages, their style and script;
//! - [`badge`]: the shields.io endpoint document.
//!
//! Everything here is a function of a published view and an instant: no
//! I/O, no clock, no HTTP (the server's `api::site` serves and keeps it).

pub mod badge;
pub mod heatmap;
pub mod html;
pub mod i18n;
pub mod verdict;

use crate::model::KindFilter;
use crate::model::Record;
use crate::query::PublishedView;

/// The records of `view` visible under `all`, in the API's order: what the
/// verdict, the next reset and the badge read.
pub fn visible(view: &PublishedView) -> impl Iterator<Item = &Record> + Clone + '_ {
    listed(view, KindFilter::All)
}

/// The records of `view` under `filter`, in the API's order.
pub fn listed(
    view: &PublishedView,
    filter: KindFilter,
) -> impl Iterator<Item = &Record> + Clone + '_ {
    view.ordered(filter).iter().map(|&i| view.record(i))
}
