//! The reference model: what a person (and a program) should be told of a
//! standalone instance's day, written apart from the product and small
//! enough to read in one sitting. From a [`Timeline`] (what operators did,
//! when) it gives, for each channel, the exact messages and the instant
//! each is due; `told::drive` runs the real binary and compares.
//!
//! The rules, as a person would state them (docs/decision-records.md):
//!
//! - One action, one message per person, phrased for what happened; a
//!   completion names the schedules it completes, a corrected time says
//!   from what to what, a withdrawn completion which schedules are open
//!   again. Programs get one event per record that changed.
//! - A completion completes by itself only a schedule announced before it
//!   was recorded, of a reset no older than the announcement, within 180
//!   minutes of the window; the earliest such reset wins; a link wins over
//!   that.
//! - Before a reset: a reminder at each lead (never one that fell due
//!   before the announcement, which says the time left instead), "due now"
//!   (or a window open, then closed), and "not confirmed" 180 minutes after
//!   the window without a completion. Several at one instant are one
//!   message.
//! - Past ten stories at once, a digest.
//!
//! Time is milliseconds since the epoch; the only zones are UTC and
//! Asia/Shanghai (UTC+8, no daylight saving).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A minute in milliseconds.
pub const MINUTE: i64 = 60_000;

/// What an operator does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// `record schedule` of schedule `s` for the window `[start, end]`.
    Announce { s: u8, start: i64, end: i64 },
    /// `record completion` of completion `c`, the reset at `at`.
    Complete { c: u8, at: i64 },
    /// `record edit --effective-at`: completion `c`'s reset was at `at`.
    Correct { c: u8, at: i64 },
    /// `record link c s`.
    Link { c: u8, s: u8 },
    /// `record move s`.
    Move { s: u8, start: i64, end: i64 },
    /// `record dismiss` of schedule `s`.
    DismissSchedule { s: u8 },
    /// `record dismiss` of completion `c`.
    DismissCompletion { c: u8 },
    /// `seed` of `n` historical completions, the first at `at`, a minute apart.
    Seed { n: u8, at: i64 },
    /// `serve` is stopped and started again.
    Restart,
    /// The English Slack reader's receiver starts answering 503.
    ReceiverDown,
    /// It answers again: what it missed comes now, each message without
    /// the time events that expired meanwhile.
    ReceiverUp,
}

/// A day: operator actions at instants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Where the day's clock starts (a baseline version is published then).
    pub start: i64,
    /// The actions, at increasing instants.
    pub ops: Vec<(i64, Op)>,
}

/// A schedule's record id.
pub fn schedule_id(s: u8) -> String {
    format!("20900000000000001{s:02}")
}

/// A completion's record id.
pub fn completion_id(c: u8) -> String {
    format!("20900000000000002{c:02}")
}

/// A seeded completion's id (with the seed marker the product adds).
pub fn seeded_id(k: usize) -> String {
    format!("seed:20910000000000000{k:02}")
}

/// The source post of a record.
pub fn post(id: &str) -> String {
    format!("https://x.com/h/status/{}", id.trim_start_matches("seed:"))
}

/// Who is told: a language, a zone offset, and leads in minutes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Person {
    /// English or Chinese.
    pub zh: bool,
    /// Reminder leads, longest first.
    pub leads: &'static [i64],
}

/// Who is told what, and the matcher's tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// The English reader (UTC).
    pub en: Person,
    /// The Chinese reader (Asia/Shanghai).
    pub zh: Person,
    /// The leads of the standard endpoint and the stream.
    pub machine: &'static [i64],
    /// The matcher's tolerance (`--match-tolerance-minutes`).
    pub tolerance: i64,
}

/// The test clock's day: English reminded 10 and 1 minutes before,
/// Chinese 60 and 10, programs 10 and 1; the default tolerance, 180 minutes.
pub const TEST_CLOCK: Config = Config {
    en: Person {
        zh: false,
        leads: &[10, 1],
    },
    zh: Person {
        zh: true,
        leads: &[60, 10],
    },
    machine: &[10, 1],
    tolerance: 180 * MINUTE,
};

/// The real clock's few minutes: everyone reminded a minute before; a
/// tolerance of one minute.
pub const REAL_CLOCK: Config = Config {
    en: Person {
        zh: false,
        leads: &[1],
    },
    zh: Person {
        zh: true,
        leads: &[1],
    },
    machine: &[1],
    tolerance: MINUTE,
};

/// One line of a message.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// Words.
    Text(String),
    /// A label and a link.
    Link(&'static str, String),
}

