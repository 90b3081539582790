//! The states a power loss can leave, rebuilt from what a command asked of
//! the file system, in the manner of ALICE (Pillai et al., "All File
//! Systems Are Not Created Equal", OSDI 2014). See docs/crash-testing.md.
//!
//! The command runs once under `strace`; its calls on the files under one
//! scope (a data dir) become logical operations: create, mkdir, rename,
//! unlink, write, truncate, and the two barriers, a file's fsync and a
//! directory's fsync. A crash after operation *k* keeps every operation
//! before *k* that a later barrier (also before *k*) made durable: a write
//! or truncate once its file is synced, a create, mkdir, rename or unlink
//! once its directory is synced. Of the others, the lost ones are chosen
//! as ALICE does: all kept (what a SIGKILL leaves), none kept, each prefix,
//! all but one, and each prefix ending in a write torn in half. Each
//! distinct state is rebuilt in the scope's place for the test's readers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One logical operation on the files under the scope.
#[derive(Clone, Debug)]
pub enum Op {
    /// A new, empty file (inode `ino`) linked at `path`.
    Create { path: PathBuf, ino: usize },
    /// A new directory.
    Mkdir { path: PathBuf },
    /// `to` now names the inode `ino` that `from` named.
    Rename {
        from: PathBuf,
        to: PathBuf,
        ino: Option<usize>,
    },
    /// `path` (a file or an empty directory) is unlinked.
    Unlink { path: PathBuf },
    /// Bytes written into inode `ino` at `offset`.
    Write {
        ino: usize,
        offset: u64,
        data: Vec<u8>,
    },
    /// Inode `ino` cut or extended to `len`.
    Truncate { ino: usize, len: u64 },
    /// `fsync` or `fdatasync` of inode `ino`.
    SyncFile { ino: usize },
    /// `fsync` of the directory `path`.
    SyncDir { path: PathBuf },
}

