//! What is said to a person: the one message every ready-made format and
//! e-mail send for a *moment* (one publish, or one append of due time
//! events), in the endpoint's language and zone. Pure: no I/O, and the
//! instant it is sent at is an argument.
//!
//! A moment's changes are told as stories ([`crate::changes`]'s
//! "Stories"): a change and those told with it (a completion and the
//! schedules it fulfils; a link and the completion listing the schedule; a
//! corrected time and the schedules that follow it) are one story, phrased
//! for what happened. One story is one message; up to [`DIGEST_AFTER`]
//! stories are one message that tells each; more are one digest (how many
//! of each kind, and the status page). Time events say the time left when
//! they are sent ("Reset in 9 minutes" when a 10-minute reminder went out a
//! minute late); an announcement inside the endpoint's longest lead says it
//! too ("Reset announced: in 2 minutes, at …"), and the reminders it
//! covered are never sent after it ([`crate::remind::Reminder::told_by`]).
//! Every word comes from the tables the pages use ([`crate::site::i18n`]).

use crate::changes::{Field, Transition};
use crate::model::{Kind, Link, Record, ScheduleState, ScheduleWindow, Timestamp};
use crate::remind::{Leads, ReminderKind};
use crate::site::i18n::{Lang, Notify, Strings};

use super::outbox::OutboxEntry;

/// More stories than this in one moment are told as one digest.
pub const DIGEST_AFTER: usize = 10;

/// Who a message is for, and when it is sent.
#[derive(Debug, Clone, Copy)]
pub struct Audience<'a> {
    /// The endpoint's language.
    pub language: Lang,
    /// The endpoint's zone (local times beside UTC).
    pub zone: chrono_tz::Tz,
    /// The endpoint's reminder leads (none: it takes no reminders).
    pub leads: Option<&'a Leads>,
    /// The base of record pages, when the status pages are served.
    pub record_pages: Option<&'a str>,
    /// When the message is sent.
    pub sent_at: Timestamp,
}

/// One line of a message: words, or a labelled link.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Words (an upstream's or an operator's text among them: each format
    /// escapes them with its own [`markup`](super::markup) function).
    Text(String),
    /// A link and its label.
    Link(&'static str, Link),
}

/// A short human message: what happened, for whom, when, and where to read more.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// One line.
    pub title: String,
    /// The details, one per line, links among them.
    pub lines: Vec<Line>,
    /// The words of its language.
    pub words: &'static Notify,
    /// Whether it tells only time events (ntfy tags it as an alarm).
    pub reminder: bool,
}

impl Message {
    /// The message with its title and every line of words neutralised
    /// ([`super::markup::neutralise`]): what every format and e-mail send.
    pub fn neutralised(mut self) -> Self {
        super::markup::neutralise(&mut self.title);
        for line in &mut self.lines {
            if let Line::Text(text) = line {
                super::markup::neutralise(text);
            }
        }
        self
    }

    /// The links, labelled, in order.
    pub fn links(&self) -> impl Iterator<Item = (&'static str, &Link)> {
        self.lines.iter().filter_map(|line| match line {
            Line::Link(label, link) => Some((*label, link)),
            Line::Text(_) => None,
        })
    }

    /// The details and the links, as plain text.
    pub fn body(&self) -> String {
        self.render_body(|t| t.to_owned(), |l| l.to_string())
    }

    /// Title, details and links: every text through `escape`, every link
    /// through `link`.
    pub fn render(
        &self,
        escape: impl Fn(&str) -> String,
        link: impl Fn(&Link) -> String,
    ) -> String {
        format!(
            "{}\n{}",
            escape(&self.title),
            self.render_body(&escape, link)
        )
    }