/// What the English reader on `format` is told: on Slack, whose receiver
/// may be down a while, [`Told::en_slack`].
pub fn english_of<'a>(told: &'a Told, format: &str) -> &'a [Message] {
    if format == "slack" {
        &told.en_slack
    } else {
        &told.en
    }
}

/// One message for a person, due at an instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// When it is sent.
    pub at: i64,
    /// Its title.
    pub title: String,
    /// Its lines.
    pub lines: Vec<Line>,
}

impl Message {
    /// As a format shows it: the title, then each line; a link through `link`.
    pub fn shown(&self, link: impl Fn(&str) -> String) -> String {
        std::iter::once(self.title.clone())
            .chain(self.lines.iter().map(|l| match l {
                Line::Text(t) => t.clone(),
                Line::Link(label, url) => format!("{label}{}", link(url)),
            }))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One event for a program: its type, record id and lead, due at an instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// When it is sent.
    pub at: i64,
    /// `record.created`, `reset.upcoming`, …
    pub kind: &'static str,
    /// The record.
    pub id: String,
    /// A reminder's lead.
    pub lead: Option<i64>,
    /// A time event's instant it refers to (`data.at`): the window's
    /// start, or its end.
    pub refers: Option<i64>,
}

/// What each channel is told.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Told {
    /// The English reader.
    pub en: Vec<Message>,
    /// The English reader on Slack, whose receiver may be down a while
    /// ([`Op::ReceiverDown`]).
    pub en_slack: Vec<Message>,
    /// The Chinese reader.
    pub zh: Vec<Message>,
    /// A standard endpoint (and the record stream) with [`Config::machine`] leads.
    pub machine: Vec<Event>,
    /// Every instant something is due (the driver steps through them).
    pub instants: Vec<i64>,
}

#[derive(Clone, Debug)]
struct Schedule {
    start: i64,
    end: i64,
    /// Its add (or last move) entry, and when it was recorded.
    entry: u64,
    recorded_at: i64,
    /// The publish that announced its window.
    told_at: i64,
    link: Option<u8>,
    dismissed: bool,
}

#[derive(Clone, Debug)]
struct Completion {
    at: i64,
    entry: u64,
    dismissed: bool,
}

/// A record as a reader sees it, to compare two moments.
#[derive(Clone, Debug, PartialEq)]
enum View {
    Schedule {
        start: i64,
        end: i64,
        /// The completion, when, and whether by a link (none: not completed).
        done: Option<(String, i64, bool)>,
    },
    Completion {
        at: i64,
        completes: Vec<String>,
    },
}

/// The state of the instance.
#[derive(Clone, Debug, Default)]
struct State {
    /// The matcher's tolerance.
    tolerance: i64,
    schedules: BTreeMap<u8, Schedule>,
    completions: BTreeMap<u8, Completion>,
    seeded: Vec<i64>,
    /// Records in the order they were recorded (the order of time events).
    order: Vec<String>,
    entries: u64,
    /// The English Slack receiver is down: the stories of each message it
    /// missed.
    backlog: Option<Vec<Vec<Story>>>,
}

impl State {
    /// Which completion completes each schedule, when, and whether by a link.
    fn completions_of(&self) -> BTreeMap<u8, (u8, i64, bool)> {
        let mut done = BTreeMap::new();
        let mut by_time: Vec<(&u8, &Completion)> = self
            .completions
            .iter()
            .filter(|(_, c)| !c.dismissed)
            .collect();
        by_time.sort_by_key(|(_, c)| (c.at, c.entry));
        for (s, sched) in self.schedules.iter().filter(|(_, s)| !s.dismissed) {
            let linked = sched
                .link
                .filter(|c| self.completions.get(c).is_some_and(|c| !c.dismissed));
            if let Some(c) = linked {
                done.insert(*s, (c, self.completions[&c].at, true));
                continue;
            }
            let auto = by_time.iter().find(|(_, c)| {
                c.entry > sched.entry
                    && c.at >= sched.recorded_at
                    && c.at >= sched.start - self.tolerance
                    && c.at <= sched.end + self.tolerance
            });
            if let Some((c, completion)) = auto {
                done.insert(*s, (**c, completion.at, false));
            }
        }
        done
    }

