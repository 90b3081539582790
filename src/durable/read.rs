//! The one way a file is read: opened without blocking, refused unless it
//! is a regular file, and read up to a cap.
//!
//! Every file the program reads goes through [`read_file`]: each data-dir
//! file, the config file, a seed or convert input, and the PEM files of a
//! TLS quota store. A FIFO, a device or a socket put where a file belongs
//! (by accident, a bad restore, or someone who wants a server to hang)
//! must not block a reader (`open` of a FIFO without a writer waits
//! forever; `/dev/zero` never ends), so the file is opened with
//! `O_NONBLOCK` and `O_NOCTTY` and its type is taken from the open
//! descriptor (`fstat`), never from a path checked before the open. A
//! regular file is then read up to its cap plus one byte, so a file
//! larger than its cap is refused without reading it all. Each cap is the
//! constant of the file's owner ([`Cap`]); docs/manual/operations.md's "Files and their
//! limits" lists them.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest number of bytes a file may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    /// The largest size accepted, in bytes.
    pub bytes: u64,
}

impl Cap {
    /// A cap of `bytes`.
    pub const fn bytes(bytes: u64) -> Self {
        Self { bytes }
    }

    /// A cap of `n` MiB.
    pub const fn mib(n: u64) -> Self {
        Self {
            bytes: n * 1024 * 1024,
        }
    }
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path names a FIFO, a device, a socket or a directory.
    #[error("{path} is {kind}, not a regular file; refusing to read it")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is ("a FIFO", "a character device"…).
        kind: &'static str,
    },
    /// The file is larger than its cap.
    #[error("{path} is larger than {cap} bytes, the most this file may hold; refusing to read it")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its cap in bytes.
        cap: u64,
    },
    /// Opening or reading it failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::Io { path, .. } => path,
        }
    }

    /// What is wrong, without the path (for messages that name the file
    /// in their own words).
    pub fn reason(&self) -> String {
        match self {
            ReadError::NotRegular { kind, .. } => format!("it is {kind}, not a regular file"),
            ReadError::TooLarge { cap, .. } => format!("it is larger than {cap} bytes"),
            ReadError::Io { source, .. } => source.to_string(),
        }
    }

    /// Whether the file itself is unfit (not a regular file, too large),
    /// as opposed to an I/O failure reading it: data to repair (exit 65)
    /// rather than a system to look at (exit 74).
    pub fn is_unfit(&self) -> bool {
        !matches!(self, ReadError::Io { .. })
    }

    /// As an I/O error, for callers whose error type carries one.
    pub fn into_io(self) -> io::Error {
        match self {
            ReadError::Io { source, .. } => source,
            unfit => io::Error::new(io::ErrorKind::InvalidData, unfit.to_string()),
        }
    }
}

/// Whether the last part of a path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed: a file an operator names (`--config`, a seed file), which
    /// may well be a link into a configuration repository.
    Follow,
    /// Refused: a file of the data dir, which resetctl only ever writes by
    /// renaming a regular file into place, so a link there was put by
    /// someone else and may lead to a file that must not be printed.
    Refuse,
}

/// The bytes of `path`, or `None` when it does not exist; refused when it
/// is not a regular file or holds more than `cap`.
pub fn read_file(path: &Path, cap: Cap) -> Result<Option<Vec<u8>>, ReadError> {
    read_with(path, cap, Links::Follow)
}

/// [`read_file`] for a file of the data dir: a symbolic link is refused.
pub fn read_data_file(path: &Path, cap: Cap) -> Result<Option<Vec<u8>>, ReadError> {
    read_with(path, cap, Links::Refuse)
}

