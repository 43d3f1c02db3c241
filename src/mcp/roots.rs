//! A client's `roots/list`: the directories it wants the server to work in. They may only narrow
//! the roots the user allowed (`--root`), never widen or replace them: a client root inside an
//! allowed one is taken as it is, an allowed root inside a client root is kept, anything else is
//! ignored. When nothing is left, the allowed roots stay (a client that sent only some other
//! directory must not lock the user out).

use std::path::{Path, PathBuf};

/// The directories a `roots/list` result names, (canonical, as named); the rest are reported as
/// skipped.
pub(crate) fn client_roots(result: &serde_json::Value) -> (Vec<(PathBuf, PathBuf)>, Vec<String>) {
    let mut roots = Vec::new();
    let mut skipped = Vec::new();
    let listed = result
        .get("roots")
        .and_then(|r| r.as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    for root in listed {
        let uri = root.get("uri").and_then(|u| u.as_str()).unwrap_or_default();
        match file_uri_path(uri).and_then(|path| Some((path.canonicalize().ok()?, path))) {
            Some(spelled) => roots.push(spelled),
            None => skipped.push(uri.to_string()),
        }
    }
    (roots, skipped)
}

/// The allowed roots narrowed by the client's; empty when they have nothing in common.
pub(crate) fn narrow(allowed: &[PathBuf], client: &[PathBuf]) -> Vec<PathBuf> {
    let mut narrowed: Vec<PathBuf> = Vec::new();
    for wanted in client {
        let inside: Vec<&PathBuf> = if allowed.iter().any(|a| wanted.starts_with(a)) {
            vec![wanted]
        } else {
            allowed.iter().filter(|a| a.starts_with(wanted)).collect()
        };
        for root in inside {
            if !narrowed.contains(root) {
                narrowed.push(root.clone());
            }
        }
    }
    narrowed
}

/// The local path of a `file://` URI (host empty or `localhost`), percent-decoded.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    if decoded.contains(&0) {
        return None;
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(decoded)))
}

/// For the log: the roots, comma-separated.
pub(crate) fn shown(roots: &[impl AsRef<Path>]) -> String {
    roots
        .iter()
        .map(|r| r.as_ref().display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris() {
        assert_eq!(
            file_uri_path("file:///home/me/my%20project"),
            Some(PathBuf::from("/home/me/my project"))
        );
        assert_eq!(
            file_uri_path("file://localhost/srv"),
            Some(PathBuf::from("/srv"))
        );
        assert_eq!(file_uri_path("file://otherhost/srv"), None);
        assert_eq!(file_uri_path("https://example.com/"), None);
        assert_eq!(file_uri_path("file:///a%00b"), None);
        assert_eq!(file_uri_path("file:///a%zz"), None);
    }

    #[test]
    fn narrowing_never_widens() {
        let allowed = [PathBuf::from("/work/shop"), PathBuf::from("/work/lib")];
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            narrow(&allowed, &[p("/work/shop/api")]),
            [p("/work/shop/api")]
        );
        assert_eq!(narrow(&allowed, &[p("/work")]), allowed);
        assert_eq!(narrow(&allowed, &[p("/")]), allowed);
        assert_eq!(
            narrow(&allowed, &[p("/work/shop-evil"), p("/etc")]),
            Vec::<PathBuf>::new()
        );
        assert_eq!(
            narrow(&allowed, &[p("/work/lib"), p("/work/lib/src")]),
            [p("/work/lib"), p("/work/lib/src")]
        );
    }
}