    /// Every record a reader sees, by id.
    fn view(&self) -> BTreeMap<String, View> {
        let done = self.completions_of();
        let mut view = BTreeMap::new();
        for (s, sched) in self.schedules.iter().filter(|(_, s)| !s.dismissed) {
            view.insert(
                schedule_id(*s),
                View::Schedule {
                    start: sched.start,
                    end: sched.end,
                    done: done
                        .get(s)
                        .map(|(c, at, link)| (completion_id(*c), *at, *link)),
                },
            );
        }
        for (c, completion) in self.completions.iter().filter(|(_, c)| !c.dismissed) {
            let mut completes: Vec<String> = done
                .iter()
                .filter(|(_, (by, _, _))| by == c)
                .map(|(s, _)| schedule_id(*s))
                .collect();
            completes.sort();
            view.insert(
                completion_id(*c),
                View::Completion {
                    at: completion.at,
                    completes,
                },
            );
        }
        for (k, at) in self.seeded.iter().enumerate() {
            view.insert(
                seeded_id(k),
                View::Completion {
                    at: *at,
                    completes: Vec::new(),
                },
            );
        }
        view
    }
}

/// Numeric ids as numbers, others bytewise (the API's id order).
pub fn id_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u128>(), b.parse::<u128>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// What happened to one record between two moments (the machine's view).
#[derive(Clone, Debug, PartialEq)]
struct Change {
    kind: &'static str,
    id: String,
}

/// The records' changes from `before` to `after`, in the API's order (a
/// fulfilment right after its completion).
fn changes(before: &BTreeMap<String, View>, after: &BTreeMap<String, View>) -> Vec<Change> {
    let mut out: Vec<(String, u8, Change)> = Vec::new();
    for (id, now) in after {
        let kind = match (before.get(id), now) {
            (None, _) => "record.created",
            (Some(was), now) if was == now => continue,
            (
                Some(View::Schedule { done: None, .. }),
                View::Schedule {
                    done: Some((by, _, _)),
                    ..
                },
            ) => {
                out.push((
                    by.clone(),
                    1,
                    Change {
                        kind: "schedule.fulfilled",
                        id: id.clone(),
                    },
                ));
                continue;
            }
            (
                Some(View::Schedule { start, end, .. }),
                View::Schedule {
                    start: s2, end: e2, ..
                },
            ) if (start, end) != (s2, e2) => "schedule.moved",
            _ => "record.updated",
        };
        out.push((
            id.clone(),
            0,
            Change {
                kind,
                id: id.clone(),
            },
        ));
    }
    for id in before.keys().filter(|id| !after.contains_key(*id)) {
        out.push((
            id.clone(),
            0,
            Change {
                kind: "record.removed",
                id: id.clone(),
            },
        ));
    }
    out.sort_by(|a, b| {
        id_order(&a.0, &b.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| id_order(&a.2.id, &b.2.id))
    });
    out.into_iter().map(|(_, _, c)| c).collect()
}

/// Runs the model: what each channel is told, from `timeline.start` until
/// every time event of the day has fallen due.
pub fn told(timeline: &Timeline, cfg: &Config) -> Told {
    let mut state = State {
        tolerance: cfg.tolerance,
        ..State::default()
    };
    let mut told = Told::default();
    let mut ops = timeline.ops.iter().peekable();
    let mut now = timeline.start;
    loop {
        // The next instant: an operator's action, or a time event.
        let next_op = ops.peek().map(|(at, _)| *at);
        let next_time = next_time_event(&state, cfg, now);
        let at = match (next_op, next_time) {
            (Some(op), Some(t)) => op.min(t),
            (Some(op), None) => op,
            (None, Some(t)) => t,
            (None, None) => break,
        };
        now = at;
        if next_time == Some(at) {
            time_events(&mut state, cfg, at, &mut told);
        }
        if next_op == Some(at) {
            let (_, op) = ops.next().expect("peeked");
            act(&mut state, cfg, at, op, &mut told);
        }
        told.instants.push(at);
    }
    told.instants.dedup();
    told
}

/// The first instant after `after` at which a time event falls due.
fn next_time_event(state: &State, cfg: &Config, after: i64) -> Option<i64> {
    let mut leads: Vec<i64> = cfg
        .en
        .leads
        .iter()
        .chain(cfg.zh.leads)
        .chain(cfg.machine)
        .copied()
        .collect();
    leads.sort_unstable();
    leads.dedup();
    let done = state.completions_of();
    state
        .schedules
        .iter()
        .filter(|(s, sched)| !sched.dismissed && !done.contains_key(s))
        .flat_map(|(_, sched)| {
            let mut due: Vec<i64> = leads.iter().map(|l| sched.start - l * MINUTE).collect();
            due.extend([sched.start, sched.end, sched.end + state.tolerance]);
            due.into_iter().filter(|d| *d > sched.told_at)
        })
        .filter(|d| *d > after)
        .min()
}

