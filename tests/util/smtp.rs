//! A real SMTP server on loopback (tests/util/smtp_receiver.py, aiosmtpd):
//! TLS from the first byte or after a required STARTTLS, with a
//! certificate of the test's own CA, AUTH required; each accepted message
//! logged as Python's e-mail package parsed it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::pki::Pki;
use super::{python, repo_root, wait_until};

/// The user and password the server takes.
pub const USER: &str = "resets@example.com";
pub const PASSWORD: &str = "Sm7p-pa55/w@rd";

/// A running SMTP server; killed on drop.
pub struct Smtp {
    child: Child,
    dir: tempfile::TempDir,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The PKI whose CA signed its certificate (`ca.pem`).
    pub pki: Pki,
}

impl Smtp {
    /// Starts a server: `implicit` TLS (smtps) or STARTTLS (smtp).
    pub fn start(implicit: bool) -> Self {
        Self::start_with(if implicit { Some("--implicit") } else { None })
    }

    /// Starts a server that offers no TLS at all (no STARTTLS).
    pub fn start_without_tls() -> Self {
        Self::start_with(Some("--no-tls"))
    }

    fn start_with(mode: Option<&str>) -> Self {
        let pki = Pki::new();
        let dir = tempfile::tempdir().expect("temp dir");
        let port_file = dir.path().join("port");
        let mut command = Command::new(python());
        command
            .arg(repo_root().join("tests/util/smtp_receiver.py"))
            .arg(&port_file)
            .arg(dir.path().join("log.jsonl"))
            .arg(pki.path("server.pem"))
            .arg(pki.path("server.key"))
            .args([USER, PASSWORD]);
        command.args(mode);
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start the SMTP server (aiosmtpd: make test-deps installs it)");
        wait_until(Duration::from_secs(20), "the SMTP server listens", || {
            port_file.exists()
        });
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Self {
            child,
            dir,
            port,
            pki,
        }
    }

    /// The target URL of an e-mail endpoint sending to `to` through it.
    pub fn target(&self, implicit: bool, to: &str) -> String {
        let scheme = if implicit { "smtps" } else { "smtp" };
        let enc = |t: &str| {
            t.replace('%', "%25")
                .replace('@', "%40")
                .replace('/', "%2F")
                .replace(':', "%3A")
        };
        format!(
            "{scheme}://{}:{}@127.0.0.1:{}?from=resets%40example.com&to={to}",
            enc(USER),
            enc(PASSWORD),
            self.port
        )
    }

    /// The environment that makes resetctl trust the server's certificate.
    pub fn trust(&self) -> (&'static str, String) {
        ("SSL_CERT_FILE", self.pki.arg("ca.pem"))
    }

    /// Every message accepted so far, in order.
    pub fn messages(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("log.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The messages to `to`.
    pub fn messages_to(&self, to: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|m| {
                m["to"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|t| t == to))
            })
            .collect()
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
