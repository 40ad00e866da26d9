//! What `svcdir build` and `svcdir validate` say when they are done: the one-line summary
//! of a build, and the one JSON object of `--json` (a summary, or every located error).

use serde_json::{Value, json};

use crate::build::BuildSummary;
use crate::config::BuildConfig;
use crate::input::DataError;

/// The one-line summary of a build.
pub fn describe(cfg: &BuildConfig, summary: &BuildSummary) -> String {
    let output = cfg.output.display();
    if summary.up_to_date {
        return format!(
            "{output} is up to date ({} files): same input, configuration and program as its last build; nothing written in {:.2} s",
            summary.files, summary.seconds
        );
    }
    let p = &summary.publish;
    format!(
        "built {output} from {} services and {} organisations: {} files, {:.1} MB ({} changed, {} unchanged, {} removed; {} written to disk), search index {:.1} MB ({} postcodes) in {:.2} s",
        summary.services,
        summary.organisations,
        summary.files,
        p.bytes as f64 / 1e6,
        p.changed,
        p.unchanged,
        p.removed,
        p.written,
        summary.index_bytes as f64 / 1e6,
        summary.postcodes,
        summary.seconds
    )
}

/// The `--json` summary of a successful build: one object, stable field names.
pub fn json_summary(summary: &BuildSummary) -> Value {
    let p = &summary.publish;
    json!({
        "ok": true,
        "services": summary.services,
        "organisations": summary.organisations,
        "postcodes": summary.postcodes,
        "files": summary.files,
        "bytes": p.bytes,
        "changed": p.changed,
        "unchanged": p.unchanged,
        "removed": p.removed,
        "written": p.written,
        "index_bytes": summary.index_bytes,
        "up_to_date": summary.up_to_date,
        "seconds": summary.seconds,
    })
}

/// The `--json` body of a failed build: every reported error, and how many more were found.
pub fn json_failure(errors: &[Value], more: usize) -> Value {
    json!({ "ok": false, "errors": errors, "more": more })
}

/// One located data error as JSON (`null` where the error has no line, field or value).
pub fn data_error(error: &DataError) -> Value {
    json!({
        "file": error.file,
        "line": error.line,
        "field": error.field,
        "value": error.value,
        "message": error.message,
    })
}

/// An error that is about no file of the dataset (configuration, disk).
pub fn json_error(file: Option<&str>, message: &str) -> Value {
    json!({ "file": file, "line": null, "field": null, "value": null, "message": message })
}
