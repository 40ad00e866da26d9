//! The request path as nginx matches locations against it (behaviour.md, "Routing"):
//! percent-decoded, runs of `/` merged, `.` and `..` resolved, and the paths nginx refuses
//! with 400 before routing.

use percent_encoding::percent_decode_str;

/// A path that nginx answers with 400 before routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadPath {
    /// `%` not followed by two hex digits.
    #[error("bad percent escape")]
    Escape,
    /// `%00`.
    #[error("encoded NUL")]
    Nul,
    /// `..` above the root, or a path not starting with `/`.
    #[error("path outside the root")]
    Outside,
}

/// The path as nginx matches locations against it: percent-decoded, runs of `/` merged,
/// `.` and `..` segments resolved. `Ok(None)` when the decoded bytes are not UTF-8 (such a
/// path matches no endpoint).
pub(crate) fn normalise_path(raw: &str) -> Result<Option<String>, BadPath> {
    if !raw.starts_with('/') {
        return Err(BadPath::Outside);
    }
    let decoded = decode(raw)?;
    let Ok(decoded) = String::from_utf8(decoded) else {
        return Ok(None);
    };
    let mut out: Vec<&str> = Vec::new();
    let mut trailing_slash = false;
    for segment in decoded.split('/').skip(1) {
        trailing_slash = matches!(segment, "" | "." | "..");
        match segment {
            "" | "." => {}
            ".." => {
                out.pop().ok_or(BadPath::Outside)?;
            }
            name => out.push(name),
        }
    }
    let mut path = String::with_capacity(decoded.len());
    for segment in &out {
        path.push('/');
        path.push_str(segment);
    }
    if trailing_slash || out.is_empty() {
        path.push('/');
    }
    Ok(Some(path))
}

/// Percent-decodes `raw` (the `percent-encoding` crate), refusing what nginx refuses: a `%`
/// not followed by two hex digits, and an encoded NUL.
fn decode(raw: &str) -> Result<Vec<u8>, BadPath> {
    let bytes = raw.as_bytes();
    for (at, _) in raw.match_indices('%') {
        match bytes.get(at + 1..at + 3) {
            Some([hi, lo]) if hi.is_ascii_hexdigit() && lo.is_ascii_hexdigit() => {}
            _ => return Err(BadPath::Escape),
        }
    }
    let decoded: Vec<u8> = percent_decode_str(raw).collect();
    if decoded.contains(&0) { Err(BadPath::Nul) } else { Ok(decoded) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_as_nginx_does() {
        let n = |p: &str| normalise_path(p);
        assert_eq!(n("/api//v4/./categories"), Ok(Some("/api/v4/categories".into())));
        assert_eq!(n("/a%2Fb//c/./d/%2e%2E/e%2f..%2Ff"), Ok(Some("/a/b/c/f".into())));
        assert_eq!(n("/a/.."), Ok(Some("/".into())));
        assert_eq!(n("/a/."), Ok(Some("/a/".into())));
        assert_eq!(n("/a/b/../"), Ok(Some("/a/".into())));
        assert_eq!(n("/a/..."), Ok(Some("/a/...".into())));
        assert_eq!(n("/%C3%A9"), Ok(Some("/é".into())));
        assert_eq!(n("/%ff"), Ok(None));
        assert_eq!(n("/a/../../etc/passwd"), Err(BadPath::Outside));
        assert_eq!(n("/.."), Err(BadPath::Outside));
        assert_eq!(n("*"), Err(BadPath::Outside));
        assert_eq!(n("/a%zz"), Err(BadPath::Escape));
        assert_eq!(n("/a%2"), Err(BadPath::Escape));
        assert_eq!(n("/a%00b"), Err(BadPath::Nul));
    }
}