impl Op {
    fn is_barrier(&self) -> bool {
        matches!(self, Op::SyncFile { .. } | Op::SyncDir { .. })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Entry {
    Dir,
    File(usize),
}

/// A file-system image: names and the contents of inodes.
#[derive(Clone, Debug, Default)]
struct Image {
    entries: BTreeMap<PathBuf, Entry>,
    contents: HashMap<usize, Vec<u8>>,
}

impl Image {
    fn apply(&mut self, op: &Op, torn: bool) {
        match op {
            Op::Create { path, ino } => {
                self.entries.insert(path.clone(), Entry::File(*ino));
                self.contents.entry(*ino).or_default();
            }
            Op::Mkdir { path } => {
                self.entries.insert(path.clone(), Entry::Dir);
            }
            Op::Rename { from, to, ino } => {
                let moved = self.entries.remove(from);
                let target = ino.map(Entry::File).or(moved);
                if let Some(entry) = target {
                    if let Entry::File(i) = entry {
                        self.contents.entry(i).or_default();
                    }
                    self.entries.insert(to.clone(), entry);
                }
            }
            Op::Unlink { path } => {
                self.entries.remove(path);
            }
            Op::Write { ino, offset, data } => {
                let data = if torn { &data[..data.len() / 2] } else { data };
                let content = self.contents.entry(*ino).or_default();
                let end = *offset as usize + data.len();
                if content.len() < end {
                    content.resize(end, 0);
                }
                content[*offset as usize..end].copy_from_slice(data);
            }
            Op::Truncate { ino, len } => {
                self.contents
                    .entry(*ino)
                    .or_default()
                    .resize(*len as usize, 0);
            }
            Op::SyncFile { .. } | Op::SyncDir { .. } => {}
        }
    }

    /// What can be seen from the scope: reachable names and their bytes.
    fn visible(&self, scope: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        for (path, entry) in &self.entries {
            let reachable = path == scope
                || path
                    .ancestors()
                    .skip(1)
                    .take_while(|a| a.starts_with(scope))
                    .all(|a| self.entries.get(a) == Some(&Entry::Dir));
            if !reachable {
                continue;
            }
            out.insert(
                path.clone(),
                match entry {
                    Entry::Dir => None,
                    Entry::File(ino) => Some(self.contents.get(ino).cloned().unwrap_or_default()),
                },
            );
        }
        out
    }
}

/// A state a power loss can leave: what a reader finds under the scope.
pub type State = BTreeMap<PathBuf, Option<Vec<u8>>>;

/// A command's file-system operations under one scope.
pub struct Recording {
    scope: PathBuf,
    initial: Image,
    /// The operations, in the order the kernel completed them.
    pub ops: Vec<Op>,
}

/// The system calls strace is asked for: every call that changes a file,
/// a name or an offset, and the barriers.
const SYSCALLS: &str = "open,openat,creat,write,pwrite64,writev,pwritev,pwritev2,read,readv,\
lseek,ftruncate,truncate,rename,renameat,renameat2,unlink,unlinkat,rmdir,mkdir,mkdirat,\
fsync,fdatasync,close,dup,dup2,dup3,fcntl,link,linkat,symlink,symlinkat,\
copy_file_range,fallocate,sendfile,splice,sync_file_range,msync";

/// Files under the scope that are never part of a state: the data-dir
/// lock (its bytes are a note for people; the lock is the flock).
fn ignored(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "lock")
}

impl Recording {
    /// Runs `cmd` under strace and records its operations under `scope`
    /// (a directory, which may not exist yet; its parent must). Returns the
    /// recording and the command's exit status, stdout and stderr.
    pub fn run(scope: &Path, cmd: Command, log: &Path) -> (Self, std::process::Output) {
        let strace = super::tool(&["strace"], "-V", "strace");
        let initial = read_image(scope);
        let mut traced = Command::new(strace);
        traced
            .args(["-f", "-qq", "-y", "-xx", "-s", "1000000000", "-e"])
            .arg(format!("trace={SYSCALLS}"))
            .arg("-o")
            .arg(log)
            .arg(cmd.get_program())
            .args(cmd.get_args());
        traced.env_clear();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                traced.env(k, v);
            }
        }
        if let Some(dir) = cmd.get_current_dir() {
            traced.current_dir(dir);
        }
        traced.stdin(std::process::Stdio::null());
        let output = traced.output().expect("run the command under strace");
        let text = std::fs::read_to_string(log).expect("read the strace log");
        let ops = Parser::new(scope, &initial).parse(&text);
        (
            Self {
                scope: scope.to_owned(),
                initial,
                ops,
            },
            output,
        )
    }

    /// What the scope held before the command.
    pub fn before(&self) -> State {
        self.initial.visible(&self.scope)
    }

    /// What the scope holds with every operation kept (as after a clean exit).
    pub fn after(&self) -> State {
        let mut image = self.initial.clone();
        for op in &self.ops {
            image.apply(op, false);
        }
        image.visible(&self.scope)
    }

    /// Every distinct state a power loss after `k` operations can leave.
    pub fn crash_states(&self, k: usize) -> Vec<State> {
        let ops = &self.ops[..k];
        let forced: Vec<bool> = (0..k).map(|i| made_durable(ops, i)).collect();
        let loose: Vec<usize> = (0..k)
            .filter(|&i| !forced[i] && !ops[i].is_barrier())
            .collect();
        // Which loose operations are kept, and which one (if any) is torn.
        let mut choices: Vec<(Vec<usize>, Option<usize>)> = vec![(loose.clone(), None)];
        for m in 0..loose.len() {
            choices.push((loose[..m].to_vec(), None));
            let mut but_one = loose.clone();
            but_one.remove(m);
            choices.push((but_one, None));
            if matches!(ops[loose[m]], Op::Write { .. }) {
                choices.push((loose[..=m].to_vec(), Some(loose[m])));
            }
        }
        let mut seen = HashSet::new();
        let mut states = Vec::new();
        for (kept, torn) in choices {
            let kept: HashSet<usize> = kept.into_iter().collect();
            let mut image = self.initial.clone();
            for (i, op) in ops.iter().enumerate() {
                if forced[i] || kept.contains(&i) {
                    image.apply(op, torn == Some(i));
                }
            }
            let state = image.visible(&self.scope);
            if seen.insert(state.clone()) {
                states.push(state);
            }
        }
        states
    }

    /// Puts `state` in the scope's place (whatever is there goes).
    pub fn materialize(&self, state: &State) {
        match std::fs::remove_dir_all(&self.scope) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
            _ => {}
        }
        for (path, bytes) in state {
            match bytes {
                None => std::fs::create_dir(path).unwrap(),
                Some(bytes) => {
                    use std::io::Write;
                    use std::os::unix::fs::OpenOptionsExt;
                    let mut file = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(0o600)
                        .open(path)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    file.write_all(bytes).unwrap();
                }
            }
        }
    }

    /// A one-line description of `state` against the final one, for messages.
    pub fn describe(&self, state: &State) -> String {
        let after = self.after();
        let mut parts = Vec::new();
        for (path, bytes) in state {
            let name = path
                .strip_prefix(&self.scope)
                .unwrap_or(path)
                .display()
                .to_string();
            match (bytes, after.get(path)) {
                (None, _) => {}
                (Some(b), Some(Some(a))) if a == b => {}
                (Some(b), _) => parts.push(format!("{name} ({} bytes)", b.len())),
            }
        }
        for path in after.keys().filter(|p| !state.contains_key(*p)) {
            let name = path
                .strip_prefix(&self.scope)
                .unwrap_or(path)
                .display()
                .to_string();
            parts.push(format!("no {name}"));
        }
        if parts.is_empty() {
            "as after the command".into()
        } else {
            format!("differs from after the command in: {}", parts.join(", "))
        }
    }
}

