//! The live record stream: `GET /openapi/v1/records/stream?kind=` (SSE).
//!
//! Thin like every handler: the stream caps decide first (a refused stream
//! is not counted), then admission counts the connection once (the
//! route's class, `Stream`), then the
//! events come from [`crate::live`]: `ready`, the catch-up of a resumed
//! client (`Last-Event-ID`), then the precomputed events of every swap of
//! the served view, and the time events of schedules when they fall due
//! by the server's clock ([`crate::remind`]: `schedule.elapsed` for every
//! stream, reminders with `remind=`; the stream sleeps until the next one), with a comment heartbeat (`warp::sse`'s
//! keep-alive) between them. A stream ends when the client goes, or at once when the
//! server shuts down (it must not hold the drain).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::broadcast::error::RecvError;
use warp::http::{HeaderName, HeaderValue};
use warp::reply::Reply;

use super::admission::Answer;
use super::errors::ApiError;
use super::handlers::Data;
use super::responses::cors;
use crate::clock::Clock;
use crate::live::{self, LiveEvent, Step, ViewSwap};
use crate::model::Timestamp;
use crate::query::{parse_stream_query, KindFilter};
use crate::reload::ViewHandle;
use crate::snapshot::SnapshotStore;

/// How many streams may be open, and how often an idle one hears a heartbeat.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamLimits {
    /// Streams open at once per client key.
    pub per_client: u32,
    /// Streams open at once, in all.
    pub total: usize,
    /// The interval of the comment heartbeat.
    pub heartbeat: Duration,
}

/// The open streams, per client key and in all. Taken only when a stream
/// opens or closes, never by other requests or by reload.
#[derive(Debug)]
pub struct StreamSlots {
    limits: StreamLimits,
    open: Mutex<(HashMap<IpAddr, u32>, usize)>,
}

/// One open stream's place; dropping it frees the place.
#[derive(Debug)]
struct StreamSlot {
    slots: Arc<StreamSlots>,
    client: IpAddr,
}