/// One time event of a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tick {
    Upcoming(i64),
    Started,
    Ended,
    Unconfirmed,
}

/// The time events of `sched` due exactly at `at` for `leads`.
fn ticks(sched: &Schedule, leads: &[i64], tolerance: i64, at: i64) -> Vec<Tick> {
    let mut out = Vec::new();
    for lead in leads {
        if sched.start - lead * MINUTE == at {
            out.push(Tick::Upcoming(*lead));
        }
    }
    if sched.start == at {
        out.push(Tick::Started);
    }
    // A longer window's end, unless it is the unconfirmed moment itself.
    if sched.end > sched.start && sched.end == at && tolerance > 0 {
        out.push(Tick::Ended);
    }
    if sched.end + tolerance == at {
        out.push(Tick::Unconfirmed);
    }
    // Never one that fell due before the announcement told it.
    out.retain(|_| at > sched.told_at);
    out
}

/// The time events due at `at`: one message per person, an event each.
fn time_events(state: &mut State, cfg: &Config, at: i64, told: &mut Told) {
    let done = state.completions_of();
    let due: Vec<(String, Schedule)> = state
        .order
        .iter()
        .filter_map(|id| {
            let s = state
                .schedules
                .iter()
                .find(|(s, _)| schedule_id(**s) == *id)?;
            (!s.1.dismissed && !done.contains_key(s.0)).then(|| (id.clone(), s.1.clone()))
        })
        .collect();
    let stories_of = |person: Person| -> Vec<Story> {
        due.iter()
            .flat_map(|(id, sched)| {
                ticks(sched, person.leads, state.tolerance, at)
                    .into_iter()
                    .map(move |tick| Story::Tick(id.clone(), (*sched).clone(), tick))
            })
            .collect()
    };
    let (en, zh) = (stories_of(cfg.en), stories_of(cfg.zh));
    for (id, sched) in &due {
        for tick in ticks(sched, cfg.machine, state.tolerance, at) {
            let (kind, lead, refers) = match tick {
                Tick::Upcoming(l) => ("reset.upcoming", Some(l), sched.start),
                Tick::Started => ("reset.window_started", None, sched.start),
                Tick::Ended => ("reset.window_ended", None, sched.end),
                Tick::Unconfirmed => ("schedule.elapsed", None, sched.end),
            };
            told.machine.push(Event {
                at,
                kind,
                id: id.clone(),
                lead,
                refers: Some(refers),
            });
        }
    }
    if let Some(message) = message_of(&zh, cfg.zh, at) {
        told.zh.push(message);
    }
    tell_english(state, cfg.en, &en, at, told);
}

/// From this instant on a story is not told (a time event past its
/// moment, src/remind.rs's table); a change is told whenever it comes.
fn expires(story: &Story, tolerance: i64) -> Option<i64> {
    const GRACE: i64 = 15 * MINUTE;
    let Story::Tick(_, s, tick) = story else {
        return None;
    };
    let unconfirmed = s.end + tolerance;
    Some(match tick {
        Tick::Upcoming(lead) => s.start.min(s.start - lead * MINUTE + GRACE),
        Tick::Started if s.end > s.start => (s.start + GRACE).min(s.end),
        Tick::Started => (s.start + GRACE).min(unconfirmed),
        Tick::Ended => (s.end + GRACE).min(unconfirmed),
        Tick::Unconfirmed => unconfirmed + GRACE,
    })
}

/// Tells the English reader `stories` at `at`, on every format, and on
/// Slack unless its receiver is down (then they wait for it).
fn tell_english(state: &mut State, person: Person, stories: &[Story], at: i64, told: &mut Told) {
    let Some(message) = message_of(stories, person, at) else {
        return;
    };
    told.en.push(message.clone());
    match &mut state.backlog {
        Some(backlog) => backlog.push(stories.to_vec()),
        None => told.en_slack.push(message),
    }
}

