//! The clap definitions of the commands, their arguments and the flags
//! that are not settings. The options that are settings are made from the
//! table of settings and added to these commands (`help::with_settings`);
//! `settings` reads them into the flag layer.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use resetctl::model::{parse_operator_time, Timestamp};

const EXAMPLES: &str = "\
Examples:
  resetctl --data-dir ./data seed     # import the bundled history, publish it
  resetctl --data-dir ./data status   # what is published, how fresh
  resetctl --data-dir ./data serve    # answer the public API on 127.0.0.1:8080
  resetctl --data-dir ./data export -o records.json
  resetctl snapshots list
  resetctl snapshots rollback 41";

/// Publish and serve records of announced and completed usage-limit resets.
#[derive(Debug, Parser)]
#[command(name = "resetctl", version, long_version = resetctl::build::LONG_VERSION, about, after_help = crate::exit::with_exit_codes(EXAMPLES), propagate_version = true)]
pub struct Cli {
    /// Settings every command shares.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// The flag layer: every setting given on the command line, read
    /// off the rows' arguments after parsing (`settings::flags_layer`).
    #[arg(skip)]
    pub flags: resetctl::config::FileConfig,
}

/// Flags accepted before or after any subcommand.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Config file (TOML). Its keys are the long flags that have an environment variable, spelled
    /// the same (listen = "localhost:8080"); --config and --now have no key. Default: the first
    /// that exists of the user's ~/.config/resetctl/config.toml and the system-wide
    /// /etc/resetctl/config.toml (one file is read, never both).
    #[arg(long, global = true, env = "RESETCTL_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Evaluate and publish as of this time instead of the clock (with an explicit offset).
    #[arg(long, global = true, env = "RESETCTL_NOW", value_name = "TIME", value_parser = parse_operator_time)]
    pub now: Option<Timestamp>,
}