    fn render_body(
        &self,
        escape: impl Fn(&str) -> String,
        link: impl Fn(&Link) -> String,
    ) -> String {
        self.lines
            .iter()
            .map(|line| match line {
                Line::Text(text) => escape(text),
                Line::Link(label, url) => format!("{}{}", escape(label), link(url)),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Title, details and links, as plain text.
    pub fn text(&self) -> String {
        self.render(|t| t.to_owned(), |l| l.to_string())
    }
}

/// The test message (`webhook test`), naming its message id.
pub fn test_message(id: &str, language: Lang) -> Message {
    let words = language.notify();
    Message {
        title: words.test_title.to_owned(),
        lines: vec![Line::Text(words.test_line.replace("{id}", id))],
        words,
        reminder: false,
    }
}

/// The message of one moment: `entries` are all of its changes (in outbox
/// order), `told` the indices of those the endpoint is told of (its
/// events, kinds and plans, reminders not cancelled). Changes told with
/// another that is told become part of its story.
pub fn message(entries: &[OutboxEntry], told: &[usize], audience: &Audience) -> Message {
    let words = audience.language.notify();
    let told_ids: std::collections::HashSet<&str> = told
        .iter()
        .map(|&i| entries[i].record.id.as_str())
        .collect();
    // The changes told with each record's, by that record (its story).
    let mut told_with: std::collections::HashMap<&str, Vec<&OutboxEntry>> =
        std::collections::HashMap::new();
    for e in entries.iter().filter(|e| e.reminder.is_none()) {
        if let Some(root) = e.told_with.as_deref().filter(|root| *root != e.record.id) {
            told_with.entry(root).or_default().push(e);
        }
    }
    let stories: Vec<Story> = told
        .iter()
        .map(|&i| &entries[i])
        .filter(|e| {
            e.reminder.is_some()
                || e.told_with
                    .as_deref()
                    .is_none_or(|root| root == e.record.id || !told_ids.contains(root))
        })
        .map(|primary| {
            let mut with = match primary.reminder {
                Some(_) => Vec::new(),
                None => told_with
                    .get(primary.record.id.as_str())
                    .cloned()
                    .unwrap_or_default(),
            };
            // What the story names, in the records' id order.
            with.sort_by(|a, b| crate::model::compare_ids(&a.record.id, &b.record.id));
            Story { primary, with }
        })
        .collect();
    let reminder = stories.iter().all(|s| s.primary.reminder.is_some());
    if stories.len() > DIGEST_AFTER {
        return digest(&stories, audience, reminder);
    }
    let mut told = stories.iter().map(|s| s.tell(audience));
    let Some(first) = told.next() else {
        return Message {
            title: String::new(),
            lines: Vec::new(),
            words,
            reminder,
        };
    };
    let mut message = Message {
        title: first.title,
        lines: first.lines,
        words,
        reminder,
    };
    let more = stories.len() - 1;
    if more > 0 {
        message
            .title
            .push_str(&words.more.replace("{n}", &more.to_string()));
    }
    for story in told {
        message.lines.push(Line::Text(String::new()));
        message.lines.push(Line::Text(story.title));
        message.lines.extend(story.lines);
    }
    message
}

/// Many stories: how many of each headline, and the status page.
fn digest(stories: &[Story], audience: &Audience, reminder: bool) -> Message {
    let words = audience.language.notify();
    let colon = audience.language.strings().colon;
    let mut counts: Vec<(String, usize)> = Vec::new();
    for story in stories {
        // What happened, as its title says it (before the time it is about).
        let title = story.tell(audience).title;
        let headline = title.split(colon).next().unwrap_or_default().to_owned();
        match counts.iter_mut().find(|(h, _)| *h == headline) {
            Some((_, n)) => *n += 1,
            None => counts.push((headline, 1)),
        }
    }
    let mut lines: Vec<Line> = counts
        .iter()
        .map(|(headline, n)| {
            Line::Text(
                words
                    .digest_line
                    .replace("{n}", &n.to_string())
                    .replace("{what}", headline),
            )
        })
        .collect();
    if let Some(page) = audience
        .record_pages
        .and_then(|base| Link::parse(&format!("{}/", base.trim_end_matches('/'))))
    {
        lines.push(Line::Link(words.digest_page, page));
    }
    Message {
        title: words
            .digest_title
            .replace("{n}", &stories.len().to_string()),
        lines,
        words,
        reminder,
    }
}

/// One story: a change, and the changes told with it.
struct Story<'a> {
    primary: &'a OutboxEntry,
    with: Vec<&'a OutboxEntry>,
}

/// A story in words.
struct Told {
    title: String,
    lines: Vec<Line>,
}

impl Story<'_> {
    fn time_event(&self) -> Option<ReminderKind> {
        self.primary
            .reminder
            .as_ref()
            .and(ReminderKind::of_event_type(&self.primary.event_type))
    }

    fn transition(&self) -> Option<Transition> {
        Transition::of_event_type(&self.primary.event_type)
    }

    /// A completion whose time was corrected: its times before and now.
    fn corrected(&self) -> Option<(Timestamp, Timestamp)> {
        let record = &self.primary.record;
        let now = record.completed_at.or(record.effective_at)?;
        (self.transition() == Some(Transition::Updated)
            && record.kind == Kind::Completed
            && self.primary.changed.contains(&Field::Time))
        .then_some(self.primary.previous_time?)
        .map(|before| (before, now))
    }

    /// A schedule an update left unfulfilled (an unlink).
    fn unfulfilled(&self) -> bool {
        let record = &self.primary.record;
        self.transition() == Some(Transition::Updated)
            && record.kind == Kind::Scheduled
            && self.primary.changed.contains(&Field::Fulfilment)
            && record.schedule_state != Some(ScheduleState::Fulfilled)
    }

    /// A schedule an update fulfilled by another completion (a link that
    /// replaces an automatic match): told as completed.
    fn refulfilled(&self) -> bool {
        let record = &self.primary.record;
        self.transition() == Some(Transition::Updated)
            && record.kind == Kind::Scheduled
            && self.primary.changed.contains(&Field::Fulfilment)
            && record.schedule_state == Some(ScheduleState::Fulfilled)
    }

    /// The headline: what happened, in words.
    fn headline(&self, audience: &Audience) -> &'static str {
        let words = audience.language.notify();
        let record = &self.primary.record;
        let instant = record
            .schedule_window
            .is_none_or(|w| w.end_at == w.start_at);
        if let Some(kind) = self.time_event() {
            return match kind {
                ReminderKind::Upcoming => words.upcoming,
                ReminderKind::WindowStarted if instant => words.due_now,
                ReminderKind::WindowStarted => words.window_open,
                ReminderKind::WindowEnded => words.window_closed,
                ReminderKind::Elapsed => words.unconfirmed,
            };
        }
        let scheduled = record.kind == Kind::Scheduled;
        match self.transition() {
            Some(Transition::Created) if scheduled => words.announced,
            Some(Transition::Created) => words.completed,
            Some(Transition::Moved) => words.moved,
            Some(Transition::Fulfilled) => words.fulfilled,
            _ if self.refulfilled() => words.fulfilled,
            Some(Transition::Withdrawn) if scheduled => words.schedule_withdrawn,
            Some(Transition::Withdrawn) => words.completion_withdrawn,
            _ if self.unfulfilled() => words.unfulfilled,
            _ if self.corrected().is_some() => words.time_corrected,
            _ if scheduled => words.schedule_updated,
            _ => words.completion_updated,
        }
    }

