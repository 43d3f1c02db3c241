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
}
