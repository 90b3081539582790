//! In-process route tests (the router called directly, no sockets) with a manual clock:
//! the sliding window moves exactly as requests age out, one by one.

use std::net::SocketAddr;
use std::sync::Arc;

use super::transport::PeerAddr;
use super::{routes, Api, Data, Quota, StreamSlots, Streams};
use crate::clock::{Clock, ManualClock};
use crate::limit::{Limiter, MemoryLimiter, QuotaPolicy};
use crate::model::Timestamp;
use crate::reload::ViewHandle;

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn state(clock: Arc<ManualClock>) -> Api {
    let clock = clock as Arc<dyn Clock>;
    let quota = Quota {
        limiter: Arc::new(Limiter::Memory(MemoryLimiter::new(QuotaPolicy::default()))),
        clock,
        flood: None,
    };
    Api {
        data: Arc::new(Data::new(
            ViewHandle::default(),
            Arc::new(quota),
            180 * 60_000,
        )),
        keys: Default::default(),
        site: Default::default(),
        streams: Arc::new(Streams {
            slots: Arc::new(StreamSlots::new(super::StreamLimits {
                per_client: 2,
                total: 10,
                heartbeat: std::time::Duration::from_secs(25),
            })),
            closing: tokio::sync::watch::channel(false).1,
            snapshots: crate::snapshot::SnapshotStore::new(std::path::Path::new("/nonexistent")),
        }),
        mcp_allowed_origins: Default::default(),
        data_dir: Default::default(),
    }
}

async fn get(state: &Api, peer: &str) -> (u16, Option<String>, Option<String>, Option<String>) {
    let mut request = warp::http::Request::get("/openapi/v1/records/latest")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    request
        .extensions_mut()
        .insert(PeerAddr(peer.parse::<SocketAddr>().unwrap()));
    let reply = routes(state).answer(request).await;
    let header = |name: &str| {
        reply
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        reply.status().as_u16(),
        header("x-ratelimit-remaining"),
        header("x-ratelimit-reset"),
        header("retry-after"),
    )
}

#[tokio::test]
async fn remaining_reset_and_retry_after_follow_the_sliding_window() {
    let clock = Arc::new(ManualClock::new(at("2026-11-20T10:00:00.000Z")));
    let state = state(clock.clone());
    // 20 requests one minute apart: Remaining 19…0, Reset pinned to the oldest.
    for n in 0..20 {
        let (status, remaining, reset, retry) = get(&state, "192.0.2.1:5000").await;
        // No snapshot is loaded: the admitted request answers 503 and still counts.
        assert_eq!(status, 503);
        assert_eq!(remaining.as_deref(), Some((19 - n).to_string().as_str()));
        assert_eq!(reset.as_deref(), Some("2026-11-20T11:00:00.000Z"));
        assert_eq!(retry, None);
        clock.advance(60_000);
    }
    // 10:20: full. The oldest (10:00) leaves at 11:00 → Retry-After 2400 s.
    assert_eq!(
        get(&state, "192.0.2.1:5000").await,
        (
            429,
            Some("0".into()),
            Some("2026-11-20T11:00:00.000Z".into()),
            Some("2400".into())
        )
    );
    // 10:59:59.001 → 0.999 s left, rounded up to 1.
    clock.set(at("2026-11-20T10:59:59.001Z"));
    assert_eq!(get(&state, "192.0.2.1:5000").await.3.as_deref(), Some("1"));
    // 11:00:00: exactly one slot frees (not the whole quota); Reset moves to the next oldest (10:01 + 1 h).
    clock.set(at("2026-11-20T11:00:00.000Z"));
    assert_eq!(
        get(&state, "192.0.2.1:5000").await,
        (
            503,
            Some("0".into()),
            Some("2026-11-20T11:01:00.000Z".into()),
            None
        )
    );
    assert_eq!(
        get(&state, "192.0.2.1:5000").await,
        (
            429,
            Some("0".into()),
            Some("2026-11-20T11:01:00.000Z".into()),
            Some("60".into())
        )
    );
    // 11:01:30: the 10:01 request has left; one more slot.
    clock.set(at("2026-11-20T11:01:30.000Z"));
    assert_eq!(
        get(&state, "192.0.2.1:5000").await,
        (
            503,
            Some("0".into()),
            Some("2026-11-20T11:02:00.000Z".into()),
            None
        )
    );
    // Another client, and another address in the same IPv6 /64, are keyed as expected.
    assert_eq!(get(&state, "192.0.2.2:5000").await.1.as_deref(), Some("19"));
    assert_eq!(
        get(&state, "[2001:db8::1]:5000").await.1.as_deref(),
        Some("19")
    );
    assert_eq!(
        get(&state, "[2001:db8::2]:5000").await.1.as_deref(),
        Some("18")
    );
}
