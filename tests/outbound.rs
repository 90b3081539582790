//! The one outbound-request policy (`src/outbound/`), seen from outside:
//! what crosses an origin on a redirect, where a redirect may lead, and
//! what a failed sync publishes about it.
//!
//! A redirect from a *public* upstream to an internal address needs a
//! public address to serve from; the loopback-only machine has none, so
//! that test runs itself again inside a network namespace of its own
//! (`unshare --net`, as root) where a public address is put on `lo`.

use std::time::Duration;

use serde_json::Value;

use crate::util::server::Server;
use crate::util::upstream::{header, Behavior, Upstream};
use crate::util::World;

const T1: &str = "2026-11-20T10:00:00.000Z";
const T2: &str = "2026-11-20T11:00:00.000Z";
const SECRET: &str = "INTERNAL-SECRET-7c1e";

fn document(generated_at: &str) -> Vec<u8> {
    crate::util::bundled_document(generated_at, 5).into_bytes()
}

fn sync(w: &World, url: &str, now: &str, extra: &[&str]) -> crate::util::Run {
    let mut args = vec!["--now", now, "sync", "--upstream", url, "--once", "--force"];
    args.extend_from_slice(extra);
    w.run(&args)
}

/// The current snapshot file, parsed (`status` would exit 1 on a stale mirror).
fn served(w: &World) -> Value {
    let snapshots = w.data_dir().join("snapshots");
    let current = std::fs::read_to_string(snapshots.join("CURRENT")).unwrap();
    let path = snapshots.join(format!(
        "{:012}.json",
        current.trim().parse::<u64>().unwrap()
    ));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn state(w: &World) -> Value {
    serde_json::from_slice(&std::fs::read(w.data_dir().join("sync-state.json")).unwrap()).unwrap()
}

#[test]
fn secrets_go_to_the_configured_origin_only_and_no_referer_is_ever_sent() {
    // B serves the document; A redirects to itself once, then to B (another origin).
    let b = Upstream::start(Behavior::Serve {
        body: document(T1),
        etag: None,
        last_modified: None,
    });
    let to_b = format!("http://localhost:{}/doc.json", b.addr.port());
    let a = Upstream::start(Behavior::Redirect {
        location: to_b,
        serve_path: "/never".into(),
        body: Vec::new(),
    });
    let w = World::new();
    let url = format!("http://user:pw@127.0.0.1:{}/feed?token=Q", a.addr.port());
    sync(&w, &url, T1, &["--upstream-header", "X-Api-Key: K"]).success();
    // The configured origin got the operator's header and the userinfo.
    let at_a = a.requests();
    assert_eq!(at_a.len(), 1, "{at_a:?}");
    assert_eq!(header(&at_a[0], "x-api-key"), Some("K"));
    assert_eq!(
        header(&at_a[0], "authorization"),
        Some("Basic dXNlcjpwdw==")
    );
    assert_eq!(header(&at_a[0], ":path"), Some("/feed?token=Q"));
    // The other origin got neither, and nobody got a Referer.
    let at_b = b.requests();
    assert_eq!(at_b.len(), 1, "{at_b:?}");
    assert_eq!(header(&at_b[0], ":path"), Some("/doc.json"));
    for name in ["x-api-key", "authorization", "referer", "cookie"] {
        assert_eq!(
            header(&at_b[0], name),
            None,
            "{name} crossed the origin: {at_b:?}"
        );
    }
    assert_eq!(header(&at_a[0], "referer"), None);
    assert_eq!(served(&w)["sequence"], 1, "the sync published");
}

#[test]
fn a_redirect_within_the_configured_origin_keeps_the_operators_header() {
    let a = Upstream::start(Behavior::Redirect {
        location: "/doc.json".into(),
        serve_path: "/doc.json".into(),
        body: document(T1),
    });
    let w = World::new();
    sync(
        &w,
        &a.url("/feed"),
        T1,
        &["--upstream-header", "X-Api-Key: K"],
    )
    .success();
    let seen = a.requests();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(header(&seen[1], ":path"), Some("/doc.json"));
    assert_eq!(header(&seen[1], "x-api-key"), Some("K"));
    assert_eq!(header(&seen[1], "referer"), None);
}

#[test]
fn a_failed_sync_publishes_the_kind_of_problem_never_the_upstreams_words() {
    let up = Upstream::start(Behavior::Serve {
        body: document(T1),
        etag: None,
        last_modified: None,
    });
    let w = World::new();
    sync(&w, &up.url("/doc.json"), T1, &[]).success();
    let served_before = served(&w);
    // The upstream now sends a document whose values quote an internal secret.
    let mut hostile: Value = serde_json::from_slice(&document(T2)).unwrap();
    hostile["records"][2]["kind"] = Value::from(SECRET);
    up.set(Behavior::Serve {
        body: hostile.to_string().into_bytes(),
        etag: None,
        last_modified: None,
    });
    let failed = sync(&w, &up.url("/doc.json"), T2, &[]).code(65);
    // The operator sees everything: the command's output, the state's detail, status.
    assert!(failed.stderr.contains(SECRET), "{}", failed.stderr);
    let st = state(&w);
    assert_eq!(
        st["lastError"],
        "invalid upstream document: record 2: kind: unknown variant, expected `reset_scheduled` or `reset_completed`"
    );
    assert!(
        st["lastErrorDetail"].as_str().unwrap().contains(SECRET),
        "{st}"
    );
    let status = w.run(&["--now", T2, "status"]).stdout;
    assert!(status.contains(SECRET), "{status}");
    // The API publishes the kind of problem only; the served data is unchanged.
    let s = Server::start(&w, &["--now", T2], &[]);
    let body = s
        .wait_for("/openapi/v1/records", Duration::from_secs(10), |r| {
            r.json()["meta"]["dataSource"]["status"] == "stale"
        })
        .json();
    let text = body.to_string();
    assert!(!text.contains("INTERNAL"), "{text}");
    assert_eq!(
        body["meta"]["dataSource"]["lastError"],
        "invalid upstream document: record 2: kind: unknown variant, expected `reset_scheduled` or `reset_completed`"
    );
    assert_eq!(served(&w), served_before);
}

#[test]
fn ipv6_forms_of_private_ipv4_addresses_are_not_webhook_targets() {
    let w = World::new();
    for target in [
        "http://[::127.0.0.1]:9/hook",
        "http://[64:ff9b::7f00:1]:9/hook",
        "http://[64:ff9b:1::a00:1]:9/hook",
        "http://[2002:7f00:1::1]:9/hook",
        "http://[2002:a9fe:a9fe::1]:9/hook",
        "http://[fec0::1]:9/hook",
        "http://[::ffff:169.254.169.254]:9/hook",
    ] {
        let refused = w.run(&["webhook", "add", target]).code(64);
        assert!(
            refused
                .stderr
                .contains("refused (allow such a target with --allow-private-targets)"),
            "{target}: {}",
            refused.stderr
        );
    }
    assert!(!w.data_dir().join("webhooks/endpoints.json").exists());
    // With the opt-in, they are accepted.
    w.run(&[
        "webhook",
        "add",
        "http://[::127.0.0.1]:9/hook",
        "--allow-private-targets",
    ])
    .success();
}

// --- A public upstream redirecting inward, in a network namespace ---------

/// The address that plays a public upstream inside the namespace.
const PUBLIC_IP: &str = "93.184.216.34";

#[test]
fn a_public_upstream_cannot_redirect_a_sync_to_an_internal_address() {
    if crate::util::namespace::inside() {
        return redirect_inward_in_this_namespace();
    }
    crate::util::namespace::run_test_again(
        "outbound::a_public_upstream_cannot_redirect_a_sync_to_an_internal_address",
        &["--net"],
        "root for `unshare --net` and `ip` from iproute2",
    );
}

fn redirect_inward_in_this_namespace() {
    for args in [
        &["link", "set", "lo", "up"][..],
        &["addr", "add", &format!("{PUBLIC_IP}/32"), "dev", "lo"][..],
    ] {
        let status = std::process::Command::new("ip")
            .args(args)
            .status()
            .expect("ip (iproute2)");
        assert!(status.success(), "ip {args:?}");
    }
    // The internal service a hostile upstream points at, on loopback.
    let internal = Upstream::start(Behavior::Serve {
        body: format!(r#"{{"generatedAt":"{SECRET}","records":[]}}"#).into_bytes(),
        etag: None,
        last_modified: None,
    });
    let good = document(T1);
    let upstream = Upstream::start_on(
        PUBLIC_IP,
        Behavior::Serve {
            body: good.clone(),
            etag: None,
            last_modified: None,
        },
    );
    let w = World::new();
    let url = upstream.url("/feed");
    sync(&w, &url, T1, &[]).success();
    let served_before = served(&w);
    let port = internal.addr.port();
    for (location, kind) in [
        (
            format!("http://127.0.0.1:{port}/latest/meta-data"),
            "a loopback address",
        ),
        (
            format!("http://localhost:{port}/latest/meta-data"),
            "a loopback address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/x"),
            "a loopback address",
        ),
        (
            format!("http://[64:ff9b::7f00:1]:{port}/x"),
            "a loopback address",
        ),
        (
            "http://169.254.169.254/latest/meta-data".to_owned(),
            "a link-local (metadata) address",
        ),
        ("http://10.0.0.1/".to_owned(), "a private address"),
    ] {
        upstream.set(Behavior::Redirect {
            location: location.clone(),
            serve_path: "/never".into(),
            body: Vec::new(),
        });
        let failed = sync(&w, &url, T2, &[]);
        assert_ne!(failed.code, 0, "{location}: {}", failed.stdout);
        let st = state(&w);
        assert_eq!(
            st["lastError"],
            format!("a redirect to {kind} was refused"),
            "{location}: {st}"
        );
        assert!(
            st["lastErrorDetail"]
                .as_str()
                .unwrap()
                .contains("as a redirect target"),
            "{st}"
        );
        assert_eq!(served(&w), served_before, "{location}");
    }
    assert_eq!(
        internal.request_count(),
        0,
        "the internal service was never asked"
    );
    // The public upstream may still redirect to a public address (here, itself).
    upstream.set(Behavior::Redirect {
        location: format!("http://{PUBLIC_IP}:{}/doc.json", upstream.addr.port()),
        serve_path: "/doc.json".into(),
        body: document(T2),
    });
    sync(&w, &url, T2, &[]).success();
    assert_eq!(state(&w)["lastError"], Value::Null);
}

/// The blocks of the IANA IPv4 and IPv6 Special-Purpose Address Registries
/// that are not globally reachable ("Globally Reachable" False or N/A, as
/// the registries read on 2026-11-27:
/// <https://www.iana.org/assignments/iana-ipv4-special-registry/>,
/// <https://www.iana.org/assignments/iana-ipv6-special-registry/>), with
/// multicast and the reserved space, each with one address inside it.
/// Kept here, apart from the program's own table, so a block the program
/// forgot is found. The forms that carry an IPv4 address (IPv4-mapped,
/// NAT64, 6to4, Teredo) lead where that address leads and are tested with
/// an address of each block above.
const NOT_GLOBAL: &[(&str, &str)] = &[
    ("0.0.0.0/8", "0.1.2.3"),
    ("10.0.0.0/8", "10.1.2.3"),
    ("100.64.0.0/10", "100.100.1.1"),
    ("127.0.0.0/8", "127.9.9.9"),
    ("169.254.0.0/16", "169.254.169.254"),
    ("172.16.0.0/12", "172.20.0.1"),
    ("192.0.0.0/24", "192.0.0.8"),
    ("192.0.0.170/31", "192.0.0.171"),
    ("192.0.2.0/24", "192.0.2.10"),
    ("192.88.99.0/24", "192.88.99.1"),
    ("192.168.0.0/16", "192.168.1.1"),
    ("198.18.0.0/15", "198.19.0.1"),
    ("198.51.100.0/24", "198.51.100.7"),
    ("203.0.113.0/24", "203.0.113.9"),
    ("224.0.0.0/4", "239.1.2.3"),
    ("240.0.0.0/4", "250.1.2.3"),
    ("255.255.255.255/32", "255.255.255.255"),
    ("::1/128", "::1"),
    ("::/128", "::"),
    (
        "::ffff:0:0/96 (IPv4-mapped: its IPv4 address)",
        "::ffff:192.88.99.1",
    ),
    ("::ffff:0:0:0/96 (IPv4-translated)", "::ffff:0:c000:201"),
    (
        "64:ff9b::/96 (NAT64: its IPv4 address)",
        "64:ff9b::c058:6301",
    ),
    ("64:ff9b:1::/48", "64:ff9b:1::1"),
    ("100::/64", "100::1"),
    ("100:0:0:1::/64", "100:0:0:1::1"),
    ("2001::/23", "2001:100::1"),
    (
        "2001::/32 (Teredo: its IPv4 address)",
        "2001:0:4136:e378:8000:63bf:3fa7:9cfe",
    ),
    ("2001:2::/48", "2001:2::1"),
    ("2001:10::/28", "2001:10::1"),
    ("2001:db8::/32", "2001:db8::1"),
    ("2002::/16 (6to4: its IPv4 address)", "2002:c058:6301::1"),
    ("3fff::/20", "3fff::1"),
    ("5f00::/16", "5f00::1"),
    ("fc00::/7", "fd12::1"),
    ("fe80::/10", "fe80::1"),
    ("fec0::/10", "fec0::1"),
    ("ff00::/8", "ff02::1"),
];

fn url_of(address: &str, path: &str) -> String {
    if address.contains(':') {
        format!("http://[{address}]:9{path}")
    } else {
        format!("http://{address}:9{path}")
    }
}

/// Issue 39, item 9: no webhook target and no redirect of a sync reaches an
/// address of a block that is not globally reachable.
#[test]
fn no_webhook_or_redirect_reaches_a_block_the_registries_mark_not_global() {
    let w = World::new();
    let up = Upstream::start(Behavior::Status(500));
    for (block, address) in NOT_GLOBAL {
        let added = w.run(&["webhook", "add", &url_of(address, "/hook")]);
        assert_eq!(
            added.code, 64,
            "webhook to {address} ({block}): {}",
            added.stderr
        );
        assert!(
            added.stderr.contains("refused"),
            "webhook to {address} ({block}): {}",
            added.stderr
        );
        // A redirect may stay in the configured upstream's own kind of
        // network (here loopback): the loopback blocks are not its test.
        if address.starts_with("127.") || *address == "::1" {
            continue;
        }
        up.set(Behavior::Redirect {
            location: url_of(address, "/r.json"),
            serve_path: "/never".into(),
            body: Vec::new(),
        });
        let sync = w.run(&[
            "sync",
            "--once",
            "--force",
            "--connect-timeout",
            "1",
            "--timeout",
            "2",
            "--upstream",
            &up.url("/r.json"),
        ]);
        assert!(
            sync.stderr.contains("refused as a redirect target"),
            "redirect to {address} ({block}): {}",
            sync.stderr
        );
    }
}