impl StreamSlots {
    /// Slots under `limits`.
    pub fn new(limits: StreamLimits) -> Self {
        Self {
            limits,
            open: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// The limits.
    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    /// How many streams are open now.
    pub fn open_total(&self) -> usize {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    fn acquire(self: &Arc<Self>, client: IpAddr) -> Result<StreamSlot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.1 >= self.limits.total {
            return Err(ApiError::StreamsFull);
        }
        let mine = open.0.entry(client).or_insert(0);
        if *mine >= self.limits.per_client {
            return Err(ApiError::TooManyStreams {
                per_client: self.limits.per_client,
            });
        }
        *mine += 1;
        open.1 += 1;
        Ok(StreamSlot {
            slots: self.clone(),
            client,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        open.1 -= 1;
        if let Some(mine) = open.0.get_mut(&self.client) {
            *mine -= 1;
            if *mine == 0 {
                open.0.remove(&self.client);
            }
        }
    }
}

/// What the record stream needs beside the served data: its places, the
/// server's closing signal, and the snapshots a resumed stream catches up from.
#[derive(Debug)]
pub struct Streams {
    /// The open streams and their caps.
    pub slots: Arc<StreamSlots>,
    /// Turns true when the server shuts down: streams end at once.
    pub closing: tokio::sync::watch::Receiver<bool>,
    /// The snapshots on disk (a resumed stream catches up from an older one).
    pub snapshots: SnapshotStore,
}

/// `GET /openapi/v1/records/stream?kind=`; `last_event_id` is the
/// `Last-Event-ID` header of a reconnecting client.
pub(crate) fn stream<'a>(
    raw_query: &'a str,
    last_event_id: Option<String>,
    client: IpAddr,
    data: &'a Data,
    streams: &'a Streams,
) -> Answer<'a> {
    let slot = match streams.slots.acquire(client) {
        Ok(slot) => slot,
        Err(refused) => return Answer::Uncounted(refused.response()),
    };
    Answer::Counted(Box::new(move || {
        let (kind, remind) = match parse_stream_query(raw_query) {
            Ok(query) => (query.kind, query.remind),
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        // Subscribe before reading the view: no swap falls between the two.
        let receiver = data.view.live().subscribe();
        let Some(view) = data.view.load_full() else {
            return ApiError::DataUnavailable.response();
        };
        let place = last_event_id.as_deref().and_then(|id| {
            live::parse_event_id(id)
                .map(|_| id.split_once('~').map_or(id, |(p, _)| p).trim().to_owned())
        });
        let reminded = last_event_id.as_deref().and_then(live::parse_reminded);
        let resume = last_event_id.map(|id| {
            live::parse_event_id(&id)
                .map(|(sequence, tag)| (sequence, tag.map(str::to_owned), reminded))
                .ok_or(id)
        });
        let first = live::ready(&view, kind, resume.is_some());
        let leads = remind.map(|leads| leads.minutes().to_vec());
        // What fell due before the stream opened counts as told.
        let seen = crate::remind::due(
            view.records(),
            leads.as_deref(),
            data.tolerance_ms,
            data.now(),
        )
        .iter()
        .map(|r| (r.key(), (r.due_at, r.expires_at)))
        .collect();
        let events = Events {
            receiver,
            at: view.generation(),
            kind,
            view: data.view.clone(),
            pending: VecDeque::from([first]),
            place,
            resume: resume.map(|r| (r, streams.snapshots.clone())),
            reminders: Reminders {
                leads,
                tolerance_ms: data.tolerance_ms,
                seen,
                clock: data.quota().clock.clone(),
            },
            _slot: slot,
        };
        let mut closing = streams.closing.clone();
        let closed = async move {
            let _ = closing.wait_for(|closing| *closing).await;
        };
        let stream = futures_util::stream::unfold(events, Events::next)
            .map(|event| Ok::<_, std::convert::Infallible>(to_sse(event)))
            .take_until(closed);
        let stream = warp::sse::keep_alive()
            .interval(streams.slots.limits().heartbeat)
            .stream(stream);
        let mut response = warp::sse::reply(stream).into_response();
        let headers = response.headers_mut();
        cors(headers);
        // Proxies that buffer answers (nginx) would hold events back.
        headers.insert(
            HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        );
        response
    }))
}

/// The state of one stream between events.
struct Events {
    receiver: tokio::sync::broadcast::Receiver<Arc<ViewSwap>>,
    /// The generation of the view the client has been brought to.
    at: u64,
    kind: KindFilter,
    view: ViewHandle,
    /// Events ready to send, oldest first.
    pending: VecDeque<LiveEvent>,
    /// The id of the last change (or `ready`, `resync`) sent: the
    /// client's place, which a time event's id keeps.
    place: Option<String>,
    /// `Last-Event-ID` (a sequence and its version's tag, or what could
    /// not be read as one), to catch up on once `ready` is sent.
    resume: Option<(Resume, SnapshotStore)>,
    /// Its time events (and the reminders it asked for with `remind=`).
    reminders: Reminders,
    _slot: StreamSlot,
}

/// A client's `Last-Event-ID`: a sequence and its version's tag (none
/// from a release before tags) and, from a time event's id, the instant
/// it fell due; or what could not be read as one.
type Resume = Result<(u64, Option<String>, Option<Timestamp>), String>;

/// A stream's time events: its leads (none: no reminders), the matcher's
/// tolerance, and the keys of those it has been told of (or that fell due
/// before it opened), until they expire.
struct Reminders {
    leads: Option<Vec<u32>>,
    tolerance_ms: i64,
    /// By key: when each fell due, and when it expires.
    seen: HashMap<String, (Timestamp, Timestamp)>,
    clock: Arc<dyn Clock>,
}

impl Reminders {
    /// A resumed client was sent the time events due up to `since`: those
    /// due after it that are still within their grace are sent again
    /// (they are no longer counted as told when the stream opened).
    /// A schedule announced (created, or moved) between the client's
    /// version and the served one, published at `announced`, is never sent
    /// a time event due at or before that: the announcement told it
    /// ([`crate::remind::Reminder::told_by`]).
    fn replay_after(&mut self, since: Timestamp, announced: Option<(&[String], Timestamp)>) {
        self.seen.retain(|key, (due_at, _)| {
            let record = key.split('|').next().unwrap_or_default();
            let told = announced
                .is_some_and(|(ids, at)| *due_at <= at && ids.iter().any(|id| id == record));
            *due_at <= since || told
        });
    }
}

impl Events {
    async fn next(mut self) -> Option<(LiveEvent, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                if let Some(id) = event.id.as_deref().filter(|id| !id.contains('~')) {
                    self.place = Some(id.to_owned());
                }
                return Some((event, self));
            }
            if let Some((from, store)) = self.resume.take() {
                self.catch_up(from, store).await;
                continue;
            }
            // One instant for both: what falls due after the reminders
            // just sent is the next wake, even if the clock moves between.
            let now = self.reminders.clock.now();
            if self.remind_due(now) {
                continue;
            }
            // The next time event's instant, by the view served now.
            let r = &self.reminders;
            let wake = self.view.load_full().and_then(|view| {
                crate::remind::next_due(view.records(), r.leads.as_deref(), r.tolerance_ms, now)
            });
            let received = match wake {
                Some(at) => {
                    let clock = r.clock.clone();
                    tokio::select! {
                        received = self.receiver.recv() => Some(received),
                        _ = clock.sleep_until(at) => None,
                    }
                }
                None => Some(self.receiver.recv().await),
            };
            let Some(received) = received else {
                continue;
            };
            match received {
                Ok(swap) => match live::step(&swap, self.at, self.kind) {
                    Step::Skip => {}
                    Step::Apply(events) => {
                        self.pending.extend(events.iter().cloned());
                        self.at = swap.to;
                        self.told_by_announcement(&swap.announced);
                    }
                    Step::Gap => self.resync("the stream missed changes"),
                },
                Err(RecvError::Lagged(_)) => self.resync("the stream fell behind"),
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// The changes from the version the client last saw to the served
    /// one, when that version is still on disk; else `resync`.
    async fn catch_up(&mut self, from: Resume, store: SnapshotStore) {
        let Some(view) = self.view.load_full() else {
            return;
        };
        let (from, tag, reminded) = match from {
            Ok(from) => from,
            Err(_) => return self.resync("Last-Event-ID is not an event id of this stream"),
        };
        if from == view.sequence() && tag.as_deref().is_none_or(|t| t == view.version_tag()) {
            self.reminders
                .replay_after(reminded.unwrap_or(view.published_at()), None);
            return;
        }
        let old = tokio::task::spawn_blocking(move || store.load(from)).await;
        let old = match old {
            Ok(Ok(old)) => crate::query::PublishedView::build(&old, None),
            _ => return self.resync("the snapshot of Last-Event-ID is no longer kept"),
        };
        if tag.is_some_and(|t| t != old.version_tag()) {
            // The sequence was issued again (a restore, a re-seed): the
            // version the client saw is not this one.
            return self.resync("the version of Last-Event-ID is not the one on disk");
        }
        self.pending
            .extend(live::change_events(old.records(), &view, self.kind));
        self.at = view.generation();
        let announced = live::announced(old.records(), &view);
        self.reminders.replay_after(
            reminded.unwrap_or(old.published_at()),
            Some((&announced, view.published_at())),
        );
    }

    /// The time events of the schedules a swap announced that are due now:
    /// told by the announcement, never sent
    /// ([`crate::remind::Reminder::told_by`]).
    fn told_by_announcement(&mut self, announced: &[String]) {
        if announced.is_empty() {
            return;
        }
        let Some(view) = self.view.load_full() else {
            return;
        };
        let r = &mut self.reminders;
        let now = r.clock.now();
        for due in crate::remind::due(view.records(), r.leads.as_deref(), r.tolerance_ms, now) {
            if announced.contains(&due.record.id) && due.told_by(Some(now)) {
                r.seen.insert(due.key(), (due.due_at, due.expires_at));
            }
        }
    }

    /// Queues the time events due at `now` that the stream has not been
    /// told of, of the records its `kind` concerns; whether it queued any.
    fn remind_due(&mut self, now: Timestamp) -> bool {
        let Some(view) = self.view.load_full() else {
            return false;
        };
        let reminders = &mut self.reminders;
        reminders.seen.retain(|_, (_, expires)| *expires > now);
        let mut queued = false;
        let due = crate::remind::due(
            view.records(),
            reminders.leads.as_deref(),
            reminders.tolerance_ms,
            now,
        );
        for due in due {
            if reminders
                .seen
                .insert(due.key(), (due.due_at, due.expires_at))
                .is_some()
            {
                continue;
            }
            if crate::changes::concerns(due.record, self.kind) {
                self.pending
                    .push_back(live::reminder(&due, &view, self.place.as_deref()));
                if due.kind.is_reminder() {
                    crate::metrics::reminder_sent(
                        crate::metrics::ReminderChannel::Stream,
                        due.kind.event_type(),
                    );
                }
                queued = true;
            }
        }
        queued
    }

    /// Tells the client to refetch and goes on from the served view.
    fn resync(&mut self, why: &str) {
        if let Some(view) = self.view.load_full() {
            self.pending.push_back(live::resync(&view, why));
            self.at = view.generation();
        }
    }
}

fn to_sse(event: LiveEvent) -> warp::sse::Event {
    let sse = warp::sse::Event::default()
        .event(event.event)
        .data(event.data);
    match event.id {
        Some(id) => sse.id(id),
        None => sse,
    }
}
