//! What `svcdir publish` says when it is done: the plan of a dry run a line an object, the
//! one JSON object of `--json` (the same keys on success and failure), and the sentence of
//! a terminal.

use serde_json::{Value, json};

use super::PublishSummary;
use crate::api::objects::{POINTER_STAGE, upload_stage};
use crate::write::MANIFEST;

/// A dry run's plan: `upload PATH` then `delete PATH`, one line each, in the order a real
/// run would take.
pub fn plan_lines(summary: &PublishSummary) -> String {
    let plan = &summary.plan;
    // The pointer to the search index goes after the manifest (publish::publish).
    let (pointer, files): (Vec<&str>, Vec<&str>) =
        plan.uploads.iter().map(String::as_str).partition(|rel| upload_stage(rel).0 == POINTER_STAGE);
    let shards = plan.shards.iter().map(String::as_str);
    let uploads = files.into_iter().chain(shards).chain(plan.upload_manifest.then_some(MANIFEST)).chain(pointer);
    let mut lines = String::new();
    for rel in uploads {
        lines.push_str(&format!("upload {rel}\n"));
    }
    for rel in &plan.deletes {
        lines.push_str(&format!("delete {rel}\n"));
    }
    lines
}

/// A warning line for each symbolic link of the tree, which a publish does not follow.
pub fn warnings(summary: &PublishSummary) -> String {
    summary
        .skipped_links
        .iter()
        .map(|rel| format!("warning: {rel} is a symbolic link: not published (only regular files are)\n"))
        .collect()
}

/// Objects uploaded, objects deleted and bytes uploaded: what was done, or for a dry run
/// what would have been.
pub fn moved(summary: &PublishSummary) -> (usize, usize, u64) {
    if summary.dry_run {
        let plan = &summary.plan;
        (plan.upload_count(), plan.deletes.len(), plan.bytes)
    } else {
        (summary.uploaded, summary.deleted, summary.bytes)
    }
}

/// The `--json` object of a publish that ended well.
pub fn json_summary(summary: &PublishSummary) -> Value {
    let (uploaded, deleted, bytes) = moved(summary);
    json!({
        "ok": true,
        "dry_run": summary.dry_run,
        "uploaded": uploaded,
        "deleted": deleted,
        "unchanged": summary.unchanged,
        "bytes": bytes,
        "seconds": summary.seconds,
    })
}

/// The `--json` object of a publish that failed: the same keys, nothing moved, the error.
pub fn json_failure(dry_run: bool, error: &str) -> Value {
    json!({
        "ok": false,
        "dry_run": dry_run,
        "uploaded": 0,
        "deleted": 0,
        "unchanged": 0,
        "bytes": 0,
        "seconds": 0,
        "error": error,
    })
}

/// The one line a terminal gets: what went where, and how long it took.
pub fn sentence(summary: &PublishSummary, public: &std::path::Path, to: &str) -> String {
    let (uploaded, deleted, bytes) = moved(summary);
    let verb = if summary.dry_run { "would publish" } else { "published" };
    format!(
        "{verb} {} to {to}: {uploaded} uploaded ({:.1} MB), {deleted} deleted, {} unchanged in {:.2} s",
        public.display(),
        bytes as f64 / 1e6,
        summary.unchanged,
        summary.seconds
    )
}