/// What one story tells.
#[derive(Clone, Debug)]
enum Story {
    /// A time event of a schedule.
    Tick(String, Schedule, Tick),
    /// A schedule announced at an instant.
    Announced(String, Schedule),
    /// A completion, and the schedules it now completes.
    Completed(String, i64, Vec<(String, Schedule)>),
    /// A completion's time corrected; the schedules whose completion
    /// changed with it, completed now or not.
    Corrected(String, i64, i64, Vec<(String, Schedule, bool)>),
    /// A link: the schedule, completed at an instant.
    Linked(String, Schedule, i64),
    /// A schedule moved from a window.
    Moved(String, Schedule, (i64, i64)),
    /// A schedule withdrawn.
    ScheduleWithdrawn(String, Schedule),
    /// A completion withdrawn, and the schedules it completed (completed
    /// by another now, or not).
    CompletionWithdrawn(String, i64, Vec<(String, Schedule, bool)>),
}

/// Applies `op` at `at`: its publish's message to each person and its
/// events to programs.
fn act(state: &mut State, cfg: &Config, at: i64, op: &Op, told: &mut Told) {
    let before = state.view();
    let done_before = state.completions_of();
    state.entries += 1;
    let entry = state.entries;
    let stories: Vec<Story> = match op {
        Op::Announce { s, start, end } => {
            let sched = Schedule {
                start: *start,
                end: *end,
                entry,
                recorded_at: at,
                told_at: at,
                link: None,
                dismissed: false,
            };
            state.schedules.insert(*s, sched.clone());
            state.order.push(schedule_id(*s));
            vec![Story::Announced(schedule_id(*s), sched)]
        }
        Op::Complete { c, at: reset } => {
            state.completions.insert(
                *c,
                Completion {
                    at: *reset,
                    entry,
                    dismissed: false,
                },
            );
            state.order.push(completion_id(*c));
            let done = state.completions_of();
            let completes = changed_schedules(state, &done_before, &done)
                .into_iter()
                .map(|(id, sched, _)| (id, sched))
                .collect();
            vec![Story::Completed(completion_id(*c), *reset, completes)]
        }
        Op::Correct { c, at: reset } => {
            let was = state.completions[c].at;
            state.completions.get_mut(c).expect("recorded").at = *reset;
            let done = state.completions_of();
            let affected = changed_schedules(state, &done_before, &done);
            vec![Story::Corrected(completion_id(*c), was, *reset, affected)]
        }
        Op::Link { c, s } => {
            state.schedules.get_mut(s).expect("recorded").link = Some(*c);
            let sched = state.schedules[s].clone();
            vec![Story::Linked(
                schedule_id(*s),
                sched,
                state.completions[c].at,
            )]
        }
        Op::Move { s, start, end } => {
            let sched = state.schedules.get_mut(s).expect("recorded");
            let was = (sched.start, sched.end);
            (sched.start, sched.end) = (*start, *end);
            sched.entry = entry;
            sched.told_at = at;
            vec![Story::Moved(schedule_id(*s), sched.clone(), was)]
        }
        Op::DismissSchedule { s } => {
            let sched = state.schedules.get_mut(s).expect("recorded");
            sched.dismissed = true;
            vec![Story::ScheduleWithdrawn(schedule_id(*s), sched.clone())]
        }
        Op::DismissCompletion { c } => {
            let completion = state.completions.get_mut(c).expect("recorded");
            completion.dismissed = true;
            let was = completion.at;
            let done = state.completions_of();
            let affected = changed_schedules(state, &done_before, &done);
            vec![Story::CompletionWithdrawn(completion_id(*c), was, affected)]
        }
        Op::Seed { n, at: first } => {
            let start = state.seeded.len();
            for k in 0..usize::from(*n) {
                state.seeded.push(first + k as i64 * MINUTE);
                state.order.push(seeded_id(start + k));
            }
            (start..state.seeded.len())
                .map(|k| Story::Completed(seeded_id(k), state.seeded[k], Vec::new()))
                .collect()
        }
        Op::Restart => {
            state.entries -= 1;
            Vec::new()
        }
        Op::ReceiverDown => {
            state.entries -= 1;
            state.backlog = Some(Vec::new());
            Vec::new()
        }
        Op::ReceiverUp => {
            state.entries -= 1;
            Vec::new()
        }
    };
    let after = state.view();
    for change in changes(&before, &after) {
        told.machine.push(Event {
            at,
            kind: change.kind,
            id: change.id,
            lead: None,
            refers: None,
        });
    }
    if let Some(message) = message_of(&stories, cfg.zh, at) {
        told.zh.push(message);
    }
    tell_english(state, cfg.en, &stories, at, told);
    if *op == Op::ReceiverUp {
        // What the receiver missed, each message as it is when it comes.
        for missed in state.backlog.take().unwrap_or_default() {
            let left: Vec<Story> = missed
                .into_iter()
                .filter(|story| expires(story, state.tolerance).is_none_or(|end| end > at))
                .collect();
            if let Some(message) = message_of(&left, cfg.en, at) {
                told.en_slack.push(message);
            }
        }
    }
}

