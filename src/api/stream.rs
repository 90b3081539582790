//! The live record stream: `GET /openapi/v1/records/stream?kind=` (SSE).
//!
//! Thin like every handler: the stream caps decide first (a refused stream
//! is not counted), then admission counts the connection once, then the
//! events come from [`crate::live`]: `ready`, the catch-up of a resumed
//! client (`Last-Event-ID`), then the precomputed events of every swap of
//! the served view, and with `remind=` the reminders of pending schedules
//! when they fall due by the server's clock ([`crate::remind`]; the stream
//! sleeps until the next one), with a comment heartbeat (`warp::sse`'s
//! keep-alive) between them. A stream ends when the client goes, or at once when the
//! server shuts down (it must not hold the drain).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::broadcast::error::RecvError;
use warp::http::{HeaderName, HeaderValue};
use warp::reply::{Reply, Response};

use super::admission::rest_counted;
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

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            per_client: 2,
            total: 10_000,
            heartbeat: Duration::from_secs(25),
        }
    }
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
pub(crate) async fn stream(
    raw_query: String,
    last_event_id: Option<String>,
    client: IpAddr,
    data: Arc<Data>,
    streams: &Streams,
) -> Response {
    let slot = match streams.slots.acquire(client) {
        Ok(slot) => slot,
        Err(refused) => return refused.response(),
    };
    rest_counted(&data.quota, client, || {
        let (kind, remind) = match parse_stream_query(&raw_query) {
            Ok(query) => (query.kind, query.remind),
            Err(e) => return ApiError::InvalidQuery(e.to_string()).response(),
        };
        // Subscribe before reading the view: no swap falls between the two.
        let receiver = data.view.live().subscribe();
        let Some(view) = data.view.load_full() else {
            return ApiError::DataUnavailable.response();
        };
        let resume = last_event_id.map(|id| id.trim().parse::<u64>().map_err(|_| id));
        let first = live::ready(&view, kind, resume.is_some());
        let events = Events {
            receiver,
            at: view.generation(),
            kind,
            view: data.view.clone(),
            pending: VecDeque::from([first]),
            resume: resume.map(|r| (r, streams.snapshots.clone())),
            reminders: remind.map(|leads| {
                // What fell due before the stream opened counts as told.
                let seen = crate::remind::due(view.records(), leads.minutes(), data.now())
                    .iter()
                    .map(|r| (r.key(), r.expires_at))
                    .collect();
                Reminders {
                    leads: leads.minutes().to_vec(),
                    seen,
                    clock: data.quota.clock.clone(),
                }
            }),
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
    })
    .await
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
    /// `Last-Event-ID` (a sequence, or what could not be read as one), to
    /// catch up on once `ready` is sent.
    resume: Option<(Result<u64, String>, SnapshotStore)>,
    /// The reminders it asked for (`remind=`).
    reminders: Option<Reminders>,
    _slot: StreamSlot,
}

/// A stream's reminders: its leads, and the keys of those it has been
/// told of (or that fell due before it opened), until they expire.
struct Reminders {
    leads: Vec<u32>,
    seen: HashMap<String, Timestamp>,
    clock: Arc<dyn Clock>,
}

impl Events {
    async fn next(mut self) -> Option<(LiveEvent, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((event, self));
            }
            if let Some((from, store)) = self.resume.take() {
                self.catch_up(from, store).await;
                continue;
            }
            // One instant for both: what falls due after the reminders
            // just sent is the next wake, even if the clock moves between.
            let now = self.reminders.as_ref().map(|r| r.clock.now());
            if now.is_some_and(|now| self.remind_due(now)) {
                continue;
            }
            // The next reminder's instant, by the view served now.
            let wake = self.reminders.as_ref().zip(now).and_then(|(r, now)| {
                let view = self.view.load_full()?;
                crate::remind::next_due(view.records(), &r.leads, now)
            });
            let received = match (&self.reminders, wake) {
                (Some(r), Some(at)) => {
                    let clock = r.clock.clone();
                    tokio::select! {
                        received = self.receiver.recv() => Some(received),
                        _ = clock.sleep_until(at) => None,
                    }
                }
                _ => Some(self.receiver.recv().await),
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
                    }
                    Step::Gap => self.resync("the stream missed changes"),
                },
                Err(RecvError::Lagged(_)) => self.resync("the stream fell behind"),
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// The changes from the snapshot the client last saw to the served
    /// one, when that snapshot is still on disk; else `resync`.
    async fn catch_up(&mut self, from: Result<u64, String>, store: SnapshotStore) {
        let Some(view) = self.view.load_full() else {
            return;
        };
        let from = match from {
            Ok(from) if from == view.sequence() => return,
            Ok(from) => from,
            Err(_) => return self.resync("Last-Event-ID is not a snapshot sequence"),
        };
        let old = tokio::task::spawn_blocking(move || store.load(from)).await;
        match old {
            Ok(Ok(old)) => {
                self.pending
                    .extend(live::change_events(&old.records, &view, self.kind));
                self.at = view.generation();
            }
            _ => self.resync("the snapshot of Last-Event-ID is no longer kept"),
        }
    }

    /// Queues the reminders due at `now` that the stream has not been
    /// told of, of the records its `kind` shows; whether it queued any.
    fn remind_due(&mut self, now: Timestamp) -> bool {
        let (Some(reminders), Some(view)) = (self.reminders.as_mut(), self.view.load_full()) else {
            return false;
        };
        reminders.seen.retain(|_, expires| *expires > now);
        let mut queued = false;
        for due in crate::remind::due(view.records(), &reminders.leads, now) {
            if reminders.seen.insert(due.key(), due.expires_at).is_some() {
                continue;
            }
            if crate::model::visible_in(due.record, self.kind) {
                self.pending.push_back(live::reminder(&due, &view));
                crate::metrics::reminder_sent(
                    crate::metrics::ReminderChannel::Stream,
                    due.kind.event_type(),
                );
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
        Some(id) => sse.id(id.to_string()),
        None => sse,
    }
}