fn read_with(path: &Path, cap: Cap, links: Links) -> Result<Option<Vec<u8>>, ReadError> {
    let io_err = |source| ReadError::Io {
        path: path.to_owned(),
        source,
    };
    let file = match open_checked(path, OpenOptions::new().read(true), links) {
        Ok(file) => file,
        Err(OpenError::Missing) => return Ok(None),
        Err(OpenError::NotRegular(kind)) => {
            return Err(ReadError::NotRegular {
                path: path.to_owned(),
                kind,
            })
        }
        Err(OpenError::Io(e)) => return Err(io_err(e)),
    };
    let declared = file.metadata().map_err(io_err)?.len();
    if declared > cap.bytes {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            cap: cap.bytes,
        });
    }
    let mut bytes = Vec::with_capacity(declared as usize);
    // The size may grow between fstat and read (a file being appended to):
    // the cap holds for what is read, whatever fstat said.
    file.take(cap.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > cap.bytes {
        return Err(ReadError::TooLarge {
            path: path.to_owned(),
            cap: cap.bytes,
        });
    }
    Ok(Some(bytes))
}

/// [`read_file`] for a file that must exist: a missing one is an I/O error.
pub fn read_existing(path: &Path, cap: Cap) -> Result<Vec<u8>, ReadError> {
    read_file(path, cap)?.ok_or_else(|| OpenError::Missing.at(path))
}

/// Why [`open_regular`] gave no file.
#[derive(Debug)]
pub enum OpenError {
    /// Nothing is there.
    Missing,
    /// Something other than a regular file is there.
    NotRegular(&'static str),
    /// Opening failed otherwise.
    Io(io::Error),
}

/// Opens the data-dir file `path` for reading without ever blocking, and
/// only when the open descriptor is a regular file (never through a link):
/// the check every reader of a data-dir file makes before it touches the
/// bytes it reads in its own way (a line at a time, from an offset).
pub fn open_regular(path: &Path) -> Result<File, OpenError> {
    open_checked(path, OpenOptions::new().read(true), Links::Refuse)
}

/// [`open_regular`] with `options` (to append or write in place): a
/// FIFO opened for writing must not block or swallow the bytes either.
pub fn open_data_file(path: &Path, options: &OpenOptions) -> Result<File, OpenError> {
    open_checked(path, options, Links::Refuse)
}

fn open_checked(path: &Path, options: &OpenOptions, links: Links) -> Result<File, OpenError> {
    let mut options = options.clone();
    let nofollow = match links {
        Links::Follow => 0,
        Links::Refuse => libc::O_NOFOLLOW,
    };
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(OpenError::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) && links == Links::Refuse => {
            return Err(OpenError::NotRegular("a symbolic link"))
        }
        // A directory opened for writing, or a FIFO for writing without a
        // reader (ENXIO): not a file either way.
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
            return Err(OpenError::NotRegular("a directory"))
        }
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(OpenError::NotRegular("a FIFO or socket"))
        }
        Err(e) => return Err(OpenError::Io(e)),
    };
    let kind = file.metadata().map_err(OpenError::Io)?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(OpenError::NotRegular(if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }))
}

impl OpenError {
    /// As a [`ReadError`] about `path` (`Missing` becomes NotFound).
    pub fn at(self, path: &Path) -> ReadError {
        match self {
            OpenError::Missing => ReadError::Io {
                path: path.to_owned(),
                source: io::Error::new(io::ErrorKind::NotFound, "it does not exist"),
            },
            OpenError::NotRegular(kind) => ReadError::NotRegular {
                path: path.to_owned(),
                kind,
            },
            OpenError::Io(source) => ReadError::Io {
                path: path.to_owned(),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_up_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_file(&path, Cap::bytes(5)).unwrap().unwrap(), b"12345");
        assert!(matches!(
            read_file(&path, Cap::bytes(4)),
            Err(ReadError::TooLarge { cap: 4, .. })
        ));
        assert!(read_file(&dir.path().join("missing"), Cap::bytes(4))
            .unwrap()
            .is_none());
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            match read_file(path, Cap::mib(1)) {
                Err(ReadError::NotRegular { kind: got, .. }) => assert_eq!(got, kind),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
        assert!(matches!(
            open_data_file(&fifo, OpenOptions::new().append(true).create(true)),
            Err(OpenError::NotRegular(_))
        ));
    }
}
