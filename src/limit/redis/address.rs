//! Where the shared quota lives: the forms of a Redis store URL and what
//! each names (one server, a cluster, or a master found through
//! sentinels), with TLS or not. The one parser of those URLs; the settings
//! check them with it before anything binds, and the connection is built
//! from what it returns.
//!
//! - `redis://[USER:PASSWORD@]HOST:PORT[/DB]`, `rediss://…` (TLS): one server.
//! - `redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]`,
//!   `rediss+cluster://…`: a Redis Cluster, found from any of its nodes.
//! - `redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER[/DB]`,
//!   `rediss+sentinel://…`: the master the sentinels name `MASTER`; the
//!   credentials are the master's, the sentinels are asked without any.

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

use super::super::SettingError;

/// What a store URL names.
#[derive(Debug, Clone)]
pub enum Topology {
    /// One server.
    Single(ConnectionInfo),
    /// A Redis Cluster: its seed nodes.
    Cluster(Vec<ConnectionInfo>),
    /// A master found through sentinels.
    Sentinel {
        /// The sentinels.
        sentinels: Vec<ConnectionAddr>,
        /// The master's name in the sentinels' configuration.
        master: String,
        /// The database on the master.
        db: i64,
    },
}

/// A parsed store URL.
#[derive(Debug, Clone)]
pub struct RedisAddress {
    /// What it names.
    pub topology: Topology,
    /// Whether every connection speaks TLS (`rediss…`).
    pub tls: bool,
    /// The user and password for the data nodes, when given.
    pub username: Option<String>,
    /// The password for the data nodes, when given.
    pub password: Option<String>,
    /// The URL without its credentials, for messages.
    pub shown: String,
}

/// The schemes of a store URL, lower case: (scheme, TLS, kind).
const SCHEMES: [(&str, bool, Kind); 6] = [
    ("redis", false, Kind::Single),
    ("rediss", true, Kind::Single),
    ("redis+cluster", false, Kind::Cluster),
    ("rediss+cluster", true, Kind::Cluster),
    ("redis+sentinel", false, Kind::Sentinel),
    ("rediss+sentinel", true, Kind::Sentinel),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Single,
    Cluster,
    Sentinel,
}

/// Whether `url`'s scheme is one of a Redis store (in any case).
pub fn is_store_url(url: &str) -> bool {
    scheme_of(url).is_some()
}

fn scheme_of(url: &str) -> Option<(bool, Kind, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    SCHEMES
        .iter()
        .find(|(name, _, _)| name.eq_ignore_ascii_case(scheme))
        .map(|(_, tls, kind)| (*tls, *kind, rest))
}

impl RedisAddress {
    /// Parses `url`; the error names it by its redacted form.
    pub fn parse(url: &str) -> Result<Self, SettingError> {
        let shown = crate::redact::redact_url(url);
        let parsed = UrlParts::of(url).and_then(|parts| Ok((parts.topology()?, parts)));
        match parsed {
            Ok((topology, parts)) => Ok(Self {
                topology,
                tls: parts.tls,
                username: parts.username,
                password: parts.password,
                shown,
            }),
            Err(why) => Err(SettingError::RedisUrl { url: shown, why }),
        }
    }
}

/// A store URL taken apart: its scheme's TLS and kind, its credentials,
/// its nodes and its path's segments.
struct UrlParts<'a> {
    tls: bool,
    kind: Kind,
    username: Option<String>,
    password: Option<String>,
    nodes: Vec<(String, u16)>,
    segments: Vec<&'a str>,
}

impl<'a> UrlParts<'a> {
    /// `url` taken apart, or why it cannot be.
    fn of(url: &'a str) -> Result<Self, String> {
        let (tls, kind, rest) = scheme_of(url).ok_or_else(|| {
            "the scheme must be redis, rediss, redis+cluster, rediss+cluster, \
             redis+sentinel or rediss+sentinel"
                .to_owned()
        })?;
        if rest.contains(['?', '#']) {
            return Err("a query or fragment is not understood here".to_owned());
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority),
        };
        let (username, password) = credentials(userinfo)?;
        let nodes = hosts
            .split(',')
            .map(host_port)
            .collect::<Result<Vec<_>, _>>()?;
        let segments = path.split('/').filter(|s| !s.is_empty()).collect();
        Ok(Self {
            tls,
            kind,
            username,
            password,
            nodes,
            segments,
        })
    }

    /// The address of `node`, over TLS when the scheme says so.
    fn node_addr(&self, (host, port): &(String, u16)) -> ConnectionAddr {
        if self.tls {
            ConnectionAddr::TcpTls {
                host: host.clone(),
                port: *port,
                insecure: false,
                tls_params: None,
            }
        } else {
            ConnectionAddr::Tcp(host.clone(), *port)
        }
    }

    /// How to reach database `db` at `node`, with the URL's credentials.
    fn info(&self, node: &(String, u16), db: i64) -> Result<ConnectionInfo, String> {
        let mut redis = redis::RedisConnectionInfo::default().set_db(db);
        if let Some(user) = &self.username {
            redis = redis.set_username(user);
        }
        if let Some(password) = &self.password {
            redis = redis.set_password(password);
        }
        self.node_addr(node)
            .into_connection_info()
            .map(|info| info.set_redis_settings(redis))
            .map_err(|e| e.to_string())
    }

    /// What the URL names: one server, a cluster, or a master found
    /// through sentinels.
    fn topology(&self) -> Result<Topology, String> {
        let (nodes, segments) = (&self.nodes, &self.segments);
        Ok(match self.kind {
            Kind::Single | Kind::Cluster if segments.len() > 1 => {
                return Err("the path is at most a database number".to_owned())
            }
            Kind::Single if nodes.len() > 1 => {
                return Err(
                    "one server has one address; several are redis+cluster:// or \
                     redis+sentinel://"
                        .to_owned(),
                )
            }
            Kind::Single => Topology::Single(self.info(&nodes[0], database(segments.first())?)?),
            Kind::Cluster => {
                if database(segments.first())? != 0 {
                    return Err("a Redis Cluster has only database 0".to_owned());
                }
                Topology::Cluster(
                    nodes
                        .iter()
                        .map(|node| self.info(node, 0))
                        .collect::<Result<_, _>>()?,
                )
            }
            Kind::Sentinel => {
                let Some(master) = segments.first() else {
                    return Err(
                        "name the master: redis+sentinel://HOST:PORT[,HOST:PORT…]/MASTER[/DB]"
                            .to_owned(),
                    );
                };
                if segments.len() > 2 {
                    return Err("the path is MASTER or MASTER/DB".to_owned());
                }
                Topology::Sentinel {
                    sentinels: nodes.iter().map(|node| self.node_addr(node)).collect(),
                    master: (*master).to_owned(),
                    db: database(segments.get(1))?,
                }
            }
        })
    }
}

