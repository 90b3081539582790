//! The raw layers of settings and their one precedence: flags >
//! environment (`RESETCTL_*`) > config file > defaults.
//!
//! Every setting is one row of the table of settings (`config/table.rs`,
//! by `settings_keys!`): its help, type, marks, commands, heading, value
//! name, choices, range and default. From the rows come one shape,
//! [`FileConfig`], for every layer (the flags the CLI parsed, the
//! environment, read here for every key whatever the subcommand, the
//! TOML config file, and the defaults), and [`FileConfig::merge`], which
//! takes each key from the highest layer that has it, remembering which.
//! [`crate::settings`] validates the merged values into typed settings.
//! The file holds the same settings as the flags, spelled the same
//! (`data-dir`, `listen`…); an unknown key is an error that names it
//! rather than a silent typo.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod file_error;

/// Where a setting's value came from; ordered by precedence (a flag first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A command-line flag (or the variable clap reads for it).
    Flag,
    /// A `RESETCTL_*` environment variable.
    Env,
    /// The config file.
    File,
}

/// The layers merged: the values, and the layer each came from.
#[derive(Debug, Clone, Default)]
pub struct Merged {
    /// Each key from its highest layer.
    pub values: FileConfig,
    /// The layer of each key that has a value.
    pub sources: HashMap<&'static str, Source>,
}

impl Merged {
    /// Where `key` (snake case) came from; `None` for a default.
    pub fn source(&self, key: &str) -> Option<Source> {
        self.sources.get(key).copied()
    }
}

/// An environment variable that does not read as its setting's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} is not {expected}")]
pub struct EnvError {
    /// The variable.
    pub variable: String,
    /// Its value ([`crate::redact::NOT_SHOWN`] for a [`Mark::Secret`] key).
    pub value: String,
    /// What the setting takes.
    pub expected: &'static str,
}

/// A mark on a row of the table of settings (`settings_keys!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A running `serve` applies a new value when its settings are read
    /// again (SIGHUP, [`crate::settings::reload`]); a change of any other
    /// key `serve` reads waits for a restart.
    Live,
    /// The value may hold a secret (a Redis password, an upstream's
    /// userinfo or token, a credential header): no error, log line or
    /// listing ever shows it ([`crate::redact`] shows it).
    Secret,
    /// A list whose flag or variable is one item each, never split at
    /// commas (an upstream header's value may hold commas).
    Unsplit,
}

/// How a row's value is written on the command line, in the environment
/// and in the file: what its flag takes and how it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text (checked by the setting's builder).
    Text,
    /// A file or directory.
    Path,
    /// A switch: given is `true`.
    Switch,
    /// A whole number of at most 8 bits.
    U8,
    /// A whole number of at most 32 bits.
    U32,
    /// A whole number of at most 64 bits.
    U64,
    /// A count.
    Usize,
    /// A number (seconds, mostly).
    Number,
    /// A list: repeatable, comma-separated in a variable.
    List,
}

/// One row of the table of settings: everything declared of a setting
/// but its value's type and default, which are the row's field of
/// [`FileConfig`] and [`FileConfig::defaults`].
#[derive(Debug, PartialEq)]
pub struct Setting {
    /// The key, in snake case.
    pub key: &'static str,
    marks: &'static [Mark],
    /// Its help: the row's doc comment, as written (one line a line).
    doc: &'static str,
    /// The commands whose flag it is (`serve`, `webhook add`), or
    /// `global` for every command.
    pub commands: &'static [&'static str],
    /// The heading its flag is listed under in `--help`.
    pub heading: Option<&'static str>,
    /// The flag's value's name (`N`, `SECONDS`).
    pub value_name: Option<&'static str>,
    /// The only values it takes, when it is a choice.
    pub choices: &'static [&'static str],
    /// The smallest and largest value accepted (seconds, or a whole
    /// number); the largest is infinite when only the smallest is bounded.
    pub range: Option<(f64, f64)>,
    /// What its flag takes.
    pub kind: Kind,
}

impl Setting {
    /// Whether the row carries `mark`.
    pub fn has(&self, mark: Mark) -> bool {
        self.marks.contains(&mark)
    }

