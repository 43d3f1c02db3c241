//! Git repositories for the tests, built with real git (no global config, a fixed identity).

use std::path::Path;
use std::process::Command;

use crate::util::{git, TempDir};

/// Makes `dir` a repository whose one commit on main holds everything in it.
pub(crate) fn commit_everything(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// Leaves `file` with unresolved conflicts: main and a branch `other` change it differently,
/// and other is merged into main.
pub(crate) fn conflict(dir: &TempDir, file: &str) {
    git(dir.path(), &["checkout", "-q", "-b", "other"]);
    dir.write(file, "theirs\n");
    git(dir.path(), &["commit", "-q", "-am", "theirs"]);
    git(dir.path(), &["checkout", "-q", "main"]);
    dir.write(file, "ours\n");
    git(dir.path(), &["commit", "-q", "-am", "ours"]);
    let merge = Command::new("git")
        .args(["merge", "-q", "other"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge should conflict");
}

/// A repository in `dir` with one commit on main: a.txt and old.txt.
pub(crate) fn repository(dir: &TempDir) {
    dir.write("a.txt", "one\ntwo\n");
    dir.write("old.txt", "stays the same\n");
    commit_everything(dir.path());
}
