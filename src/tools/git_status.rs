//! `git_status`: the workspace's branch and what changed, from `git status --porcelain=v2` run
//! in the sandbox (`tools::git`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{git, Call, Context};
use crate::workspace::jail::ToolError;

pub const DESCRIPTION: &str = "Show the workspace's git status: the branch, the commit HEAD is at, the upstream and how \
far ahead and behind it is, and each changed file with what changed in the index (staged) and in the working tree \
(unstaged): modified, added, deleted, renamed, copied, type_changed, unmerged or untracked. Paths are relative to the \
workspace root.";

/// Files listed at most; the rest are counted.
const MAX_FILES: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Change {
    pub path: String,
    /// What changed in the index, if anything.
    pub staged: Option<&'static str>,
    /// What changed in the working tree, if anything.
    pub unstaged: Option<&'static str>,
    /// The path it was renamed or copied from.
    pub orig_path: Option<String>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Output {
    /// The branch checked out; none when HEAD is detached.
    pub branch: Option<String>,
    /// The commit HEAD is at; none before the first commit.
    pub head: Option<String>,
    pub upstream: Option<String>,
    pub ahead: Option<u64>,
    pub behind: Option<u64>,
    /// Nothing staged, changed or untracked.
    pub clean: bool,
    pub files: Vec<Change>,
    /// Changed files not listed (beyond the first 1000).
    pub omitted: usize,
}

pub fn call(context: &Context, call: &Call, _input: Input) -> Result<Output, ToolError> {
    let listing = git::run(
        context,
        call,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--ignore-submodules=dirty",
            "--untracked-files=all",
        ],
    )?;
    Ok(parse(&listing))
}

fn parse(listing: &str) -> Output {
    let mut output = Output::default();
    let mut records = listing.split('\0');
    while let Some(record) = records.next() {
        if let Some(header) = record.strip_prefix("# ") {
            let (key, value) = header.split_once(' ').unwrap_or((header, ""));
            match key {
                "branch.oid" if value != "(initial)" => output.head = Some(value.into()),
                "branch.head" if value != "(detached)" => output.branch = Some(value.into()),
                "branch.upstream" => output.upstream = Some(value.into()),
                "branch.ab" => {
                    let mut counts = value.split(' ');
                    let mut count = |sign| {
                        counts
                            .next()
                            .and_then(|c: &str| c.strip_prefix(sign))
                            .and_then(|c| c.parse().ok())
                    };
                    output.ahead = count('+');
                    output.behind = count('-');
                }
                _ => {}
            }
            continue;
        }
        let (kind, rest) = record.split_once(' ').unwrap_or((record, ""));
        // Fields before the path: `1` has 7, `2` has 8 (and the original path follows), `u` 9.
        let change = match kind {
            "1" | "2" | "u" => {
                let fields = match kind {
                    "1" => 7,
                    "2" => 8,
                    _ => 9,
                };
                let mut parts = rest.splitn(fields + 1, ' ');
                let codes = parts.next().unwrap_or("..").as_bytes();
                let path = parts.nth(fields - 1).unwrap_or_default();
                let (staged, unstaged) = if kind == "u" {
                    (Some("unmerged"), Some("unmerged"))
                } else {
                    (
                        change_kind(codes.first().copied()),
                        change_kind(codes.get(1).copied()),
                    )
                };
                Change {
                    path: path.to_string(),
                    staged,
                    unstaged,
                    orig_path: (kind == "2")
                        .then(|| records.next().unwrap_or_default().to_string()),
                }
            }
            "?" => Change {
                path: rest.to_string(),
                staged: None,
                unstaged: Some("untracked"),
                orig_path: None,
            },
            _ => continue,
        };
        if output.files.len() < MAX_FILES {
            output.files.push(change);
        } else {
            output.omitted += 1;
        }
    }
    output.clean = output.files.is_empty();
    output
}

fn change_kind(code: Option<u8>) -> Option<&'static str> {
    Some(match code? {
        b'M' => "modified",
        b'T' => "type_changed",
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'U' => "unmerged",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_v2_records() {
        let listing = "# branch.oid 87fe\0# branch.head main\0# branch.upstream origin/main\0\
# branch.ab +2 -1\0\
1 .M N... 100644 100644 100644 d004 d004 f 1\0\
2 R. N... 100644 100644 100644 aaaa aaaa R100 new name\0old\0\
u UU N... 100644 100644 100644 100644 a b c conflict\0\
? untracked\0";
        let output = parse(listing);
        assert_eq!(output.branch.as_deref(), Some("main"));
        assert_eq!(output.head.as_deref(), Some("87fe"));
        assert_eq!((output.ahead, output.behind), (Some(2), Some(1)));
        let shown: Vec<_> = output
            .files
            .iter()
            .map(|c| {
                (
                    c.path.as_str(),
                    c.staged,
                    c.unstaged,
                    c.orig_path.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("f 1", None, Some("modified"), None),
                ("new name", Some("renamed"), None, Some("old")),
                ("conflict", Some("unmerged"), Some("unmerged"), None),
                ("untracked", None, Some("untracked"), None),
            ]
        );
        assert!(!output.clean);
    }
}