/// The schedules whose completion (or its time) changed from `before` to
/// `after`, in id order: each with whether it is completed now.
fn changed_schedules(
    state: &State,
    before: &BTreeMap<u8, (u8, i64, bool)>,
    after: &BTreeMap<u8, (u8, i64, bool)>,
) -> Vec<(String, Schedule, bool)> {
    state
        .schedules
        .iter()
        .filter(|(s, sched)| !sched.dismissed && before.get(s) != after.get(s))
        .map(|(s, sched)| (schedule_id(*s), sched.clone(), after.contains_key(s)))
        .collect()
}

/// One message of `stories` for `person` at `at`: one story as itself, up
/// to ten as one message, more as a digest.
fn message_of(stories: &[Story], person: Person, at: i64) -> Option<Message> {
    let w = words(person.zh);
    let mut told = stories.iter().map(|s| tell(s, person, at));
    let (first_title, mut lines) = told.next()?;
    if stories.len() > 10 {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for story in stories {
            let headline = tell(story, person, at).0;
            let headline = headline
                .split(w.colon)
                .next()
                .unwrap_or_default()
                .to_owned();
            match counts.iter_mut().find(|(h, _)| *h == headline) {
                Some((_, n)) => *n += 1,
                None => counts.push((headline, 1)),
            }
        }
        return Some(Message {
            at,
            title: w.digest.replace("{n}", &stories.len().to_string()),
            lines: counts
                .into_iter()
                .map(|(h, n)| Line::Text(format!("{n} × {h}")))
                .collect(),
        });
    }
    let mut title = first_title;
    if stories.len() > 1 {
        title.push_str(&w.more.replace("{n}", &(stories.len() - 1).to_string()));
    }
    for (t, l) in told {
        lines.push(Line::Text(String::new()));
        lines.push(Line::Text(t));
        lines.extend(l);
    }
    Some(Message { at, title, lines })
}

/// A story's title and lines for `person`, sent at `at`.
fn tell(story: &Story, person: Person, at: i64) -> (String, Vec<Line>) {
    let w = words(person.zh);
    let t = |ms: i64| time(ms, person.zh, false);
    let win = |s: &Schedule| window(s.start, s.end, person.zh);
    let c = w.colon;
    let (id, title, mut extra) = match story {
        Story::Tick(id, s, tick) => {
            let title = match tick {
                Tick::Upcoming(lead) => {
                    format!(
                        "{}{c}{}",
                        w.upcoming.replace("{d}", &duration(*lead, person.zh)),
                        win(s)
                    )
                }
                Tick::Started if s.end == s.start => format!("{}{c}{}", w.due_now, win(s)),
                Tick::Started => format!("{}{c}{}", w.window_open, win(s)),
                Tick::Ended => format!("{}{c}{}", w.window_closed, t(s.end)),
                Tick::Unconfirmed => format!("{}{c}{}", w.unconfirmed, win(s)),
            };
            let extra = match tick {
                Tick::Unconfirmed => vec![w.unconfirmed_line.to_owned()],
                _ => Vec::new(),
            };
            (id, title, extra)
        }
        Story::Announced(id, s) => {
            // Inside the longest lead when it was announced; the time left
            // when it is sent.
            let longest = person.leads[0] * MINUTE;
            let inside = s.start > s.told_at && s.start - s.told_at <= longest && s.start > at;
            let when = if inside {
                let left = (s.start - at + 30_000) / MINUTE;
                w.soon
                    .replace("{d}", &duration(left, person.zh))
                    .replace("{when}", &win(s))
            } else {
                win(s)
            };
            (id, format!("{}{c}{when}", w.announced), Vec::new())
        }
        Story::Completed(id, reset, completes) => (
            id,
            format!("{}{c}{}", w.completed, t(*reset)),
            completes
                .iter()
                .map(|(_, s)| format!("{}{}", w.scheduled_for, win(s)))
                .collect(),
        ),
        Story::Corrected(id, was, now, affected) => {
            let precise = was / MINUTE == now / MINUTE;
            let title = w
                .corrected
                .replace("{old}", &time(*was, person.zh, precise))
                .replace("{new}", &time(*now, person.zh, precise));
            (id, title, follow(affected, w, person))
        }
        Story::Linked(id, s, reset) => (
            id,
            format!("{}{c}{}", w.fulfilled, t(*reset)),
            vec![format!("{}{}", w.scheduled_for, win(s))],
        ),
        Story::Moved(id, s, (start, end)) => (
            id,
            format!("{}{c}{}", w.moved, win(s)),
            vec![format!("{}{}", w.was, window(*start, *end, person.zh))],
        ),
        Story::ScheduleWithdrawn(id, s) => (
            id,
            format!("{}{c}{}", w.schedule_withdrawn, win(s)),
            Vec::new(),
        ),
        Story::CompletionWithdrawn(id, reset, affected) => (
            id,
            format!("{}{c}{}", w.completion_withdrawn, t(*reset)),
            follow(affected, w, person),
        ),
    };
    let mut lines = vec![Line::Text(w.what.to_owned())];
    lines.extend(extra.drain(..).map(Line::Text));
    lines.push(Line::Link(w.source, post(id)));
    (title, lines)
}