/// Whether operation `i` is durable by the end of `ops`: a barrier that
/// covers it comes later.
fn made_durable(ops: &[Op], i: usize) -> bool {
    let later = &ops[i + 1..];
    let dir_synced = |path: &Path| {
        let parent = path.parent().unwrap();
        later
            .iter()
            .any(|op| matches!(op, Op::SyncDir { path } if path == parent))
    };
    match &ops[i] {
        Op::Write { ino, .. } | Op::Truncate { ino, .. } => later
            .iter()
            .any(|op| matches!(op, Op::SyncFile { ino: synced } if synced == ino)),
        Op::Create { path, .. } | Op::Mkdir { path } | Op::Unlink { path } => dir_synced(path),
        Op::Rename { from, to, .. } => dir_synced(from) && dir_synced(to),
        Op::SyncFile { .. } | Op::SyncDir { .. } => true,
    }
}

/// The image of what is under `scope` now (nothing if it does not exist).
fn read_image(scope: &Path) -> Image {
    let mut image = Image::default();
    if !scope.exists() {
        return image;
    }
    let mut next = 0;
    let mut stack = vec![scope.to_owned()];
    while let Some(dir) = stack.pop() {
        image.entries.insert(dir.clone(), Entry::Dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if !ignored(&path) {
                image.entries.insert(path.clone(), Entry::File(next));
                image.contents.insert(next, std::fs::read(&path).unwrap());
                next += 1;
            }
        }
    }
    image
}

/// An open file descriptor of the traced process.
#[derive(Clone, Debug)]
struct OpenFile {
    /// `None` for a directory.
    ino: Option<usize>,
    path: PathBuf,
    offset: u64,
    append: bool,
}

/// Turns strace's lines into operations, keeping its own picture of the
/// files (names, sizes, open descriptors) to know what each call did.
struct Parser<'a> {
    scope: &'a Path,
    entries: HashMap<PathBuf, Entry>,
    sizes: HashMap<usize, u64>,
    next_ino: usize,
    fds: HashMap<i64, OpenFile>,
    ops: Vec<Op>,
}

impl<'a> Parser<'a> {
    fn new(scope: &'a Path, initial: &Image) -> Self {
        Self {
            scope,
            entries: initial.entries.clone().into_iter().collect(),
            sizes: initial
                .contents
                .iter()
                .map(|(i, c)| (*i, c.len() as u64))
                .collect(),
            next_ino: initial.contents.len() + 1_000,
            fds: HashMap::new(),
            ops: Vec::new(),
        }
    }

