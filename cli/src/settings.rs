//! The command line's part of settings: the flag layer read off the parsed
//! arguments ([`flags_layer`]), the environment and config file read once,
//! and one call to [`resetctl::settings::Settings::build`], which merges
//! and validates every key for every subcommand. What the command line
//! adds is the invocation's clock (`--now`).

use std::ops::Deref;

use resetctl::config::{load_config, FileConfig};
use resetctl::model::Timestamp;
use resetctl::settings::Layers;
use resetctl::snapshot::SnapshotStore;
use resetctl::standalone::PublishSettings;

use crate::args::{
    Cli, Command, ConnectionArgs, DeliveryArgs, GlobalArgs, LimiterArgs, RecordCommand, ServeArgs,
    StreamArgs, SyncArgs, WebhookCommand,
};
use crate::exit::CliError;

/// The validated settings of this invocation, with its clock.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Every setting, validated.
    pub resolved: resetctl::settings::Settings,
    /// The clock: `--now` or the system time at start.
    pub now: Timestamp,
    /// `--now` as given (a frozen clock for the server), if it was.
    pub now_flag: Option<Timestamp>,
    /// The config file read (`--config`, the user's or the system-wide one), if any.
    pub config_path: Option<std::path::PathBuf>,
}

impl Deref for Settings {
    type Target = resetctl::settings::Settings;
    fn deref(&self) -> &Self::Target {
        &self.resolved
    }
}

impl Settings {
    /// The settings of `cli`: its flags, the process environment and the
    /// config file (`--config`, else the default one when it exists).
    pub fn resolve(cli: &Cli) -> Result<Self, CliError> {
        Self::reader(cli)()
    }

    /// Reads the settings of `cli` as [`Settings::resolve`] does, each
    /// time it is called: the same flags, the environment and the config
    /// file as they are then (`serve` on SIGHUP).
    pub fn reader(cli: &Cli) -> impl Fn() -> Result<Self, CliError> + Send + Sync + 'static {
        let flags = flags_layer(cli);
        let config = cli.global.config.clone();
        let now = cli.global.now;
        move || {
            let loaded = load_config(config.as_deref())?;
            let env = FileConfig::from_env(|name| std::env::var(name).ok())
                .map_err(resetctl::settings::SettingsError::from)?;
            let mut settings =
                Self::build(flags.clone(), now, env, loaded.values, loaded.path.clone())?;
            settings.config_path = loaded.path;
            Ok(settings)
        }
    }

    /// The settings of `cli` over `env` and `file` (tests give a map and a
    /// file's text: `from_parts`).
    #[cfg(test)]
    fn from_layers(
        cli: &Cli,
        env: FileConfig,
        file: FileConfig,
        file_path: Option<std::path::PathBuf>,
    ) -> Result<Self, CliError> {
        Self::build(flags_layer(cli), cli.global.now, env, file, file_path)
    }

    /// The settings of these layers, with the clock of `--now` (`now`).
    fn build(
        flags: FileConfig,
        now: Option<Timestamp>,
        env: FileConfig,
        file: FileConfig,
        file_path: Option<std::path::PathBuf>,
    ) -> Result<Self, CliError> {
        let layers = Layers {
            flags,
            env,
            file,
            file_path,
        };
        let resolved = resetctl::settings::Settings::build(&layers)?;
        Ok(Self {
            resolved,
            now: now.unwrap_or_else(Timestamp::now),
            now_flag: now,
            config_path: None,
        })
    }

    /// The clock of long-running commands: frozen at `--now` when given, else the system's.
    pub fn clock(&self) -> std::sync::Arc<dyn resetctl::clock::Clock> {
        if let Some(file) = resetctl::testhook::clock_file() {
            return std::sync::Arc::new(resetctl::testhook::FileClock(file));
        }
        match self.now_flag {
            Some(at) => std::sync::Arc::new(resetctl::clock::ManualClock::new(at)),
            None => std::sync::Arc::new(resetctl::clock::SystemClock),
        }
    }

    /// What a delivering process brings (everything else is kept with each endpoint).
    pub fn delivery(&self) -> resetctl::webhook::deliver::DeliverSettings {
        resetctl::webhook::deliver::DeliverSettings {
            clock: self.clock(),
            lock_timeout: self.lock_timeout,
            contact: self.user_agent_contact.clone(),
            tolerance_ms: self.match_tolerance_ms(),
        }
    }

    /// The snapshot store of the data dir.
    pub fn store(&self) -> SnapshotStore {
        SnapshotStore::new(&self.data_dir)
    }

    /// What publishing commands need.
    pub fn publish(&self) -> PublishSettings {
        PublishSettings {
            now: self.now,
            keep: self.keep,
            lock_timeout: self.lock_timeout,
            match_tolerance_ms: self.match_tolerance_ms(),
        }
    }
}

