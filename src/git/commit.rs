//! A commit of a change, made from a private index with plumbing, so that the user's checkout,
//! index and working tree are left as they are: a given diff applied to HEAD (heal's), or the
//! tracked changes in the working tree, never files that look like credentials unless named.
//! Its author is the user's own identity, never the repository's config (the sandbox's to write,
//! which could sign the commit as anyone).

use std::path::{Path, PathBuf};

use crate::error::Failure;
use crate::git::cli::{literal, Git};
use crate::git::private_temp_path;
use crate::secrets::is_credential_file;

/// What goes into the commit.
pub(crate) enum Change<'a> {
    /// This diff, applied to HEAD; `whose` names it in an error ("heal's diff").
    Diff { diff: &'a str, whose: &'a str },
    /// The tracked files as they are in the working tree.
    TrackedFiles,
}

/// A commit made, its diff from HEAD, and the changed files it leaves out.
pub(crate) struct Commit {
    pub id: String,
    pub diff: String,
    pub left_out: Vec<LeftOut>,
}

/// A file with a change that is not committed, unless named.
pub(crate) enum LeftOut {
    /// Staged, but git does not track it yet.
    NewInIndex(String),
    /// It looks like it holds credentials.
    Secret(String),
}

/// A change staged as a tree, not yet a commit: what it changes can be looked at first (a
/// change that holds a secret is never committed).
pub(crate) struct Staged {
    head: String,
    tree: String,
    /// Its diff from HEAD.
    pub diff: String,
    pub left_out: Vec<LeftOut>,
}

/// Stages `change` made in the directory `under` (a path from the repository's top; "" for the
/// top), and the files `named` there (tracked or not), on top of HEAD, as a tree of its own (the
/// user's index is not touched); None when the tree would be HEAD's (nothing to commit).
/// Long: git steps on one private index, in order; credential files are unstaged before the tree is written.
pub(crate) fn stage(
    git: &Git,
    change: Change,
    under: &str,
    named: &[String],
) -> Result<Option<Staged>, Failure> {
    let named: Vec<String> = named
        .iter()
        .map(|path| match under {
            "" => path.clone(),
            _ => format!("{under}/{path}"),
        })
        .collect();
    let head = git
        .run(&["rev-parse", "--verify", "HEAD"], &[], None)
        .map_err(|_| {
            Failure::usage("the repository has no commit yet")
                .with_hint("a pull request needs a commit to branch from")
        })?;
    let index = PrivateIndex::new();
    let mut left_out = Vec::new();
    let env = [("GIT_INDEX_FILE", index.path_str())];
    git.run(&["read-tree", "HEAD"], &env, None)?;
    match change {
        Change::Diff { diff, whose } => {
            let directory = format!("--directory={under}");
            let mut apply = vec!["apply", "--cached", "--whitespace=nowarn"];
            if !under.is_empty() {
                apply.push(&directory);
            }
            apply.push("-");
            git.run(&apply, &env, Some(diff)).map_err(|err| {
                Failure::usage(format!("{whose} does not apply to HEAD: {:#}", err.error))
                    .with_hint("check out the commit it was made from, and try again")
            })?;
        }
        Change::TrackedFiles => {
            // What the user staged but git does not track yet is not a tracked change: said,
            // not silently left out.
            let new_in_index = git.run(
                &[
                    "diff",
                    "--cached",
                    "--name-only",
                    "--diff-filter=A",
                    "HEAD",
                    "--",
                    &literal(under),
                ],
                &[],
                None,
            )?;
            for path in new_in_index
                .lines()
                .filter(|p| !named.iter().any(|n| n == p))
            {
                left_out.push(LeftOut::NewInIndex(path.to_string()));
            }
            git.stage_tracked_changes(under, &env)?;
            let staged = git.run(&["diff", "--cached", "--name-only", "HEAD"], &env, None)?;
            for path in staged
                .lines()
                .filter(|p| is_credential_file(p) && !named.iter().any(|n| n == p))
            {
                left_out.push(LeftOut::Secret(path.to_string()));
                git.unstage(path, &env)?;
            }
        }
    }
    for path in &named {
        git.stage_file(path, &env)?;
    }
    let tree = git.run(&["write-tree"], &env, None)?;
    let head_tree = git.run(&["rev-parse", "HEAD^{tree}"], &[], None)?;
    if tree == head_tree {
        return Ok(None);
    }
    let diff = git.run(
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            &head,
            &tree,
        ],
        &[],
        None,
    )?;
    Ok(Some(Staged {
        head,
        tree,
        diff,
        left_out,
    }))
}

/// Commits what was `staged` with `message`, in no branch.
pub(crate) fn commit(git: &Git, staged: Staged, message: &str) -> Result<Commit, Failure> {
    let Staged {
        head,
        tree,
        diff,
        left_out,
    } = staged;
    let identity = identity(&|name| std::env::var(name).ok(), &|key| {
        git.user_config(key)
    })?;
    let identity = [
        ("GIT_AUTHOR_NAME", identity.author.0.as_str()),
        ("GIT_AUTHOR_EMAIL", identity.author.1.as_str()),
        ("GIT_COMMITTER_NAME", identity.committer.0.as_str()),
        ("GIT_COMMITTER_EMAIL", identity.committer.1.as_str()),
    ];
    let id = git.run(
        &["commit-tree", &tree, "-p", &head, "-F", "-"],
        &identity,
        Some(message),
    )?;
    Ok(Commit { id, diff, left_out })
}