/// `webhook set`: an endpoint's delivery settings.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// The endpoint id.
    pub id: String,
    /// Allow its target to resolve to a loopback, private or link-local address.
    #[arg(long, conflicts_with = "no_allow_private_targets")]
    pub allow_private_targets: bool,
    /// Refuse such a target again.
    #[arg(long)]
    pub no_allow_private_targets: bool,
    /// Seconds a request may take, answer included (0.1 to 60). Default: unchanged.
    #[arg(long, value_name = "SECONDS")]
    pub webhook_timeout: Option<f64>,
    /// Link notifications to the record pages under this public address of the status site.
    /// Default: unchanged.
    #[arg(long, value_name = "URL", conflicts_with = "no_public_base_url")]
    pub public_base_url: Option<String>,
    /// Stop linking notifications to record pages.
    #[arg(long)]
    pub no_public_base_url: bool,
    /// The contact sent in its requests' User-Agent (an https:// or mailto: URL, or an
    /// e-mail address). Default: unchanged (at add: --user-agent-contact).
    #[arg(long, value_name = "CONTACT", conflicts_with = "no_contact")]
    pub contact: Option<String>,
    /// Send no contact in its requests' User-Agent.
    #[arg(long)]
    pub no_contact: bool,
    /// Remind before scheduled resets at these leads (see `webhook add --remind`). Default:
    /// unchanged.
    #[arg(long, value_name = "LEADS", value_parser = parse_leads, conflicts_with = "no_remind")]
    pub remind: Option<resetctl::remind::Leads>,
    /// Send no reminders.
    #[arg(long)]
    pub no_remind: bool,
    /// The language of its messages: en or zh. Default: unchanged.
    #[arg(long, value_name = "LANG", value_parser = parse_lang)]
    pub lang: Option<resetctl::site::i18n::Lang>,
    /// The time zone of local times in its messages, as Area/City. Default: unchanged.
    #[arg(long, value_name = "AREA/CITY", conflicts_with = "no_tz")]
    pub tz: Option<String>,
    /// Show times in UTC only.
    #[arg(long)]
    pub no_tz: bool,
    /// Only records whose scope names this plan (or all, unknown, or no scope). Default:
    /// unchanged.
    #[arg(long, value_name = "PLAN", value_parser = parse_plan, conflicts_with = "no_plan")]
    pub plan: Option<resetctl::model::PlanId>,
    /// Every record, whatever plans it names.
    #[arg(long)]
    pub no_plan: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Import historical records into a standalone instance, then publish.
    ///
    /// FILE is a records document ({generatedAt, lastSuccessfulCheckAt, records}) or a
    /// bare JSON array of records; "-" reads stdin; without FILE the bundled history is
    /// imported. Every id gets the "seed:" marker. Re-running the same seed changes
    /// nothing; a record that differs from a stored one with the same id is a conflict,
    /// reported by index and id, and then nothing is imported.
    #[command(
        after_help = "Examples:\n  resetctl seed\n  resetctl seed records.json\n  curl -s https://example.org/records.json | resetctl seed -"
    )]
    Seed {
        /// The seed file ("-" for stdin); default: the bundled history.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Republish a standalone instance's records at the current time (re-evaluates states).
    Publish,
    /// Put a standalone instance's ledger and seeded history back from a backup.
    ///
    /// DIR is a backup extracted (tar -C DIR -xzf ARCHIVE): its ledger.jsonl and history.json
    /// replace the data dir's, and the records they hold are published as a new version. What
    /// subscribers were told stays the data dir's own: a record the backup no longer has is
    /// told once as withdrawn ("restored from a backup of …"), none is told again under another
    /// id, and entry numbers go on past every one the ledger held.
    #[command(
        after_help = "Examples:\n  mkdir /tmp/restore && tar -C /tmp/restore -xzf resetctl-20261120-0300.tar.gz\n  resetctl restore /tmp/restore"
    )]
    Restore {
        /// The directory a backup of the data dir was extracted into.
        #[arg(value_name = "DIR")]
        backup: PathBuf,
    },
    /// Write the current snapshot as a records document (the upstream format).
    #[command(
        after_help = "Examples:\n  resetctl export -o /var/www/records.json   # let nginx serve it as an upstream"
    )]
    Export {
        /// Output file (written atomically). Default: stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Show what is published and how fresh it is; exit 69 when nothing is.
    ///
    /// Exits 1 when what is served is stale: a mirror whose sync is stale or
    /// failing, or a standalone instance whose last successful check is more
    /// than 30 hours old (its status page then says Unknown; run `resetctl
    /// mark-checked` after checking the source).
    ///
    /// Also shows the quota settings a `resetctl serve` with the same flags,
    /// environment and config file would use.
    Status {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List, show, prune or roll back published versions.
    #[command(subcommand)]
    Snapshots(SnapshotsCommand),
    /// Answer the public API from the newest snapshot, reloading it as new ones land.
    ///
    /// Starts fine on an empty or missing data dir (answering 503 data_unavailable) and
    /// begins serving the moment the first snapshot is published. SIGINT/SIGTERM stop
    /// accepting connections and let in-flight requests finish (at most --drain-timeout).
    ///
    /// Under a service manager: a listening socket it passes (LISTEN_FDS, systemd's socket
    /// activation; one named "admin" is the admin listener's) is used instead of --listen, so a
    /// restart keeps it; with NOTIFY_SOCKET set, it says READY=1 once it answers with the newest
    /// snapshot loaded, and STOPPING=1 when it drains (Type=notify).
    ///
    /// SIGHUP (systemctl reload, or kill -HUP) reads the settings again and checks them as --check
    /// does: a file it refuses is refused whole, in one log line, and nothing changes. Otherwise
    /// log, the quota, the flood guard, the client keys and the site name apply at once, from
    /// every connection's next request (a new policy or store counts afresh; a new flood guard or
    /// rate-limit-max-clients keeps every count); any other changed key is logged and waits for a
    /// restart.
    #[command(
        after_help = "Examples:\n  resetctl --data-dir /var/lib/resetctl serve --listen 0.0.0.0:8080\n  RUST_LOG=resetctl::access=info resetctl serve"
    )]
    Serve(Box<ServeArgs>),
    /// Fetch the upstream document (conditional GET), validate it and publish it when it changed.
    ///
    /// --once runs one attempt (for cron); --daemon repeats every interval, backing off
    /// exponentially (with jitter, capped) after failures. A failed sync never removes the
    /// last good snapshot: it only records the error, the status and the next attempt.
    /// A cron run and a daemon never overlap (a lock file); the second waits up to
    /// --lock-timeout, then exits 75 naming the holder.
    #[command(after_help = SYNC_EXAMPLES)]
    Sync(SyncArgs),
    /// Print the records a public-feed document (or a records document) yields, as a records document.
    ///
    /// For operators checking a feed by hand: states are evaluated at --now (default: the
    /// clock). Items that cannot be converted are listed on stderr (where, post id, why).
    #[command(
        after_help = "Examples:\n  resetctl convert status.json --now 2026-08-13T12:00:00Z\n  curl -s https://didcodexreset.com/api/status.json | resetctl convert -"
    )]
    Convert {
        /// The document ("-" for stdin).
        file: PathBuf,
    },
    /// Record what the reset source announced or did (standalone mode); every change republishes.
    #[command(subcommand)]
    Record(RecordCommand),
    /// Record a successful monitor check (meta.lastSuccessfulCheckAt) and republish.
    ///
    /// The status page trusts a check for 30 hours: past that (or with none) it answers
    /// Unknown and shows its operator a note naming this command, and `status` exits 1.
    /// `make run` marks its demo data checked this way at every start.
    #[command(
        after_help = "Examples:\n  resetctl mark-checked\n  resetctl mark-checked --at '2026-11-24 09:00 +08:00' --actor monitor"
    )]
    MarkChecked {
        /// When the check succeeded (with an offset). Default: now.
        #[arg(long, value_name = "TIME", value_parser = parse_operator_time)]
        at: Option<Timestamp>,
    },
    /// Manage webhook endpoints (signed HTTP callbacks and chat/phone targets) and deliver changes.
    #[command(subcommand, after_help = WEBHOOK_EXAMPLES)]
    Webhook(WebhookCommand),
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  resetctl completions bash > /etc/bash_completion.d/resetctl"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the man pages into DIR, and the manual's list of every setting
    /// into `--settings FILE` (used by `make man`).
    #[command(hide = true)]
    Man {
        /// Target directory.
        dir: PathBuf,
        /// Where to write the list of every setting (docs/manual/settings.md).
        #[arg(long, value_name = "FILE")]
        settings: Option<PathBuf>,
    },
}