/// The user and password of a URL's `userinfo`, percent-decoded (an empty
/// one is none).
fn credentials(userinfo: Option<&str>) -> Result<(Option<String>, Option<String>), String> {
    let Some(userinfo) = userinfo else {
        return Ok((None, None));
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |text: &str| {
        percent_encoding::percent_decode_str(text)
            .decode_utf8()
            .map(|t| t.into_owned())
            .map_err(|_| "the credentials are not UTF-8".to_owned())
    };
    let (user, password) = (decode(user)?, decode(password)?);
    Ok((
        (!user.is_empty()).then_some(user),
        (!password.is_empty()).then_some(password),
    ))
}

/// The database a path segment names (none: 0).
fn database(segment: Option<&&str>) -> Result<i64, String> {
    segment.map_or(Ok(0), |text| {
        text.parse::<i64>()
            .ok()
            .filter(|db| *db >= 0)
            .ok_or_else(|| "the database is not a number of 0 or more".to_owned())
    })
}

/// `HOST:PORT` or `[IPV6]:PORT`; the port is required. Also reads the
/// node a cluster's redirect names.
pub(super) fn host_port(node: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(bracketed) = node.strip_prefix('[') {
        let (host, rest) = bracketed
            .split_once(']')
            .ok_or_else(|| "a node has an unclosed [".to_owned())?;
        (host, rest.strip_prefix(':'))
    } else {
        match node.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (node, None),
        }
    };
    if host.is_empty() {
        return Err("a node has no host".to_owned());
    }
    let port = port
        .ok_or_else(|| "a node needs a port (HOST:PORT)".to_owned())?
        .parse::<u16>()
        .ok()
        .filter(|port| *port != 0)
        .ok_or_else(|| "a node has no port number from 1 to 65535".to_owned())?;
    Ok((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_names_its_topology() {
        let one = RedisAddress::parse("rediss://:pw@cache.example:6380/2").unwrap();
        assert!(one.tls);
        assert_eq!(one.password.as_deref(), Some("pw"));
        assert_eq!(one.shown, "rediss://cache.example:6380/2");
        let Topology::Single(info) = one.topology else {
            panic!("one server")
        };
        assert_eq!(info.redis_settings().db(), 2);

        let cluster = RedisAddress::parse("redis+cluster://u:p@a:7000,b:7001,[::1]:7002").unwrap();
        assert!(!cluster.tls);
        assert_eq!(cluster.username.as_deref(), Some("u"));
        assert_eq!(cluster.shown, "redis+cluster://a:7000,b:7001,[::1]:7002");
        let Topology::Cluster(nodes) = cluster.topology else {
            panic!("a cluster")
        };
        assert_eq!(nodes.len(), 3);

        let sentinel =
            RedisAddress::parse("REDISS+SENTINEL://:pw@s1:26379,s2:26379/mymaster/3").unwrap();
        assert!(sentinel.tls);
        let Topology::Sentinel {
            sentinels,
            master,
            db,
        } = sentinel.topology
        else {
            panic!("sentinels")
        };
        assert_eq!((sentinels.len(), master.as_str(), db), (2, "mymaster", 3));
    }

    #[test]
    fn bad_forms_say_what_is_wrong_without_the_password() {
        for (url, why) in [
            ("redis://:s3cretpw@host:notaport/0", "no port number"),
            ("redis://:s3cretpw@host/0", "needs a port"),
            ("redis://:s3cretpw@a:1,b:2/0", "several are redis+cluster"),
            ("redis+cluster://:s3cretpw@a:1/3", "only database 0"),
            ("redis+sentinel://:s3cretpw@a:1", "name the master"),
            ("redis://:s3cretpw@a:1/x", "the database is not a number"),
            ("redis://:s3cretpw@a:1/0?timeout=1", "query"),
            ("memcache://:s3cretpw@a:1", "the scheme must be"),
        ] {
            let error = RedisAddress::parse(url).unwrap_err().to_string();
            assert!(error.contains(why), "{url}: {error}");
            assert!(!error.contains("s3cretpw"), "{url}: {error}");
        }
    }
}