    fn in_scope(&self, path: &Path) -> bool {
        path.starts_with(self.scope) && !ignored(path)
    }

    fn parse(mut self, text: &str) -> Vec<Op> {
        let mut unfinished: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let Some((pid, rest)) = line.split_once(' ') else {
                continue;
            };
            let rest = rest.trim_start();
            let call = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
                unfinished.insert(pid.to_owned(), head.to_owned());
                continue;
            } else if rest.starts_with("<... ") {
                let tail = rest.split_once("resumed>").map(|(_, t)| t).unwrap_or("");
                let head = unfinished.remove(pid).expect("resumed without a start");
                format!("{head}{tail}")
            } else {
                rest.to_owned()
            };
            if call.starts_with("+++") || call.starts_with("---") {
                continue;
            }
            self.call(&call);
        }
        self.ops
    }

    fn call(&mut self, call: &str) {
        let Some((name, rest)) = call.split_once('(') else {
            return;
        };
        let (args, ret) = split_args(rest);
        let Some(ret) = ret else {
            return;
        };
        let (value, ret_path) = parse_ret(&ret);
        if value < 0 {
            return;
        }
        let fd_of = |arg: &str| -> (i64, Option<PathBuf>) { parse_fd(arg) };
        let at = |dir: &str, path: &str| -> PathBuf {
            let path = path_of(decode(path).expect("a path"));
            if path.is_absolute() {
                path
            } else {
                fd_of(dir).1.expect("a dirfd with its path").join(path)
            }
        };
        match name {
            "open" | "openat" | "creat" => {
                let (path, flags) = match name {
                    "open" => (at("AT_FDCWD", &args[0]), args[1].clone()),
                    "openat" => (at(&args[0], &args[1]), args[2].clone()),
                    _ => (at("AT_FDCWD", &args[0]), "O_CREAT|O_WRONLY|O_TRUNC".into()),
                };
                let path = ret_path.unwrap_or(path);
                self.open(value, path, &flags);
            }
            "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" => {
                let (fd, path) = fd_of(&args[0]);
                let data = if name.contains('v') {
                    decode_iovecs(&args[1])
                } else {
                    decode(&args[1]).expect("written bytes")
                };
                let data = data[..value as usize].to_vec();
                let at_offset = match name {
                    "pwrite64" => Some(args[3].parse::<u64>().unwrap()),
                    "pwritev" | "pwritev2" => Some(args[3].parse::<u64>().unwrap()),
                    _ => None,
                };
                self.write(fd, path, at_offset, data);
            }
            "read" | "readv" => {
                let (fd, _) = fd_of(&args[0]);
                if let Some(open) = self.fds.get_mut(&fd) {
                    open.offset += value as u64;
                }
            }
            "lseek" => {
                let (fd, _) = fd_of(&args[0]);
                if let Some(open) = self.fds.get_mut(&fd) {
                    open.offset = value as u64;
                }
            }
            "ftruncate" => {
                let (fd, _) = fd_of(&args[0]);
                let len = args[1].parse().unwrap();
                if let Some(ino) = self.fds.get(&fd).and_then(|o| o.ino) {
                    self.sizes.insert(ino, len);
                    self.ops.push(Op::Truncate { ino, len });
                }
            }
            "fsync" | "fdatasync" => {
                let (fd, _) = fd_of(&args[0]);
                if let Some(open) = self.fds.get(&fd) {
                    self.ops.push(match open.ino {
                        Some(ino) => Op::SyncFile { ino },
                        None => Op::SyncDir {
                            path: open.path.clone(),
                        },
                    });
                }
            }
            "close" => {
                let (fd, _) = fd_of(&args[0]);
                self.fds.remove(&fd);
            }
            "dup" | "dup2" | "dup3" | "fcntl" => {
                let (fd, _) = fd_of(&args[0]);
                let dups = name != "fcntl" || args[1].starts_with("F_DUPFD");
                if dups {
                    if let Some(open) = self.fds.get(&fd).cloned() {
                        self.fds.insert(value, open);
                    }
                }
            }
            "mkdir" | "mkdirat" => {
                let path = match name {
                    "mkdir" => at("AT_FDCWD", &args[0]),
                    _ => at(&args[0], &args[1]),
                };
                if self.in_scope(&path) {
                    self.entries.insert(path.clone(), Entry::Dir);
                    self.ops.push(Op::Mkdir { path });
                }
            }
            "rename" | "renameat" | "renameat2" => {
                let (from, to) = match name {
                    "rename" => (at("AT_FDCWD", &args[0]), at("AT_FDCWD", &args[1])),
                    _ => (at(&args[0], &args[1]), at(&args[2], &args[3])),
                };
                if self.in_scope(&from) || self.in_scope(&to) {
                    assert!(
                        self.in_scope(&from) && self.in_scope(&to),
                        "a rename across the scope's edge: {from:?} → {to:?}"
                    );
                    let entry = self.entries.remove(&from);
                    let ino = match entry {
                        Some(Entry::File(ino)) => Some(ino),
                        Some(Entry::Dir) => {
                            panic!("renaming a directory is not modelled: {from:?}")
                        }
                        None => None,
                    };
                    if let Some(entry) = entry {
                        self.entries.insert(to.clone(), entry);
                    }
                    self.ops.push(Op::Rename { from, to, ino });
                }
            }
            "unlink" | "unlinkat" | "rmdir" => {
                let path = match name {
                    "unlinkat" => at(&args[0], &args[1]),
                    _ => at("AT_FDCWD", &args[0]),
                };
                if self.in_scope(&path) {
                    self.entries.remove(&path);
                    self.ops.push(Op::Unlink { path });
                }
            }
            "truncate" => {
                let path = at("AT_FDCWD", &args[0]);
                if let Some(Entry::File(ino)) = self.entries.get(&path).cloned() {
                    let len = args[1].parse().unwrap();
                    self.sizes.insert(ino, len);
                    self.ops.push(Op::Truncate { ino, len });
                }
            }
            "link" | "linkat" | "symlink" | "symlinkat" | "copy_file_range" | "fallocate"
            | "sendfile" | "splice" | "sync_file_range" | "msync" => {
                assert!(
                    !args.iter().any(|a| {
                        let (_, p) = parse_fd(a);
                        let p = p.or_else(|| decode(a).ok().map(path_of));
                        p.is_some_and(|p| self.in_scope(&p))
                    }),
                    "{name} on the scope is not modelled: {call}"
                );
            }
            _ => {}
        }
    }

    fn open(&mut self, fd: i64, path: PathBuf, flags: &str) {
        let flag = |f: &str| flags.split('|').any(|x| x == f);
        let tracked = path.starts_with(self.scope) && !ignored(&path);
        if !(tracked || flag("O_DIRECTORY") || self.scope.starts_with(&path)) {
            self.fds.remove(&fd);
            return;
        }
        let existing = self.entries.get(&path).cloned();
        let is_dir = matches!(existing, Some(Entry::Dir))
            || flag("O_DIRECTORY")
            || (!tracked && path.is_dir());
        if is_dir {
            self.fds.insert(
                fd,
                OpenFile {
                    ino: None,
                    path,
                    offset: 0,
                    append: false,
                },
            );
            return;
        }
        if !tracked {
            return;
        }
        let ino = match existing {
            Some(Entry::File(ino)) => {
                if flag("O_TRUNC") && self.sizes.get(&ino).copied().unwrap_or(0) > 0 {
                    self.sizes.insert(ino, 0);
                    self.ops.push(Op::Truncate { ino, len: 0 });
                }
                ino
            }
            Some(Entry::Dir) => unreachable!(),
            None => {
                assert!(
                    flag("O_CREAT"),
                    "opened a file the model does not know: {path:?}"
                );
                let ino = self.next_ino;
                self.next_ino += 1;
                self.entries.insert(path.clone(), Entry::File(ino));
                self.sizes.insert(ino, 0);
                self.ops.push(Op::Create {
                    path: path.clone(),
                    ino,
                });
                ino
            }
        };
        self.fds.insert(
            fd,
            OpenFile {
                ino: Some(ino),
                path,
                offset: 0,
                append: flag("O_APPEND"),
            },
        );
    }

    fn write(&mut self, fd: i64, path: Option<PathBuf>, at: Option<u64>, data: Vec<u8>) {
        let Some(open) = self.fds.get_mut(&fd) else {
            if let Some(path) = path {
                assert!(
                    !self.in_scope(&path),
                    "a write to an untracked descriptor of {path:?}"
                );
            }
            return;
        };
        let Some(ino) = open.ino else {
            return;
        };
        let size = self.sizes.entry(ino).or_insert(0);
        let offset = match at {
            Some(at) => at,
            None if open.append => *size,
            None => open.offset,
        };
        if at.is_none() {
            open.offset = offset + data.len() as u64;
        }
        *size = (*size).max(offset + data.len() as u64);
        self.ops.push(Op::Write { ino, offset, data });
    }
}

