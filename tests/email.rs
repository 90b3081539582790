//! E-mail endpoints against a real SMTP server on loopback
//! (tests/util/smtp_receiver.py, aiosmtpd): STARTTLS that must succeed, a
//! target checked like every target and never shown, its password never
//! printed by any command. The timelines of what is mailed, with TLS from
//! the first byte, are in tests/timelines.rs.

use crate::util::smtp::{Smtp, PASSWORD, USER};
use crate::util::World;
use crate::webhooks::{add, schedule};

const T0: &str = "2026-11-20T10:00:00.000Z";
const A: &str = "2090000000000000001";

/// The password as it appears in a target URL, and as itself.
fn leaks(text: &str) -> bool {
    text.contains(PASSWORD) || text.contains("Sm7p-pa55")
}

#[test]
fn e_mail_goes_over_required_starttls_to_a_checked_target_never_shown() {
    let smtp = Smtp::start(false);
    let w = World::new();
    let target = smtp.target(false, "ops@example.org");
    // A private address needs --allow-private-targets, as any target does.
    let run = w.run(&["webhook", "add", &target, "--format", "email"]);
    assert_eq!(run.code, 64, "{run:?}");
    assert!(run.stderr.contains("private"), "{}", run.stderr);
    assert!(!leaks(&run.stderr), "{}", run.stderr);
    // A target that is not an SMTP URL, or names no recipient, is refused
    // by name, without its password.
    for (bad, needle) in [
        (format!("https://u:{PASSWORD}@127.0.0.1/x"), "smtp"),
        (
            target
                .replace("&to=ops%40example.org", "")
                .replace("&to=ops@example.org", ""),
            "to",
        ),
    ] {
        let run = w.run(&[
            "webhook",
            "add",
            &bad,
            "--format",
            "email",
            "--allow-private-targets",
        ]);
        assert_eq!(run.code, 64, "{bad}: {run:?}");
        assert!(run.stderr.contains(needle), "{bad}: {}", run.stderr);
        assert!(!leaks(&run.stderr), "{}", run.stderr);
    }
    let (id, secret) = add(&w, &target, &["--format", "email"]);
    assert!(secret.is_none());
    schedule(&w, T0, A, "pro");
    let (key, value) = smtp.trust();
    let out = w
        .cmd()
        .env(key, value)
        .args(["--now", T0, "webhook", "deliver", "--once"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!leaks(&String::from_utf8_lossy(&out.stderr)));
    let mails = smtp.messages_to("ops@example.org");
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(mails[0]["tls"], true, "upgraded with STARTTLS");
    assert_eq!(mails[0]["auth"], USER);
    assert_eq!(mails[0]["subject"], "Reset announced: 2026-11-24 18:00 UTC");
    // `webhook show` tells the operator the target, all but its password.
    let shown = w.run(&["webhook", "show", &id]).success().stdout;
    assert!(
        shown.contains(&format!(
            "url:         smtp://{USER}:…@127.0.0.1:{}?from=resets@example.com&to=ops@example.org\n",
            smtp.port
        )),
        "{shown}"
    );
    // No command shows the password.
    for args in [
        vec!["webhook", "list"],
        vec!["webhook", "list", "--json"],
        vec!["webhook", "show", &id],
        vec!["webhook", "show", &id, "--json"],
        vec!["webhook", "deliveries"],
        vec!["status"],
        vec!["status", "--json"],
    ] {
        let run = w.run(&args).success();
        assert!(
            !leaks(&run.stdout) && !leaks(&run.stderr),
            "{args:?} shows the password:\n{}{}",
            run.stdout,
            run.stderr
        );
    }
    // Without the test CA the server's certificate is refused: nothing is
    // sent in plain text, and the failure says why.
    schedule(&w, T0, "2090000000000000002", "pro");
    w.run(&["--now", T0, "webhook", "deliver", "--once"])
        .success();
    assert_eq!(smtp.messages_to("ops@example.org").len(), 1);
    let deliveries = w.run(&["webhook", "deliveries"]).success().stdout;
    assert!(deliveries.contains("retrying"), "{deliveries}");
    assert!(!leaks(&deliveries));
}

/// `webhook list` (and `--json`, and `status`) shows an e-mail endpoint by
/// its server and recipients, without its user or password (a target's
/// origin would read `null/…`: an smtp:// URL has no web origin); `webhook
/// add --help` and its man page name the e-mail format and its targets.
#[test]
fn e_mail_endpoints_are_listed_readably_and_the_help_names_them() {
    let w = World::new();
    let enc = |t: &str| t.replace('@', "%40").replace('/', "%2F");
    let target = format!(
        "smtps://{}:{}@127.0.0.1:2465?from=resets%40example.com&to=ops@example.org,oncall@example.org",
        enc(USER),
        enc(PASSWORD)
    );
    let (id, _) = add(&w, &target, &["--format", "email"]);
    let shown = "smtps://127.0.0.1:2465?to=ops@example.org,oncall@example.org";
    let list = w.run(&["webhook", "list"]).success().stdout;
    assert!(
        list.starts_with(&format!("{id}  email     enabled   {shown}  delivered 0,")),
        "{list}"
    );
    let listed = w.run(&["webhook", "list", "--json"]).json();
    assert_eq!(listed[0]["url"], shown, "{listed}");
    for out in [list, listed.to_string()] {
        assert!(!leaks(&out) && !out.contains(USER), "{out}");
    }
    let help = w.run(&["webhook", "add", "--help"]).success().stdout;
    let man = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../man/resetctl-webhook-add.1"),
    )
    .unwrap();
    for (what, text) in [("webhook add --help", &help), ("its man page", &man)] {
        // man escapes each hyphen and quote.
        let text = text.replace("\\-", "-").replace("\\*(Aq", "'");
        for needle in [
            "standard, ntfy, discord, slack, telegram, bark, feishu or email",
            "smtps://USER:PASSWORD@HOST[:465]?from=ADDRESS&to=ADDRESS[,ADDRESS…]",
            "smtp://USER:PASSWORD@HOST:587?from=ADDRESS&to=ADDRESS[,ADDRESS…] (STARTTLS, required)",
            "--format email",
        ] {
            assert!(text.contains(needle), "{what} lacks {needle:?}:\n{text}");
        }
    }
}

