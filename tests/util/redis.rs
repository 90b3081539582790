//! A real `redis-server` on a free loopback port, owned by the test.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Redis {
    pub port: u16,
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
        let mut redis = Redis {
            port: 0,
            child: None,
            dir: tempfile::tempdir().unwrap(),
        };
        for _attempt in 0..5 {
            redis.port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
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
        let child = Command::new(redis_server())
            .args([
                "--port",
                &self.port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
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
