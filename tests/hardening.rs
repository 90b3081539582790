//! A server no idle loop or hostile client can exhaust (issue 15): an idle
//! server rests.

use std::time::Duration;

use crate::util::server::Server;
use crate::util::World;

/// (CPU seconds used, read syscalls made) by `pid` so far, from /proc.
fn cpu_and_reads(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start after ") ".
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    let reads = io
        .lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (ticks as f64 / 100.0, reads)
}

#[test]
fn an_idle_server_rests() {
    let w = World::new();
    w.seed_bundled();
    let s = Server::start(&w, &["--log", "warn"], &[]);
    assert_eq!(s.get("/healthz").status, 200);
    std::thread::sleep(Duration::from_millis(500));
    let (cpu_before, reads_before) = cpu_and_reads(s.child.id());
    std::thread::sleep(Duration::from_secs(10));
    let (cpu_after, reads_after) = cpu_and_reads(s.child.id());
    let (cpu, reads) = (cpu_after - cpu_before, reads_after - reads_before);
    // The safety poll checks every 2 s (a read or two of the pointer and the sync state).
    assert!(reads <= 40, "{reads} read syscalls in 10 idle seconds");
    assert!(cpu < 0.05, "{cpu:.3} s of CPU in 10 idle seconds");
    // A publish is still noticed at once (file events still work).
    let published = w
        .run(&["--now", "2026-11-21T10:00:00.000Z", "publish"])
        .success();
    assert!(
        published.stdout.contains("snapshot 2"),
        "{}",
        published.stdout
    );
    s.wait_for("/healthz", Duration::from_millis(500), |r| {
        r.json()["sequence"] == 2
    });
}
