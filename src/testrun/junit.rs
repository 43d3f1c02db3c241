//! JUnit XML, read as a stream: the format pytest (`--junitxml`), nextest, Jest and most CI
//! tools write. Each `<testcase>` is handed over as it ends, so a report of any size is read in
//! bounded memory; failure texts are kept up to a cap.

use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::report::{Parsed, MAX_DETAILS};
use crate::run_document::TestFailure;

/// What a test case ended as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaseStatus {
    Passed,
    Failed,
    Error,
    Skipped,
}

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    pub classname: String,
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub status: CaseStatus,
    /// The `message` attribute of `<failure>`/`<error>`.
    pub message: String,
    /// The `type` attribute of `<failure>`/`<error>`.
    pub kind: Option<String>,
    /// The text inside `<failure>`/`<error>` (capped).
    pub text: String,
}

/// Reads every test case, calling `each` as each one ends.
pub(crate) fn read_cases<R: BufRead>(input: R, mut each: impl FnMut(Case)) -> Result<(), String> {
    let mut reader = Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut case: Option<Case> = None;
    // Inside <failure> or <error>: text goes to the case.
    let mut in_problem = false;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|err| {
            format!(
                "not valid JUnit XML at byte {}: {err}",
                reader.buffer_position()
            )
        })?;
        match event {
            Event::Start(start) if start.local_name().as_ref() == b"testcase" => {
                case = Some(new_case(&start))
            }
            Event::Empty(start) if start.local_name().as_ref() == b"testcase" => {
                each(new_case(&start))
            }
            Event::Start(start) => {
                if let Some(current) = case.as_mut() {
                    in_problem = mark_status(current, &start);
                }
            }
            Event::Empty(start) => {
                if let Some(current) = case.as_mut() {
                    mark_status(current, &start);
                }
            }
            Event::Text(text) if in_problem => {
                if let Some(current) = case.as_mut() {
                    push_capped(&mut current.text, &text.decode().unwrap_or_default());
                }
            }
            Event::CData(data) if in_problem => {
                if let Some(current) = case.as_mut() {
                    push_capped(&mut current.text, &String::from_utf8_lossy(&data));
                }
            }
            Event::GeneralRef(reference) if in_problem => {
                if let Some(current) = case.as_mut() {
                    let ch = match reference.resolve_char_ref() {
                        Ok(Some(ch)) => Some(ch),
                        _ => match &*reference as &[u8] {
                            b"lt" => Some('<'),
                            b"gt" => Some('>'),
                            b"amp" => Some('&'),
                            b"apos" => Some('\''),
                            b"quot" => Some('"'),
                            _ => None,
                        },
                    };
                    if let Some(ch) = ch {
                        push_capped(&mut current.text, ch.encode_utf8(&mut [0; 4]));
                    }
                }
            }
            Event::End(end) => match end.local_name().as_ref() {
                b"failure" | b"error" => in_problem = false,
                b"testcase" => {
                    if let Some(done) = case.take() {
                        each(done);
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

fn new_case(start: &BytesStart) -> Case {
    Case {
        classname: attribute(start, b"classname").unwrap_or_default(),
        name: attribute(start, b"name").unwrap_or_default(),
        file: attribute(start, b"file"),
        line: attribute(start, b"line").and_then(|l| l.parse().ok()),
        status: CaseStatus::Passed,
        message: String::new(),
        kind: None,
        text: String::new(),
    }
}

/// Records a `<failure>`, `<error>` or `<skipped>` child; true when its text belongs to the case.
fn mark_status(case: &mut Case, child: &BytesStart) -> bool {
    let status = match child.local_name().as_ref() {
        b"failure" => CaseStatus::Failed,
        b"error" => CaseStatus::Error,
        b"skipped" => CaseStatus::Skipped,
        _ => return false,
    };
    // A failure outranks a skip; the first failure or error wins.
    if matches!(case.status, CaseStatus::Passed | CaseStatus::Skipped) {
        case.status = status;
        case.message = attribute(child, b"message").unwrap_or_default();
        case.kind = attribute(child, b"type");
    }
    status != CaseStatus::Skipped
}

fn attribute(start: &BytesStart, name: &[u8]) -> Option<String> {
    let attr = start.try_get_attribute(name).ok().flatten()?;
    Some(
        attr.unescape_value()
            .map(|v| v.into_owned())
            .unwrap_or_else(|_| String::from_utf8_lossy(&attr.value).into_owned()),
    )
}

fn push_capped(text: &mut String, more: &str) {
    // Twice the final cap, so the cut can still happen at a line boundary.
    let room = (MAX_DETAILS * 2).saturating_sub(text.len());
    text.push_str(crate::text::cut(more, room));
}

/// Reads a JUnit report on its own (`--framework junit`, or any report without a runner that
/// wrote it): ids are `classname.name`, the usual form in JUnit tools.
pub(crate) fn parse<R: BufRead>(input: R) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    read_cases(input, |case| {
        let id = if case.classname.is_empty() {
            case.name.clone()
        } else {
            format!("{}.{}", case.classname, case.name)
        };
        count_case(&mut parsed, &case, || TestFailure {
            id,
            file: case.file.clone(),
            line: case.line,
            kind: case.kind.clone(),
            message: if case.message.is_empty() {
                case.text.clone()
            } else {
                case.message.clone()
            },
            details: case.text.clone(),
        })
    })?;
    Ok(parsed)
}

/// Counts a case and records its failure (made by `failure`) when it failed or erred.
pub(crate) fn count_case(parsed: &mut Parsed, case: &Case, failure: impl FnOnce() -> TestFailure) {
    match case.status {
        CaseStatus::Passed => parsed.counts.passed += 1,
        // pytest's report marks an expected failure as a skip of its own type.
        CaseStatus::Skipped if case.kind.as_deref() == Some("pytest.xfail") => {
            parsed.counts.xfailed += 1
        }
        CaseStatus::Skipped => parsed.counts.skipped += 1,
        CaseStatus::Failed | CaseStatus::Error => {
            if case.status == CaseStatus::Failed {
                parsed.counts.failed += 1;
            } else {
                parsed.counts.errors += 1;
            }
            parsed.push_failure(failure());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"<?xml version="1.0"?>
<testsuites><testsuite name="s" tests="4">
  <testcase classname="pkg.Calc" name="adds" time="0.1"/>
  <testcase classname="pkg.Calc" name="divides" file="src/calc.py" line="7">
    <failure message="expected 2 &lt;got 3&gt;" type="AssertionError">Traceback &amp; more
  line two</failure>
  </testcase>
  <testcase classname="pkg.Calc" name="loads"><error message="boom" type="IOError"><![CDATA[raw <text>]]></error></testcase>
  <testcase classname="pkg.Calc" name="later"><skipped message="todo"/></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn reads_cases_statuses_and_texts() {
        let parsed = parse(REPORT.as_bytes()).unwrap();
        assert_eq!(
            parsed.counts,
            crate::run_document::Counts {
                passed: 1,
                failed: 1,
                errors: 1,
                skipped: 1,
                ..Default::default()
            }
        );
        let failure = &parsed.failures[0];
        assert_eq!(failure.id, "pkg.Calc.divides");
        assert_eq!(
            (failure.file.as_deref(), failure.line),
            (Some("src/calc.py"), Some(7))
        );
        assert_eq!(failure.kind.as_deref(), Some("AssertionError"));
        assert_eq!(failure.message, "expected 2 <got 3>");
        assert_eq!(failure.details, "Traceback & more\n  line two");
        assert_eq!(parsed.failures[1].details, "raw <text>");
    }

    #[test]
    fn broken_xml_is_an_error() {
        assert!(parse("<testsuite><testcase name='x'></testsuite>".as_bytes()).is_err());
    }
}
