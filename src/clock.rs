//! The injectable clock. Everything time-dependent asks a [`Clock`], so
//! tests choose the instant instead of sleeping.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use crate::model::Timestamp;

/// The longest a [`Clock::sleep_until`] of the system clock sleeps before
/// it reads the clock again: a step of the wall clock (NTP, a resumed
/// machine) delays a wake-up by at most this much.
pub const LONGEST_NAP: Duration = Duration::from_secs(300);

/// A future that ends when a clock reaches an instant.
pub type Wake<'a> = Pin<Box<dyn Future<Output = ()> + Send + Sync + 'a>>;

/// A source of "now".
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;

    /// Ends once this clock shows `at` or later. The system clock's: sleeps
    /// (never polls) until `at`, reading the clock again at least every
    /// [`LONGEST_NAP`].
    fn sleep_until(&self, at: Timestamp) -> Wake<'_> {
        Box::pin(async move {
            loop {
                let left = at.as_millis() - self.now().as_millis();
                if left <= 0 {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(left as u64).min(LONGEST_NAP)).await;
            }
        })
    }

    /// Whether only an explicit move changes this clock (an instant given
    /// with `--now`): a one-shot pass that would wait on it ends instead.
    fn stands_still(&self) -> bool {
        false
    }
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until moved (tests, `--now`); a sleeper wakes
/// when a move reaches its instant.
#[derive(Debug)]
pub struct ManualClock {
    millis: AtomicI64,
    moved: tokio::sync::Notify,
}

impl ManualClock {
    /// A clock showing `at`.
    pub fn new(at: Timestamp) -> Self {
        Self {
            millis: AtomicI64::new(at.as_millis()),
            moved: tokio::sync::Notify::new(),
        }
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        self.millis.store(at.as_millis(), Ordering::SeqCst);
        self.moved.notify_waiters();
    }

    /// Moves the clock forward by `millis`.
    pub fn advance(&self, millis: i64) {
        self.millis.fetch_add(millis, Ordering::SeqCst);
        self.moved.notify_waiters();
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.millis.load(Ordering::SeqCst))
    }

    fn stands_still(&self) -> bool {
        true
    }

    fn sleep_until(&self, at: Timestamp) -> Wake<'_> {
        Box::pin(async move {
            loop {
                // Registered before the clock is read: no move falls between.
                let moved = self.moved.notified();
                if self.now() >= at {
                    return;
                }
                moved.await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_its_sleeper_when_moved_to_the_instant() {
        let clock = std::sync::Arc::new(ManualClock::new(Timestamp::from_millis(0)));
        let sleeper = {
            let clock = clock.clone();
            tokio::spawn(async move { clock.sleep_until(Timestamp::from_millis(1000)).await })
        };
        tokio::task::yield_now().await;
        clock.advance(999);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!sleeper.is_finished(), "woke before its instant");
        clock.advance(1);
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("woke at its instant")
            .unwrap();
    }
}
