//! The reporter `run-tests` adds to jest and vitest runs (`reporters/`), and reading its lines
//! back. Both runners write their JSON report only at the end, so a run its timeout stops said
//! nothing of the tests that had ended, nor of the one running; the reporter writes a line on
//! stderr as each test starts and as it ends. Its files are kept under the user's cache
//! directory and mounted read-only; its lines are taken out of the output before anything else
//! reads it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::cache;
use super::frames::project_relative;
use super::jest_json::{self, Assertion};
use super::report::Parsed;
use crate::run_document::Framework;

/// What starts each of the reporter's lines on stderr.
pub(super) const MARK: &str = "##autocoder-test ";

const JEST: &str = include_str!("reporters/jest-events.cjs");
const VITEST: &str = include_str!("reporters/vitest-events.mjs");

/// The reporter for a jest or vitest run: the runner's flags that add it (beside the runner's
/// own), and the directory the sandbox must read it from. `None` when it cannot be kept (said):
/// the run goes on without it.
pub(crate) fn reporter(framework: Framework) -> Option<(Vec<String>, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let (name, source) = match framework {
        Framework::Jest => ("jest-events.cjs", JEST),
        Framework::Vitest => ("vitest-events.mjs", VITEST),
        _ => return None,
    };
    let kept = kept_dir().and_then(|dir| {
        let path = dir.join(name);
        if std::fs::read(&path).ok().as_deref() != Some(source.as_bytes()) {
            // Written whole, then renamed: a run beside this one never reads half of it.
            let partial = dir.join(format!(".{name}.{}", std::process::id()));
            std::fs::write(&partial, source)?;
            // Whatever the umask: the sandbox's user reads it.
            std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o644))?;
            std::fs::rename(&partial, &path)?;
        }
        Ok((dir, path))
    });
    let (dir, path) = match kept {
        Ok(kept) => kept,
        Err(err) => {
            crate::log::warn(
                "run-tests",
                &format!(
                    "cannot keep the reporter that names the test a timeout stops: {err}; \
                     a run stopped by its timeout will count no test"
                ),
            );
            return None;
        }
    };
    let path = path.display();
    let flags = match framework {
        // The flag replaces the reporters jest would use: its own stays first.
        Framework::Jest => vec!["--reporters=default".into(), format!("--reporters={path}")],
        _ => vec![format!("--reporter={path}")],
    };
    Some((flags, dir))
}

/// The directory of this version's reporters in the user's cache directory, made where
/// missing. Its parents stay this user's alone; it is readable by the sandbox's user, which
/// for root is another uid (the sandbox's view makes the parents passable).
fn kept_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let version = crate::text::fnv1a(JEST.bytes().chain(VITEST.bytes()));
    let dir =
        cache::private_dir(&Path::new("autocoder/reporters").join(format!("{version:016x}")))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// The reporter's lines taken out of `stderr`: (the rest, the events).
pub(crate) fn split(stderr: &str) -> (String, Vec<&str>) {
    let mut rest = String::with_capacity(stderr.len());
    let mut events = Vec::new();
    for line in stderr.split_inclusive('\n') {
        match line.strip_prefix(MARK) {
            Some(event) => events.push(event.trim_end()),
            None => rest.push_str(line),
        }
    }
    (rest, events)
}

#[derive(Deserialize)]
struct Event {
    event: String,
    file: String,
    #[serde(flatten)]
    test: Assertion,
}

/// What the events say of a run that wrote no report: the tests that ended, counted as the
/// report counts them, and those that started and did not end. `None` without events.
pub(crate) fn parse(events: &[&str], root: Option<&Path>) -> Option<Parsed> {
    let mut parsed = Parsed::default();
    // Tests that started and have not ended, in the order they started (files run in parallel).
    let mut open: Vec<String> = Vec::new();
    let mut seen = false;
    for line in events {
        // A line the tests wrote that only looks like the reporter's: not an event.
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        seen = true;
        let file = project_relative(&event.file, root).unwrap_or(event.file);
        let id = jest_json::id(&file, &event.test);
        match event.event.as_str() {
            "start" => open.push(id),
            "end" => {
                open.retain(|started| *started != id);
                jest_json::count(&mut parsed, &file, &event.test, root);
            }
            _ => {}
        }
    }
    parsed.running = open;
    seen.then_some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_say_what_ended_and_what_was_running() {
        let stderr = format!(
            "{MARK}{{\"event\":\"start\",\"file\":\"/p/a.test.js\",\"ancestorTitles\":[],\"title\":\"ok\"}}\n\
             PASS a.test.js\n\
             {MARK}{{\"event\":\"end\",\"file\":\"/p/a.test.js\",\"ancestorTitles\":[],\"title\":\"ok\",\"status\":\"passed\"}}\n\
             {MARK}{{\"event\":\"start\",\"file\":\"/p/b.test.js\",\"ancestorTitles\":[\"s\"],\"title\":\"hangs\"}}\n\
             {MARK}{{\"event\":\"start\",\"file\":\"/p/a.test.js\",\"ancestorTitles\":[],\"title\":\"wrong\"}}\n\
             {MARK}not json\n\
             {MARK}{{\"event\":\"end\",\"file\":\"/p/a.test.js\",\"ancestorTitles\":[],\"title\":\"wrong\",\"status\":\"failed\",\
             \"failureMessages\":[\"Error: no\\n    at Object.<anonymous> (/p/a.test.js:3:9)\"]}}\n"
        );
        let (rest, events) = split(&stderr);
        assert_eq!(rest, "PASS a.test.js\n");
        let parsed = parse(&events, Some(Path::new("/p"))).unwrap();
        assert_eq!((parsed.counts.passed, parsed.counts.failed), (1, 1));
        assert_eq!(parsed.running, ["b.test.js > s > hangs"]);
        let failure = &parsed.failures[0];
        assert_eq!(failure.id, "a.test.js > wrong");
        assert_eq!(
            (failure.file.as_deref(), failure.line),
            (Some("a.test.js"), Some(3))
        );
        assert!(parse(&[], None).is_none());
    }
}