    /// The story in words: its title and lines.
    fn tell(&self, audience: &Audience) -> Told {
        let words = audience.language.notify();
        let strings = audience.language.strings();
        let times = Times {
            words,
            zone: audience.zone,
        };
        let record = &self.primary.record;
        let window = record.schedule_window;
        let completed = record.completed_at.or_else(|| {
            self.primary
                .completion
                .as_ref()
                .and_then(|c| c.completed_at)
        });
        let headline = self.headline(audience);
        let about: Option<String> = match (self.time_event(), self.transition()) {
            (Some(ReminderKind::Upcoming), _) => {
                let left = window.map_or(0, |w| minutes_left(w.start_at, audience.sent_at));
                let about = window.map_or(String::new(), |w| times.window(w));
                return self.told(
                    audience,
                    format!(
                        "{}{}{about}",
                        headline.replace("{d}", &words.duration(left)),
                        strings.colon
                    ),
                );
            }
            (Some(ReminderKind::WindowEnded), _) => window.map(|w| times.at(w.end_at)),
            (Some(_), _) => window.map(|w| times.window(w)),
            (None, Some(Transition::Created)) if record.kind == Kind::Scheduled => {
                window.map(|w| self.announced(w, audience, &times))
            }
            (None, Some(Transition::Fulfilled)) => completed.map(|at| times.at(at)),
            _ if self.refulfilled() => completed.map(|at| times.at(at)),
            (None, Some(Transition::Moved | Transition::Withdrawn)) if window.is_some() => {
                window.map(|w| times.window(w))
            }
            _ if self.corrected().is_some() => {
                let (before, now) = self.corrected().expect("corrected");
                let precise = before.as_millis() / 60_000 == now.as_millis() / 60_000;
                return self.told(
                    audience,
                    headline
                        .replace("{old}", &times.at_precisely(before, precise))
                        .replace("{new}", &times.at_precisely(now, precise)),
                );
            }
            _ if record.kind == Kind::Scheduled => window.map(|w| times.window(w)),
            _ => completed.map(|at| times.at(at)),
        };
        let title = match about {
            Some(about) => format!("{headline}{}{about}", strings.colon),
            None => headline.to_owned(),
        };
        self.told(audience, title)
    }

