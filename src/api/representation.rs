//! Representations (RFC 9110 section 3.2) and proactive negotiation of
//! their content coding (section 12.5.3), decided here for every route
//! whose body a client reads repeatedly: the data routes, the feeds, the
//! pages, the badge, the mirrored status feed and the fixed documents.
//!
//! - [`AcceptEncoding`]: a request's `Accept-Encoding`, read once by the
//!   accept loop (q-values, `q=0` refuses, `*`, `identity`).
//! - [`Representation`]: one body as made (identity) and its gzip, brotli
//!   and zstd forms, each made at most once, the first time it is chosen
//!   (or all at once by [`Representation::warm`]), each with its own
//!   strong entity tag ([`crate::encoding::coded_tag`]), so a cache keyed
//!   by URL and `Vary` never confuses them, while `If-None-Match` with any
//!   of them matches (one base names them all).
//! - [`ViewBodies`]: the representations made from one published view,
//!   bounded in bytes, dropped with their view; the hot set (what nearly
//!   every client asks for) is coded off the request path when a view is
//!   published, at the encoders' best levels (answered as it is until
//!   then, never by a request waiting), and survives the bound.
//!
//! Every negotiable answer carries `Vary: Accept-Encoding`, coded or not,
//! and `Content-Length` (its body is whole); HEAD gets the same headers as
//! GET without the body (hyper drops it).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use warp::http::{header, HeaderMap, HeaderValue, StatusCode};
use warp::reply::Response;

use crate::encoding::{coded_tag, encode, Coding, Effort, MIN_CODED_BYTES};

/// `Vary` of every negotiable answer.
pub(crate) const VARY: HeaderValue = HeaderValue::from_static("Accept-Encoding");

/// A request's `Accept-Encoding` (RFC 9110 section 12.5.3), as the weight
/// (q × 1000) of each coding this server makes; 0 refuses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AcceptEncoding {
    /// Indexed by [`Coding::slot`]; identity's weight last.
    weights: [u16; 4],
}

/// The weight identity gets when a request lists codings but neither
/// identity nor `*`: acceptable (RFC 9110), and after every listed one.
const IMPLICIT_IDENTITY: u16 = 1;

impl Default for AcceptEncoding {
    /// No `Accept-Encoding`: identity only. RFC 9110 lets a server pick any
    /// coding then; clients that send no header (curl without
    /// `--compressed`, scripts) read the body as it is, so it is sent so.
    fn default() -> Self {
        Self {
            weights: [0, 0, 0, 1000],
        }
    }
}

impl AcceptEncoding {
    /// The `Accept-Encoding` of `headers`: every line, as one list. An
    /// element that cannot be read (a bad `q`) is left out, as if absent.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        let mut lines = headers.get_all(header::ACCEPT_ENCODING).iter().peekable();
        if lines.peek().is_none() {
            return Self::default();
        }
        let mut listed: [Option<u16>; 4] = [None; 4];
        let mut star = None;
        for element in lines
            .filter_map(|v| v.to_str().ok())
            .flat_map(|line| line.split(','))
        {
            let mut parts = element.split(';');
            let token = parts.next().unwrap_or("").trim();
            if token.is_empty() {
                continue;
            }
            let Some(weight) = weight_of(parts) else {
                continue;
            };
            let slot = if token == "*" {
                &mut star
            } else {
                match Coding::from_token(token) {
                    Some(coding) => &mut listed[index(coding)],
                    None => continue,
                }
            };
            // Listed twice: the higher weight stands.
            *slot = Some(slot.map_or(weight, |w: u16| w.max(weight)));
        }
        let mut weights = [0; 4];
        for coding in Coding::COMPRESSED {
            weights[index(coding)] = listed[index(coding)].or(star).unwrap_or(0);
        }
        weights[3] = listed[3].or(star).unwrap_or(IMPLICIT_IDENTITY);
        Self { weights }
    }

    /// The coding to answer with among identity and the coded forms
    /// `offered` says are: the highest weight; among equal weights a coded
    /// form before identity, in [`Coding::COMPRESSED`]'s order. `None`:
    /// nothing offered is acceptable (identity refused), a 406.
    pub(crate) fn choose(&self, offered: impl Fn(Coding) -> bool) -> Option<Coding> {
        let offered = Coding::COMPRESSED
            .into_iter()
            .filter(|&c| offered(c))
            .chain([Coding::Identity]);
        let mut best: Option<(u16, Coding)> = None;
        for coding in offered {
            let weight = self.weights[index(coding)];
            if weight > 0 && best.is_none_or(|(w, _)| weight > w) {
                best = Some((weight, coding));
            }
        }
        best.map(|(_, coding)| coding)
    }
}

