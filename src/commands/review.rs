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
use crate::run_document::{RunDocument, Severity};

/// Long: the command's steps in order: the post target checked first, the review written even if posting fails.
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
        true => Some(review::session(configured_model(&args)?, &workspace)?),
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
        change: change(&args, &document, diff_from_stdin)?,
        workspace,
        budget: args.budget,
        model: session.as_ref(),
    };
    let Reviewed {
        mut review,
        commentable,
    } = review::run(&request)?;
    // A review not posted is still written, with why: nothing found is lost.
    let mut post_failed = None;
    if args.post {
        review.posted = Some(match post(&target, &document, &review, &commentable) {
            Ok(posted) => posted,
            Err(failure) if failure.kind == crate::error::Kind::External => {
                let posted = serde_json::json!({"error": format!("{:#}", failure.error)});
                post_failed = Some(failure);
                posted
            }
            Err(failure) => return Err(failure),
        });
    }
    crate::log::info(
        "review",
        &format!("{}: {}", review.verdict.name(), review.summary),
    );
    let worst = review.risks.iter().map(|r| r.severity).max();
    let fails = match (args.fail_on, worst) {
        (FailOn::Never, _) | (_, None) => false,
        (threshold, Some(worst)) => worst >= threshold.severity(),
    };
    match args.format {
        ReviewFormat::Json => {
            if !document.has("workspace") || args.workspace.is_some() {
                document.set_workspace(&request.workspace);
            }
            document.set_review(&review);
            write_json(std::io::stdout(), document.as_value(), global.pretty)?;
        }
        ReviewFormat::Markdown => write_text(std::io::stdout(), &review.markdown, "the review")?,
        ReviewFormat::Sarif => {
            write_json(std::io::stdout(), &render::sarif(&review), global.pretty)?
        }
        ReviewFormat::Rdjsonl => {
            write_text(std::io::stdout(), &render::rdjsonl(&review), "the review")?
        }
    }
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

/// The change to review, from the first that applies: --diff, --base (the working tree against
/// it), the document's heal.diff, the working tree against HEAD.
fn change(
    args: &ReviewArgs,
    document: &RunDocument,
    diff_from_stdin: bool,
) -> Result<Change, Failure> {
    if let Some(path) = &args.diff {
        // Names and content need not be UTF-8: such bytes are shown replaced, and counted.
        let bytes = if diff_from_stdin {
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes).map_err(|err| {
                Failure::usage(format!("--diff -: {err}")).with_hint("pipe a unified diff in")
            })?;
            bytes
        } else {
            std::fs::read(path).map_err(|err| {
                Failure::usage(format!("--diff {}: {err}", path.display()))
                    .with_hint("give a file holding a unified diff, or - for stdin")
            })?
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        return Ok(Change::Diff {
            text,
            from: "--diff".into(),
        });
    }
    if args.base.is_none() {
        if let Some(text) = document
            .heal()?
            .map(|heal| heal.diff)
            .filter(|d| !d.trim().is_empty())
        {
            return Ok(Change::Diff {
                text,
                from: "the document's heal.diff".into(),
            });
        }
    }
    Ok(Change::WorkingTree {
        base: args.base.clone(),
    })
}

impl FailOn {
    fn severity(self) -> Severity {
        match self {
            FailOn::High | FailOn::Never => Severity::High,
            FailOn::Medium => Severity::Medium,
            FailOn::Low => Severity::Low,
        }
    }
}

/// The model `--llm` asks, as `heal` finds it (flags, then the environment).
fn configured_model(args: &ReviewArgs) -> Result<Model, Failure> {
    let flags = ModelFlags {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    Model::configured(&flags, |name| std::env::var(name).ok())?.ok_or_else(|| {
        Failure::usage("--llm needs a model, and none is configured").with_hint(
            "name one: --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder:7b, or \
             AUTOCODER_MODEL / AUTOCODER_BASE_URL; a key alone is not enough",
        )
    })
}
