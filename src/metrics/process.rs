//! The standard process families (`process_*`, as the Prometheus client
//! libraries name them), read from Linux's `/proc/self` at each scrape.
//!
//! Hand-written rather than the `metrics-process` crate: that crate pulls
//! in `procfs` (23 s of a cold debug build on two cores, `cargo build
//! --timings`) for the five small files read here. Elsewhere than Linux
//! there is no `/proc`, and the families are left out.

use std::fs;

/// The process as one scrape sees it; a value that could not be read is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct ProcessStats {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: Option<f64>,
    /// Open file descriptors.
    pub open_fds: Option<u64>,
    /// The soft limit of open file descriptors.
    pub max_fds: Option<u64>,
    /// Virtual memory size, in bytes.
    pub virtual_memory_bytes: Option<u64>,
    /// Resident memory size, in bytes.
    pub resident_memory_bytes: Option<u64>,
    /// When the process started, in seconds since the Unix epoch.
    pub start_time_seconds: Option<u64>,
    /// OS threads.
    pub threads: Option<u64>,
}

/// `/proc`'s clock ticks (`USER_HZ`): 100 on every architecture Linux
/// runs this on (the kernel converts to it for user space).
const TICKS_PER_SECOND: u64 = 100;

/// Reads the running process's stats.
pub fn collect() -> ProcessStats {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kilobytes = |key: &str| field(&status, key).map(|kb| kb * 1024);
    let stat = fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let boot_time = fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| field(&s, "btime"));
    ProcessStats {
        // User and system time of every thread, the ended ones included
        // (fields 14 and 15). /proc/self/schedstat is the main thread's
        // alone, a fraction of a multi-threaded server's.
        cpu_seconds: stat_field(&stat, 14)
            .zip(stat_field(&stat, 15))
            .map(|(user, system)| (user + system) as f64 / TICKS_PER_SECOND as f64),
        open_fds: fs::read_dir("/proc/self/fd").ok().map(|d| d.count() as u64),
        max_fds: fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|s| soft_limit(&s, "Max open files")),
        virtual_memory_bytes: kilobytes("VmSize:"),
        resident_memory_bytes: kilobytes("VmRSS:"),
        start_time_seconds: stat_field(&stat, 22)
            .zip(boot_time)
            .map(|(ticks, boot)| boot + ticks / TICKS_PER_SECOND),
        threads: field(&status, "Threads:"),
    }
}

/// The number after `key` on its line of `text` (`VmRSS:   1816 kB` → 1816).
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Field `n` (1-based, as proc(5) numbers them) of `/proc/self/stat`. The
/// command name (field 2) may hold spaces and parentheses: fields are
/// counted after its last `)`.
fn stat_field(stat: &str, n: usize) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(n.checked_sub(3)?)?.parse().ok()
}

/// The soft limit of the `name` row of `/proc/self/limits` (0: unlimited).
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let rest = limits.lines().find_map(|line| line.strip_prefix(name))?;
    match rest.split_whitespace().next()? {
        "unlimited" => Some(0),
        n => n.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::{collect, soft_limit, stat_field};

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let stat = "23045 (a b) c)) R 23043 23043 1106 0 -1 4194304 132 0 0 0 7 3 0 0 20 0 1 0 700380 3133440 382";
        assert_eq!(stat_field(stat, 3), None, "the state is not a number");
        assert_eq!(stat_field(stat, 4), Some(23043));
        assert_eq!(stat_field(stat, 14), Some(7));
        assert_eq!(stat_field(stat, 22), Some(700380));
    }

    #[test]
    fn limits_read_the_soft_value() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 4096                 files\n\
                      Max processes             unlimited            unlimited            processes\n";
        assert_eq!(soft_limit(limits, "Max open files"), Some(1024));
        assert_eq!(soft_limit(limits, "Max processes"), Some(0));
    }

    #[test]
    fn this_process_reads_whole() {
        let now = collect();
        assert!(now.resident_memory_bytes.unwrap() > 0);
        assert!(now.virtual_memory_bytes.unwrap() >= now.resident_memory_bytes.unwrap());
        assert!(now.open_fds.unwrap() >= 3);
        assert!(now.threads.unwrap() >= 1);
        assert!(now.start_time_seconds.unwrap() > 1_700_000_000);
        assert!(now.cpu_seconds.unwrap() >= 0.0);
    }
}
