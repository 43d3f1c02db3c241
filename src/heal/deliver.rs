//! The end of a repair: the change taken to the user's tree when green (through `tree`, only
//! if the tree did not move meanwhile), else written to a patch file of the user's own.

use std::path::{Path, PathBuf};

use super::tree::{self, Contents, Tree};
use super::Settings;
use crate::error::Failure;
use crate::run_document::{Heal, HealError, HealStatus};

/// The change (`state`, whose diff the report holds) taken to the user's tree when green, else
/// (or when the tree moved meanwhile) written to a patch file.
pub(super) fn deliver(
    request: &Settings,
    tree: &Tree,
    state: &Contents,
    report: &mut Heal,
) -> Result<(), Failure> {
    if report.diff.is_empty() {
        return Ok(());
    }
    let shown = crate::text::sanitize_for_terminal(&report.files_changed.join(", "));
    if report.status == Some(HealStatus::Green) {
        match tree.apply_to(&request.workspace, state)? {
            tree::Applied::Done => {
                report.applied = true;
                crate::log::info("heal", &format!("green: {shown} written to the workspace"));
                if request.patch_out.is_none() {
                    return Ok(());
                }
            }
            tree::Applied::Moved(moved) => crate::log::warn(
                "heal",
                &format!(
                    "{} changed in the workspace while heal ran: nothing was applied",
                    crate::text::sanitize_for_terminal(&moved.join(", "))
                ),
            ),
            tree::Applied::Failed(message) => {
                report.error = Some(HealError {
                    message,
                    hint: Some("make the files writable and apply the patch (git apply)".into()),
                })
            }
        }
    }
    let written = match &request.patch_out {
        Some(path) => {
            write_patch(path, &request.workspace, &report.diff, false).map(|()| path.clone())
        }
        None => write_default_patch(&request.workspace, &report.diff),
    };
    match written {
        Ok(path) => {
            if !report.applied {
                crate::log::info(
                    "heal",
                    &format!("the change is in {} (git apply {0})", path.display()),
                );
            }
            report.patch_file = Some(path.display().to_string());
        }
        Err(err) => crate::log::warn(
            "heal",
            &format!("cannot write the patch: {err}; it is in heal.diff"),
        ),
    }
    Ok(())
}

/// Writes the patch as a new file of the user's own (mode 600) in the workspace's
/// `.git/autocoder`, else in the temporary directory, under a name no one else has made: no
/// link on the way is followed (the tests could have planted one).
fn write_default_patch(workspace: &Path, diff: &str) -> std::io::Result<PathBuf> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let name = format!(
        "heal-{}-{}-{}.patch",
        since.as_secs(),
        std::process::id(),
        since.subsec_nanos()
    );
    let in_temp = || {
        let in_temp = std::env::temp_dir().join(&name);
        write_patch(&in_temp, workspace, diff, true).map(|()| in_temp)
    };
    // A repository's own directory only (never one this would make).
    let git = workspace.join(".git");
    if !git.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
        return in_temp();
    }
    let in_git = git.join("autocoder").join(&name);
    write_patch(&in_git, workspace, diff, true)
        .map(|()| in_git)
        .or_else(|_| in_temp())
}

/// Writes `diff` to `path`, through no link in the workspace; `fresh`: only as a file that did
/// not exist.
fn write_patch(path: &Path, workspace: &Path, diff: &str, fresh: bool) -> std::io::Result<()> {
    use std::io::Write;
    crate::workspace::write::create_output(path, workspace, fresh)?.write_all(diff.as_bytes())
}