/// Settings from an argument list, an environment and a config file's
/// text, as the binary would build them (for tests of the whole path).
#[cfg(test)]
pub fn from_parts(
    argv: &[&str],
    env: &std::collections::HashMap<String, String>,
    file_text: &str,
) -> Result<Settings, CliError> {
    use clap::FromArgMatches;
    let cli = crate::help::command()
        .try_get_matches_from(std::iter::once("resetctl").chain(argv.iter().copied()))
        .and_then(|matches| Cli::from_arg_matches(&matches))
        .map_err(|e| CliError::usage(e.to_string()))?;
    let env = FileConfig::from_env(|name| env.get(name).cloned())
        .map_err(resetctl::settings::SettingsError::from)?;
    let path = std::path::Path::new("config.toml");
    let file = resetctl::config::parse_config(path, file_text)?;
    Settings::from_layers(&cli, env, file, Some(path.to_owned()))
}

/// What the command line gave, as a raw layer: the global flags and the
/// invoked subcommand's own.
pub fn flags_layer(cli: &Cli) -> FileConfig {
    let mut layer = FileConfig::default();
    global(&mut layer, &cli.global);
    match &cli.command {
        Command::Serve(args) => serve(&mut layer, args),
        Command::Sync(args) => sync(&mut layer, args),
        Command::Status { limits, .. } => limiter(&mut layer, limits),
        Command::MarkChecked { actor, .. } | Command::Restore { actor, .. } => {
            layer.actor = actor.clone()
        }
        Command::Record(command) => layer.actor = record_actor(command),
        Command::Webhook(WebhookCommand::Add { delivery, .. }) => deliveries(&mut layer, delivery),
        _ => {}
    }
    // What clap read from a flag's variable is the environment's value,
    // and the environment layer has it: the flag layer holds the command
    // line alone, so every value says where it really came from.
    for id in &cli.from_env {
        layer.clear(id);
    }
    layer
}

fn global(layer: &mut FileConfig, args: &GlobalArgs) {
    layer.data_dir = args.data_dir.clone();
    layer.log = args.log.clone();
    layer.log_format = args.log_format.map(spelled);
    layer.match_tolerance_minutes = args.match_tolerance_minutes;
    layer.keep = args.keep.map(|n| n as usize);
    layer.lock_timeout = args.lock_timeout;
    layer.user_agent_contact = args.user_agent_contact.clone();
}

/// A choice as the config file spells it (clap's name of the value).
fn spelled(choice: impl clap::ValueEnum) -> String {
    choice
        .to_possible_value()
        .expect("no value is skipped")
        .get_name()
        .to_owned()
}

/// A switch is a layer's value only when given: absent, a lower layer decides.
fn switch(on: bool) -> Option<bool> {
    on.then_some(true)
}

