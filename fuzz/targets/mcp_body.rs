//! One `POST /mcp` body through the router and the whole JSON-RPC handler
//! (with the bundled history served): never a panic; a JSON answer, or a bare 202
//! for a notification (as the MCP transport specifies).
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/mcp_body.rs`, `make fuzz`)
//! and the replay of its corpus in `make test` (`tests/fuzz_corpora.rs`).

use std::sync::{Arc, OnceLock};

use resetctl::api::{Api, Data, Quota, Router, StreamSlots, Streams};
use resetctl::clock::{Clock, ManualClock};
use resetctl::document::parse_seed;
use resetctl::limit::Limiter;
use resetctl::model::Timestamp;
use resetctl::query::PublishedView;
use resetctl::reload::ViewHandle;
use resetctl::snapshot::{encode, Draft, Mode};

fn served() -> Router {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    ROUTER
        .get_or_init(|| {
            let data = Arc::new(data());
            resetctl::api::routes(&Api {
                data,
                keys: Default::default(),
                site: Default::default(),
                streams: Arc::new(Streams {
                    slots: Arc::new(StreamSlots::new(resetctl::api::StreamLimits {
                        per_client: 2,
                        total: 10,
                        heartbeat: std::time::Duration::from_secs(25),
                    })),
                    closing: tokio::sync::watch::channel(false).1,
                    snapshots: resetctl::snapshot::SnapshotStore::new(std::path::Path::new(
                        "/nonexistent",
                    )),
                }),
                mcp_allowed_origins: Default::default(),
                data_dir: Default::default(),
            })
        })
        .clone()
}

fn data() -> Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        let now = Timestamp::parse("2026-11-20T10:00:00.000Z").unwrap();
        let records = parse_seed(resetctl::BUNDLED_SEED_HISTORY).unwrap();
        let draft = Draft {
            mode: Mode::Standalone,
            generated_at: now,
            last_successful_check_at: None,
            ledger_entry: None,
            sync: None,
            records,
        };
        let (snapshot, _) = encode(draft, 1, now).unwrap();
        let view = ViewHandle::default();
        view.store(PublishedView::build(&snapshot, None));
        let clock = Arc::new(ManualClock::new(now)) as Arc<dyn Clock>;
        let quota = Quota {
            limiter: std::sync::Arc::new(Limiter::Off),
            clock,
            flood: None,
        };
        Data::new(view, Arc::new(quota), 180 * 60_000)
    })
    .clone()
}

/// One input: never a panic, and the properties above hold.
pub fn run(data: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let request = http::Request::post("/mcp")
        .body(http_body_util::Full::new(bytes::Bytes::from(data.to_vec())))
        .unwrap();
    let response = runtime.block_on(served().answer(request));
    if response.status() == 202 {
        return;
    }
    let content_type = response.headers().get("content-type").cloned();
    assert_eq!(
        content_type.as_ref().and_then(|v| v.to_str().ok()),
        Some("application/json"),
        "status {}",
        response.status()
    );
}
