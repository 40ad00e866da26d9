//! The file-system steps of a publication: writing a file (creating its folder), the
//! guarded join of a relative path, removing trees and emptied folders, hard-linking a
//! generation, the atomic swap of the output link, and replacing a single file atomically.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{Manifest, WriteError, io_err, is_manifest_path};

/// Writes a new file, creating its folder only when the first attempt finds none: one
/// system call per file in the common case, where a build creates hundreds of thousands.
pub(super) fn write_creating_parents(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    match fs::write(path, bytes) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_err("create", parent))?;
            }
            fs::write(path, bytes).map_err(io_err("write", path))
        }
        other => other.map_err(io_err("write", path)),
    }
}

/// Joins a relative output path to a root, refusing anything that could leave it.
pub(super) fn resolve(root: &Path, rel: &str) -> Result<PathBuf, WriteError> {
    // Paths are made from validated slugs and UUIDs; this is the last line of defence.
    let safe = !rel.is_empty()
        && !rel.starts_with('/')
        && rel.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
        && !rel.contains(['\\', '\0'])
        && !is_manifest_path(rel);
    if !safe {
        return Err(WriteError::UnsafePath(rel.to_owned()));
    }
    Ok(root.join(rel))
}

pub(super) fn remove_tree(path: &Path) -> Result<(), WriteError> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(io_err("remove", path)(err)),
    }
}

pub(super) fn remove_file_and_empty_parents(root: &Path, rel: &str) -> Result<(), WriteError> {
    let path = resolve(root, rel)?;
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(io_err("remove", &path)(err)),
    }
    // An endpoint folder left empty would still be a directory to a static server.
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Fills `dst` with hard links to the files of `src` that `manifest` lists (copies where
/// the file system refuses links): the starting point of an inactive generation.
pub(super) fn link_tree(src: &Path, dst: &Path, manifest: &Manifest) -> Result<(), WriteError> {
    let mut dirs: Vec<&str> = manifest.files.keys().filter_map(|p| p.rsplit_once('/').map(|(d, _)| d)).collect();
    dirs.dedup();
    for dir in dirs {
        let path = resolve(dst, dir)?;
        fs::create_dir_all(&path).map_err(io_err("create", &path))?;
    }
    manifest.files.par_iter().try_for_each(|(rel, _)| {
        let from = resolve(src, rel)?;
        let to = resolve(dst, rel)?;
        fs::hard_link(&from, &to).or_else(|_| fs::copy(&from, &to).map(|_| ())).map_err(io_err("link", &to))
    })
}

/// Points `output` at generation `name` with one atomic rename of a fresh link; a plain
/// directory in the way is swapped out atomically and then removed.
pub(super) fn point_link(output: &Path, gens: &Path, name: &str) -> Result<(), WriteError> {
    let gens_name = gens.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let link_target = PathBuf::from(gens_name).join(name);
    let tmp = gens.with_file_name(format!("{}.link-tmp", gens.file_name().unwrap_or_default().to_string_lossy()));
    let _ = fs::remove_file(&tmp);
    symlink(&link_target, &tmp).map_err(io_err("create the link", &tmp))?;
    let is_plain_dir = fs::symlink_metadata(output).map(|m| m.is_dir()).unwrap_or(false);
    if is_plain_dir {
        exchange(&tmp, output)?;
        // `tmp` is now the old directory.
        remove_tree(&tmp)
    } else {
        fs::rename(&tmp, output).map_err(io_err("publish", output))?;
        if let Some(parent) = output.parent() {
            sync_dir(parent);
        }
        Ok(())
    }
}

#[cfg(unix)]
pub(super) fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
pub(super) fn symlink(_target: &Path, _link: &Path) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "symbolic links are needed to publish"))
}

/// Swaps two paths: atomically with `renameat2(RENAME_EXCHANGE)` where the kernel and file
/// system offer it, else by three renames (one path moved aside, the other into its place, the
/// first back).
pub(super) fn exchange(a: &Path, b: &Path) -> Result<(), WriteError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        if renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok() {
            return Ok(());
        }
    }
    let aside = a.with_extension("previous");
    fs::rename(b, &aside).map_err(io_err("move aside", b))?;
    fs::rename(a, b).map_err(io_err("rename into", b))?;
    fs::rename(&aside, a).map_err(io_err("move back", &aside))
}

/// Flushes a directory's entries, so that a rename survives a power cut (best effort).
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// The environment variable that, set to `1`, skips the flush of a new generation to disk
/// before its switch: for tests on a disk shared with other work, where flushing the whole
/// file system costs seconds. Never for a real output: a power cut could then publish files
/// without their bytes.
pub const NO_SYNC_ENV: &str = "SVCDIR_UNSAFE_NO_SYNC";

/// Flushes everything written into a generation to the disk. On Linux one `syncfs` of its
/// file system (one call, where an `fsync` per file would cost hundreds of thousands);
/// elsewhere an `fsync` of each file and folder.
pub(super) fn sync_generation(dir: &Path) -> Result<(), WriteError> {
    if std::env::var_os(NO_SYNC_ENV).is_some_and(|v| v == "1") {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        let handle = fs::File::open(dir).map_err(io_err("open", dir))?;
        rustix::fs::syncfs(&handle).map_err(|e| io_err("flush to disk", dir)(e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        for entry in walkdir::WalkDir::new(dir) {
            let entry = entry.map_err(|e| io_err("read", dir)(e.into()))?;
            fs::File::open(entry.path()).and_then(|f| f.sync_all()).map_err(io_err("flush to disk", entry.path()))?;
        }
        Ok(())
    }
}

/// Writes a file through a temporary sibling and a rename, so readers never see half of it.
pub(crate) fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    replace_file(path, bytes).map_err(io_err("write", path))
}

/// Replaces the file at `path` with `bytes`: written and synced to a temporary sibling
/// `.NAME.tmp-PID`, then renamed over `path`, so a reader sees the old file or the new one,
/// never half of one, even after a crash. Temporaries of `path` left by killed processes
/// are removed first.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    replace_through_temporary(path, |temp| {
        let mut file = fs::File::create(temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })
}

/// Replaces the file at `path` with a copy of the file at `from`, as [`replace_file`] does
/// (the kernel copies, `copy_file_range`, or shares the blocks where the file system can).
/// Not a hard link: a program that writes into `path` in place must not change `from`.
pub(crate) fn replace_file_with(path: &Path, from: &Path) -> io::Result<()> {
    replace_through_temporary(path, |temp| {
        fs::copy(from, temp)?;
        fs::File::open(temp)?.sync_all()
    })
}

/// Makes `path` anew: `make` fills the temporary sibling `.NAME.tmp-PID`, which is then
/// renamed over `path` (and removed if anything fails).
fn replace_through_temporary(path: &Path, make: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    remove_stale_temporaries(&parent, &name);
    let temp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = make(&temp).and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Removes the temporaries `.{name}.tmp-PID` in `parent` that a process killed while
/// writing left behind (its process is gone); those of running processes stay.
pub(super) fn remove_stale_temporaries(parent: &Path, name: &str) {
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let pid = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid
            && !process_is_running(pid)
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id exists (signal 0 asks without sending anything; a process
/// of another user answers "not permitted", and counts as running).
pub(super) fn process_is_running(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH)),
        None => false,
    }
}
