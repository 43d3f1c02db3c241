//! `autocoder fetch-issue REF`: the issue a repair starts from, as the run document's `issue`.

use std::io::Read;
use std::path::PathBuf;

use crate::cli::{FetchIssueArgs, GlobalArgs};
use crate::error::Failure;
use crate::forge;
use crate::forge::fetch::{FetchRequest, Fetched};
use crate::forge::issue_ref::IssueRef;
use crate::output::write_json;
use crate::run_document::RunDocument;

pub(crate) fn run(args: FetchIssueArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let reference = IssueRef::parse(&args.reference)?;
    // With `-` stdin holds the issue; otherwise it may hold the run document so far.
    let mut document = if reference == IssueRef::Stdin {
        RunDocument::default()
    } else {
        RunDocument::from_stdin("fetch-issue")?
    };
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    let Fetched { issue, repo } = match reference {
        IssueRef::Stdin => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| Failure::usage(format!("cannot read stdin: {err}")))?;
            Fetched {
                issue: forge::issue_from_markdown(&text, None)?,
                repo: None,
            }
        }
        reference => forge::fetch::fetch_issue(&FetchRequest {
            reference,
            given: args.reference.clone(),
            api_url: args.api_url.clone(),
            comments: !args.no_comments,
            directory: here.clone().unwrap_or_else(|| PathBuf::from(".")),
        })?,
    };
    if let Some(repo) = &repo {
        document.set_repo(repo);
    }
    if !document.has("workspace") {
        // The top of the clone we are in, as git finds it from a subdirectory.
        let top = here.and_then(|dir| {
            dir.ancestors()
                .find(|dir| dir.join(".git").exists())
                .map(PathBuf::from)
        });
        if let Some(workspace) = top {
            document.set_workspace(&workspace);
        }
    }
    document.set_issue(&issue);
    write_json(std::io::stdout(), document.as_value(), global.pretty)?;
    Ok(0)
}