/// A coding's place in [`AcceptEncoding::weights`].
fn index(coding: Coding) -> usize {
    coding.slot().unwrap_or(3)
}

/// The weight of an element's parameters: `q=` (0 to 1, at most three
/// decimals) × 1000, 1000 without one; `None` when it cannot be read.
fn weight_of<'a>(parameters: impl Iterator<Item = &'a str>) -> Option<u16> {
    let mut weight = 1000;
    for parameter in parameters {
        let (name, value) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("q") {
            continue;
        }
        let value = value.trim();
        let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
        if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
        weight = match whole {
            "0" => thousandths,
            "1" if thousandths == 0 => 1000,
            _ => return None,
        };
    }
    Some(weight)
}

/// One body and its coded forms, each made at most once.
#[derive(Debug)]
pub(crate) struct Representation {
    content_type: HeaderValue,
    identity: Bytes,
    /// Per coding ([`AcceptEncoding::weights`]' order): its entity tag.
    tags: [HeaderValue; 4],
    effort: Effort,
    /// Per [`Coding::COMPRESSED`] slot: the coded body, once made.
    coded: [OnceLock<Bytes>; 3],
}

impl Representation {
    /// `identity`, of `content_type`, under the strong tag `tag` (quoted);
    /// its coded forms will be made at `effort`.
    pub(crate) fn new(
        content_type: &'static str,
        identity: Bytes,
        tag: &[u8],
        effort: Effort,
    ) -> Self {
        let tag_of = |coding| {
            HeaderValue::from_maybe_shared(coded_tag(tag, coding))
                .expect("entity tags are visible ASCII")
        };
        Self {
            content_type: HeaderValue::from_static(content_type),
            identity,
            // In `index` order: the coded slots, then identity.
            tags: std::array::from_fn(|i| {
                tag_of(
                    Coding::COMPRESSED
                        .get(i)
                        .copied()
                        .unwrap_or(Coding::Identity),
                )
            }),
            effort,
            coded: Default::default(),
        }
    }

    /// [`Representation::new`] under the tag of `identity`'s own bytes.
    pub(crate) fn tagged_by_bytes(
        content_type: &'static str,
        identity: Bytes,
        effort: Effort,
    ) -> Self {
        let tag = crate::query::entity_tag_of(&identity);
        Self::new(content_type, identity, &tag, effort)
    }

    /// The identity form's tag (the base every coded tag is made from).
    pub(crate) fn tag(&self) -> &[u8] {
        self.tags[3].as_bytes()
    }

    /// The body as made.
    pub(crate) fn identity(&self) -> &Bytes {
        &self.identity
    }

    /// Whether coded forms are offered: not for a body too small to gain.
    fn coded_offered(&self) -> bool {
        self.identity.len() >= MIN_CODED_BYTES
    }

    /// Whether the form in `coding` (not identity) is offered now: made
    /// already, or made quickly by the request that asks for it. A form
    /// made at the best levels is made off the request path (when its view
    /// is published): until then its representation answers identity
    /// rather than keep a request waiting.
    fn offers(&self, coding: Coding) -> bool {
        self.coded_offered()
            && (self.effort == Effort::Quick
                || coding
                    .slot()
                    .is_some_and(|slot| self.coded[slot].get().is_some()))
    }

    /// The coding `accept` gets (`None`: a 406).
    pub(crate) fn choose(&self, accept: &AcceptEncoding) -> Option<Coding> {
        accept.choose(|coding| self.offers(coding))
    }

    /// The entity tag of the form in `coding`.
    pub(crate) fn etag(&self, coding: Coding) -> &HeaderValue {
        &self.tags[index(coding)]
    }

    /// The body in `coding`, made now if it is the first time.
    pub(crate) fn body(&self, coding: Coding) -> Bytes {
        match coding.slot() {
            None => self.identity.clone(),
            Some(slot) => self.coded[slot]
                .get_or_init(|| Bytes::from(encode(coding, &self.identity, self.effort)))
                .clone(),
        }
    }

