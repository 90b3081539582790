//! A real `redis-server` on a free loopback port, owned by the test.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (redis-server cannot be given port 0).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `redis-cli -p PORT ARGS…`: its output, trimmed; panics when it fails
/// or takes more than a minute.
pub fn redis_cli(port: u16, args: &[&str]) -> String {
    let cli = super::tool(&["redis-cli"], "--version", "redis-tools");
    let mut child = Command::new(cli)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run redis-cli");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "redis-cli -p {port} {args:?} did not finish in 60 s: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "redis-cli -p {port} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `redis-cli -p PORT ARGS…` that may fail (nothing listening yet): its
/// output, or `None`.
fn try_redis_cli(port: u16, args: &[&str]) -> Option<String> {
    let cli = super::tool(&["redis-cli"], "--version", "redis-tools");
    let out = Command::new(cli)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

pub struct Redis {
    /// The plain-TCP port (the test's own way in, also for a TLS server).
    pub port: u16,
    /// The TLS port, for a server started with [`Redis::start_tls`].
    pub tls_port: Option<u16>,
    /// Arguments beyond the port, the address and persistence.
    extra: Vec<String>,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

fn redis_server() -> String {
    super::tool(&["redis-server"], "--version", "redis-server")
}

impl Redis {
    /// Starts a server on a free port. redis-server cannot listen on port 0
    /// and say which port it got: a free port is found, and if another
    /// process takes it first (redis-server exits, or someone else
    /// answers), it is started again on another one.
    pub fn start() -> Self {
        Self::start_with(Vec::new(), false)
    }

    /// Starts a server that also listens with TLS on [`tls_port`](Self::tls_port),
    /// presenting `cert` and `key`, and asking clients for a certificate
    /// signed by `client_ca` (`--tls-auth-clients`: `yes` or `optional`).
    pub fn start_tls(cert: &Path, key: &Path, client_ca: &Path, auth_clients: &str) -> Self {
        let extra = [
            "--tls-cert-file",
            &cert.display().to_string(),
            "--tls-key-file",
            &key.display().to_string(),
            "--tls-ca-cert-file",
            &client_ca.display().to_string(),
            "--tls-auth-clients",
            auth_clients,
        ]
        .map(String::from)
        .to_vec();
        Self::start_with(extra, true)
    }

    /// Starts a server with `extra` arguments (and a TLS port when `tls`).
    pub fn start_with(extra: Vec<String>, tls: bool) -> Self {
        let mut redis = Redis {
            port: 0,
            tls_port: None,
            extra,
            child: None,
            dir: tempfile::tempdir().unwrap(),
        };
        for _attempt in 0..5 {
            redis.port = free_port();
            redis.tls_port = tls.then(free_port);
            if redis.spawn() {
                return redis;
            }
            redis.kill();
        }
        panic!("redis-server did not start in 5 attempts");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// (Re)starts the server on the same port and waits until it answers.
    pub fn restart(&mut self) {
        assert!(
            self.spawn(),
            "redis-server did not start again on port {}",
            self.port
        );
    }

    /// Starts the server on `self.port`; whether it is the one answering
    /// there (false: it exited, or another process holds the port).
    fn spawn(&mut self) -> bool {
        let mut command = Command::new(redis_server());
        command.args([
            "--port",
            &self.port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]);
        if let Some(tls_port) = self.tls_port {
            command.args(["--tls-port", &tls_port.to_string()]);
        }
        let child = command
            .args(&self.extra)
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let exited = self.child.as_mut().unwrap().try_wait().unwrap().is_some();
            if exited {
                return false;
            }
            if let Some(dir) = self.config_dir() {
                return std::path::Path::new(&dir) == self.dir.path();
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `CONFIG GET dir` of whatever answers on the port: this server's own
    /// directory if it is ours.
    fn config_dir(&self) -> Option<String> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        stream.write_all(b"CONFIG GET dir\r\n").ok()?;
        let mut answer = Vec::new();
        let mut buf = [0u8; 1024];
        // *2 $3 dir $N path: five lines.
        while answer.iter().filter(|b| **b == b'\n').count() < 5 {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&answer).into_owned();
        text.lines().nth(4).map(|l| l.trim().to_owned())
    }

    /// `redis-cli` against this server's plain port: its output, trimmed.
    pub fn cli(&self, args: &[&str]) -> String {
        redis_cli(self.port, args)
    }

    /// Kills the server (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Redis {
    /// Stops the server in place (SIGSTOP): connections stay open, nothing answers.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused server run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("redis is running").id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal} {pid}");
    }
}

/// A Redis Cluster of `masters` masters on loopback, made with
/// `redis-cli --cluster create` (no replicas).
pub struct RedisCluster {
    pub nodes: Vec<Redis>,
}

impl RedisCluster {
    pub fn start(masters: usize) -> Self {
        Self::start_with(masters, None)
    }

    /// A cluster whose nodes also speak TLS (clients and the cluster bus)
    /// with `pki`'s server certificate; its plain ports are the test's own way in.
    pub fn start_tls(masters: usize, pki: &super::pki::Pki) -> Self {
        Self::start_with(masters, Some(pki))
    }

    fn start_with(masters: usize, pki: Option<&super::pki::Pki>) -> Self {
        let nodes: Vec<Redis> = (0..masters)
            .map(|_| {
                // The bus port is named: the default (the port + 10000)
                // may not exist for a free port above 55535.
                let mut args: Vec<String> = vec![
                    "--cluster-enabled".to_owned(),
                    "yes".to_owned(),
                    "--cluster-config-file".to_owned(),
                    "nodes.conf".to_owned(),
                    "--cluster-port".to_owned(),
                    free_port().to_string(),
                ];
                if let Some(pki) = pki {
                    args.extend([
                        "--tls-cluster".to_owned(),
                        "yes".to_owned(),
                        "--tls-cert-file".to_owned(),
                        pki.arg("server.pem"),
                        "--tls-key-file".to_owned(),
                        pki.arg("server.key"),
                        "--tls-ca-cert-file".to_owned(),
                        pki.arg("ca.pem"),
                        "--tls-auth-clients".to_owned(),
                        "no".to_owned(),
                    ]);
                }
                Redis::start_with(args, pki.is_some())
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.port))
            .collect();
        let mut args = vec!["--cluster", "create"];
        args.extend(addresses.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        redis_cli(nodes[0].port, &args);
        let cluster = RedisCluster { nodes };
        super::wait_until(Duration::from_secs(20), "the cluster to be ok", || {
            cluster
                .nodes
                .iter()
                .all(|node| node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
        });
        cluster
    }

    /// `redis+cluster://` naming the first node only: the client finds the rest.
    pub fn url(&self) -> String {
        format!("redis+cluster://127.0.0.1:{}", self.nodes[0].port)
    }

    /// `rediss+cluster://` naming the first node's TLS port.
    pub fn tls_url(&self) -> String {
        format!(
            "rediss+cluster://127.0.0.1:{}",
            self.nodes[0].tls_port.expect("a TLS cluster")
        )
    }

    /// The node id of node `i`.
    pub fn id(&self, i: usize) -> String {
        self.nodes[i].cli(&["CLUSTER", "MYID"])
    }

    /// The slot of `key`.
    pub fn slot(&self, key: &str) -> u16 {
        self.nodes[0]
            .cli(&["CLUSTER", "KEYSLOT", key])
            .parse()
            .unwrap()
    }

    /// The index of the node that owns `slot`, and the first slot of its range holding it.
    pub fn owner(&self, slot: u16) -> (usize, u16) {
        for (i, node) in self.nodes.iter().enumerate() {
            let text = node.cli(&["CLUSTER", "NODES"]);
            let mine = text
                .lines()
                .find(|line| line.contains("myself"))
                .expect("CLUSTER NODES names myself");
            for range in mine.split_whitespace().skip(8) {
                if range.starts_with('[') {
                    continue;
                }
                let (from, to) = range.split_once('-').unwrap_or((range, range));
                let (from, to): (u16, u16) = (from.parse().unwrap(), to.parse().unwrap());
                if (from..=to).contains(&slot) {
                    return (i, from);
                }
            }
        }
        panic!("no node owns slot {slot}")
    }
}

/// A master, a replica and three sentinels (quorum 2) watching them as
/// `mymaster`, on loopback; the sentinels declare the master down after 1 s.
pub struct RedisSentinels {
    pub master: Redis,
    pub replica: Redis,
    pub sentinels: Vec<Sentinel>,
}

/// One `redis-sentinel` process.
pub struct Sentinel {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sentinel {
    /// A sentinel watching the master on `master_port`, answering on a
    /// port of its own: a port another process took between choosing and
    /// binding it is given up for another (five tries), and the sentinel
    /// is returned once it answers as itself (its own config file).
    fn start(sentinel_bin: &str, master_port: u16) -> Self {
        for _attempt in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let config = dir.path().join("sentinel.conf");
            std::fs::write(
                &config,
                format!(
                    "port {port}\nbind 127.0.0.1\ndir {}\n\
                     sentinel monitor mymaster 127.0.0.1 {master_port} 2\n\
                     sentinel down-after-milliseconds mymaster 1000\n\
                     sentinel failover-timeout mymaster 5000\n\
                     sentinel parallel-syncs mymaster 1\n",
                    dir.path().display(),
                ),
            )
            .unwrap();
            let child = Command::new(sentinel_bin)
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start redis-sentinel");
            let mut sentinel = Sentinel {
                port,
                child,
                _dir: dir,
            };
            let ours = format!("config_file:{}", config.display());
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if sentinel.child.try_wait().unwrap().is_some() {
                    break; // It could not bind: another port.
                }
                if try_redis_cli(port, &["INFO", "server"]).is_some_and(|i| i.contains(&ours)) {
                    return sentinel;
                }
                assert!(
                    Instant::now() < deadline,
                    "redis-sentinel did not answer on port {port} within 10 s"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = sentinel.child.wait();
        }
        panic!("redis-sentinel did not start in 5 attempts");
    }
}

impl RedisSentinels {
    pub fn start() -> Self {
        let master = Redis::start();
        let replica = Redis::start_with(
            vec![
                "--replicaof".into(),
                "127.0.0.1".into(),
                master.port.to_string(),
            ],
            false,
        );
        super::wait_until(Duration::from_secs(20), "the replica to sync", || {
            replica
                .cli(&["INFO", "replication"])
                .contains("master_link_status:up")
        });
        let sentinel_bin = super::tool(&["redis-sentinel"], "--version", "redis-sentinel");
        let sentinels = (0..3)
            .map(|_| Sentinel::start(&sentinel_bin, master.port))
            .collect::<Vec<_>>();
        let group = RedisSentinels {
            master,
            replica,
            sentinels,
        };
        super::wait_until(
            Duration::from_secs(30),
            "the sentinels to know each other and the replica",
            || {
                group.sentinels.iter().all(|s| {
                    try_redis_cli(s.port, &["INFO", "sentinel"])
                        .is_some_and(|info| info.contains("slaves=1,sentinels=3"))
                })
            },
        );
        group
    }

    /// `redis+sentinel://` naming the three sentinels and the master `mymaster`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        format!("redis+sentinel://{}/mymaster/0", hosts.join(","))
    }

    /// The port the sentinels name as the master now.
    pub fn master_port(&self) -> u16 {
        let out = redis_cli(
            self.sentinels[0].port,
            &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"],
        );
        out.lines().nth(1).unwrap().trim().parse().unwrap()
    }
}

/// A TCP proxy between resetctl and Redis that the test controls: armed,
/// it drops the next array reply (a script's answer) on the wire and cuts
/// that connection, as a network failure after Redis ran the script would.
pub struct DroppingProxy {
    pub port: u16,
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl DroppingProxy {
    pub fn start(upstream: u16) -> Self {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(AtomicUsize::new(0));
        let (armed_at, dropped_at) = (armed.clone(), dropped.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let (mut client_in, mut server_out) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut client_in, &mut server_out);
                    let _ = server_out.shutdown(std::net::Shutdown::Both);
                });
                let (armed, dropped) = (armed_at.clone(), dropped_at.clone());
                std::thread::spawn(move || {
                    let (mut server_in, mut client_out) = (server, client);
                    let mut buf = [0u8; 16384];
                    loop {
                        let n = match server_in.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if buf[0] == b'*' && armed.swap(false, Ordering::SeqCst) {
                            dropped.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                        if client_out.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = client_out.shutdown(std::net::Shutdown::Both);
                    let _ = server_in.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        DroppingProxy {
            port,
            armed,
            dropped,
        }
    }

    /// Drops the next script answer.
    pub fn arm(&self) {
        self.armed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many answers were dropped.
    pub fn dropped(&self) -> usize {
        self.dropped.load(std::sync::atomic::Ordering::SeqCst)
    }
}