/// Who the commit is by: (name, email) of its author and its committer.
#[derive(Debug, PartialEq, Eq)]
struct Identity {
    author: (String, String),
    committer: (String, String),
}

/// `AUTOCODER_AUTHOR` ("Name <email>") for both; else each name and email as git takes it: its
/// own variable (`GIT_AUTHOR_NAME`, `GIT_COMMITTER_EMAIL`, ...), then the user's own git
/// `config` (`author.name`, then `user.name`; likewise for the committer and the emails), then
/// `EMAIL` for an email.
fn identity(
    env: &dyn Fn(&str) -> Option<String>,
    config: &dyn Fn(&str) -> Option<String>,
) -> Result<Identity, Failure> {
    let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if let Some(author) = env("AUTOCODER_AUTHOR") {
        let parsed = author.split_once('<').and_then(|(name, rest)| {
            let email = rest.trim_end().trim_end_matches('>');
            (!name.trim().is_empty() && email.contains('@'))
                .then(|| (name.trim().to_string(), email.to_string()))
        });
        return match parsed {
            Some(person) => Ok(Identity {
                author: person.clone(),
                committer: person,
            }),
            None => Err(Failure::usage(format!(
                "AUTOCODER_AUTHOR={author:?} is not `Name <email>`"
            ))),
        };
    }
    let config = |key: &str| config(key).filter(|value| !value.trim().is_empty());
    let person = |role: &str| {
        let name = env(&format!("GIT_{}_NAME", role.to_uppercase()))
            .or_else(|| config(&format!("{role}.name")))
            .or_else(|| config("user.name"));
        let email = env(&format!("GIT_{}_EMAIL", role.to_uppercase()))
            .or_else(|| config(&format!("{role}.email")))
            .or_else(|| config("user.email"))
            .or_else(|| env("EMAIL"));
        name.zip(email)
    };
    match (person("author"), person("committer")) {
        (Some(author), Some(committer)) => Ok(Identity { author, committer }),
        _ => Err(Failure::usage("who is the commit's author? neither GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL (and GIT_COMMITTER_*) nor user.name and user.email in your git config say (the repository's own config is not used: sandboxed code can write it)")
            .with_hint("set them (git config --global user.name ...; git config --global user.email ...), or GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL, or AUTOCODER_AUTHOR='Name <email>'")),
    }
}

/// An index file of our own, removed when done.
struct PrivateIndex {
    path: PathBuf,
}

impl PrivateIndex {
    fn new() -> PrivateIndex {
        PrivateIndex {
            path: private_temp_path("index"),
        }
    }

    fn path_str(&self) -> &str {
        self.path.to_str().unwrap_or("")
    }
}

impl Drop for PrivateIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(Path::new(&format!("{}.lock", self.path.display())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_taken_as_git_takes_it() {
        let vars = |vars: &'static [(&str, &str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        let person = |name: &str, email: &str| (name.to_string(), email.to_string());
        let both = |author, committer| Some(Identity { author, committer });
        let taken = |env: &dyn Fn(&str) -> Option<String>,
                     config: &dyn Fn(&str) -> Option<String>| {
            identity(env, config).ok()
        };
        let user = vars(&[("user.name", "Dev"), ("user.email", "dev@example.com")]);
        let nobody = vars(&[]);
        let ci = vars(&[
            ("GIT_AUTHOR_NAME", "CI"),
            ("GIT_AUTHOR_EMAIL", "ci@example.com"),
            ("GIT_COMMITTER_NAME", "Bot"),
            ("GIT_COMMITTER_EMAIL", "bot@example.com"),
        ]);
        let ci_identity = both(
            person("CI", "ci@example.com"),
            person("Bot", "bot@example.com"),
        );
        assert_eq!(taken(&ci, &user), ci_identity);
        assert_eq!(taken(&ci, &nobody), ci_identity);
        // Each part on its own, the config filling in the rest.
        assert_eq!(
            taken(&vars(&[("GIT_AUTHOR_NAME", "CI")]), &user),
            both(
                person("CI", "dev@example.com"),
                person("Dev", "dev@example.com")
            )
        );
        let roles = vars(&[
            ("committer.name", "Bot"),
            ("author.email", "a@example.com"),
            ("user.name", "Dev"),
            ("user.email", "dev@example.com"),
        ]);
        assert_eq!(
            taken(&nobody, &roles),
            both(
                person("Dev", "a@example.com"),
                person("Bot", "dev@example.com")
            )
        );
        assert_eq!(
            taken(
                &vars(&[("EMAIL", "mail@example.com")]),
                &vars(&[("user.name", "Dev")])
            ),
            both(
                person("Dev", "mail@example.com"),
                person("Dev", "mail@example.com")
            )
        );
        // The committer is needed too.
        let author_only = vars(&[
            ("GIT_AUTHOR_NAME", "CI"),
            ("GIT_AUTHOR_EMAIL", "ci@example.com"),
        ]);
        assert_eq!(taken(&author_only, &nobody), None);
        assert_eq!(taken(&nobody, &nobody), None);
        // AUTOCODER_AUTHOR comes first, for both.
        let fixer = vars(&[
            ("AUTOCODER_AUTHOR", "Fixer <fix@example.com>"),
            ("GIT_AUTHOR_NAME", "CI"),
        ]);
        assert_eq!(
            taken(&fixer, &user),
            both(
                person("Fixer", "fix@example.com"),
                person("Fixer", "fix@example.com")
            )
        );
        assert_eq!(taken(&vars(&[("AUTOCODER_AUTHOR", "nobody")]), &user), None);
    }
}
