//! The way to the Redis that holds a client's keys, whatever the
//! deployment: one server (a reconnecting multiplexed connection), a
//! Redis Cluster (slot routing, following MOVED and ASK while slots move)
//! or the master that the sentinels name (found again after a failover).
//! Every form pipelines the calls of concurrent requests on one
//! multiplexed connection per node (in a cluster, an `ASK` redirect is
//! answered with `ASKING` and the call in one pipeline), speaks TLS when
//! the URL says `rediss…`, and connects lazily: a store that is down at
//! start only makes checks fail until it is up. [`StoreConnection::probe`] tells a
//! store that refuses us for good (TLS, credentials) from one that is
//! only unreachable for now.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::SingleNodeRoutingInfo;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{
    AsyncConnectionConfig, ClientTlsConfig, Cmd, ErrorKind, FromRedisValue, RedisError,
    RedisResult, Script, ServerErrorKind, TlsCertificates, TlsMode, Value,
};

use super::address::{RedisAddress, Topology};
use crate::limit::SettingError;

/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);

/// How long the sentinels' master may take to answer one call before it is
/// taken for cut off (and asked for again): within the limiter's 300 ms.
const MASTER_RESPONSE_TIMEOUT: Duration = Duration::from_millis(250);

/// The certificate files of a TLS store: a private CA (none: the system's
/// roots) and a client certificate with its key (mutual TLS).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisTlsFiles {
    /// `--redis-ca-file`: PEM, the only roots trusted when given.
    pub ca_file: Option<PathBuf>,
    /// `--redis-cert-file`: PEM, the client certificate.
    pub cert_file: Option<PathBuf>,
    /// `--redis-key-file`: PEM, its private key.
    pub key_file: Option<PathBuf>,
}

impl RedisTlsFiles {
    /// Whether any file is named.
    pub fn any(&self) -> bool {
        self.ca_file.is_some() || self.cert_file.is_some() || self.key_file.is_some()
    }

    /// The files read for `address` (none when it is not TLS); an error
    /// when files are named for a store without TLS, when a certificate
    /// comes without its key or a key without its certificate, or when a
    /// file cannot be read (naming the setting and the file).
    pub fn for_address(
        &self,
        address: &RedisAddress,
    ) -> Result<Option<TlsCertificates>, SettingError> {
        if !address.tls {
            return match self.any() {
                true => Err(SettingError::RedisTlsUnused(address.shown.clone())),
                false => Ok(None),
            };
        }
        self.certificates().map(Some)
    }

    /// Reads each file named, whatever else is named (a value's own check).
    pub fn read_each(&self) -> Result<Vec<Vec<u8>>, SettingError> {
        [
            ("redis-ca-file", &self.ca_file),
            ("redis-cert-file", &self.cert_file),
            ("redis-key-file", &self.key_file),
        ]
        .into_iter()
        .filter_map(|(key, path)| path.as_ref().map(|path| read_pem(key, path)))
        .collect()
    }

    fn certificates(&self) -> Result<TlsCertificates, SettingError> {
        let read = read_pem;
        let client_tls = match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => Some(ClientTlsConfig {
                client_cert: read("redis-cert-file", cert)?,
                client_key: read("redis-key-file", key)?,
            }),
            (None, None) => None,
            (Some(_), None) | (None, Some(_)) => {
                return Err(SettingError::RedisTlsPair);
            }
        };
        let root_cert = self
            .ca_file
            .as_ref()
            .map(|path| read("redis-ca-file", path))
            .transpose()?;
        Ok(TlsCertificates {
            client_tls,
            root_cert,
        })
    }
}

/// The PEM file `path` of the setting `key`, read as every file is (no
/// FIFO, no device, at most 1 MiB); an error names both.
fn read_pem(key: &'static str, path: &std::path::Path) -> Result<Vec<u8>, SettingError> {
    crate::durable::read_existing(path, crate::durable::Cap::mib(1)).map_err(|e| {
        SettingError::RedisTlsFile {
            key,
            path: path.to_owned(),
            why: e.reason(),
            unfit: e.is_unfit(),
        }
    })
}

/// A connection to the store, by topology. Cheap to share: each form is
/// a handle onto connections its library drives.
pub enum StoreConnection {
    /// One server.
    Single(ConnectionManager),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
    /// The master the sentinels name.
    Sentinel(Arc<SentinelMaster>),
}

