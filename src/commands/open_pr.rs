//! `autocoder open-pr`: the repair as a branch, a commit and a pull request (`forge::publish`).

use crate::cli::{GlobalArgs, OpenPrArgs};
use crate::error::Failure;
use crate::forge::publish::{self, Options, Outcome};
use crate::forge::pull_request::Sections;
use crate::output::write_json;
use crate::run_document::RunDocument;

pub(crate) fn run(args: OpenPrArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let (mut document, empty_pipe) = RunDocument::from_stdin_or_empty_pipe("open-pr")?;
    if empty_pipe {
        return Err(Failure::usage(
            "stdin is a pipe that gave nothing: the command before open-pr failed; nothing was pushed",
        )
        .with_hint("fix what the previous stage reported, or run open-pr with no stdin (< /dev/null) to commit the workspace's changes"));
    }
    let options = Options {
        workspace: document.workspace(args.workspace.as_deref())?,
        repo: match args.repo {
            Some(repo) => Some(repo),
            None => document.repo()?,
        },
        remote: args.remote,
        base: args.base,
        branch: args.branch,
        title: args.title,
        add: args.add,
        draft: args.draft,
        dry_run: args.dry_run,
        api_url: args.api_url,
    };
    let (issue, tests, review) = (document.issue()?, document.tests()?, document.review()?);
    // A heal the document holds as null says nothing: it is never green.
    let heal = match document.has("heal") {
        true => Some(document.heal()?.unwrap_or_default()),
        false => None,
    };
    let sections = Sections {
        issue: issue.as_ref(),
        tests: tests.as_ref(),
        heal: heal.as_ref(),
        review: review.as_ref(),
    };
    let status = match publish::open_pull_request(&sections, &options)? {
        Outcome::Refused(reason) => {
            crate::log::refusal("open-pr", &reason);
            1
        }
        Outcome::Opened(pr) => {
            document.set_pr(&pr);
            0
        }
    };
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(status)
}
