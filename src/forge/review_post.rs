//! A review posted on a pull request (`review --post`): which pull request, in which
//! repository (the flags', else the run document's), and the review GitHub is sent: its risks
//! as comments on the lines of the change.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use crate::error::Failure;
use crate::forge::github::{Api, GitHub};
use crate::forge::issue_ref::valid_name;
use crate::review::render;
use crate::run_document::{Review, RunDocument};

/// Where to post, as the flags say; what they leave out comes from the run document.
pub(crate) struct Target {
    pub pr: Option<u64>,
    /// OWNER/NAME.
    pub repo: Option<String>,
    pub api_url: Option<String>,
}

impl Target {
    /// Refuses to post without a token (GitHub would refuse the review).
    pub(crate) fn check(&self) -> Result<(), Failure> {
        match Api::choose(self.api_url.as_deref(), None)?.token {
            Some(_) => Ok(()),
            None => Err(
                Failure::usage("--post needs a GitHub token, and none is set").with_hint(
                    "set GITHUB_TOKEN (or GH_TOKEN) to a token that may write pull requests",
                ),
            ),
        }
    }
}

/// Posts `review` and records in its `posted` what was posted. When GitHub fails, the failure
/// is recorded there too and returned, for the caller to report once the review is written: a
/// review not posted is still written, with why, so that nothing found is lost.
pub(crate) fn post(
    target: &Target,
    document: &RunDocument,
    review: &mut Review,
    commentable: &BTreeMap<String, BTreeSet<u32>>,
) -> Result<Option<Failure>, Failure> {
    match post_on_github(target, document, review, commentable) {
        Ok(posted) => {
            review.posted = Some(posted);
            Ok(None)
        }
        Err(failure) if failure.kind == crate::error::Kind::External => {
            review.posted = Some(json!({"error": format!("{:#}", failure.error)}));
            Ok(Some(failure))
        }
        Err(failure) => Err(failure),
    }
}

/// Posts `review` on the pull request `--pr` or the document's `pr` names, in the repository
/// `--repo`, the document's `repo` or its pull request's address names; what was posted.
fn post_on_github(
    target: &Target,
    document: &RunDocument,
    review: &Review,
    commentable: &BTreeMap<String, BTreeSet<u32>>,
) -> Result<Value, Failure> {
    let pr = document.pr()?;
    if target.pr.is_none() && pr.as_ref().is_some_and(|pr| pr.dry_run) {
        return Err(Failure::usage(
            "the document's pull request is open-pr's dry run: there is none to post on",
        )
        .with_hint("open it (open-pr without --dry-run), or give --pr N"));
    }
    let number = target
        .pr
        .or_else(|| pr.as_ref().and_then(|pr| pr.number))
        .ok_or_else(|| {
            Failure::usage("--post needs a pull request, and none is named")
                .with_hint("give --pr N, or pipe in the document open-pr wrote")
        })?;
    // https://HOST/OWNER/NAME/pull/N
    let from_url = pr
        .as_ref()
        .and_then(|pr| pr.url.as_deref())
        .and_then(|url| {
            let parts: Vec<&str> = url.split('/').collect();
            (parts.len() >= 7 && parts[5] == "pull").then(|| format!("{}/{}", parts[3], parts[4]))
        });
    let repo = match &target.repo {
        Some(repo) => Some(repo.clone()),
        None => document.repo()?.or(from_url),
    }
    .ok_or_else(|| {
        Failure::usage("cannot tell which GitHub repository the pull request is in")
            .with_hint("give --repo OWNER/NAME")
    })?;
    // GitHub's own characters only: the names go into the request's path.
    let (owner, name) = repo
        .split_once('/')
        .filter(|(owner, name)| valid_name(owner) && valid_name(name))
        .ok_or_else(|| {
            Failure::usage(format!(
                "`{}` is not OWNER/NAME",
                crate::text::sanitize_for_terminal(&repo)
            ))
            .with_hint("give --repo OWNER/NAME")
        })?;
    let github = GitHub::new(&Api::choose(target.api_url.as_deref(), None)?);
    let (mut request, comments) = render::github_review(review, commentable);
    // On the commit open-pr pushed, so that the lines are those of the change reviewed.
    if let Some(commit) = pr
        .as_ref()
        .map(|pr| pr.commit.as_str())
        .filter(|c| !c.is_empty())
    {
        if target.pr.is_none() {
            request["commit_id"] = commit.into();
        }
    }
    let answer = github.create_review(owner, name, number, &request)?;
    crate::log::info(
        "review",
        &format!(
            "posted on {owner}/{name}#{number} with {comments} comment{}",
            if comments == 1 { "" } else { "s" }
        ),
    );
    Ok(
        json!({"pull_request": number, "repo": repo, "id": answer["id"],
                          "url": answer["html_url"], "comments": comments}),
    )
}