const SYNC_EXAMPLES: &str = "\
Examples:
  resetctl sync --upstream https://other.example/records.json --once
  resetctl sync --upstream https://other.example/records.json --daemon \\
    --interval-minutes 10

crontab (hourly, at a minute of your own; a good run prints one line, so
cron mails only failures; exit 75 while backing off is expected):
  RESETCTL_CONFIG=/etc/resetctl/config.toml
  17 * * * * /usr/local/bin/resetctl sync --once > /dev/null

systemd: deploy/systemd/ in the source holds resetctl-sync.service with its
timer (the cron way) and resetctl-sync-daemon.service, which runs:
  ExecStart=/usr/local/bin/resetctl --config /etc/resetctl/config.toml \\
            --data-dir /var/lib/resetctl sync --daemon

Exit codes: 0 synced (published, unchanged or 304), 65 invalid upstream
document, 69 upstream unreachable or not 200/304, 75 backing off or another
sync running.";

/// The examples of `webhook add`, in its help and in `webhook`'s (one copy).
macro_rules! webhook_add_examples {
    () => {
        "  resetctl webhook add https://hooks.example.org/resets --kind reset_scheduled
  resetctl webhook add https://ntfy.sh/my-resets --format ntfy --plan pro
  resetctl webhook add https://ntfy.sh/my-resets --format ntfy \\
    --remind 60m,10m --lang zh --tz Asia/Shanghai
  resetctl webhook add --format telegram \\
    'https://api.telegram.org/bot<TOKEN>/sendMessage?chat_id=<CHAT>'
  resetctl webhook add --format email --lang zh --tz Asia/Shanghai \\
    'smtps://USER:PASSWORD@smtp.example?from=r@example.org&to=me@example.org'
"
    };
}

const WEBHOOK_ADD_EXAMPLES: &str = concat!(
    "Examples:\n",
    webhook_add_examples!(),
    "\nAn e-mail target's user and password are percent-encoded (@ as %40). The\npassword is never printed: webhook list shows the server and recipients,\nwebhook show adds the user and sender."
);

