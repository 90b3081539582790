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

impl Heatmap {
    /// Where the month labels go: `(week, month)` with `month` 0 for
    /// January, at each column whose Monday starts a new month. The first
    /// column is labelled only when the next label is at least 3 columns
    /// away, so two labels never overlap.
    pub fn month_labels(&self) -> Vec<(usize, u32)> {
        let month_of = |w: usize| self.weeks[w][0].map(|c| c.date.month0());
        let mut labels: Vec<(usize, u32)> = Vec::new();
        for w in 0..self.weeks.len() {
            let Some(month) = month_of(w) else { continue };
            if w == 0 || month_of(w - 1) != Some(month) {
                labels.push((w, month));
            }
        }
        if labels.len() > 1 && labels[0].0 == 0 && labels[1].0 < 3 {
            labels.remove(0);
        }
        labels
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_labels_sit_where_a_month_begins_and_never_crowd() {
        // Tuesday 2026-11-24: the grid starts on Monday 2025-11-24.
        let map = heatmap([], Timestamp::from_millis(1_795_514_400_000));
        let labels = map.month_labels();
        let first = map.weeks[0][0].unwrap().date;
        assert_eq!(first, NaiveDate::from_ymd_opt(2025, 11, 24).unwrap());
        // Nov 2025 at column 0 is dropped: December starts at column 1.
        assert_eq!(labels[0], (1, 11));
        assert_eq!(labels[1], (6, 0));
        assert_eq!(labels.last(), Some(&(49, 10)));
        assert_eq!(labels.len(), 12);
    }
}