    /// Its whole help, as `--help`, the man pages and the manual's list of
    /// every setting show it: the doc comment's lines joined (paragraphs
    /// apart), then its range (`Range: 0.1 to 3600`, `Range: at least 5`),
    /// then its default (`Default: 50`, or the rule the comment says in
    /// words); no closing full stop (as clap drops a doc comment's).
    pub fn help(&self) -> String {
        let mut paragraphs: Vec<String> = Vec::new();
        let mut current: Vec<&str> = Vec::new();
        for line in self.doc.lines().map(str::trim) {
            if line.is_empty() {
                if !current.is_empty() {
                    paragraphs.push(current.join(" "));
                    current.clear();
                }
            } else {
                current.push(line);
            }
        }
        if !current.is_empty() {
            paragraphs.push(current.join(" "));
        }
        let text = paragraphs.join("\n\n");
        // A default said in words closes the comment.
        let (said, in_words) = match text.split_once(" Default: ") {
            Some((said, words)) => (said, Some(words.trim_end_matches('.').to_owned())),
            None => (text.as_str(), None),
        };
        let mut help = said.trim_end_matches('.').to_owned();
        if let Some(range) = self.range_said() {
            help.push_str(&format!(". Range: {range}"));
        }
        if let Some(default) = in_words.or_else(|| self.default()) {
            help.push_str(&format!(". Default: {default}"));
        }
        help
    }

    /// Its range as its help and its errors say it: `0.1 to 3600`, or `at
    /// least 5` when only the smallest value is bounded.
    pub fn range_said(&self) -> Option<String> {
        let (min, max) = self.range?;
        Some(match max.is_finite() {
            true => format!("{} to {}", shown(min), shown(max)),
            false => format!("at least {}", shown(min)),
        })
    }

    /// Its default as the config file spells it, when it is a value (the
    /// row's `= VALUE`); `None` when the builder decides it by a rule its
    /// help says in words (`3 × interval`, the platform's data dir), or a
    /// switch that is off.
    pub fn default(&self) -> Option<String> {
        static DEFAULTS: std::sync::OnceLock<FileConfig> = std::sync::OnceLock::new();
        DEFAULTS.get_or_init(FileConfig::defaults).text_of(self.key)
    }
}

/// The row of `key` (snake or kebab case), if it is a setting.
pub fn setting(key: &str) -> Option<&'static Setting> {
    let key = key.replace('-', "_");
    FileConfig::SETTINGS.iter().find(|s| s.key == key)
}

/// Whether `key`'s value may hold a secret ([`Mark::Secret`]).
pub fn is_secret(key: &str) -> bool {
    setting(key).is_some_and(|s| s.has(Mark::Secret))
}

/// A key (snake case) as the flags and the config file spell it.
pub fn kebab(key: &str) -> String {
    key.replace('_', "-")
}

/// The variable of `key` (snake case): `RESETCTL_` and the key in upper case.
pub fn env_variable(key: &str) -> String {
    format!("RESETCTL_{}", key.to_ascii_uppercase())
}

/// A setting's type as a flag, the environment and the file spell it.
trait Text: Sized {
    const EXPECTED: &'static str;
    const KIND: Kind;
    /// One value as the environment gives it (`unsplit`: a list item
    /// that may hold commas).
    fn from_text(text: &str, unsplit: bool) -> Option<Self>;
    /// The value of a flag given `values` (its last, for one value).
    fn from_flag(values: &[String]) -> Option<Self> {
        Self::from_text(values.last()?, false)
    }
    /// The value as the config file spells it.
    fn spelled(&self) -> String;
}

impl Text for String {
    const EXPECTED: &'static str = "text";
    const KIND: Kind = Kind::Text;
    fn from_text(text: &str, _: bool) -> Option<Self> {
        Some(text.to_owned())
    }
    fn spelled(&self) -> String {
        self.clone()
    }
}

impl Text for PathBuf {
    const EXPECTED: &'static str = "a path";
    const KIND: Kind = Kind::Path;
    fn from_text(text: &str, _: bool) -> Option<Self> {
        Some(PathBuf::from(text))
    }
    fn spelled(&self) -> String {
        self.display().to_string()
    }
}

impl Text for bool {
    const EXPECTED: &'static str = "true or false";
    const KIND: Kind = Kind::Switch;
    fn from_text(text: &str, _: bool) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" | "" => Some(false),
            _ => None,
        }
    }
    fn spelled(&self) -> String {
        self.to_string()
    }
}