impl StoreConnection {
    /// The connection `address` names (nothing is connected yet).
    pub fn new(address: &RedisAddress, tls: &RedisTlsFiles) -> Result<Self, SettingError> {
        let setup = |e: RedisError| SettingError::RedisSetup {
            url: address.shown.clone(),
            why: e.to_string(),
        };
        let certificates = tls.for_address(address)?;
        Ok(match &address.topology {
            Topology::Single(info) => {
                let client = match certificates {
                    Some(certificates) => redis::Client::build_with_tls(info.clone(), certificates),
                    None => redis::Client::open(info.clone()),
                }
                .map_err(setup)?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    // No response timeout of its own: the limiter's governs.
                    .set_response_timeout(None)
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                StoreConnection::Single(
                    ConnectionManager::new_lazy_with_config(client, config).map_err(setup)?,
                )
            }
            Topology::Cluster(nodes) => {
                let mut builder = ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(CONNECT_TIMEOUT)
                    // The limiter's timeout governs; redirects and
                    // reconnections are retried within it.
                    .response_timeout(Duration::from_secs(1))
                    .retries(8)
                    .min_retry_wait(5)
                    .max_retry_wait(50);
                if let Some(user) = &address.username {
                    builder = builder.username(user);
                }
                if let Some(password) = &address.password {
                    builder = builder.password(password);
                }
                if let Some(certificates) = certificates {
                    builder = builder.tls(TlsMode::Secure).certs(certificates);
                }
                let client = builder.build().map_err(setup)?;
                StoreConnection::Cluster(client.get_pending_async_connection_with_config(
                    redis::cluster::ClusterConfig::new().set_connection_timeout(CONNECT_TIMEOUT),
                ))
            }
            Topology::Sentinel {
                sentinels,
                master,
                db,
            } => {
                let mut builder = SentinelClientBuilder::new(
                    sentinels.clone(),
                    master,
                    SentinelServerType::Master,
                )
                .map_err(setup)?
                .set_client_to_redis_db(*db);
                if let Some(user) = &address.username {
                    builder = builder.set_client_to_redis_username(user);
                }
                if let Some(password) = &address.password {
                    builder = builder.set_client_to_redis_password(password);
                }
                if let Some(certificates) = certificates {
                    builder = builder
                        .set_client_to_redis_tls_mode(TlsMode::Secure)
                        .set_client_to_redis_certificates(certificates.clone())
                        .set_client_to_sentinel_tls_mode(TlsMode::Secure)
                        .set_client_to_sentinel_certificates(certificates);
                }
                StoreConnection::Sentinel(Arc::new(SentinelMaster {
                    sentinels: tokio::sync::Mutex::new(builder.build().map_err(setup)?),
                    master: ArcSwapOption::empty(),
                }))
            }
        })
    }