    /// Makes every coded form now (off the request path).
    pub(crate) fn warm(&self) {
        if self.coded_offered() {
            for coding in Coding::COMPRESSED {
                self.body(coding);
            }
        }
    }

    /// Bytes held: the body and the coded forms made so far (what
    /// [`ViewBodies`] adds per entry is counted there).
    pub(crate) fn held_bytes(&self) -> usize {
        self.identity.len()
            + self
                .coded
                .iter()
                .filter_map(OnceLock::get)
                .map(Bytes::len)
                .sum::<usize>()
    }

    /// The 200 of the form in `coding`: its body, `Content-Type`,
    /// `Content-Encoding` (unless identity), its `ETag` and `Vary`.
    pub(crate) fn response(&self, coding: Coding) -> Response {
        let mut response = Response::new(self.body(coding).into());
        let headers = response.headers_mut();
        super::responses::typed(headers, self.content_type.clone());
        if coding != Coding::Identity {
            headers.insert(
                header::CONTENT_ENCODING,
                HeaderValue::from_static(coding.token()),
            );
        }
        headers.insert(header::ETAG, self.etag(coding).clone());
        headers.insert(header::VARY, VARY);
        response
    }

    /// The 304 of the form in `coding`: what RFC 9110 section 15.4.5 asks
    /// (`ETag`, `Vary`; the caller adds `Cache-Control` and what else its
    /// route promises) and CORS, which a browser script needs to read it.
    pub(crate) fn not_modified(&self, coding: Coding) -> Response {
        let mut response = Response::new(Bytes::new().into());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        let headers = response.headers_mut();
        super::responses::cors(headers);
        headers.insert(header::ETAG, self.etag(coding).clone());
        headers.insert(header::VARY, VARY);
        response
    }
}

/// The representations made from one published view, by key, bounded in
/// bytes; the hot set is kept whatever the bound.
#[derive(Debug)]
pub(crate) struct ViewBodies<K> {
    inner: Mutex<Kept<K>>,
    budget: usize,
}

#[derive(Debug)]
struct Kept<K> {
    /// The view generation the entries were made from.
    generation: u64,
    entries: HashMap<K, (Arc<Representation>, bool)>,
    /// Bytes of the entries that are not hot, as counted at insertion.
    cold_bytes: usize,
}

/// How many bytes the representations of one view may hold outside the
/// hot set, each entry counted at what it costs ([`ViewBodies::cost`]).
/// Past it, the cold entries start over.
pub(crate) const VIEW_BODIES_BUDGET: usize = 32 << 20;

/// The heap a cache key holds beyond its own size (a host name, a plan).
pub(crate) trait Weigh {
    /// Bytes on the heap.
    fn heap_bytes(&self) -> usize;
}

/// What one kept entry costs beyond its body, its coded forms, its key's
/// heap and the sizes of its representation and map slot: the allocation
/// behind each of the four tags (64 bytes each, as the allocator rounds
/// them), the `Arc`'s counts and the body's rounding (64), and the map's
/// spare capacity and the allocator's own bookkeeping (320, measured).
/// With it the count matches the resident memory a flood of distinct small
/// variants takes (`tests/memory.rs`): about 1.25 kB per 250-byte body.
const ENTRY_OVERHEAD: usize = 4 * 64 + 64 + 320;

impl<K: Hash + Eq + Clone + Weigh> Default for ViewBodies<K> {
    fn default() -> Self {
        Self::with_budget(VIEW_BODIES_BUDGET)
    }
}

impl<K: Hash + Eq + Clone + Weigh> ViewBodies<K> {
    /// What keeping `representation` under `key` costs: its body (the
    /// identity counted twice until its coded forms are made: together
    /// they are smaller than it), its key, and the entry itself.
    fn cost(key: &K, representation: &Representation) -> usize {
        let coded_made = representation.coded.iter().any(|c| c.get().is_some());
        let body = if coded_made {
            representation.held_bytes()
        } else {
            2 * representation.identity.len()
        };
        body + Self::overhead(key)
    }

    /// What an entry costs beyond its bodies.
    fn overhead(key: &K) -> usize {
        key.heap_bytes()
            + ENTRY_OVERHEAD
            + std::mem::size_of::<Representation>()
            + std::mem::size_of::<(K, (Arc<Representation>, bool))>()
    }