/// The lines of the schedules a completion's change touched.
fn follow(affected: &[(String, Schedule, bool)], w: &Words, person: Person) -> Vec<String> {
    affected
        .iter()
        .map(|(_, s, done)| {
            let label = if *done { w.scheduled_for } else { w.open_again };
            format!("{label}{}", window(s.start, s.end, person.zh))
        })
        .collect()
}

/// `n` minutes in words.
pub fn duration(minutes: i64, zh: bool) -> String {
    let (h, m) = (minutes / 60, minutes % 60);
    let unit = |n: i64, en_one: &str, en_many: &str, zh_unit: &str| {
        if zh {
            format!("{n} {zh_unit}")
        } else if n == 1 {
            format!("1 {en_one}")
        } else {
            format!("{n} {en_many}")
        }
    };
    match (h, m) {
        (0, 0) if zh => "不到 1 分钟".to_owned(),
        (0, 0) => "less than a minute".to_owned(),
        (0, m) => unit(m, "minute", "minutes", "分钟"),
        (h, 0) => unit(h, "hour", "hours", "小时"),
        (h, m) => format!(
            "{} {}",
            unit(h, "hour", "hours", "小时"),
            unit(m, "minute", "minutes", "分钟")
        ),
    }
}

/// `2026-12-01 10:00` of an instant `offset` hours east of UTC.
fn civil(ms: i64, offset_hours: i64, seconds: bool) -> String {
    let iso = crate::util::chrono_like(ms.div_euclid(1000) + offset_hours * 3600);
    let (date, rest) = iso.split_once('T').expect("an ISO time");
    format!("{date} {}", &rest[..if seconds { 8 } else { 5 }])
}

/// An instant as a person reads it.
fn time(ms: i64, zh: bool, seconds: bool) -> String {
    if zh {
        format!(
            "{} 北京时间（{} UTC）",
            civil(ms, 8, seconds),
            civil(ms, 0, seconds)
        )
    } else {
        format!("{} UTC", civil(ms, 0, seconds))
    }
}

/// A window as a person reads it.
fn window(start: i64, end: i64, zh: bool) -> String {
    match (start == end, zh) {
        (true, _) => time(start, zh, false),
        (false, false) => format!("{} to {} UTC", civil(start, 0, false), civil(end, 0, false)),
        (false, true) => format!("{} 至 {}", time(start, true, false), time(end, true, false)),
    }
}

/// The words of one language (the spec's copy, apart from the product's).
struct Words {
    colon: &'static str,
    what: &'static str,
    source: &'static str,
    announced: &'static str,
    soon: &'static str,
    completed: &'static str,
    scheduled_for: &'static str,
    fulfilled: &'static str,
    moved: &'static str,
    was: &'static str,
    corrected: &'static str,
    open_again: &'static str,
    schedule_withdrawn: &'static str,
    completion_withdrawn: &'static str,
    upcoming: &'static str,
    due_now: &'static str,
    window_open: &'static str,
    window_closed: &'static str,
    unconfirmed: &'static str,
    unconfirmed_line: &'static str,
    more: &'static str,
    digest: &'static str,
}

