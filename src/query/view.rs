//! The published view: what a server answers from.
//!
//! Built once per snapshot (off the request path): each record serialised
//! to JSON once, the ordered index list of every filter, and the `meta`
//! object serialised once. A request then copies at most `pageSize`
//! pre-serialised records, whatever the dataset size.

use crate::model::{DataSource, Meta, Record, Timestamp};
use crate::snapshot::{Mode, Snapshot};

use super::{order_for, KindFilter};

/// One immutable published version, ready to answer queries.
///
/// The records part is shared (`Arc`), so a change of `meta` alone (a new
/// sync state) makes a new view without touching the records.
#[derive(Debug)]
pub struct PublishedView {
    index: std::sync::Arc<RecordIndex>,
    /// The serialised `meta` object.
    meta_json: String,
    /// The `dataSource` inside it (upstream mode only).
    data_source: Option<DataSource>,
}

/// The records of one snapshot, serialised and ordered once.
#[derive(Debug)]
struct RecordIndex {
    sequence: u64,
    mode: Mode,
    generated_at: Timestamp,
    last_successful_check_at: Option<Timestamp>,
    /// Every record's JSON, back to back.
    record_bytes: String,
    /// `record_bytes[spans[i].0..spans[i].1]` is record `i`.
    spans: Vec<(u32, u32)>,
    /// Per filter (indexed by [`KindFilter::index`]): record indexes in public order.
    orders: [Vec<u32>; 3],
}

/// Which slice of a filter's list a page covers, and its Page fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageWindow {
    /// Start index into the filter's list.
    pub start: usize,
    /// End index (exclusive).
    pub end: usize,
    /// Matching records.
    pub total: usize,
    /// Pages (0 when nothing matches).
    pub total_pages: u64,
    /// Whether a page follows.
    pub has_next: bool,
}

impl PublishedView {
    /// Builds the view of `snapshot`; `data_source` is shown only for upstream snapshots.
    pub fn build(snapshot: &Snapshot, data_source: Option<DataSource>) -> Self {
        let records: &[Record] = &snapshot.records;
        let mut record_bytes = String::with_capacity(records.len() * 700);
        let mut spans = Vec::with_capacity(records.len());
        for record in records {
            let start = record_bytes.len() as u32;
            record_bytes.push_str(&serde_json::to_string(record).expect("records serialise"));
            spans.push((start, record_bytes.len() as u32));
        }
        let index = RecordIndex {
            sequence: snapshot.sequence,
            mode: snapshot.mode,
            generated_at: snapshot.generated_at,
            last_successful_check_at: snapshot.last_successful_check_at,
            record_bytes,
            spans,
            orders: KindFilter::ALL.map(|k| order_for(records, k)),
        };
        Self::with_index(std::sync::Arc::new(index), data_source)
    }

    fn with_index(index: std::sync::Arc<RecordIndex>, data_source: Option<DataSource>) -> Self {
        let data_source = if index.mode == Mode::Upstream {
            data_source
        } else {
            None
        };
        let meta = Meta {
            generated_at: index.generated_at,
            last_successful_check_at: index.last_successful_check_at,
            data_source: data_source.clone(),
        };
        let meta_json = serde_json::to_string(&meta).expect("meta serialises");
        Self {
            index,
            meta_json,
            data_source,
        }
    }

    /// The same records with another `dataSource` (cheap: records are shared).
    pub fn with_data_source(&self, data_source: Option<DataSource>) -> Self {
        Self::with_index(self.index.clone(), data_source)
    }

    /// The snapshot's sequence number.
    pub fn sequence(&self) -> u64 {
        self.index.sequence
    }

    /// The snapshot's mode.
    pub fn mode(&self) -> Mode {
        self.index.mode
    }

    /// `meta.generatedAt`.
    pub fn generated_at(&self) -> Timestamp {
        self.index.generated_at
    }

    /// The `dataSource` served (upstream mode only).
    pub fn data_source(&self) -> Option<&DataSource> {
        self.data_source.as_ref()
    }

    /// The sync status (upstream mode only).
    pub fn sync_status(&self) -> Option<crate::model::DataSourceStatus> {
        self.data_source.as_ref().map(|d| d.status)
    }

    /// The serialised `meta` object.
    pub fn meta_json(&self) -> &str {
        &self.meta_json
    }

    /// The records of `filter`, in public order (as indexes).
    pub fn ordered(&self, filter: KindFilter) -> &[u32] {
        &self.index.orders[filter.index()]
    }

    /// The serialised record at `index`.
    pub fn record_json(&self, index: u32) -> &str {
        let (start, end) = self.index.spans[index as usize];
        &self.index.record_bytes[start as usize..end as usize]
    }

    /// The first record of `filter`'s list (what `/records/latest` returns).
    pub fn latest(&self, filter: KindFilter) -> Option<&str> {
        self.ordered(filter).first().map(|&i| self.record_json(i))
    }

    /// The slice of `filter`'s list that page `page` (1-based) of `page_size` covers.
    pub fn page(&self, filter: KindFilter, page: u32, page_size: u32) -> PageWindow {
        let total = self.ordered(filter).len();
        let size = page_size.max(1) as u64;
        let total_pages = (total as u64).div_ceil(size);
        let start = ((page.max(1) as u64 - 1) * size).min(total as u64) as usize;
        let end = (start as u64 + size).min(total as u64) as usize;
        PageWindow {
            start,
            end,
            total,
            total_pages,
            has_next: (page as u64) < total_pages,
        }
    }
}