    /// A cache that holds at most `budget` bytes of cold entries.
    pub(crate) fn with_budget(budget: usize) -> Self {
        Self {
            inner: Mutex::new(Kept {
                generation: u64::MAX,
                entries: HashMap::new(),
                cold_bytes: 0,
            }),
            budget,
        }
    }

    /// The representation `key` of the view of `generation`, made by
    /// `make` if not kept (outside the lock: two first requests may both
    /// make it; the first kept wins, so every answer agrees). `hot` keeps
    /// it past the bound.
    pub(crate) fn get(
        &self,
        generation: u64,
        key: &K,
        hot: bool,
        make: impl FnOnce() -> Representation,
    ) -> Arc<Representation> {
        {
            let kept = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            if kept.generation == generation {
                if let Some((found, _)) = kept.entries.get(key) {
                    return found.clone();
                }
            }
        }
        let made = Arc::new(make());
        let mut kept = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if kept.generation != generation {
            if generation < kept.generation && kept.generation != u64::MAX {
                // Made from a view already replaced: answer it, keep nothing.
                return made;
            }
            *kept = Kept {
                generation,
                entries: HashMap::new(),
                cold_bytes: 0,
            };
        }
        if let Some((found, _)) = kept.entries.get(key) {
            return found.clone();
        }
        if !hot {
            let cost = Self::cost(key, &made);
            if kept.cold_bytes + cost > self.budget {
                kept.entries.retain(|_, (_, hot)| *hot);
                kept.cold_bytes = 0;
            }
            kept.cold_bytes += cost;
        }
        kept.entries.insert(key.clone(), (made.clone(), hot));
        made
    }

    /// Bytes of the kept bodies, coded forms included.
    pub(crate) fn held_bytes(&self) -> usize {
        let kept = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        kept.entries.values().map(|(r, _)| r.held_bytes()).sum()
    }