const WEBHOOK_EXAMPLES: &str = concat!(
    "Examples:\n",
    webhook_add_examples!(),
    "  resetctl webhook test ep_0123456789abcdef
  resetctl webhook deliveries

crontab, without serve:
  RESETCTL_DATA_DIR=/var/lib/resetctl
  */5 * * * * /usr/local/bin/resetctl webhook deliver --once > /dev/null

What happens to each record (record.created, schedule.moved,
schedule.fulfilled, record.updated, record.removed, and schedule.elapsed
once a schedule passed unconfirmed) is written to a durable outbox by
every publish and delivered at least once, in order per endpoint, by one
deliverer per data dir: `serve`, `sync --daemon` or `webhook deliver`."
);

/// Where a record comes from: a post on the social platform, or an operator note.
#[derive(Debug, Args, Clone)]
#[group(required = true, multiple = false)]
pub struct SourceArgs {
    /// The source post: https://x.com/HANDLE/status/ID (the id becomes the record id).
    #[arg(long, value_name = "URL")]
    pub post_url: Option<String>,
    /// An operator note: no source post; the id is op_ + 24 hex digits.
    #[arg(long)]
    pub operator: bool,
}

/// Facts shared by schedules and completions.
#[derive(Debug, Args, Clone)]
pub struct RecordFacts {
    /// Which limits: global, banked or global_and_banked. Default: global.
    #[arg(long = "type", value_name = "TYPE")]
    pub reset_type: Option<String>,
    /// Affected plans, comma-separated (all, unknown, or plan ids). Default: none (no scope).
    #[arg(long, value_name = "PLANS", value_delimiter = ',')]
    pub scope_plans: Vec<String>,
    /// Affected quota windows, comma-separated (five_hour, weekly, unknown…). Default: unknown.
    #[arg(long, value_name = "WINDOWS", value_delimiter = ',')]
    pub scope_windows: Vec<String>,
    /// Confidence, 0 to 1. Default: none (unknown).
    #[arg(long, value_name = "0..1", allow_negative_numbers = true)]
    pub confidence: Option<f64>,
    /// The post text or operator copy. Default: none.
    #[arg(long)]
    pub text: Option<String>,
    /// When the source was announced (with an offset). Default: now.
    #[arg(long, value_name = "TIME", value_parser = parse_operator_time)]
    pub announced_at: Option<Timestamp>,
}

/// The one time of a schedule (`record schedule`, `record move`): `--at`,
/// `--date` with `--tz`, or `--window`; `commands::record` takes exactly one.
#[derive(Debug, Args)]
pub struct ScheduleTimeArgs {
    /// An exact time (datetime precision; window start = end). Default: none (give
    /// --at, --date or --window).
    #[arg(long, value_name = "TIME", value_parser = parse_operator_time, group = "when")]
    pub at: Option<Timestamp>,
    /// A civil day (date precision), with --tz. Default: none.
    #[arg(long, value_name = "YYYY-MM-DD", group = "when", requires = "tz")]
    pub date: Option<String>,
    /// The time zone of --date, as Area/City (required with it). Default: none.
    #[arg(long, value_name = "AREA/CITY")]
    pub tz: Option<String>,
    /// A window START END (window precision). Default: none.
    #[arg(long, value_names = ["START", "END"], num_args = 2, value_parser = parse_operator_time, group = "when")]
    pub window: Vec<Timestamp>,
}

