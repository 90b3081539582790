//! The published view: what a server answers from.
//!
//! Built once per snapshot (off the request path): each record serialised
//! to JSON once, the ordered index list of every filter, and the `meta`
//! object serialised once. A request then copies at most `pageSize`
//! pre-serialised records, whatever the dataset size.
//!
//! The view also keeps the typed records (for the feed renderers of
//! [`crate::feeds`]) and memoises what those renderers make of them: a
//! fragment per record and whole bodies, each built at most once per
//! snapshot, lazily, by the first request that needs it. The view does
//! not know how they are rendered; it only keeps them.

use std::sync::OnceLock;

use bytes::Bytes;

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
    /// The validators of every body built from this view.
    validators: Validators,
    /// The `dataSource` inside it (upstream mode only).
    data_source: Option<DataSource>,
    /// Which swap of the server made it current (0: not served yet); orders
    /// views for live streams even when sequences repeat or go back.
    generation: u64,
}

/// The records of one snapshot, serialised and ordered once.
#[derive(Debug)]
struct RecordIndex {
    sequence: u64,
    /// When the snapshot was published (the record stream replays time
    /// events due after it to a client that resumes from it).
    published_at: Timestamp,
    mode: Mode,
    generated_at: Timestamp,
    last_successful_check_at: Option<Timestamp>,
    /// Every record's JSON, back to back.
    record_bytes: String,
    /// `record_bytes[spans[i].0..spans[i].1]` is record `i`.
    spans: Vec<(u32, u32)>,
    /// Per filter (indexed by [`KindFilter::index`]): record indexes in public order.
    orders: [Vec<u32>; 3],
    /// SHA-256 of `record_bytes` (the orders are a function of the records).
    records_digest: [u8; 32],
    /// The typed records (the snapshot's order), for renderers.
    records: Vec<Record>,
    /// Per record, per [`Fragment`] kind: what a renderer made of it.
    fragments: [Vec<OnceLock<Box<[u8]>>>; Fragment::COUNT],
    /// Per [`Body`]: a whole response body, and the [`Variant`] it was made for.
    bodies: [OnceLock<(Variant, Bytes)>; Body::COUNT],
    /// The records whose words turn with the clock, in the order they
    /// turn ([`PublishedView::turns`]).
    turns: OnceLock<Box<[u32]>>,
}

/// What a kept body is made for besides its [`Body`]: the feeds' words
/// turn with the clock ([`crate::feeds::AsOf::variant`]), so a body is
/// kept for the first variant asked and made again, not kept, for another.
pub type Variant = [i64; 2];

/// What a conditional request is compared with, ready to send.
///
/// Every body this view answers (a JSON page, a feed) is a function of the
/// records, the `meta` object, the request and the program's version, so
/// the entity tag hashes exactly those inputs that are not the URL: two
/// views with the same records and meta answer the same bytes and share
/// a tag, and any change (a new `dataSource.syncedAt` included) changes
/// it. Hashes, not the sequence: instances behind one balancer agree, and
/// a new snapshot with the same content keeps clients' caches.
#[derive(Debug, Clone)]
pub struct Validators {
    /// The strong entity tag, quoted (`"…"`).
    pub etag: bytes::Bytes,
    /// The last-modified instant: the newest past instant of `meta`.
    pub last_modified: Timestamp,
    /// `last_modified` as an HTTP date (whole seconds).
    pub last_modified_http: bytes::Bytes,
}

/// The one form of every entity tag this server sends (the data routes,
/// the pages, the mirrored feed, the admin export): a strong tag of the
/// first 128 bits of a SHA-256 `digest`, in hex (`"0f3a…"`, 34 bytes).
pub fn entity_tag(digest: &[u8]) -> bytes::Bytes {
    let mut etag = String::with_capacity(2 + 32);
    etag.push('"');
    for byte in &digest[..16] {
        etag.push_str(&format!("{byte:02x}"));
    }
    etag.push('"');
    bytes::Bytes::from(etag)
}

/// [`entity_tag`] of the SHA-256 of `body`.
pub fn entity_tag_of(body: &[u8]) -> bytes::Bytes {
    use sha2::{Digest, Sha256};
    entity_tag(&Sha256::digest(body))
}

/// What else makes a representation of the same data: changed whenever
/// the same snapshot is served differently (the order of its lists), so a
/// client's tag from before never matches the new bytes.
const REPRESENTATION: &[u8] = b"order 2: a manual completion placed by its completion";

impl Validators {
    fn of(records_digest: &[u8; 32], meta: &Meta, meta_json: &str) -> Self {
        use sha2::{Digest, Sha256};
        let tag = Sha256::new()
            .chain_update(records_digest)
            .chain_update(meta_json.as_bytes())
            .chain_update(env!("CARGO_PKG_VERSION").as_bytes())
            .chain_update(REPRESENTATION)
            .finalize();
        let last_modified = meta_last_modified(meta);
        Self {
            etag: entity_tag(&tag),
            last_modified,
            last_modified_http: http_date(last_modified),
        }
    }
}