    /// Runs `eval` (an `EVALSHA` of `script`) on the node that holds its
    /// keys, loading the script first where that node does not know it.
    pub async fn eval<T: FromRedisValue>(&self, script: &Script, eval: &Cmd) -> RedisResult<T> {
        match self.query(eval).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                self.load(script).await?;
                self.query(eval).await
            }
            answer => answer,
        }
    }

    async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        match self {
            StoreConnection::Single(manager) => cmd.query_async(&mut manager.clone()).await,
            StoreConnection::Cluster(cluster) => {
                // A slot can move on while a redirect is followed (the
                // node an ASK named has taken the slot, or handed it on):
                // the call starts over from the client's slot map, a few
                // times within the limiter's deadline. Check ids make a
                // repeated call count once.
                let mut redirects = 0;
                loop {
                    let answer = match cmd.query_async(&mut cluster.clone()).await {
                        Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::Ask) => {
                            asked(&mut cluster.clone(), &e, cmd).await
                        }
                        answer => answer,
                    };
                    match answer {
                        Err(e) if redirects < 3 && e.redirect_node().is_some() => redirects += 1,
                        answer => return answer,
                    }
                }
            }
            StoreConnection::Sentinel(master) => master.query(cmd).await,
        }
    }

    /// `SCRIPT LOAD` where `eval` runs: the server, every master of a
    /// cluster, the sentinels' master.
    async fn load(&self, script: &Script) -> RedisResult<()> {
        match self {
            StoreConnection::Single(manager) => script.load_async(&mut manager.clone()).await,
            StoreConnection::Cluster(cluster) => script.load_async(&mut cluster.clone()).await,
            StoreConnection::Sentinel(master) => {
                let mut connection = master.connection().await?;
                let loaded = script.load_async(&mut connection).await;
                master.after(&loaded);
                loaded
            }
        }
        .map(drop)
    }

    /// One `PING`, then `SCRIPT LOAD` of each of `scripts`, all within
    /// `wait`: `Err(Refused)` when the store refuses us in a way that will
    /// not heal by itself (a TLS handshake that fails, credentials or a
    /// script refused, a TLS URL naming a port that accepts TCP but never
    /// completes a handshake: a plain-TCP server), `Err(Unreachable)` when
    /// it does not answer in time.
    pub async fn probe(
        &self,
        address: &RedisAddress,
        wait: Duration,
        scripts: &[&Script],
    ) -> Result<(), ProbeFailure> {
        let started = tokio::time::Instant::now();
        self.answers(address, wait).await?;
        let loads = async {
            for script in scripts {
                self.load(script).await?;
            }
            Ok::<_, RedisError>(())
        };
        match tokio::time::timeout_at(started + wait, loads).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if refuses_for_good(&e) => Err(ProbeFailure::Refused(e.to_string())),
            Ok(Err(e)) => Err(ProbeFailure::Unreachable(format!(
                "it answered PING but did not load the quota script: {e}"
            ))),
            Err(_) => Err(ProbeFailure::Unreachable(format!(
                "it answered PING but did not load the quota script within {wait:?}"
            ))),
        }
    }

    /// One `PING` within `wait` ([`StoreConnection::probe`]'s first step).
    async fn answers(&self, address: &RedisAddress, wait: Duration) -> Result<(), ProbeFailure> {
        match self.ping(wait).await {
            Ok(()) => Ok(()),
            Err(Ping::Refused(why)) => Err(ProbeFailure::Refused(why)),
            Err(Ping::TimedOut(why)) if address.tls => match plain_tcp_node(address).await {
                Some(node) => Err(ProbeFailure::Refused(format!(
                    "{node} accepts TCP connections but completed no TLS handshake \
                     ({why}): is it a plain-TCP port? (a rediss URL never falls back to \
                     plain text)"
                ))),
                None => Err(ProbeFailure::Unreachable(why)),
            },
            Err(Ping::TimedOut(why) | Ping::Failed(why)) => Err(ProbeFailure::Unreachable(why)),
        }
    }

    async fn ping(&self, wait: Duration) -> Result<(), Ping> {
        let ping = async {
            let ping = redis::cmd("PING");
            match self {
                StoreConnection::Single(manager) => {
                    ping.query_async::<()>(&mut manager.clone()).await
                }
                StoreConnection::Cluster(cluster) => {
                    ping.query_async::<()>(&mut cluster.clone()).await
                }
                StoreConnection::Sentinel(master) => {
                    let mut connection = master.connection().await?;
                    let result = ping.query_async::<()>(&mut connection).await;
                    master.after(&result);
                    result
                }
            }
        };
        match tokio::time::timeout(wait, ping).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if refuses_for_good(&e) => Err(Ping::Refused(e.to_string())),
            Ok(Err(e)) if e.is_timeout() => Err(Ping::TimedOut(e.to_string())),
            Ok(Err(e)) => Err(Ping::Failed(e.to_string())),
            Err(_) => Err(Ping::TimedOut(format!("no answer within {wait:?}"))),
        }
    }
}

/// How one `PING` failed.
enum Ping {
    /// For good (TLS, credentials).
    Refused(String),
    /// No answer in time.
    TimedOut(String),
    /// Otherwise (refused connections, a broken one).
    Failed(String),
}

/// `cmd` sent on to the node an `ASK` redirect names, preceded by
/// `ASKING` in one pipeline. The cluster client sends the two apart on a
/// connection other requests share, so another request's command can take
/// the `ASKING` meant for this one (and be moved back and forth until its
/// retries run out) while a slot migrates under load; one pipeline is one
/// write, with nothing between the two.
async fn asked<T: FromRedisValue>(
    cluster: &mut ClusterConnection,
    redirect: &RedisError,
    cmd: &Cmd,
) -> RedisResult<T> {
    let Some((node, _slot)) = redirect.redirect_node() else {
        return Err(redirect.clone());
    };
    let Ok((host, port)) = super::address::host_port(node) else {
        return Err(redirect.clone());
    };
    let mut pipeline = redis::pipe();
    pipeline.cmd("ASKING").ignore().add_command(cmd.clone());
    let mut answers = cluster
        .route_pipeline(
            pipeline,
            0,
            2,
            SingleNodeRoutingInfo::ByAddress { host, port },
        )
        .await?;
    match answers.pop() {
        Some(Value::ServerError(error)) => Err(error.into()),
        Some(value) => Ok(T::from_redis_value(value)?),
        None => Err(redirect.clone()),
    }
}

