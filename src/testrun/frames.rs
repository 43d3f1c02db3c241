//! Finding the frame that matters in a traceback: the innermost one inside the project, not in
//! the standard library, site-packages, node_modules or the Rust toolchain.

use std::path::Path;

/// Whether `path` belongs to a dependency or the language runtime rather than the project.
pub(crate) fn is_foreign(path: &str) -> bool {
    const FOREIGN: &[&str] = &[
        "site-packages/",
        "dist-packages/",
        "/lib/python",
        "node_modules/",
        "/rustc/",
        "/.cargo/registry/",
        "/.rustup/",
        "<frozen ",
        "<string>",
    ];
    FOREIGN.iter().any(|marker| path.contains(marker))
}

/// A file as a stack frame names it: a path, or an ES module's `file://` URL, whose spaces and
/// other special characters are percent-encoded.
pub(crate) fn path_of_url(text: &str) -> String {
    let Some(url) = text.strip_prefix("file://") else {
        return text.to_string();
    };
    let mut path = Vec::with_capacity(url.len());
    let mut bytes = url.bytes();
    while let Some(byte) = bytes.next() {
        let hex = |b: Option<u8>| char::from(b?).to_digit(16);
        let escaped = bytes.clone();
        match (byte, hex(bytes.next()), hex(bytes.next())) {
            (b'%', Some(high), Some(low)) => path.push((high * 16 + low) as u8),
            _ => {
                path.push(byte);
                bytes = escaped;
            }
        }
    }
    String::from_utf8_lossy(&path).into_owned()
}

/// `path` relative to the project root when it lies inside it; None when it lies outside.
pub(crate) fn project_relative(path: &str, root: Option<&Path>) -> Option<String> {
    if is_foreign(path) {
        return None;
    }
    if !path.starts_with('/') {
        return Some(path.trim_start_matches("./").to_string());
    }
    let root = root?;
    Path::new(path)
        .strip_prefix(root)
        .ok()
        .map(|rel| rel.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths() {
        let root = Some(Path::new("/work/proj"));
        assert_eq!(
            project_relative("/work/proj/src/a.py", root).as_deref(),
            Some("src/a.py")
        );
        assert_eq!(
            project_relative("tests/test_a.py", root).as_deref(),
            Some("tests/test_a.py")
        );
        assert_eq!(
            project_relative("/usr/lib/python3.11/unittest/case.py", root),
            None
        );
        assert_eq!(
            project_relative("/work/proj/.venv/lib/python3.11/site-packages/x.py", root),
            None
        );
        assert_eq!(project_relative("/elsewhere/x.py", root), None);
    }

    #[test]
    fn an_es_modules_url_is_its_path() {
        assert_eq!(
            path_of_url("file:///p/test/-a%20again%20%232.test.mjs:8:10"),
            "/p/test/-a again #2.test.mjs:8:10"
        );
        assert_eq!(path_of_url("file:///p/100%.js"), "/p/100%.js");
        assert_eq!(path_of_url("/p/a%20b.js"), "/p/a%20b.js");
    }
}