impl Validators {
    /// The validators of a representation of the same data whose bytes
    /// also depend on `inputs` (the base of a feed's links, the record
    /// pages' base): the tag covers them too, so a changed
    /// `--public-base-url` or `Host` is never answered 304 with the old
    /// links. The last-modified instant is the data's.
    pub fn varied(&self, inputs: &[&[u8]]) -> Self {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new().chain_update(&self.etag);
        for input in inputs {
            // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
            hash.update((input.len() as u64).to_be_bytes());
            hash.update(input);
        }
        Self {
            etag: entity_tag(&hash.finalize()),
            last_modified: self.last_modified,
            last_modified_http: self.last_modified_http.clone(),
        }
    }
}

impl Validators {
    /// The same validators for bytes that also changed at `at` (the
    /// feeds' words turn with the clock): the last-modified instant is the
    /// later of the data's and `at`.
    pub fn changed_at(self, at: Option<Timestamp>) -> Self {
        match at {
            Some(at) if at > self.last_modified => Self {
                last_modified: at,
                last_modified_http: http_date(at),
                ..self
            },
            _ => self,
        }
    }
}

/// `at` as an HTTP date (whole seconds).
fn http_date(at: Timestamp) -> bytes::Bytes {
    bytes::Bytes::from(httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(at.as_millis().max(0) as u64),
    ))
}

/// The newest instant of `meta` that has happened: when the served bytes
/// last changed (a sync that only moves `dataSource.syncedAt` moves it too).
/// The next attempt lies ahead and is left out.
fn meta_last_modified(meta: &Meta) -> Timestamp {
    let mut newest = meta.generated_at;
    let mut see = |t: Option<Timestamp>| {
        if let Some(t) = t {
            newest = newest.max(t);
        }
    };
    see(meta.last_successful_check_at);
    if let Some(d) = &meta.data_source {
        see(d.synced_at);
        see(d.last_synced_at);
        see(d.fetched_at);
        see(d.upstream_generated_at);
    }
    newest
}

/// A per-record piece of a response body a renderer keeps in the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fragment {
    /// The record's Atom `<entry>`.
    AtomEntry,
    /// The record's calendar event (an iCalendar `VEVENT` up to its end).
    CalendarEvent,
}

impl Fragment {
    const COUNT: usize = 2;
}

/// A whole response body a renderer keeps in the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// The calendar of a filter, without `plan` or `alarm`.
    Calendar(KindFilter),
    /// The Atom feed of a filter, without `plan`, under the configured base URL.
    Atom(KindFilter),
}

impl Body {
    const COUNT: usize = 6;

    fn slot(self) -> usize {
        match self {
            Body::Calendar(kind) => kind.index(),
            Body::Atom(kind) => 3 + kind.index(),
        }
    }
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
        let records_digest = {
            use sha2::{Digest, Sha256};
            Sha256::digest(record_bytes.as_bytes()).into()
        };
        let index = RecordIndex {
            sequence: snapshot.sequence,
            published_at: snapshot.published_at,
            mode: snapshot.mode,
            generated_at: snapshot.generated_at,
            last_successful_check_at: snapshot.last_successful_check_at,
            record_bytes,
            spans,
            orders: KindFilter::ALL.map(|k| order_for(records, k)),
            records_digest,
            records: records.to_vec(),
            fragments: std::array::from_fn(|_| records.iter().map(|_| OnceLock::new()).collect()),
            bodies: Default::default(),
            turns: OnceLock::new(),
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
        let validators = Validators::of(&index.records_digest, &meta, &meta_json);
        Self {
            index,
            meta_json,
            validators,
            data_source,
            generation: 0,
        }
    }

    /// The same view, numbered as the `generation`-th swap of its server.
    pub fn at_generation(mut self, generation: u64) -> Self {
        self.generation = generation;
        self
    }

    /// Which swap of the server made this view current (0: not served yet).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The typed records, in the snapshot's order.
    pub fn records(&self) -> &[Record] {
        &self.index.records
    }

    /// Whether `other` has the very same records (a new `dataSource` alone).
    pub fn same_records(&self, other: &PublishedView) -> bool {
        std::sync::Arc::ptr_eq(&self.index, &other.index)
    }

    /// The same records with another `dataSource` (cheap: records are shared).
    pub fn with_data_source(&self, data_source: Option<DataSource>) -> Self {
        Self::with_index(self.index.clone(), data_source)
    }

