//! Whether two builds' outputs hold the same content (issue 27, "Output unchanged in content"):
//! the same files; every uncompressed file byte-identical; every `.gz` and `.br` decompressing
//! to identical bytes; every `.zip` with the same entries in the same order, the same times and
//! identical decompressed bytes. The manifest (`_manifest.json` and its shards under
//! `_manifest/`) is left out: its form may change while the files it describes do not.
//!
//! ```text
//! cargo run --release --example same_output -- BEFORE/public AFTER/public
//! ```
//!
//! Prints what differs (at most 20 paths per kind) and exits 1 when anything does.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use rayon::prelude::*;

/// Every file of a tree but the manifest's, relative and `/`-separated.
fn files(root: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(root)
        .follow_root_links(true)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/"))
        .filter(|rel| rel != "_manifest.json" && !rel.starts_with("_manifest/"))
        .collect()
}

/// What a file holds once decoded: the bytes of a `.gz` or `.br`, the entries of a `.zip`
/// (name, time, bytes, in order), else the bytes themselves.
fn content(rel: &str, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    if rel.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out).map_err(|e| format!("gunzip: {e}"))?;
    } else if rel.ends_with(".br") {
        brotli::Decompressor::new(bytes, 64 * 1024).read_to_end(&mut out).map_err(|e| format!("brotli: {e}"))?;
    } else if rel.ends_with(".zip") {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("zip: {e}"))?;
        for i in 0..archive.len() {
            let mut entry = archive.by_index(i).map_err(|e| format!("zip entry {i}: {e}"))?;
            let time = entry.last_modified().map(|t| format!("{t:?}")).unwrap_or_default();
            out.extend_from_slice(
                format!("\n== {:?} {time} {:o}\n", entry.name(), entry.unix_mode().unwrap_or(0)).as_bytes(),
            );
            entry.read_to_end(&mut out).map_err(|e| format!("zip entry {i}: {e}"))?;
        }
    } else {
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [before, after] = &args[..] else {
        eprintln!("usage: same_output BEFORE_DIR AFTER_DIR");
        return ExitCode::from(2);
    };
    let (before, after) = (Path::new(before), Path::new(after));
    let (a, b) = (files(before), files(after));
    let only_before: Vec<&String> = a.difference(&b).collect();
    let only_after: Vec<&String> = b.difference(&a).collect();
    let common: Vec<&String> = a.intersection(&b).collect();
    let differ: Vec<String> = common
        .par_iter()
        .filter_map(|rel| {
            let read = |root: &Path| std::fs::read(root.join(rel.as_str())).expect("read");
            let (x, y) = (read(before), read(after));
            if x == y {
                return None;
            }
            match (content(rel, &x), content(rel, &y)) {
                (Ok(x), Ok(y)) if x == y => None,
                (Ok(_), Ok(_)) => Some(format!("{rel}: content differs")),
                (Err(e), _) | (_, Err(e)) => Some(format!("{rel}: {e}")),
            }
        })
        .collect();
    let show = |what: &str, list: &[String]| {
        if !list.is_empty() {
            println!("{} {what}:", list.len());
            list.iter().take(20).for_each(|l| println!("  {l}"));
        }
    };
    show("only in the first", &only_before.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    show("only in the second", &only_after.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    show("differing", &differ);
    let compressed = common.iter().filter(|r| r.ends_with(".gz") || r.ends_with(".br") || r.ends_with(".zip")).count();
    if only_before.is_empty() && only_after.is_empty() && differ.is_empty() {
        println!("same content: {} files ({compressed} compressed, compared decoded)", common.len());
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
