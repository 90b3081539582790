//! Random days for the model check: seeded, so a run is replayed by its
//! seed, and shrunk to a smallest day that still differs.
//!
//! A day: schedules announced some minutes to hours ahead (inside and
//! outside the leads; exact times and 20-minute windows), completions
//! early, on time, late or never (some recorded before the schedule they
//! would match, some with seconds), corrected times, links, moves,
//! withdrawals, a seed of history (more than ten records: a digest),
//! restarts of `serve`, and a receiver down a while. Actions fall on half minutes, time events on whole
//! minutes, so no action and time event share an instant.

use super::model::{accepted, Config, Instance, Op, Timeline, MINUTE, TEST_CLOCK};
use crate::util::Rng;

/// 2026-12-01T06:00:00Z.
pub const DAY: i64 = 1_796_104_800_000;

/// A random day from `rng`: up to `max_ops` actions the product accepts.
pub fn day(rng: &mut Rng, max_ops: usize) -> Timeline {
    let mut instance = Instance::new(TEST_CLOCK);
    let mut ops = Vec::new();
    let mut now = DAY + 30_000;
    let (mut schedules, mut completions, mut seeded) = (0u8, 0u8, false);
    let count = 2 + rng.below(max_ops.max(3) as u64 - 1) as usize;
    let mut tries = 0;
    while ops.len() < count && tries < count * 20 {
        tries += 1;
        now += (1 + rng.below(40) as i64) * MINUTE;
        let (s_known, c_known) = instance.recorded();
        let pick_s = |rng: &mut Rng| s_known[rng.below(s_known.len().max(1) as u64) as usize];
        let pick_c = |rng: &mut Rng| c_known[rng.below(c_known.len().max(1) as u64) as usize];
        let minute = |ms: i64| ms.div_euclid(MINUTE) * MINUTE;
        let op = match rng.below(100) {
            0..=29 => {
                schedules += 1;
                let lead = [2, 5, 9, 30, 55, 90, 150][rng.below(7) as usize];
                let start = minute(now) + lead * MINUTE;
                let end = if rng.below(10) < 3 {
                    start + 20 * MINUTE
                } else {
                    start
                };
                Op::Announce {
                    s: schedules - 1,
                    start,
                    end,
                }
            }
            30..=54 => {
                completions += 1;
                // Near a known window (early, on time, late), or anywhere.
                let base = match s_known.is_empty() {
                    true => now,
                    false => instance.window(pick_s(rng)).map_or(now, |(s, _)| s),
                };
                let shift = [-200, -170, -30, 0, 0, 1, 12, 170, 190][rng.below(9) as usize];
                let at = base + shift * MINUTE + rng.below(60) as i64 * 1000;
                Op::Complete {
                    c: completions - 1,
                    at: at.min(now),
                }
            }
            55..=62 if !c_known.is_empty() => {
                let c = pick_c(rng);
                let seconds = rng.below(60) as i64 * 1000;
                Op::Correct {
                    c,
                    at: minute(now) - rng.below(200) as i64 * MINUTE + seconds,
                }
            }
            63..=70 if !c_known.is_empty() && !s_known.is_empty() => Op::Link {
                c: pick_c(rng),
                s: pick_s(rng),
            },
            71..=78 if !s_known.is_empty() => {
                let start = minute(now) + [3, 20, 45, 120][rng.below(4) as usize] * MINUTE;
                Op::Move {
                    s: pick_s(rng),
                    start,
                    end: start,
                }
            }
            79..=84 if !s_known.is_empty() => Op::DismissSchedule { s: pick_s(rng) },
            85..=89 if !c_known.is_empty() => Op::DismissCompletion { c: pick_c(rng) },
            90..=93 if !seeded => {
                seeded = true;
                Op::Seed {
                    n: [3, 12][rng.below(2) as usize],
                    at: DAY - 30 * 24 * 60 * MINUTE,
                }
            }
            94..=99 => Op::Restart,
            _ => continue,
        };
        if instance.apply(now, &op) {
            ops.push((now, op));
        }
    }
    let day = Timeline { start: DAY, ops };
    if rng.below(2) == 0 {
        return with_outage(rng, day);
    }
    day
}

