//! The body's markup, case by case: objects as definition lists, arrays as ordered lists,
//! `http(s)` strings as links, every string escaped with the same `v_htmlescape` routine
//! minijinja itself uses. [`write_value`] writes a tree; the walk over JSON text
//! (`super::walk`) writes each value it reads with the same pieces.

/// The markup of an empty object.
pub(super) const EMPTY_OBJECT: &str = r#"<span class="empty">{}</span>"#;
/// The markup of an empty array.
pub(super) const EMPTY_ARRAY: &str = r#"<span class="empty">[] (none)</span>"#;
/// The markup of `null`.
pub(super) const NULL: &str = r#"<span class="null">null</span>"#;

/// The body as nested lists: objects as definition lists, arrays as ordered lists,
/// `http(s)` strings as links; every string escaped.
pub(crate) fn body_html(body: &serde_json::Value) -> String {
    let mut out = String::with_capacity(4096);
    write_value(&mut out, body);
    out
}

/// Writes the markup of one value of a tree.
pub(super) fn write_value(out: &mut String, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) if map.is_empty() => out.push_str(EMPTY_OBJECT),
        Value::Object(map) => {
            out.push_str("<dl>");
            for (key, item) in map {
                out.push_str("\n<dt>");
                push_escaped(out, key);
                out.push_str("</dt><dd>");
                write_value(out, item);
                out.push_str("</dd>");
            }
            out.push_str("\n</dl>");
        }
        Value::Array(items) if items.is_empty() => out.push_str(EMPTY_ARRAY),
        Value::Array(items) => {
            out.push_str("<ol>");
            for item in items {
                out.push_str("\n<li>");
                write_value(out, item);
                out.push_str("</li>");
            }
            out.push_str("\n</ol>");
        }
        Value::Null => out.push_str(NULL),
        Value::String(text) => write_string(out, text),
        Value::Bool(_) | Value::Number(_) => write_code(out, &value.to_string()),
    }
}

/// A string's markup: a link for `http(s)` text (its escaped text written once and copied),
/// an empty string as such, any other in a `text` span.
pub(super) fn write_string(out: &mut String, text: &str) {
    if text.starts_with("https://") || text.starts_with("http://") {
        out.push_str("<a href=\"");
        let start = out.len();
        push_escaped(out, text);
        let end = out.len();
        out.push_str("\">");
        out.extend_from_within(start..end);
        out.push_str("</a>");
    } else if text.is_empty() {
        out.push_str(r#"<span class="empty">""</span>"#);
    } else {
        out.push_str(r#"<span class="text">"#);
        push_escaped(out, text);
        out.push_str("</span>");
    }
}

/// A number's or a boolean's markup, from its JSON text.
pub(super) fn write_code(out: &mut String, text: &str) {
    out.push_str("<code>");
    push_escaped(out, text);
    out.push_str("</code>");
}

/// Appends `text` escaped by `v_htmlescape`; text with none of the characters it escapes
/// (most keys and values) is copied as it is, without the formatter's cost.
pub(super) fn push_escaped(out: &mut String, text: &str) {
    use std::fmt::Write as _;
    // (A fold, not `any`: it runs without a branch per byte.)
    if !text.bytes().fold(false, |any, b| any | matches!(b, b'<' | b'>' | b'&' | b'"' | b'\'' | b'/')) {
        out.push_str(text);
        return;
    }
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", v_htmlescape::escape(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_copied_and_the_rest_escaped_by_v_htmlescape() {
        for text in ["plain", "a/b", "<&>\"'", "é ü", ""] {
            let mut out = String::new();
            push_escaped(&mut out, text);
            assert_eq!(out, v_htmlescape::escape(text).to_string(), "{text:?}");
        }
    }

    #[test]
    fn every_kind_of_value_has_its_markup() {
        let body =
            serde_json::json!({"o": {}, "a": [], "n": null, "s": "", "u": "http://x/<", "t": "a<b", "c": [1, true]});
        assert_eq!(
            body_html(&body),
            "<dl>\n<dt>o</dt><dd><span class=\"empty\">{}</span></dd>\
             \n<dt>a</dt><dd><span class=\"empty\">[] (none)</span></dd>\
             \n<dt>n</dt><dd><span class=\"null\">null</span></dd>\
             \n<dt>s</dt><dd><span class=\"empty\">\"\"</span></dd>\
             \n<dt>u</dt><dd><a href=\"http:&#x2f;&#x2f;x&#x2f;&lt;\">http:&#x2f;&#x2f;x&#x2f;&lt;</a></dd>\
             \n<dt>t</dt><dd><span class=\"text\">a&lt;b</span></dd>\
             \n<dt>c</dt><dd><ol>\n<li><code>1</code></li>\n<li><code>true</code></li>\n</ol></dd>\n</dl>"
        );
    }
}