fn words(zh: bool) -> &'static Words {
    const EN_WORDS: Words = Words {
        colon: ": ",
        what: "Global reset · Pro",
        source: "Source: ",
        announced: "Reset announced",
        soon: "in {d}, at {when}",
        completed: "Reset completed",
        scheduled_for: "Scheduled for: ",
        fulfilled: "Scheduled reset completed",
        moved: "Scheduled reset moved",
        was: "Was: ",
        corrected: "Completion time corrected: {old} → {new}",
        open_again: "Open again: ",
        schedule_withdrawn: "Scheduled reset withdrawn",
        completion_withdrawn: "Completed reset withdrawn",
        upcoming: "Reset in {d}",
        due_now: "Reset due now",
        window_open: "Reset window open",
        window_closed: "Reset window closed, no completion recorded yet",
        unconfirmed: "Scheduled reset not confirmed",
        unconfirmed_line: "No completion has been recorded since the scheduled time.",
        more: " (+{n} more)",
        digest: "{n} changes to reset records",
    };
    const ZH_WORDS: Words = Words {
        colon: "：",
        what: "全局重置 · Pro",
        source: "来源：",
        announced: "已公布重置",
        soon: "{d}后，{when}",
        completed: "重置已完成",
        scheduled_for: "原计划时间：",
        fulfilled: "计划重置已完成",
        moved: "计划重置时间已更改",
        was: "原定：",
        corrected: "重置完成时间已更正：{old} → {new}",
        open_again: "重新待定：",
        schedule_withdrawn: "计划重置已撤回",
        completion_withdrawn: "重置完成记录已撤回",
        upcoming: "{d}后重置",
        due_now: "现在应当重置",
        window_open: "重置窗口已开始",
        window_closed: "重置窗口已结束，尚未记录到完成",
        unconfirmed: "计划重置未得到确认",
        unconfirmed_line: "计划时间过后尚未记录到重置完成。",
        more: "（另有 {n} 项）",
        digest: "重置记录有 {n} 项变化",
    };
    if zh {
        &ZH_WORDS
    } else {
        &EN_WORDS
    }
}

/// An instance as the product would take operator actions: which it
/// refuses (the generator only makes actions the product accepts).
#[derive(Clone, Debug)]
pub struct Instance {
    state: State,
    cfg: Config,
}

impl Instance {
    /// An empty instance under `cfg`.
    pub fn new(cfg: Config) -> Self {
        Instance {
            state: State {
                tolerance: cfg.tolerance,
                ..State::default()
            },
            cfg,
        }
    }

    /// Applies `op` if the product would accept it; whether it did.
    pub fn apply(&mut self, at: i64, op: &Op) -> bool {
        if !self.accepts(op) {
            return false;
        }
        let mut ignored = Told::default();
        act(&mut self.state, &self.cfg, at, op, &mut ignored);
        true
    }

    fn accepts(&self, op: &Op) -> bool {
        let st = &self.state;
        let active_s = |s: &u8| st.schedules.get(s).is_some_and(|x| !x.dismissed);
        let active_c = |c: &u8| st.completions.get(c).is_some_and(|x| !x.dismissed);
        let done = st.completions_of();
        match op {
            Op::Announce { s, start, end } => !st.schedules.contains_key(s) && start <= end,
            Op::Complete { c, .. } => !st.completions.contains_key(c),
            Op::Correct { c, at } => active_c(c) && st.completions[c].at != *at,
            Op::Link { c, s } => {
                active_c(c) && active_s(s) && done.get(s) != Some(&(*c, st.completions[c].at, true))
            }
            Op::Move { s, start, end } => {
                active_s(s)
                    && !done.contains_key(s)
                    && start <= end
                    && (st.schedules[s].start, st.schedules[s].end) != (*start, *end)
            }
            Op::DismissSchedule { s } => active_s(s),
            Op::DismissCompletion { c } => active_c(c),
            Op::Seed { n, .. } => *n > 0,
            Op::Restart => true,
            Op::ReceiverDown => self.state.backlog.is_none(),
            Op::ReceiverUp => self.state.backlog.is_some(),
        }
    }

    /// The schedules and completions recorded (by index).
    pub fn recorded(&self) -> (Vec<u8>, Vec<u8>) {
        (
            self.state.schedules.keys().copied().collect(),
            self.state.completions.keys().copied().collect(),
        )
    }

    /// A schedule's window.
    pub fn window(&self, s: u8) -> Option<(i64, i64)> {
        self.state.schedules.get(&s).map(|x| (x.start, x.end))
    }
}

/// The timeline with only the actions the product accepts, in order (what
/// is left once the shrinker removed some).
pub fn accepted(timeline: &Timeline, cfg: Config) -> Timeline {
    let mut instance = Instance::new(cfg);
    Timeline {
        start: timeline.start,
        ops: timeline
            .ops
            .iter()
            .filter(|(at, op)| instance.apply(*at, op))
            .cloned()
            .collect(),
    }
}
