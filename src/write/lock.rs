//! The exclusive lock of one output (`.NAME.lock` beside it), so that two builds never
//! write the same inactive generation at once; released on drop or when the process dies.

use std::fs;
use std::path::{Path, PathBuf};

use super::{WriteError, io_err};

/// The exclusive lock of one output, on `.NAME.lock` beside it: released on drop, or by the
/// kernel when the process dies.
#[derive(Debug)]
pub(super) struct OutputLock {
    file: fs::File,
    path: PathBuf,
    output: PathBuf,
}

impl OutputLock {
    pub(super) fn take(output: &Path, path: PathBuf) -> Result<OutputLock, WriteError> {
        loop {
            let file = fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(io_err("open", &path))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(WriteError::Busy { output: output.to_owned(), lock: path });
                }
                Err(fs::TryLockError::Error(source)) => return Err(io_err("lock", &path)(source)),
            }
            // A build that ends with nothing published removes the file (see `drop`); if it
            // did so between our open and our lock, we hold a file no one else will find.
            if same_file(&file, &path) {
                return Ok(OutputLock { file, path, output: output.to_owned() });
            }
        }
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // A first build that failed leaves nothing behind, its lock file included; it is
        // removed while still locked, so no other build can have taken it meanwhile.
        if fs::symlink_metadata(&self.output).is_err() {
            let _ = fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

#[cfg(unix)]
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(held), Ok(named)) => (held.dev(), held.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &fs::File, path: &Path) -> bool {
    path.exists()
}