/// `resetctl record …`.
#[derive(Debug, Subcommand)]
pub enum RecordCommand {
    /// Record an announced (scheduled) reset.
    #[command(
        after_help = "Examples:\n  resetctl record schedule --at '2026-11-24 10:00 -08:00' \\\n    --post-url https://x.com/h/status/2090000000000000001\n  resetctl record schedule --date 2026-11-24 --tz America/Los_Angeles \\\n    --post-url https://x.com/h/status/2090000000000000002\n  resetctl record schedule --operator --basis contextual_inference \\\n    --window 2026-11-24T16:00:00Z 2026-11-24T20:00:00Z \\\n    --text 'Hinted for Monday afternoon'"
    )]
    Schedule {
        /// Where the record comes from.
        #[command(flatten)]
        source: SourceArgs,
        /// When.
        #[command(flatten)]
        time: ScheduleTimeArgs,
        /// explicit (stated) or contextual_inference. Default: explicit.
        #[arg(long, value_name = "BASIS")]
        basis: Option<String>,
        /// Facts about the record.
        #[command(flatten)]
        facts: RecordFacts,
    },
    /// Record a completed reset from a source post (or an operator note).
    Completion {
        /// Where the record comes from.
        #[command(flatten)]
        source: SourceArgs,
        /// When the reset took effect (with an offset). Default: unknown (completedAt =
        /// announcedAt).
        #[arg(long, value_name = "TIME", value_parser = parse_operator_time)]
        at: Option<Timestamp>,
        /// Facts about the record.
        #[command(flatten)]
        facts: RecordFacts,
    },
    /// Record a manual completion (manual: id) that fulfils these schedules.
    Complete {
        /// The schedule ids.
        #[arg(required = true, value_name = "SCHEDULE_ID")]
        schedule_ids: Vec<String>,
        /// When the reset happened (with an offset). Default: now.
        #[arg(long, value_name = "TIME", value_parser = parse_operator_time)]
        at: Option<Timestamp>,
    },
    /// Link a completion to the schedule it fulfils.
    Link {
        /// The completion.
        completion_id: String,
        /// The schedule.
        schedule_id: String,
    },
    /// Remove a link (also an automatic match) between a completion and a schedule.
    Unlink {
        /// The completion.
        completion_id: String,
        /// The schedule.
        schedule_id: String,
    },
    /// Take a record out of every filter (the ledger keeps it).
    Dismiss {
        /// The record.
        id: String,
    },
    /// Revert one ledger entry (see `record log`).
    Undo {
        /// The entry number.
        entry: u64,
    },
    /// Move a schedule to another time: it is announced anew for it ("moved …, was …").
    #[command(
        after_help = "Examples:\n  resetctl record move 2090000000000000001 --at '2026-11-24 12:00 -08:00'\n  resetctl record move 2090000000000000001 \\\n    --date 2026-11-25 --tz America/Los_Angeles"
    )]
    Move {
        /// The schedule.
        id: String,
        /// The new time.
        #[command(flatten)]
        time: ScheduleTimeArgs,
    },
    /// Change fields of a record.
    Edit {
        /// The record.
        id: String,
        /// New text. Default: unchanged.
        #[arg(long, conflicts_with = "clear_text")]
        text: Option<String>,
        /// Remove the text.
        #[arg(long)]
        clear_text: bool,
        /// New confidence (0 to 1). Default: unchanged.
        #[arg(long, allow_negative_numbers = true)]
        confidence: Option<f64>,
        /// New reset type. Default: unchanged.
        #[arg(long = "type", value_name = "TYPE")]
        reset_type: Option<String>,
        /// New effective time of a completion (with an offset). Default: unchanged.
        #[arg(long, value_name = "TIME", value_parser = parse_operator_time)]
        effective_at: Option<Timestamp>,
    },
    /// List every record, dismissed and undone ones marked.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one record (also dismissed or undone) and the entries that touched it.
    Show {
        /// The record.
        id: String,
    },
    /// The ledger, newest first.
    Log {
        /// Print JSON lines.
        #[arg(long)]
        json: bool,
    },
}

/// `resetctl sync` flags.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["once", "daemon", "check"])))]
#[command(next_help_heading = "Sync")]
pub struct SyncArgs {
    /// Run one sync attempt and exit.
    #[arg(long)]
    pub once: bool,
    /// Sync now and then every interval until SIGINT/SIGTERM.
    #[arg(long)]
    pub daemon: bool,
    /// Resolve and print the settings (JSON) without fetching or writing anything.
    #[arg(long)]
    pub check: bool,
    /// Try now even while backing off.
    #[arg(long)]
    pub force: bool,
    /// Delivery flags this command no longer takes (warned about).
    #[command(flatten)]
    pub moved: MovedDeliveryArgs,
}