    /// An announcement's time: "in 2 minutes, at …" when it came inside
    /// the endpoint's longest lead (its reminders due by then are told by
    /// it) and is sent before the window starts.
    fn announced(&self, window: ScheduleWindow, audience: &Audience, times: &Times) -> String {
        let words = audience.language.notify();
        let start = window.start_at;
        let longest = audience
            .leads
            .and_then(|l| l.minutes().first().copied())
            .map_or(0, |m| i64::from(m) * 60_000);
        let published = self.primary.published_at;
        let inside = start > published && start.as_millis() - published.as_millis() <= longest;
        if inside && audience.sent_at < start {
            words
                .announced_soon
                .replace(
                    "{d}",
                    &words.duration(minutes_left(start, audience.sent_at)),
                )
                .replace("{when}", &times.window(window))
        } else {
            times.window(window)
        }
    }

    /// The title, then the lines: what the record is, what the story adds,
    /// its text and links.
    fn told(&self, audience: &Audience, title: String) -> Told {
        let words = audience.language.notify();
        let strings: &Strings = audience.language.strings();
        let times = Times {
            words,
            zone: audience.zone,
        };
        let record = &self.primary.record;
        let mut lines = vec![Line::Text(strings.what(record))];
        let window_line = |label: &str, r: &Record| {
            r.schedule_window
                .map(|w| Line::Text(format!("{label}{}", times.window(w))))
        };
        match (self.time_event(), self.transition()) {
            (Some(ReminderKind::Elapsed), _) => {
                lines.push(Line::Text(words.unconfirmed_line.to_owned()));
            }
            (Some(_), _) => {}
            (None, Some(Transition::Moved)) => {
                if let Some(before) = self.primary.previous_window {
                    lines.push(Line::Text(format!("{}{}", words.was, times.window(before))));
                }
            }
            (None, Some(Transition::Fulfilled)) => {
                lines.extend(window_line(words.as_scheduled, record));
            }
            _ if self.refulfilled() => lines.extend(window_line(words.as_scheduled, record)),
            (None, Some(Transition::Updated))
                if self.corrected().is_none() && !self.unfulfilled() =>
            {
                let changed = self.changed_words(words);
                if !changed.is_empty() {
                    lines.push(Line::Text(format!("{}{changed}", words.changed)));
                }
            }
            _ => {}
        }
        // What the changes told with it did.
        for other in &self.with {
            let r = &other.record;
            if r.kind != Kind::Scheduled {
                continue;
            }
            let label = if r.schedule_state == Some(ScheduleState::Fulfilled) {
                words.as_scheduled
            } else {
                words.open_again
            };
            lines.extend(window_line(label, r));
        }
        if self.with.is_empty() {
            // A line of an earlier version: its schedules are in `fulfils`.
            for schedule in &self.primary.fulfils {
                lines.extend(window_line(words.as_scheduled, schedule));
            }
        }
        if let (Some(backup_of), Some(Transition::Withdrawn)) =
            (self.primary.restored, self.transition())
        {
            let at = times.at(backup_of);
            lines.push(Line::Text(words.restored.replace("{at}", &at)));
        }
        if let Some(text) = record.text.as_deref().filter(|t| !t.is_empty()) {
            lines.push(Line::Text(clip(text, 280)));
        }
        if let Some(page) = audience.record_pages.and_then(|base| {
            Link::parse(&format!(
                "{base}{}",
                crate::model::record_page_path(&record.id)
            ))
        }) {
            lines.push(Line::Link(words.details, page));
        }
        if let Some(source) = record.source.link() {
            lines.push(Line::Link(words.source, source));
        }
        Told { title, lines }
    }