/// The first node `address` names that accepts a TCP connection, as
/// `HOST:PORT`.
async fn plain_tcp_node(address: &RedisAddress) -> Option<String> {
    let nodes: Vec<(String, u16)> = match &address.topology {
        Topology::Single(info) => vec![tcp_endpoint(info.addr())?],
        Topology::Cluster(nodes) => nodes
            .iter()
            .filter_map(|n| tcp_endpoint(n.addr()))
            .collect(),
        Topology::Sentinel { sentinels, .. } => sentinels.iter().filter_map(tcp_endpoint).collect(),
    };
    for (host, port) in nodes {
        let connect = tokio::net::TcpStream::connect((host.as_str(), port));
        if let Ok(Ok(_)) = tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
            return Some(format!("{host}:{port}"));
        }
    }
    None
}

/// The host and port of a TCP (or TLS) address.
fn tcp_endpoint(addr: &redis::ConnectionAddr) -> Option<(String, u16)> {
    match addr {
        redis::ConnectionAddr::Tcp(host, port)
        | redis::ConnectionAddr::TcpTls { host, port, .. } => Some((host.clone(), *port)),
        _ => None,
    }
}

/// Why a probe failed.
#[derive(Debug)]
pub enum ProbeFailure {
    /// Refused for good: the TLS handshake or the credentials.
    Refused(String),
    /// Not reachable now (it may be later).
    Unreachable(String),
}

/// Whether `error` is one no retry will cure: a TLS handshake that fails
/// (an unknown CA, an expired or misnamed certificate, a server that does
/// not speak TLS) or credentials the server refuses.
fn refuses_for_good(error: &RedisError) -> bool {
    if matches!(
        error.kind(),
        ErrorKind::AuthenticationFailed | ErrorKind::Server(ServerErrorKind::NoPerm)
    ) {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        // The client library keeps its I/O errors behind an `Arc<dyn Error>`.
        let io = cause.downcast_ref::<std::io::Error>().or_else(|| {
            cause
                .downcast_ref::<Arc<dyn std::error::Error + Send + Sync>>()
                .and_then(|inner| inner.downcast_ref::<std::io::Error>())
        });
        let tls = io
            .and_then(std::io::Error::get_ref)
            .is_some_and(|inner| inner.is::<rustls::Error>());
        if tls || cause.is::<rustls::Error>() {
            return true;
        }
        source = cause.source();
    }
    let text = error.to_string();
    text.contains("WRONGPASS") || text.contains("NOAUTH")
}

/// The master the sentinels name, followed across failovers: the current
/// connection is dropped when it fails or turns out to be a replica
/// (READONLY), and the next call asks the sentinels again, one caller at a
/// time.
pub struct SentinelMaster {
    sentinels: tokio::sync::Mutex<SentinelClient>,
    master: ArcSwapOption<MultiplexedConnection>,
}

impl SentinelMaster {
    async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        let mut connection = self.connection().await?;
        let result = cmd.query_async(&mut connection).await;
        self.after(&result);
        result
    }

    /// The current master's connection, asking the sentinels when there is none.
    async fn connection(&self) -> RedisResult<MultiplexedConnection> {
        if let Some(connection) = self.master.load_full() {
            return Ok((*connection).clone());
        }
        let mut sentinels = self.sentinels.lock().await;
        if let Some(connection) = self.master.load_full() {
            return Ok((*connection).clone());
        }
        let client = sentinels.async_get_client().await?;
        // A response timeout below the limiter's 300 ms: a master cut
        // off from us (not closed) answers nothing, and only a call that
        // ends can tell us to ask the sentinels again.
        let connection = client
            .get_multiplexed_async_connection_with_config(
                &AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(MASTER_RESPONSE_TIMEOUT)),
            )
            .await?;
        self.master.store(Some(Arc::new(connection.clone())));
        Ok(connection)
    }

    /// Forgets the master after an answer that says it is gone, cut off
    /// or demoted.
    fn after<T>(&self, result: &RedisResult<T>) {
        if let Err(e) = result {
            if e.is_io_error()
                || e.is_timeout()
                || e.is_connection_dropped()
                || e.is_unrecoverable_error()
                || e.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
            {
                self.master.store(None);
            }
        }
    }
}
