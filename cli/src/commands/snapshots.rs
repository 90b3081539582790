//! `resetctl snapshots list | show | prune | rollback`.

use serde_json::json;

use crate::args::SnapshotsCommand;
use crate::exit::CliError;
use crate::output::{json, print, shown};
use crate::settings::Settings;

pub fn run(settings: &Settings, command: SnapshotsCommand) -> Result<(), CliError> {
    let store = settings.store();
    match command {
        SnapshotsCommand::List { json: as_json } => {
            let entries = store.list()?;
            if as_json {
                let list: Vec<_> = entries
                    .iter()
                    .map(|e| {
                        let head = e.head.as_ref();
                        json!({
                            "sequence": e.sequence,
                            "path": e.path,
                            "bytes": e.bytes,
                            "current": e.current,
                            "publishedAt": head.map(|h| h.published_at),
                            "mode": head.map(|h| h.mode.as_str()),
                            "records": head.map(|h| h.records),
                        })
                    })
                    .collect();
                return print(&json(&list));
            }
            if entries.is_empty() {
                return print("no snapshots published\n");
            }
            print(&render_list(&entries))
        }
        SnapshotsCommand::Show { seq, json: as_json } => {
            let snapshot = store.load(seq)?;
            if as_json {
                return print(&json(&snapshot));
            }
            print(&format!(
                "sequence:  {}\nmode:      {}\npublished: {}\ngenerated: {}\nchecked:   {}\nrecords:   {}\n",
                snapshot.sequence,
                snapshot.mode.as_str(),
                snapshot.published_at,
                snapshot.generated_at,
                snapshot.last_successful_check_at.map_or("never".to_owned(), |t| t.to_string()),
                snapshot.records.len()
            ))
        }
        SnapshotsCommand::Prune { keep } => {
            let removed =
                resetctl::publish::prune_to(&store, keep as usize, settings.lock_timeout)?;
            print(&format!(
                "removed {} version(s){}\n",
                removed.len(),
                list_suffix(&removed)
            ))
        }
        SnapshotsCommand::Rollback { seq } => {
            resetctl::publish::roll_back_to(&store, seq, settings.now, settings.lock_timeout)?;
            print(&format!("snapshot {seq} is current\n"))
        }
    }
}

/// `snapshots list` for people: a header, then one line per version,
/// oldest first, the current one marked `*`; `?` where a file does not
/// read as a snapshot.
fn render_list(entries: &[resetctl::snapshot::SnapshotEntry]) -> String {
    let mut out = format!(
        "  {:>6}  {:<24}  {:<10}  {:>7}  {:>10}  {}\n",
        "SEQ", "PUBLISHED", "MODE", "RECORDS", "BYTES", "FILE"
    );
    for e in entries {
        let mark = if e.current { "*" } else { " " };
        let (published, mode, records) =
            e.head
                .as_ref()
                .map_or(("?".to_owned(), "?", "?".to_owned()), |s| {
                    (
                        s.published_at.to_string(),
                        s.mode.as_str(),
                        s.records.to_string(),
                    )
                });
        out.push_str(&shown!(
            "{} {:>6}  {:<24}  {:<10}  {:>7}  {:>10}  {}\n",
            mark,
            e.sequence,
            published,
            mode,
            records,
            e.bytes,
            e.path.display()
        ));
    }
    out
}

fn list_suffix(seqs: &[u64]) -> String {
    if seqs.is_empty() {
        String::new()
    } else {
        format!(
            ": {}",
            seqs.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