/// `resetctl serve` flags.
#[derive(Debug, Args)]
#[command(next_help_heading = "Serving")]
pub struct ServeArgs {
    /// Test the settings and exit, as nginx -t does: start's own checks, as the user it runs
    /// as. Reads every layer, checks every setting as serve would (the log filter strictly),
    /// reads the data dir, tries each listen address (this host's, a port this user may bind,
    /// the admin listener apart from the API's) and asks the quota store (a PING and its script
    /// loaded within 3 s), prints every effective setting and where it came from (secrets
    /// redacted), and exits 0, or as serve would fail: 64 a setting, 69 the quota store
    /// (refusing or not answering), 71 a listen address, 74 the data dir. A port a running
    /// server holds is reported, not a failure. A reload (SIGHUP) checks the same.
    #[arg(long, help_heading = "Options")]
    pub check: bool,
    /// Delivery flags this command no longer takes (warned about).
    #[command(flatten)]
    pub moved: MovedDeliveryArgs,
}

/// The delivery flags that `serve`, `sync` and `webhook deliver`/`test` took
/// before they were kept with each endpoint: still accepted (hidden), so a
/// unit file that passes them starts, with a warning naming `webhook set`.
#[derive(Debug, Args, Clone)]
pub struct MovedDeliveryArgs {
    /// Moved to `webhook add`/`webhook set` (kept with each endpoint).
    #[arg(
        long = "allow-private-targets",
        hide = true,
        env = "RESETCTL_ALLOW_PRIVATE_TARGETS"
    )]
    pub allow_private_targets: bool,
    /// Moved to `webhook add`/`webhook set` (kept with each endpoint).
    #[arg(
        long = "webhook-timeout",
        hide = true,
        env = "RESETCTL_WEBHOOK_TIMEOUT",
        value_name = "SECONDS"
    )]
    pub webhook_timeout: Option<String>,
}

impl MovedDeliveryArgs {
    /// Warns when a moved flag was given.
    pub fn warn(&self) {
        if self.allow_private_targets || self.webhook_timeout.is_some() {
            crate::output::warn(
                "warning: --allow-private-targets and --webhook-timeout (and their RESETCTL_* variables) \
                 are kept with each webhook endpoint now and ignored here: \
                 use `resetctl webhook set ID --allow-private-targets --webhook-timeout SECONDS`",
            );
        }
    }
}