/// Every recipient of `to=` gets the mail, in one message; and `smtp://`
/// to a server that offers no STARTTLS sends nothing (neither the password
/// nor the message) in plain text, and says why.
#[test]
fn e_mail_reaches_every_recipient_and_never_goes_in_plain_text() {
    let smtp = Smtp::start(false);
    let w = World::new();
    let target = smtp.target(false, "ops@example.org,oncall@example.org");
    add(&w, &target, &["--format", "email"]);
    schedule(&w, T0, A, "pro");
    let (key, value) = smtp.trust();
    let deliver = |w: &World| {
        let out = w
            .cmd()
            .env(key, &value)
            .args(["--now", T0, "webhook", "deliver", "--once"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    deliver(&w);
    let mails = smtp.messages();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(
        mails[0]["to"],
        serde_json::json!(["ops@example.org", "oncall@example.org"])
    );
    // A server without STARTTLS: refused, nothing accepted.
    let plain = Smtp::start_without_tls();
    let w = World::new();
    add(
        &w,
        &plain.target(false, "ops@example.org"),
        &["--format", "email"],
    );
    schedule(&w, T0, A, "pro");
    deliver(&w);
    assert_eq!(
        plain.messages(),
        Vec::<serde_json::Value>::new(),
        "sent in plain text"
    );
    let deliveries = w.run(&["webhook", "deliveries"]).success().stdout;
    assert!(deliveries.contains("retrying"), "{deliveries}");
    assert!(!leaks(&deliveries), "{deliveries}");
}
