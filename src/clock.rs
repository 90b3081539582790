//! The injectable clock. Everything time-dependent asks a [`Clock`], so
//! tests choose the instant instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::model::Timestamp;

/// A source of "now".
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until moved (tests, `--now`).
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock showing `at`.
    pub fn new(at: Timestamp) -> Self {
        Self(AtomicI64::new(at.as_millis()))
    }

    /// Moves the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        self.0.store(at.as_millis(), Ordering::SeqCst);
    }

    /// Moves the clock forward by `millis`.
    pub fn advance(&self, millis: i64) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.0.load(Ordering::SeqCst))
    }
}