/// The arguments of a call (the text after its `(`) and its return value
/// text, split at the top level.
fn split_args(rest: &str) -> (Vec<String>, Option<String>) {
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut in_string = false;
    let mut current = String::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if in_string {
            current.push(c);
            if c == '\\' {
                if let Some((_, n)) = chars.next() {
                    current.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                current.push(c);
            }
            '(' | '[' | '{' | '<' => {
                depth += 1;
                current.push(c);
            }
            ']' | '}' | '>' => {
                depth -= 1;
                current.push(c);
            }
            ')' if depth == 0 => {
                if !current.trim().is_empty() {
                    args.push(current.trim().to_owned());
                }
                let ret = rest[i + 1..]
                    .trim_start()
                    .strip_prefix('=')
                    .map(|r| r.trim().to_owned());
                return (args, ret);
            }
            ')' => {
                depth -= 1;
                current.push(c);
            }
            ',' if depth == 0 => {
                args.push(current.trim().to_owned());
                current.clear();
            }
            _ => current.push(c),
        }
    }
    (args, None)
}

/// `3<\x2f…>` → (3, the path); `AT_FDCWD<\x2f…>` → (-100, the path).
fn parse_fd(arg: &str) -> (i64, Option<PathBuf>) {
    let (number, path) = match arg.split_once('<') {
        Some((n, p)) => (n, p.strip_suffix('>').and_then(|p| decode_bare(p).ok())),
        None => (arg, None),
    };
    let number = if number == "AT_FDCWD" {
        -100
    } else {
        number.parse().unwrap_or(-1)
    };
    (
        number,
        path.map(|p| PathBuf::from(String::from_utf8_lossy(&p).into_owned())),
    )
}

