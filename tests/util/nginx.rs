//! nginx on a free loopback port, owned by the test: serving one file from
//! a temp root, or as a reverse proxy in front of a `resetctl serve`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Nginx {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

pub fn nginx_binary() -> String {
    super::tool(&["nginx", "/usr/sbin/nginx"], "-v", "nginx")
}

impl Nginx {
    pub fn serve_file(name: &str, bytes: &[u8]) -> Self {
        Self::start(
            |r| format!("root {r}/www; default_type application/json;"),
            |root| {
                std::fs::write(root.join("www").join(name), bytes).unwrap();
            },
        )
    }

    /// A reverse proxy to `backend`, configured the usual way: it sets
    /// `X-Forwarded-For` (appending the peer) and passes every other header
    /// through untouched. It connects to the backend from `bind` (a
    /// loopback address other than the client's, so the test can trust the
    /// proxy without trusting the client).
    pub fn proxy_to(backend: std::net::SocketAddr, bind: &str) -> Self {
        Self::start(
            |_| {
                format!(
                    "location / {{ proxy_pass http://{backend}; proxy_bind {bind}; \
                     proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; }}"
                )
            },
            |_| {},
        )
    }

    /// A load balancer over `backends`, round robin, connecting from `bind`
    /// and setting `X-Forwarded-For`; a backend that refuses or fails the
    /// connection is skipped and the request tried on the next one.
    pub fn balance(backends: &[std::net::SocketAddr], bind: &str) -> Self {
        let servers: String = backends
            .iter()
            .map(|b| format!("server {b} max_fails=1 fail_timeout=5s; "))
            .collect();
        Self::start_with(
            &format!("upstream pool {{ {servers} }}"),
            |_| {
                format!(
                    "location / {{ proxy_pass http://pool; proxy_bind {bind}; \
                     proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; \
                     proxy_next_upstream error timeout http_502; proxy_next_upstream_tries 3; \
                     proxy_connect_timeout 1s; }}"
                )
            },
            |_| {},
        )
    }

    /// A caching reverse proxy to `backend`: a shared cache keyed by the
    /// URL and, as nginx does, by the request headers the stored answer's
    /// `Vary` names. It stores every 200 for ten minutes, whatever its
    /// `Cache-Control` says (so a test sees what a cache would serve from
    /// it), and says `HIT` or `MISS` in `X-Cache`.
    pub fn caching_proxy_to(backend: std::net::SocketAddr) -> Self {
        Self::start_with(
            "proxy_cache_path {root}/cache keys_zone=shared:1m;",
            |_| {
                format!(
                    "location / {{ proxy_pass http://{backend}; proxy_cache shared; \
                     proxy_cache_valid 200 10m; proxy_ignore_headers Cache-Control Expires; \
                     add_header X-Cache $upstream_cache_status always; }}"
                )
            },
            |_| {},
        )
    }

    fn start(server: impl Fn(&str) -> String, prepare: impl Fn(&std::path::Path)) -> Self {
        Self::start_with("", server, prepare)
    }

    fn start_with(
        http: &str,
        server: impl Fn(&str) -> String,
        prepare: impl Fn(&std::path::Path),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // nginx workers run as an unprivileged user: the root must be readable.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(root.join("www")).unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        prepare(root);
        let r = root.display().to_string();
        let server = server(&r);
        // nginx cannot listen on port 0 and say which port it got: a free
        // port is found, and if another process takes it before nginx binds
        // it (nginx exits), nginx is started again on another one. nginx
        // binds before it writes its pid file, so a live nginx with a pid
        // file listens on the port itself.
        for _attempt in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            if let Some(child) = Self::spawn(root, http, &server, port) {
                return Nginx {
                    port,
                    child,
                    _dir: dir,
                };
            }
        }
        panic!(
            "nginx did not start in 5 attempts; its log:\n{}",
            std::fs::read_to_string(root.join("error.log")).unwrap_or_default()
        );
    }

    /// Starts nginx on `port`; `None` when it exited (the port was taken).
    fn spawn(root: &std::path::Path, http: &str, server: &str, port: u16) -> Option<Child> {
        let r = root.display().to_string();
        let http = http.replace("{root}", &r);
        let _ = std::fs::remove_file(root.join("nginx.pid"));
        let conf = format!(
            "worker_processes 1; daemon off; pid {r}/nginx.pid; error_log {r}/error.log warn;\n\
             events {{ worker_connections 512; }}\n\
             http {{ {http} access_log off; client_body_temp_path {r}/tmp; proxy_temp_path {r}/tmp; fastcgi_temp_path {r}/tmp;\n\
             uwsgi_temp_path {r}/tmp; scgi_temp_path {r}/tmp;\n\
             server {{ listen 127.0.0.1:{port}; {server} }} }}\n"
        );
        std::fs::write(root.join("nginx.conf"), conf).unwrap();
        let mut child = Command::new(nginx_binary())
            .arg("-c")
            .arg(root.join("nginx.conf"))
            .arg("-p")
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().expect("poll nginx").is_some() {
                return None;
            }
            if root.join("nginx.pid").exists()
                && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                return Some(child);
            }
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGQUIT: a graceful stop that takes the worker processes along
        // (SIGKILL on the master would leave them running).
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}
