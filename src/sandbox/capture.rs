//! Bounded capture of a stream: keeps the first and the last bytes up to a cap, counts the rest.
//!
//! The pipe must be drained to the end whatever the cap, or the command would block on a full
//! pipe; what does not fit is counted and replaced by a marker, the head and the tail stay (an
//! error message is usually at the end of a log, its cause near the start).

use std::collections::VecDeque;

#[derive(Debug)]
pub(crate) struct OutputCapture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl OutputCapture {
    pub(crate) fn new(max_bytes: u64) -> OutputCapture {
        let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let head_cap = max / 2;
        OutputCapture {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap: max - head_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub(crate) fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// The kept text (lossy UTF-8), with a marker where bytes were dropped.
    pub(crate) fn text(&self) -> String {
        let omitted = self.total - (self.head.len() + self.tail.len()) as u64;
        let mut bytes = self.head.clone();
        if omitted > 0 {
            bytes.extend_from_slice(
                format!("\n[... autocoder: {omitted} bytes of output omitted ...]\n").as_bytes(),
            );
        }
        bytes.extend(&self.tail);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_cap() {
        let mut capture = OutputCapture::new(10);
        capture.push(b"abc");
        capture.push(b"def");
        assert!(!capture.truncated());
        assert_eq!(capture.text(), "abcdef");
    }

    #[test]
    fn keeps_head_and_tail_over_the_cap() {
        let mut capture = OutputCapture::new(6);
        for chunk in [&b"0123"[..], b"4567", b"89"] {
            capture.push(chunk);
        }
        assert!(capture.truncated());
        assert_eq!(
            capture.text(),
            "012\n[... autocoder: 4 bytes of output omitted ...]\n789"
        );
    }

    #[test]
    fn one_huge_chunk() {
        let mut capture = OutputCapture::new(4);
        capture.push(b"abcdefghij");
        assert_eq!(
            capture.text(),
            "ab\n[... autocoder: 6 bytes of output omitted ...]\nij"
        );
    }
}