    /// What an update changed, in words.
    fn changed_words(&self, words: &Notify) -> String {
        let f = &words.fields;
        self.primary
            .changed
            .iter()
            .map(|field| match field {
                Field::Text => f.text,
                Field::Confidence => f.confidence,
                Field::Type => f.reset_type,
                Field::Scope => f.scope,
                Field::Announced => f.announced,
                Field::Source => f.source,
                Field::Time => f.time,
                Field::Window => f.window,
                Field::Fulfilment => f.fulfilment,
                Field::Links => f.links,
                Field::Other => f.other,
            })
            .collect::<Vec<_>>()
            .join(f.separator)
    }
}

/// Whole minutes from `at` to `start`, to the nearest (0 once under half
/// a minute, or past).
fn minutes_left(start: Timestamp, at: Timestamp) -> u32 {
    let ms = (start.as_millis() - at.as_millis()).max(0);
    u32::try_from((ms + 30_000) / 60_000).unwrap_or(u32::MAX)
}

/// Times in words, in one language and zone.
struct Times {
    words: &'static Notify,
    zone: chrono_tz::Tz,
}

impl Times {
    /// A window: `2026-11-24 18:00 UTC` for an instant (with the local
    /// time first in another zone), `2026-11-24 18:00 to 2026-11-24 20:00
    /// UTC` for a longer one.
    fn window(&self, window: ScheduleWindow) -> String {
        let (start, end) = (window.start_at, window.end_at);
        if start == end {
            self.at(start)
        } else if self.zone == chrono_tz::UTC {
            format!(
                "{}{}{} UTC",
                utc(start, false),
                self.words.to,
                utc(end, false)
            )
        } else {
            format!("{}{}{}", self.at(start), self.words.to, self.at(end))
        }
    }

    /// `2026-11-24 18:00 UTC`, or in another zone `2026-11-25 02:00 北京时间
    /// （2026-11-24 18:00 UTC）`.
    fn at(&self, at: Timestamp) -> String {
        self.at_precisely(at, false)
    }

    /// [`Times::at`], with seconds when `seconds`.
    fn at_precisely(&self, at: Timestamp, seconds: bool) -> String {
        if self.zone == chrono_tz::UTC {
            return format!("{} UTC", utc(at, seconds));
        }
        let local = at.to_datetime().with_timezone(&self.zone);
        let (before, after) = self.words.utc_around;
        format!(
            "{} {}{before}{}{after}",
            local.format(if seconds {
                "%Y-%m-%d %H:%M:%S"
            } else {
                "%Y-%m-%d %H:%M"
            }),
            self.words.zone_name(self.zone, at.to_datetime()),
            utc(at, seconds)
        )
    }
}

/// `2026-11-24 18:00` (UTC, minutes), with seconds when `seconds`.
fn utc(at: Timestamp, seconds: bool) -> String {
    at.to_datetime()
        .format(if seconds {
            "%Y-%m-%d %H:%M:%S"
        } else {
            "%Y-%m-%d %H:%M"
        })
        .to_string()
}

/// `text` cut to at most `max_chars` characters.
pub(super) fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars - 1).collect();
    out.push('…');
    out
}
