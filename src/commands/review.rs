//! `autocoder review`: a change in, risks with evidence out (`review`), as the run document's
//! `review` or rendered for a pull request, GitHub code scanning or reviewdog.

use std::io::Read;
use std::path::Path;

use crate::cli::{FailOn, GlobalArgs, ReviewArgs, ReviewFormat};
use crate::error::Failure;
use crate::forge::review_post::{post, Target};
use crate::llm::{Model, ModelFlags};
use crate::output::{write_json, write_text};
use crate::review::change::Change;
use crate::review::{self, render, ReviewRequest, Reviewed};
use crate::run_document::{Review, RunDocument, Severity};

pub(crate) fn run(args: ReviewArgs, global: &GlobalArgs) -> Result<i32, Failure> {
    let diff_from_stdin = args.diff.as_deref() == Some(Path::new("-"));
    let mut document = if diff_from_stdin {
        RunDocument::default()
    } else {
        RunDocument::from_stdin("review")?
    };
    let workspace = document.workspace(args.workspace.as_deref())?;
    let workspace = workspace.canonicalize().map_err(|err| {
        Failure::usage(format!("workspace {}: {err}", workspace.display()))
            .with_hint("give the project's directory with --workspace")
    })?;
    let session = match args.llm {
        true => {
            let model = Model::configured(&ModelFlags::from(&args.model), |name| {
                std::env::var(name).ok()
            })?
            .ok_or_else(|| crate::llm::none_configured("--llm"))?;
            Some(review::session(model, &workspace)?)
        }
        false => None,
    };
    let target = Target {
        pr: args.pr,
        repo: args.repo.clone(),
        api_url: args.api_url.clone(),
    };
    // Known before anything is done: a review GitHub would refuse is not sent at all.
    if args.post {
        target.check()?;
    }
    let request = ReviewRequest {
        change: Change::first_of(
            args.diff.as_deref().map(diff_given).transpose()?,
            args.base.clone(),
            document.heal()?.map(|heal| heal.diff),
        ),
        workspace,
        budget: args.budget,
        model: session.as_ref(),
    };
    let Reviewed {
        mut review,
        commentable,
    } = review::run(&request)?;
    let post_failed = match args.post {
        true => post(&target, &document, &mut review, &commentable)?,
        false => None,
    };
    crate::log::info(
        "review",
        &format!("{}: {}", review.verdict.name(), review.summary),
    );
    let fails = args
        .fail_on
        .severity()
        .is_some_and(|threshold| review.risks.iter().any(|r| r.severity >= threshold));
    if !document.has("workspace") || args.workspace.is_some() {
        document.set_workspace(&request.workspace);
    }
    write(args.format, &mut document, &review, global.pretty)?;
    if let Some(failure) = post_failed {
        crate::log::error(
            "review",
            &format!("{:#}", failure.error),
            failure.hint.as_deref(),
        );
        return Ok(3);
    }
    Ok(if fails { 1 } else { 0 })
}

/// Writes `review` as `format` asks: in the run document, or rendered alone.
fn write(
    format: ReviewFormat,
    document: &mut RunDocument,
    review: &Review,
    pretty: bool,
) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    match format {
        ReviewFormat::Json => {
            document.set_review(review);
            write_json(stdout, document.as_value(), pretty)
        }
        ReviewFormat::Markdown => write_text(stdout, &review.markdown, "the review"),
        ReviewFormat::Sarif => write_json(stdout, &render::sarif(review), pretty),
        ReviewFormat::Rdjsonl => write_text(stdout, &render::rdjsonl(review), "the review"),
    }
}

/// The diff `--diff` names, from its file or stdin; its names and content need not be UTF-8
/// (such bytes are shown replaced, and counted).
fn diff_given(path: &Path) -> Result<String, Failure> {
    let bytes = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map(|_| bytes)
            .map_err(|err| {
                Failure::usage(format!("--diff -: {err}")).with_hint("pipe a unified diff in")
            })
    } else {
        std::fs::read(path).map_err(|err| {
            Failure::usage(format!("--diff {}: {err}", path.display()))
                .with_hint("give a file holding a unified diff, or - for stdin")
        })
    }?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl FailOn {
    /// The least severe risk that fails the review; none for `never`.
    fn severity(self) -> Option<Severity> {
        match self {
            FailOn::High => Some(Severity::High),
            FailOn::Medium => Some(Severity::Medium),
            FailOn::Low => Some(Severity::Low),
            FailOn::Never => None,
        }
    }
}