    /// The memory the kept entries take: bodies, coded forms, keys and the
    /// entries themselves (what the bound limits, for the cold ones).
    pub(crate) fn held_memory(&self) -> usize {
        let kept = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        kept.entries
            .iter()
            .map(|(key, (r, _))| r.held_bytes() + Self::overhead(key))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Weigh for u32 {
        fn heap_bytes(&self) -> usize {
            0
        }
    }

    fn accept(lines: &[&str]) -> AcceptEncoding {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(line).unwrap(),
            );
        }
        AcceptEncoding::of(&headers)
    }

    fn chosen(lines: &[&str]) -> Option<&'static str> {
        accept(lines).choose(|_| true).map(Coding::token)
    }

    #[test]
    fn real_clients_get_the_smallest_coding_they_accept() {
        // Chromium, Firefox, Node's fetch, Go's net/http, Python requests/httpx, curl --compressed.
        assert_eq!(chosen(&["gzip, deflate, br, zstd"]), Some("br"));
        assert_eq!(chosen(&["gzip, deflate, br"]), Some("br"));
        assert_eq!(chosen(&["gzip"]), Some("gzip"));
        assert_eq!(chosen(&["gzip, deflate"]), Some("gzip"));
        assert_eq!(chosen(&["deflate, gzip, br, zstd"]), Some("br"));
        assert_eq!(chosen(&["zstd"]), Some("zstd"));
        assert_eq!(
            AcceptEncoding::of(&HeaderMap::new()).choose(|_| true),
            Some(Coding::Identity)
        );
    }

    #[test]
    fn q_values_rank_and_zero_refuses() {
        assert_eq!(chosen(&["br;q=0.5, gzip"]), Some("gzip"));
        assert_eq!(chosen(&["br;q=0, gzip;q=0.1"]), Some("gzip"));
        assert_eq!(
            chosen(&["gzip;q=0.001"]),
            Some("gzip"),
            "a listed coding beats implicit identity"
        );
        assert_eq!(chosen(&["gzip;q=0.5, identity"]), Some("identity"));
        assert_eq!(chosen(&["identity"]), Some("identity"));
        assert_eq!(
            chosen(&[""]),
            Some("identity"),
            "an empty header: identity only"
        );
        assert_eq!(chosen(&["*"]), Some("br"));
        assert_eq!(chosen(&["*;q=0, gzip"]), Some("gzip"));
        assert_eq!(chosen(&["*;q=0"]), None, "everything refused");
        assert_eq!(chosen(&["identity;q=0"]), None);
        assert_eq!(chosen(&["br;Q=1.000, gzip;q=0.999"]), Some("br"));
        assert_eq!(
            chosen(&["GZIP;q=0.2", "br;q=0.1"]),
            Some("gzip"),
            "two lines, one list"
        );
        assert_eq!(chosen(&["x-gzip"]), Some("gzip"));
        // Unreadable weights leave their element out.
        assert_eq!(chosen(&["br;q=2, gzip"]), Some("gzip"));
        assert_eq!(chosen(&["br;q=0.0001, gzip;q=0.5"]), Some("gzip"));
        assert_eq!(chosen(&["br;q, gzip"]), Some("gzip"));
        assert_eq!(chosen(&["br;q=-0, gzip"]), Some("gzip"));
        // A small body is offered as it is, to everyone who takes identity.
        assert_eq!(accept(&["br"]).choose(|_| false), Some(Coding::Identity));
        assert_eq!(accept(&["br, identity;q=0"]).choose(|_| false), None);
        // Only what is offered: gzip when br is not made yet.
        assert_eq!(
            accept(&["br, gzip"]).choose(|c| c == Coding::Gzip),
            Some(Coding::Gzip)
        );
    }

    #[test]
    fn each_form_has_its_own_tag_and_is_made_once() {
        let body = Bytes::from("{\"ok\":true}".repeat(100));
        let rep = Representation::new("application/json", body.clone(), b"\"ab\"", Effort::Quick);
        assert_eq!(rep.etag(Coding::Identity), "\"ab\"");
        assert_eq!(rep.etag(Coding::Brotli), "\"ab-br\"");
        assert_eq!(rep.held_bytes(), body.len());
        let first = rep.body(Coding::Gzip);
        assert!(first.len() < body.len() / 10);
        assert_eq!(rep.body(Coding::Gzip).as_ptr(), first.as_ptr(), "made once");
        let response = rep.response(Coding::Gzip);
        assert_eq!(response.headers()["content-encoding"], "gzip");
        assert_eq!(response.headers()["vary"], "Accept-Encoding");
        assert_eq!(response.headers()["etag"], "\"ab-gzip\"");
        assert!(rep
            .response(Coding::Identity)
            .headers()
            .get("content-encoding")
            .is_none());
    }

    #[test]
    fn a_form_made_off_the_request_path_is_offered_once_made() {
        let body = Bytes::from("{\"ok\":true}".repeat(100));
        let best = Representation::new("application/json", body.clone(), b"\"ab\"", Effort::Best);
        let br = accept(&["br"]);
        assert_eq!(
            best.choose(&br),
            Some(Coding::Identity),
            "not made yet: identity"
        );
        best.warm();
        assert_eq!(best.choose(&br), Some(Coding::Brotli));
        let quick = Representation::new("application/json", body, b"\"ab\"", Effort::Quick);
        assert_eq!(
            quick.choose(&br),
            Some(Coding::Brotli),
            "made by the request"
        );
    }

    #[test]
    fn the_cold_entries_start_over_past_the_bound_and_the_hot_stay() {
        let cache = ViewBodies::<u32>::with_budget(1000);
        let make = || {
            Representation::new(
                "text/plain",
                Bytes::from(vec![b'x'; 300]),
                b"\"t\"",
                Effort::Quick,
            )
        };
        let hot = cache.get(1, &0, true, make);
        let a = cache.get(1, &1, false, make);
        assert!(Arc::ptr_eq(&a, &cache.get(1, &1, false, make)), "kept");
        cache.get(1, &2, false, make); // 1,200 bytes counted: over the bound
        assert!(
            !Arc::ptr_eq(&a, &cache.get(1, &1, false, make)),
            "started over"
        );
        assert!(
            Arc::ptr_eq(&hot, &cache.get(1, &0, true, make)),
            "the hot entry stays"
        );
        assert!(
            !Arc::ptr_eq(&hot, &cache.get(2, &0, true, make)),
            "a new view starts afresh"
        );
        let old = cache.get(1, &0, true, make);
        assert!(
            !Arc::ptr_eq(&old, &cache.get(2, &0, true, make)),
            "an old view's body is not kept"
        );
    }
}