macro_rules! text_number {
    ($($ty:ty => $expected:literal $kind:ident),*) => {$(
        impl Text for $ty {
            const EXPECTED: &'static str = $expected;
            const KIND: Kind = Kind::$kind;
            fn from_text(text: &str, _: bool) -> Option<Self> {
                text.trim().parse().ok()
            }
            fn spelled(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
text_number!(u8 => "a whole number" U8, u32 => "a whole number" U32,
    u64 => "a whole number" U64, usize => "a whole number" Usize, f64 => "a number" Number);

impl Text for Vec<String> {
    const EXPECTED: &'static str = "a list";
    const KIND: Kind = Kind::List;
    /// Comma-separated, unless `unsplit` ([`Mark::Unsplit`]: one item).
    fn from_text(text: &str, unsplit: bool) -> Option<Self> {
        if unsplit {
            return Some(vec![text.to_owned()]);
        }
        Some(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }
    fn from_flag(values: &[String]) -> Option<Self> {
        Some(values.to_vec())
    }
    fn spelled(&self) -> String {
        self.join(",")
    }
}

/// A row's declared default as its type: `"info"` is a `String`.
trait Declared<T> {
    fn declared(self) -> T;
}

impl Declared<String> for &str {
    fn declared(self) -> String {
        self.to_owned()
    }
}

impl<T> Declared<T> for T {
    fn declared(self) -> T {
        self
    }
}

fn env_value<T: Text>(
    get: &impl Fn(&str) -> Option<String>,
    key: &str,
) -> Result<Option<T>, EnvError> {
    let variable = env_variable(key);
    let Some(value) = get(&variable) else {
        return Ok(None);
    };
    let unsplit = setting(key).is_some_and(|s| s.has(Mark::Unsplit));
    T::from_text(&value, unsplit)
        .map(Some)
        .ok_or_else(|| EnvError {
            variable,
            value: match is_secret(key) {
                true => crate::redact::NOT_SHOWN.to_owned(),
                false => value,
            },
            expected: T::EXPECTED,
        })
}

/// A flag's words that do not read as its setting's type (clap checks
/// each flag's value by its row's kind first, so this is a defect of the
/// table, reported rather than hidden).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{flag} is not {expected}")]
pub struct FlagError {
    /// The flag, without its dashes.
    pub flag: String,
    /// What the setting takes.
    pub expected: &'static str,
}

fn flag_value<T: Text>(key: &str, values: &[String]) -> Result<T, FlagError> {
    T::from_flag(values).ok_or_else(|| FlagError {
        flag: kebab(key),
        expected: T::EXPECTED,
    })
}

/// Declares every setting once, a row each, and makes from the rows
/// everything the layers need: the raw layer [`FileConfig`] (the same
/// shape for flags, the environment and the file); its rows
/// ([`FileConfig::SETTINGS`]: the doc comment is the help, `[Live,
/// Secret]` the [`Mark`]s, `in [..]` the commands, `under` the help
/// heading, `as` the value's name, `one of [..]` the choices, `range MIN
/// to MAX` or `at least MIN` the values accepted, each a literal or an
/// owner's constant in parentheses, `= VALUE` the default); the defaults; how the
/// environment and a flag's words are read for each; how a value is
/// spelled; and the merge. The rows are in `config/table.rs`.
macro_rules! settings_keys {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident : $ty:ty [$($mark:ident),*] in [$($command:literal),*]
        $(under $heading:literal)? $(as $value_name:literal)?
        $(one of [$($choice:literal),*])? $(range $min:tt to $max:tt)? $(at least $least:tt)?
        $(= $default:expr)?,
    )*) => {
        /// The settings a config file may hold (the same names as the long
        /// flags); also the shape of the flag and environment layers. Made
        /// from the table of settings, `config/table.rs`.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub struct FileConfig {
            $( $(#[doc = $doc])* pub $field: Option<$ty>, )*
        }

        impl FileConfig {
            /// Every key, in snake case (the config file spells `_` as `-`,
            /// the environment as `RESETCTL_` and upper case).
            pub const KEYS: &'static [&'static str] = &[$( stringify!($field) ),*];

            /// Every row of the table, in the order of [`Self::KEYS`].
            pub const SETTINGS: &'static [Setting] = &[$(
                Setting {
                    key: stringify!($field),
                    marks: &[$(Mark::$mark),*],
                    doc: concat!($($doc, "\n"),*),
                    commands: &[$($command),*],
                    heading: first(&[$(Some($heading))?]),
                    value_name: first(&[$(Some($value_name))?]),
                    choices: &[$($($choice),*)?],
                    range: first(&[
                        $(Some(($min as f64, $max as f64)))?
                        $(Some(($least as f64, f64::INFINITY)))?
                    ]),
                    kind: <$ty as Text>::KIND,
                }
            ),*];

            /// The lowest layer: the default of every row that declares
            /// one (`= VALUE`), `None` for the others, whose builders
            /// decide by a rule their help says in words.
            pub fn defaults() -> Self {
                Self {
                    $( $field: None $(.or(Some(Declared::<$ty>::declared($default))))?, )*
                }
            }

            $($(
                /// The value, or the row's default (`= VALUE`): what a
                /// builder reads of a row that has one.
                pub fn $field(&self) -> $ty {
                    self.$field
                        .clone()
                        .unwrap_or_else(|| Declared::<$ty>::declared($default))
                }
            )?)*

            /// The environment layer: `RESETCTL_<KEY>` for every key,
            /// read with `get` (the process environment, or a test's map).
            pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, EnvError> {
                Ok(Self {
                    $( $field: env_value(&get, stringify!($field))?, )*
                })
            }

            /// Sets `key` (snake case) from its flag's `values` as given
            /// on the command line (a switch given: `true`); a key that is
            /// no row is ignored.
            pub fn set_flag(&mut self, key: &str, values: &[String]) -> Result<(), FlagError> {
                $( if key == stringify!($field) {
                    self.$field = Some(flag_value::<$ty>(key, values)?);
                } )*
                Ok(())
            }

            /// `key`'s value (snake case) as the config file spells it (a
            /// list comma-separated), or `None` when it has none.
            pub fn text_of(&self, key: &str) -> Option<String> {
                $( if key == stringify!($field) {
                    return self.$field.as_ref().map(Text::spelled);
                } )*
                None
            }

            /// `layers` merged, highest first, over [`Self::defaults`]:
            /// each key from the first layer that has it, with where it
            /// came from (a default has no source).
            pub fn merge(layers: &[(Source, &FileConfig)]) -> Merged {
                let mut merged = Merged {
                    values: Self::defaults(),
                    ..Merged::default()
                };
                $(
                    if let Some((source, layer)) =
                        layers.iter().find(|(_, layer)| layer.$field.is_some())
                    {
                        merged.values.$field = layer.$field.clone();
                        merged.sources.insert(stringify!($field), *source);
                    }
                )*
                merged
            }
        }
    };
}

/// The one element of an optional part of a row, or `None`.
const fn first<T: Copy>(given: &[Option<T>]) -> Option<T> {
    match given {
        [one] => *one,
        _ => None,
    }
}

mod table;

pub use table::FileConfig;

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file (`--config`, `RESETCTL_CONFIG`) does not exist.
    #[error("cannot read config file {path}: it does not exist")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The file cannot be read, or is not a regular file of bounded size.
    #[error("config file: {0}")]
    Read(crate::durable::ReadError),
    /// The file is not valid TOML or has an unknown or mistyped key.
    #[error("config file {}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong: the line, the column, the key and why, in one
        /// line, never a value (`config::file_error`).
        message: String,
    },
}