    /// What tells this version from any other with the same sequence (a
    /// restore or a re-seed issues a sequence again): the first 48 bits of
    /// a SHA-256 of its records and `generatedAt`, in hex. The record
    /// stream's event ids carry it ([`crate::live::event_id`]).
    pub fn version_tag(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(self.index.records_digest)
            .chain_update(self.index.generated_at.to_string().as_bytes())
            .finalize();
        digest[..6].iter().map(|b| format!("{b:02x}")).collect()
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

    /// When the snapshot was published.
    pub fn published_at(&self) -> Timestamp {
        self.index.published_at
    }

    /// `meta.lastSuccessfulCheckAt` of the snapshot.
    pub fn last_successful_check_at(&self) -> Option<Timestamp> {
        self.index.last_successful_check_at
    }

    /// The index of the record `id` (linear: the pages keep what they make of it).
    pub fn find(&self, id: &str) -> Option<u32> {
        self.index
            .records
            .iter()
            .position(|r| r.id == id)
            .and_then(|i| u32::try_from(i).ok())
    }

    /// The `dataSource` served (upstream mode only).
    pub fn data_source(&self) -> Option<&DataSource> {
        self.data_source.as_ref()
    }

    /// The sync status (upstream mode only).
    pub fn sync_status(&self) -> Option<crate::model::DataSourceStatus> {
        self.data_source.as_ref().map(|d| d.status)
    }

    /// The validators of every body answered from this view.
    pub fn validators(&self) -> &Validators {
        &self.validators
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

    /// The typed record at `index`.
    pub fn record(&self, index: u32) -> &Record {
        &self.index.records[index as usize]
    }

    /// The `fragment` of the record at `index`: made by `render` the first
    /// time it is asked for in this snapshot, then kept.
    pub fn fragment(
        &self,
        fragment: Fragment,
        index: u32,
        render: impl FnOnce(&Record) -> Vec<u8>,
    ) -> &[u8] {
        let slot = &self.index.fragments[fragment as usize][index as usize];
        slot.get_or_init(|| render(self.record(index)).into_boxed_slice())
    }

    /// The `body` for `variant`: made by `render` the first time it is
    /// asked for in this snapshot, then kept (a clone shares the bytes);
    /// made again, and not kept, for a variant other than the one kept.
    pub fn body(&self, body: Body, variant: Variant, render: impl Fn(&Self) -> Bytes) -> Bytes {
        let (kept, bytes) = self.index.bodies[body.slot()].get_or_init(|| (variant, render(self)));
        if *kept == variant {
            bytes.clone()
        } else {
            render(self)
        }
    }

    /// The records (as indexes) whose words a renderer turns with the
    /// clock, in the order they turn: made by `make` from the records the
    /// first time they are asked for, then kept.
    pub fn turns(&self, make: impl FnOnce(&[Record]) -> Vec<u32>) -> &[u32] {
        self.index
            .turns
            .get_or_init(|| make(self.records()).into_boxed_slice())
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

/// The view of a standalone snapshot `sequence` of `records`, published
/// 2026-11-20T10:00Z: what the unit tests of the view and its renderers
/// build on.
#[cfg(test)]
pub(crate) fn standalone_view(sequence: u64, records: Vec<Record>) -> PublishedView {
    let at = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
    PublishedView::build(
        &Snapshot {
            format: crate::snapshot::SNAPSHOT_FORMAT.into(),
            sequence,
            published_at: at,
            mode: Mode::Standalone,
            generated_at: at,
            last_successful_check_at: None,
            ledger_entry: None,
            sync: None,
            records,
        },
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(id: &str) -> Record {
        serde_json::from_value(serde_json::json!({
            "id": id, "kind": "reset_completed", "resetType": "global",
            "announcedAt": "2026-11-20T09:00:00.000Z", "effectiveAt": null, "text": null,
            "confidence": 0.9, "scope": null,
            "source": {"origin": "x", "postId": id, "handle": "h", "url": null},
            "schedulePrecision": null, "scheduleBasis": null, "scheduleWindow": null,
            "scheduleState": null, "completedAt": "2026-11-20T09:00:00.000Z",
            "completionRecordId": null, "fulfillmentOrigin": null, "relatedRecordIds": []
        }))
        .unwrap()
    }

    fn view(ids: &[&str]) -> PublishedView {
        standalone_view(3, ids.iter().map(|id| completion(id)).collect())
    }

    #[test]
    fn a_record_is_found_by_its_id_at_its_place_in_the_snapshot() {
        let v = view(&["10", "7", "300"]);
        assert_eq!(v.find("7"), Some(1));
        assert_eq!(v.find("300"), Some(2));
        assert_eq!(v.find("8"), None);
    }

    #[test]
    fn only_a_new_data_source_keeps_the_same_records() {
        let v = view(&["1", "2"]);
        assert!(v.same_records(&v.with_data_source(None)));
        assert!(
            !v.same_records(&view(&["1", "2"])),
            "another build is other records"
        );
    }
}
