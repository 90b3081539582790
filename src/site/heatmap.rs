//! A year of completions per day, for the status page's heatmap: 53 weeks
//! (columns, Monday first) by 7 days (rows), the last column holding the
//! UTC day of "now". Days after today are left out.

use chrono::{Datelike, Days, NaiveDate};

use crate::model::{Kind, Record, Timestamp};

/// Weeks shown.
pub const WEEKS: usize = 53;

/// One day of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The UTC date.
    pub date: NaiveDate,
    /// Completions on it.
    pub count: u32,
}

/// The grid: `weeks[w][d]` is day `d` (0 = Monday) of week `w` (0 = oldest);
/// `None` after today.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heatmap {
    /// The columns, oldest first.
    pub weeks: Vec<[Option<Cell>; 7]>,
    /// The largest count of a day (0 when none).
    pub max: u32,
    /// Completions in the grid.
    pub total: u32,
}

/// The heatmap of `records`' completions (UTC days) up to `now`'s day.
pub fn heatmap<'a>(records: impl IntoIterator<Item = &'a Record>, now: Timestamp) -> Heatmap {
    let today = now.to_datetime().date_naive();
    let monday = today - Days::new(u64::from(today.weekday().num_days_from_monday()));
    let first = monday - Days::new(7 * (WEEKS as u64 - 1));
    let mut counts = vec![0u32; WEEKS * 7];
    for record in records {
        if record.kind != Kind::Completed {
            continue;
        }
        let Some(at) = record.completed_at.or(record.effective_at) else {
            continue;
        };
        let date = at.to_datetime().date_naive();
        if date < first || date > today {
            continue;
        }
        let index = (date - first).num_days() as usize;
        counts[index] += 1;
    }
    let weeks = (0..WEEKS)
        .map(|w| {
            std::array::from_fn(|d| {
                let date = first + Days::new((w * 7 + d) as u64);
                (date <= today).then(|| Cell {
                    date,
                    count: counts[w * 7 + d],
                })
            })
        })
        .collect();
    Heatmap {
        weeks,
        max: counts.iter().copied().max().unwrap_or(0),
        total: counts.iter().sum(),
    }
}