/// The largest config file read (the operator's manual's is 2 kB).
pub const CONFIG_CAP: crate::durable::Cap = crate::durable::Cap::mib(1);

/// A loaded config file (or none).
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Where it came from; `None` when no file was found.
    pub path: Option<PathBuf>,
    /// Its values.
    pub values: FileConfig,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "resetctl")
}

/// The system-wide config file of a deployed instance (the deployment
/// guide's), read when no config file is named and the user has none.
pub const SYSTEM_CONFIG_PATH: &str = "/etc/resetctl/config.toml";

/// The data dir of the shipped units and the operator's manual.
pub const SYSTEM_DATA_DIR: &str = "/var/lib/resetctl";

/// The platform's per-user config file location (`~/.config/resetctl/config.toml` on Linux).
pub fn default_config_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The config files read when none is named, in order: the user's own,
/// then the system-wide one. The first that exists is the file layer; the
/// files are not merged, so one file answers for every key.
pub fn default_config_paths() -> Vec<PathBuf> {
    default_config_path()
        .into_iter()
        .chain(std::iter::once(PathBuf::from(SYSTEM_CONFIG_PATH)))
        .collect()
}

/// The platform's data dir (`~/.local/share/resetctl` on Linux).
pub fn default_data_dir() -> Option<PathBuf> {
    project_dirs().map(|d| d.data_dir().to_owned())
}