/// `resetctl webhook …`.
#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Register an endpoint; prints its id (and, for the standard format, its signing secret, once).
    ///
    /// Refused on a replica (a data dir that mirrors another resetctl instance's export): its
    /// writer tells every change, so register endpoints there.
    #[command(after_help = WEBHOOK_ADD_EXAMPLES)]
    Add {
        /// The target (see the examples).
        #[arg(help = target_help())]
        url: String,
        /// The format (every one listed).
        #[arg(long, value_name = "FORMAT", value_parser = parse_format, help = format_help())]
        format: Option<resetctl::webhook::Format>,
        /// The list whose changes are sent: all, reset_scheduled or reset_completed. Default: all.
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        /// Only these event types (repeatable, or comma-separated): record.created,
        /// schedule.moved, schedule.fulfilled, record.updated, record.removed,
        /// schedule.elapsed, and the reminders reset.upcoming, reset.window_started,
        /// reset.window_ended. Default: every change and schedule.elapsed, and every reminder
        /// when --remind is given.
        #[arg(
            long = "event",
            visible_alias = "events",
            value_name = "TYPE",
            value_delimiter = ','
        )]
        events: Vec<String>,
        /// Remind before a scheduled reset: reset.upcoming at each lead (minutes or hours, 1m
        /// to 24h), and reset.window_started and reset.window_ended. Naming a reminder in
        /// --event turns them on with the default. Default: off; 60m,10m when on.
        #[arg(long, value_name = "LEADS", value_parser = parse_leads)]
        remind: Option<resetctl::remind::Leads>,
        /// The language of the ready-made formats' messages: en or zh. Default: en.
        #[arg(long, value_name = "LANG", value_parser = parse_lang)]
        lang: Option<resetctl::site::i18n::Lang>,
        /// The time zone of local times in those messages, as Area/City (UTC is always shown
        /// too). Default: UTC only.
        #[arg(long, value_name = "AREA/CITY")]
        tz: Option<String>,
        /// Only records whose scope names this plan (or all, unknown, or no scope). Default:
        /// every record.
        #[arg(long, value_name = "PLAN", value_parser = parse_plan)]
        plan: Option<resetctl::model::PlanId>,
        /// A note for operators. Default: none.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
    },
    /// List the endpoints and how their deliveries stand.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one endpoint (with its target and secret).
    Show {
        /// The endpoint id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an endpoint (its undelivered changes are dropped).
    Remove {
        /// The endpoint id.
        id: String,
    },
    /// Pause deliveries to an endpoint (changes wait in the outbox, within its 32 MiB bound).
    Disable {
        /// The endpoint id.
        id: String,
    },
    /// Resume deliveries to an endpoint, from where they stopped (or from the oldest change the
    /// outbox still holds, past its bound).
    Enable {
        /// The endpoint id.
        id: String,
    },
    /// Send a webhook.test event to an endpoint now and print the answer.
    Test {
        /// The endpoint id.
        id: String,
        /// Delivery flags this command no longer takes (warned about).
        #[command(flatten)]
        moved: MovedDeliveryArgs,
    },
    /// Change how an endpoint is delivered to (kept with it, so every process that delivers
    /// agrees); prints the endpoint's delivery settings.
    Set(SetArgs),
    /// Recent delivery attempts: event, time, status code or error, next retry.
    Deliveries {
        /// Only this endpoint.
        id: Option<String>,
        /// How many attempts to show. Default: 20.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Print JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Run the deliverer: --once sends what is due and exits (for cron); otherwise until
    /// SIGINT/SIGTERM. Only one deliverer runs per data dir (serve and sync --daemon run one).
    Deliver {
        /// One pass, then exit.
        #[arg(long)]
        once: bool,
        /// Delivery flags this command no longer takes (warned about).
        #[command(flatten)]
        moved: MovedDeliveryArgs,
    },
}

/// `resetctl snapshots …`.
#[derive(Debug, Subcommand)]
pub enum SnapshotsCommand {
    /// List the versions on disk, oldest first; the current one is marked.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one version: its meta and counts, or the whole file with --json.
    Show {
        /// Sequence number.
        seq: u64,
        /// Print the whole snapshot file.
        #[arg(long)]
        json: bool,
    },
    /// Delete all but the newest N versions (never the current one).
    Prune {
        /// How many to keep.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        keep: u32,
    },
    /// Make an earlier (or later) valid version current again.
    Rollback {
        /// Sequence number.
        seq: u64,
    },
}

fn parse_leads(text: &str) -> Result<resetctl::remind::Leads, String> {
    resetctl::remind::Leads::parse(text).map_err(|e| e.to_string())
}

fn parse_plan(text: &str) -> Result<resetctl::model::PlanId, String> {
    resetctl::model::PlanId::try_from(text.to_owned())
}

fn parse_lang(text: &str) -> Result<resetctl::site::i18n::Lang, String> {
    resetctl::site::i18n::Lang::from_segment(text)
        .ok_or_else(|| format!("{text:?} is not en or zh"))
}

/// Every format, in the order help lists them: `standard, …, feishu or email`.
fn format_list() -> String {
    let names = resetctl::webhook::Format::ALL.map(|f| f.as_str());
    match names.split_last() {
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `webhook add --format`'s help, listing every format there is.
fn format_help() -> String {
    format!(
        "The format: {}. standard is signed Standard Webhooks JSON; slack also suits Mattermost \
         and Rocket.Chat; email sends each message as a mail over SMTP (the target is an \
         smtps:// or smtp:// URL). Default: standard.",
        format_list()
    )
}

/// `webhook add`'s target: a URL of the web, or an SMTP URL for e-mail,
/// written as every refusal of one says it.
fn target_help() -> String {
    format!(
        "The target: an http(s) URL (telegram: the Bot API sendMessage URL with its chat_id; \
         bark: the device key's URL; ntfy: the topic URL); with --format email, {}, its user \
         and password percent-encoded.",
        resetctl::webhook::target::EMAIL_TARGET_FORMS
    )
}

fn parse_format(text: &str) -> Result<resetctl::webhook::Format, String> {
    resetctl::webhook::Format::parse(text).ok_or_else(|| {
        format!(
            "{text:?} is not a format; use one of {}",
            resetctl::webhook::Format::ALL
                .map(|f| f.as_str())
                .join(", ")
        )
    })
}