/// `= 3<\x2f…>` or `= 0` or `= -1 ENOENT (…)`.
fn parse_ret(ret: &str) -> (i64, Option<PathBuf>) {
    let first = ret.split(' ').next().unwrap_or("");
    let (n, path) = parse_fd(first);
    if n == -1 && !first.starts_with("-1") {
        // Not a number (`?` of a call cut short): treat as failed.
        return (-1, None);
    }
    (n, path)
}

/// A quoted strace string of `\xHH` escapes → its bytes; `Err` when the
/// argument is not a (whole) string.
fn decode(arg: &str) -> Result<Vec<u8>, ()> {
    let inner = arg.strip_prefix('"').ok_or(())?;
    assert!(
        !inner.ends_with("\"..."),
        "strace cut a string short: raise -s"
    );
    let inner = inner.strip_suffix('"').ok_or(())?;
    decode_bare(inner)
}

fn decode_bare(text: &str) -> Result<Vec<u8>, ()> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 4);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'x') && i + 3 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 2..i + 4]).map_err(|_| ())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| ())?);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn path_of(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

/// `[{iov_base="…", iov_len=N}, …]` → the bytes, in order.
fn decode_iovecs(arg: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for part in arg.split("iov_base=").skip(1) {
        let end = part
            .find("\", iov_len")
            .map(|e| e + 1)
            .unwrap_or(part.len());
        out.extend(decode(&part[..end]).expect("an iovec's bytes"));
    }
    out
}
