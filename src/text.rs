//! Text that came from outside, made to fit: cut at a character boundary, kept within a budget of
//! bytes as JSON counts them (what a tool's result or a pull request's body may hold), and made
//! safe to echo to a terminal. Shared by every part that shows what tests, issues and models
//! wrote.

/// About how many bytes of JSON a tool's structured result may hold (the tools' own, and the git
/// reader's answers for them). Some clients hand the model the structured result rather than
/// the text (Codex prefers it), so results bound themselves: lists stop and say how many more
/// there were, long texts are cut with a note.
pub(crate) const RESULT_BUDGET: usize = 32 << 10;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The last `max` bytes of `text`, starting at a line boundary when there is one.
pub(crate) fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let rest = &text[start..];
    rest.find('\n')
        .map_or(rest, |nl| &rest[nl + 1..])
        .to_string()
}

/// The first line of `text`, trimmed and cut to `max` bytes at a character boundary.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    cut(line, max).to_string()
}

/// Escapes control characters (terminal escape sequences above all) in text that came from
/// outside: command output, issue bodies, model replies. Newlines and tabs stay.
pub(crate) fn sanitize_for_terminal(text: &str) -> String {
    let mut clean = String::with_capacity(text.len());
    for ch in text.chars() {
        if (ch.is_control() && ch != '\n' && ch != '\t') || is_bidi_control(ch) {
            clean.extend(ch.escape_default());
        } else {
            clean.push(ch);
        }
    }
    clean
}

/// FNV-1a, 64 bits: a short hash that stays the same across machines and builds (a cache
/// directory's name, a prompt's identity in the events, a SARIF fingerprint).
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Text from outside (a file's name, a message naming one) made inert in Markdown, on one line:
/// control characters and line breaks escaped, and every character Markdown or GitHub gives a
/// meaning to (emphasis, links, tables, code, HTML, mentions, headings) backslash-escaped.
pub(crate) fn markdown_inert(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '@' | '#' | '!' | '~' | '('
            | ')' => {
                out.push('\\');
                out.push(ch);
            }
            ch if ch.is_control() || is_bidi_control(ch) => out.extend(ch.escape_default()),
            ch => out.push(ch),
        }
    }
    out
}

/// The characters that reorder the text around them (Unicode's bidirectional controls): a
/// name or message holding them can show a reader other text than it holds ("Trojan Source").
fn is_bidi_control(ch: char) -> bool {
    matches!(
        ch,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// How many bytes `c` takes inside a JSON string: escapes count, and a control character's
/// escape (`\u0001`) is six bytes for one.
fn json_char_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// How many bytes `text` takes inside a JSON string.
pub(crate) fn json_len(text: &str) -> usize {
    text.chars().map(json_char_len).sum()
}

/// The longest start of `text` that takes at most `budget` bytes inside a JSON string.
pub(crate) fn json_prefix(text: &str, budget: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += json_char_len(c);
        if used > budget {
            return &text[..at];
        }
    }
    text
}

/// `text` kept within `budget` bytes of JSON: whole, or its head and tail with a note of what
/// was cut between them (a command's output: how it started and how it ended), counting
/// `cut_before` bytes an earlier cut left out there.
pub(crate) fn json_head_and_tail(text: String, budget: usize, cut_before: u64) -> String {
    if json_len(&text) <= budget {
        return text;
    }
    let head = json_prefix(&text, budget / 2);
    let mut used = 0;
    let tail_start = text
        .char_indices()
        .rev()
        .find(|&(_, c)| {
            used += json_char_len(c);
            used > budget / 2
        })
        .map_or(0, |(at, c)| at + c.len_utf8());
    let tail = &text[tail_start.max(head.len())..];
    let cut = (text.len() - head.len() - tail.len()) as u64 + cut_before;
    format!("{head}\n[... {cut} bytes cut ...]\n{tail}")
}

/// What is left of a budget of JSON bytes while a list is filled.
#[derive(Clone)]
pub(crate) struct Budget {
    left: usize,
}

impl Budget {
    pub(crate) fn new(bytes: usize) -> Budget {
        Budget { left: bytes }
    }

    /// Takes room for `item`; false when it does not fit (and then no later item does either).
    pub(crate) fn take<T: serde::Serialize>(&mut self, item: &T) -> bool {
        let size = serde_json::to_string(item).map_or(usize::MAX, |json| json.len() + 1);
        if size > self.left {
            self.left = 0;
            return false;
        }
        self.left -= size;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_are_shown_not_obeyed() {
        let name = "access\u{202e}gnp.exe";
        assert_eq!(sanitize_for_terminal(name), "access\\u{202e}gnp.exe");
        assert_eq!(markdown_inert(name), "access\\u{202e}gnp.exe");
        assert_eq!(sanitize_for_terminal("plain\ttext"), "plain\ttext");
    }

    #[test]
    fn cuts_at_character_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("short", 10), "short");
        assert_eq!(one_line("  first\nsecond", 3), "fir");
        assert_eq!(tail("a\nb\nc\n", 3), "c\n");
        assert_eq!(tail("short", 10), "short");
    }

    #[test]
    fn escapes_terminal_sequences_but_keeps_lines() {
        assert_eq!(
            sanitize_for_terminal("a\x1b[2Jb\r\nc\td"),
            "a\\u{1b}[2Jb\\r\nc\td"
        );
    }

    #[test]
    fn json_lengths_count_escapes() {
        let text = "a\"\\\n\u{1}é";
        assert_eq!(
            json_len(text),
            serde_json::to_string(text).unwrap().len() - 2
        );
        assert_eq!(json_prefix("ab\u{1}c", 3), "ab");
        assert_eq!(json_prefix("ab\u{1}c", 8), "ab\u{1}");
        let kept = json_head_and_tail("\u{1}".repeat(10_000), 600, 0);
        assert!(json_len(&kept) <= 600 + 40, "{}", json_len(&kept));
        assert!(kept.contains("bytes cut"));
        assert_eq!(json_head_and_tail("short".into(), 600, 7), "short");
    }

    #[test]
    fn a_budget_refuses_what_does_not_fit_and_everything_after() {
        let mut budget = Budget::new(10);
        assert!(budget.take(&"abc")); // 5 bytes of JSON, and a separator
        assert!(!budget.take(&"abcdef"));
        assert!(!budget.take(&1));
    }
}