/// `day` with the English Slack receiver down a while, when a window is
/// found the test clock can tell exactly: no instant in the minute before
/// it comes back (every retry is due by then), and no more of what it
/// missed than its pace lets through at once (3).
fn with_outage(rng: &mut Rng, day: Timeline) -> Timeline {
    let Some(last) = day.ops.last().map(|(at, _)| *at) else {
        return day;
    };
    for _ in 0..8 {
        let from = day.start
            + 30_000
            + rng.below(((last - day.start) / MINUTE).max(1) as u64) as i64 * MINUTE;
        let until = from + (2 + rng.below(40) as i64) * MINUTE;
        if day.ops.iter().any(|(at, _)| *at == from || *at == until) {
            continue;
        }
        let mut ops = day.ops.clone();
        ops.push((from, Op::ReceiverDown));
        ops.push((until, Op::ReceiverUp));
        ops.sort_by_key(|(at, _)| *at);
        let candidate = Timeline {
            start: day.start,
            ops,
        };
        let told = super::model::told(&candidate, &TEST_CLOCK);
        let quiet = !told
            .instants
            .iter()
            .any(|at| *at > until - 61_000 && *at < until);
        let backlog = told.en_slack.iter().filter(|m| m.at == until).count();
        if quiet && backlog <= 3 {
            return candidate;
        }
    }
    day
}

/// The smallest day found that `differs` still holds for: each action
/// removed in turn while it keeps differing (the actions the product
/// would then refuse go with it).
pub fn shrink(timeline: &Timeline, cfg: Config, differs: impl Fn(&Timeline) -> bool) -> Timeline {
    let mut smallest = timeline.clone();
    let mut i = 0;
    while i < smallest.ops.len() {
        let mut candidate = smallest.clone();
        candidate.ops.remove(i);
        let candidate = accepted(&candidate, cfg);
        if candidate.ops.len() < smallest.ops.len() && differs(&candidate) {
            smallest = candidate;
        } else {
            i += 1;
        }
    }
    smallest
}

/// A random few minutes on the real clock ([`super::model::REAL_CLOCK`]:
/// reminders a minute before, a tolerance of a minute), from `start`:
/// one or two schedules a minute or so ahead, a completion on time, early,
/// late or never, perhaps its time corrected, a schedule moved, a restart.
/// Actions fall on half seconds, time events on whole seconds from `start`.
pub fn real_day(rng: &mut Rng, start: i64) -> Timeline {
    let second = 1000;
    let mut instance = Instance::new(super::model::REAL_CLOCK);
    let mut ops: Vec<(i64, Op)> = Vec::new();
    let mut push = |at: i64, op: Op, ops: &mut Vec<(i64, Op)>| {
        if ops.last().is_none_or(|(last, _)| *last < at) && instance.apply(at, &op) {
            ops.push((at, op));
        }
    };
    let s0 = start + (62 + rng.below(15) as i64) * second;
    push(
        start + 1_500,
        Op::Announce {
            s: 0,
            start: s0,
            end: s0,
        },
        &mut ops,
    );
    if rng.below(2) == 0 {
        let s1 = start + (70 + rng.below(15) as i64) * second;
        let end = s1 + [0, 20][rng.below(2) as usize] * second;
        push(
            start + 4_500,
            Op::Announce {
                s: 1,
                start: s1,
                end,
            },
            &mut ops,
        );
    }
    if rng.below(3) == 0 {
        push(start + 20_500, Op::Restart, &mut ops);
    }
    if rng.below(3) == 0 {
        let to = start + (95 + rng.below(10) as i64) * second;
        push(
            start + 25_500,
            Op::Move {
                s: 1,
                start: to,
                end: to,
            },
            &mut ops,
        );
    }
    let (reset, recorded) = match rng.below(4) {
        0 => (s0 + 3 * second, s0 + 5_500),
        1 => (s0 - 10 * second, s0 - 8_500),
        2 => (s0 + 45 * second, s0 + 47_500),
        _ => return Timeline { start, ops },
    };
    push(recorded, Op::Complete { c: 0, at: reset }, &mut ops);
    if rng.below(2) == 0 {
        push(
            recorded + 3_000,
            Op::Correct {
                c: 0,
                at: reset - 7 * second,
            },
            &mut ops,
        );
    }
    Timeline { start, ops }
}
