//! A small tmpfs, mounted for one test and unmounted on drop, to fill a
//! disk for real (ENOSPC at a chosen moment) without touching the machine's.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::World;

/// A small tmpfs, mounted for one test and unmounted on drop.
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    pub fn mount(kib: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "this test mounts a small tmpfs to fill it up: run the tests as root (as `make test` does in CI), \
             or with sudo so that `mount -t tmpfs` works"
        );
        SmallDisk { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills all but `pages` free 4 KiB pages with a filler file; returns it.
    pub fn fill_leaving(&self, pages: u64) -> PathBuf {
        let filler = self.fill();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap();
        let len = file.metadata().unwrap().len();
        file.set_len(len.saturating_sub(pages * 4096)).unwrap();
        filler
    }

    /// Fills every free page with a filler file; returns it.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 4096];
        while file.write_all(&block).is_ok() {}
        let _ = file.flush();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A world whose data dir lives on `disk` (its usual path links there).
pub fn world_on(disk: &SmallDisk) -> World {
    let w = World::new();
    let data = disk.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::os::unix::fs::symlink(&data, w.data_dir()).unwrap();
    w
}