fn serve(layer: &mut FileConfig, args: &ServeArgs) {
    layer.listen = args.listen.clone();
    layer.admin_listen = args.admin_listen.clone();
    layer.watch = args.watch.map(spelled);
    layer.republish = switch(args.republish);
    layer.republish_every = args.republish_every;
    layer.public_base_url = args.public_base_url.clone();
    layer.no_site = switch(args.no_site);
    layer.site_name = args.site_name.clone();
    layer.mcp_allow_origin =
        (!args.mcp_allow_origin.is_empty()).then(|| args.mcp_allow_origin.clone());
    connections(layer, &args.connections);
    streams(layer, &args.streams);
    limiter(layer, &args.limits);
}

fn connections(layer: &mut FileConfig, args: &ConnectionArgs) {
    layer.header_timeout = args.header_timeout;
    layer.body_timeout = args.body_timeout;
    layer.max_connections = args.max_connections;
    layer.max_connections_per_ip = args.max_connections_per_ip;
    layer.max_head_bytes = args.max_head_bytes;
    layer.listen_backlog = args.listen_backlog;
}

fn streams(layer: &mut FileConfig, args: &StreamArgs) {
    layer.stream_max_per_client = args.stream_max_per_client;
    layer.stream_max = args.stream_max;
    layer.stream_heartbeat = args.stream_heartbeat;
}

fn limiter(layer: &mut FileConfig, args: &LimiterArgs) {
    layer.rate_limit = args.rate_limit.clone();
    layer.no_rate_limit = switch(args.no_rate_limit);
    layer.rate_limit_store = args.rate_limit_store.clone();
    layer.redis_ca_file = args.redis_ca_file.clone();
    layer.redis_cert_file = args.redis_cert_file.clone();
    layer.redis_key_file = args.redis_key_file.clone();
    layer.rate_limit_max_clients = args.rate_limit_max_clients;
    layer.trust_proxy = (!args.trust_proxy.is_empty()).then(|| args.trust_proxy.clone());
    layer.client_ip_header = args.client_ip_header.clone();
    layer.ipv6_prefix_len = args.ipv6_prefix_len;
    layer.flood_guard = args.flood_guard.clone();
}

fn sync(layer: &mut FileConfig, args: &SyncArgs) {
    layer.upstream = args.upstream.clone();
    layer.upstream_header =
        (!args.upstream_header.is_empty()).then(|| args.upstream_header.clone());
    layer.public_url = args.public_url.clone();
    layer.page_url = args.page_url.clone();
    layer.source_id = args.source_id.clone();
    layer.source_name = args.source_name.clone();
    layer.interval_minutes = args.interval_minutes;
    layer.max_age_minutes = args.max_age_minutes;
    layer.backoff_cap_minutes = args.backoff_cap_minutes;
    layer.connect_timeout = args.connect_timeout;
    layer.timeout = args.timeout;
    layer.max_body_bytes = args.max_body_bytes;
    layer.max_redirects = args.max_redirects;
}

fn deliveries(layer: &mut FileConfig, args: &DeliveryArgs) {
    layer.allow_private_targets = switch(args.allow_private_targets);
    layer.webhook_timeout = args.webhook_timeout;
    layer.public_base_url = args.public_base_url.clone();
}

/// `--actor` of a ledger command.
fn record_actor(command: &RecordCommand) -> Option<String> {
    match command {
        RecordCommand::Schedule { facts, .. } | RecordCommand::Completion { facts, .. } => {
            facts.actor.clone()
        }
        RecordCommand::Complete { actor, .. }
        | RecordCommand::Link { actor, .. }
        | RecordCommand::Move { actor, .. }
        | RecordCommand::Unlink { actor, .. }
        | RecordCommand::Dismiss { actor, .. }
        | RecordCommand::Undo { actor, .. }
        | RecordCommand::Edit { actor, .. } => actor.clone(),
        RecordCommand::List { .. } | RecordCommand::Show { .. } | RecordCommand::Log { .. } => None,
    }
}

#[cfg(test)]
mod tests;