/// Loads `explicit` (which must exist) or else the first of
/// [`default_config_paths`] that exists.
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let candidates = match explicit {
        Some(path) => return read_config(path.to_owned(), true),
        None => default_config_paths(),
    };
    for path in candidates {
        let config = read_config(path, false)?;
        if config.path.is_some() {
            return Ok(config);
        }
    }
    Ok(Config::default())
}

/// Reads one config file; a missing one that is not `required` is none.
fn read_config(path: PathBuf, required: bool) -> Result<Config, ConfigError> {
    let bytes = match crate::durable::read_file(&path, CONFIG_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) if !required => return Ok(Config::default()),
        Ok(None) => return Err(ConfigError::Missing { path }),
        Err(e) => return Err(ConfigError::Read(e)),
    };
    let text = String::from_utf8(bytes).map_err(|_| ConfigError::Invalid {
        path: path.clone(),
        message: "not UTF-8 text".to_owned(),
    })?;
    let values = parse_config(&path, &text)?;
    Ok(Config {
        path: Some(path),
        values,
    })
}

/// Where an operator's data may be when `data_dir` has nothing published:
/// the system-wide config file when it exists and was not the one read
/// (`config_read`), and the units' data dir when it exists and is not
/// `data_dir`. One sentence naming each, or `None`.
pub fn elsewhere_hint(data_dir: &Path, config_read: Option<&Path>) -> Option<String> {
    let system_config = Path::new(SYSTEM_CONFIG_PATH);
    let system_data = Path::new(SYSTEM_DATA_DIR);
    let mut found = Vec::new();
    if system_config.is_file() && config_read != Some(system_config) {
        found.push(format!(
            "{SYSTEM_CONFIG_PATH} exists but was not read (pass --config {SYSTEM_CONFIG_PATH})"
        ));
    }
    if system_data.is_dir() && data_dir != system_data {
        found.push(format!(
            "the units' data dir {SYSTEM_DATA_DIR} exists (pass --data-dir {SYSTEM_DATA_DIR}, as the resetctl user: sudo -u resetctl resetctl …)"
        ));
    }
    (!found.is_empty()).then(|| found.join("; "))
}

/// The file layer of `text` (a config file's contents), `path` naming it
/// in errors: one line naming the line, the column and the key, never a
/// value (`config::file_error`).
pub fn parse_config(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Invalid {
        path: path.to_owned(),
        message: file_error::describe(&e, text),
    })
}

/// A duration setting outside its range (or not a number at all).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{setting} must be between {min} and {max} seconds, got {}", shown(*.value))]
pub struct DurationOutOfRange {
    /// The setting's name, as the long flag and config key spell it.
    pub setting: String,
    /// The value given.
    pub value: f64,
    /// The smallest accepted value.
    pub min: f64,
    /// The largest accepted value.
    pub max: f64,
}

/// A value as the operator would recognise it (`1e300`, not 301 digits).
fn shown(value: f64) -> String {
    if value.is_finite() && value.abs() < 1e9 {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

/// Seconds as a [`std::time::Duration`] when `min <= seconds <= max`; otherwise an
/// error naming `setting` (NaN, infinities and anything a `Duration`
/// cannot hold are out of range, never a panic).
pub fn seconds_setting(
    setting: &str,
    seconds: f64,
    min: f64,
    max: f64,
) -> Result<std::time::Duration, DurationOutOfRange> {
    if seconds >= min && seconds <= max {
        if let Ok(duration) = std::time::Duration::try_from_secs_f64(seconds) {
            return Ok(duration);
        }
    }
    Err(DurationOutOfRange {
        setting: setting.to_owned(),
        value: seconds,
        min,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_checked_against_their_range() {
        assert_eq!(
            seconds_setting("t", 1.5, 0.0, 10.0),
            Ok(std::time::Duration::from_millis(1500))
        );
        for bad in [1e300, -1.0, f64::NAN, f64::INFINITY, 10.5] {
            assert!(seconds_setting("t", bad, 0.0, 10.0).is_err(), "{bad}");
        }
        assert_eq!(
            seconds_setting("lock-timeout", 1e300, 0.0, 86400.0)
                .unwrap_err()
                .to_string(),
            "lock-timeout must be between 0 and 86400 seconds, got 1e300"
        );
    }
}
