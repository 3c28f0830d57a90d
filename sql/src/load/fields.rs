//! Splitting LOAD DATA input into records and fields, incrementally: bytes arrive in chunks
//! ([`RecordReader::push`]); complete records come out ([`RecordReader::next_record`]), so a file
//! is never held in memory whole — only the unfinished tail of the last chunk.
//!
//! MySQL's rules (`sql_load.cc`): a record starts after the next LINES STARTING BY prefix (text
//! before it is skipped) and ends at LINES TERMINATED BY; fields are split at FIELDS TERMINATED
//! BY; the escape character makes the next byte literal (`\0 \b \n \r \t \Z` are control
//! characters) and an unenclosed field that is exactly `\N` is NULL; a field that starts with the
//! ENCLOSED BY character runs to the next enclosing character followed by a field or line
//! terminator (a doubled enclosing character is one literal one), and with ENCLOSED BY set, an
//! unenclosed `NULL` is NULL. A trailing field terminator yields a last, empty field (dbgen's
//! `.tbl` lines end with `|`).
//!
//! Invariant: a record is produced only once its line terminator (or the end of input) has been
//! seen, so chunk boundaries never change the result.

use super::parse::{FileFormat, unescape};

/// One field: its bytes, or NULL.
pub type Field = Option<Vec<u8>>;

/// Incremental record splitter.
pub struct RecordReader {
    format: FileFormat,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
}

enum Step {
    /// A complete record and the position after it.
    Record(Vec<Field>, usize),
    /// Nothing more in the input (only skipped text remained).
    Exhausted,
    /// The buffer ends inside a record: more input is needed.
    NeedMore,
}

impl RecordReader {
    /// A reader for `format`.
    #[must_use]
    pub fn new(format: FileFormat) -> Self {
        Self {
            format,
            buf: Vec::new(),
            pos: 0,
            eof: false,
        }
    }

    /// Appends the next chunk of input.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// Marks the end of input: the last record may end without a line terminator.
    pub fn finish(&mut self) {
        self.eof = true;
    }

    /// The next complete record; `None` when more input is needed (or, after
    /// [`RecordReader::finish`], when the input is exhausted).
    pub fn next_record(&mut self) -> Option<Vec<Field>> {
        match self.step() {
            Step::Record(fields, next) => {
                self.pos = next;
                Some(fields)
            }
            Step::Exhausted => {
                self.pos = self.buf.len();
                None
            }
            Step::NeedMore => None,
        }
    }

    fn starts_at(&self, at: usize, pattern: &[u8]) -> bool {
        !pattern.is_empty()
            && self
                .buf
                .get(at..)
                .is_some_and(|rest| rest.starts_with(pattern))
    }

    /// True if the buffer ends inside a possible match of `pattern` at `at` (more input could
    /// complete it).
    fn maybe_partial(&self, at: usize, pattern: &[u8]) -> bool {
        let rest = self.buf.get(at..).unwrap_or_default();
        !self.eof && !pattern.is_empty() && rest.len() < pattern.len() && pattern.starts_with(rest)
    }

    fn step(&self) -> Step {
        let f = &self.format;
        let mut i = self.pos;
        if i >= self.buf.len() {
            return if self.eof {
                Step::Exhausted
            } else {
                Step::NeedMore
            };
        }
        if !f.line_starting.is_empty() {
            let found = self
                .buf
                .get(i..)
                .and_then(|rest| find(rest, &f.line_starting));
            match found {
                Some(off) => i += off + f.line_starting.len(),
                None if self.eof => return Step::Exhausted,
                None => return Step::NeedMore,
            }
        }
        let mut fields = Vec::new();
        loop {
            let (field, next, line_end) = match self.field(i) {
                Some(parsed) => parsed,
                None => return Step::NeedMore,
            };
            fields.push(field);
            i = next;
            if line_end {
                return Step::Record(fields, i);
            }
        }
    }

    /// Parses the field at `i`: `(value, position after its terminator, ended the line)`;
    /// `None` when the buffer ends before the field does (and input is not finished).
    fn field(&self, start: usize) -> Option<(Field, usize, bool)> {
        let f = &self.format;
        let at = |k: usize| self.buf.get(k).copied();
        let mut value = Vec::new();
        let mut i = start;
        let enclosed = f.enclosed_by.filter(|&e| at(start) == Some(e));
        if let Some(e) = enclosed {
            i += 1;
            loop {
                let Some(c) = at(i) else {
                    // Unterminated enclosure: at the end of input the field ends here.
                    return self.eof.then_some((Some(value), i, true));
                };
                if Some(c) == f.escaped_by && f.escaped_by != Some(e) {
                    let Some(next) = at(i + 1) else {
                        return self.eof.then(|| (Some(value), i + 1, true));
                    };
                    value.push(unescape(next));
                    i += 2;
                    continue;
                }
                if c == e {
                    if at(i + 1) == Some(e) {
                        value.push(e);
                        i += 2;
                        continue;
                    }
                    let after = i + 1;
                    if after >= self.buf.len() {
                        if self.eof {
                            return Some((Some(value), after, true));
                        }
                        return None;
                    }
                    if self.starts_at(after, &f.field_terminator) {
                        return Some((Some(value), after + f.field_terminator.len(), false));
                    }
                    if self.starts_at(after, &f.line_terminator) {
                        return Some((Some(value), after + f.line_terminator.len(), true));
                    }
                    if self.maybe_partial(after, &f.field_terminator)
                        || self.maybe_partial(after, &f.line_terminator)
                    {
                        return None;
                    }
                    // An enclosing character not followed by a terminator is literal.
                    value.push(e);
                    i += 1;
                    continue;
                }
                value.push(c);
                i += 1;
            }
        }
        let mut raw_null = false;
        loop {
            if self.starts_at(i, &f.field_terminator) {
                return Some((
                    finish_unenclosed(value, raw_null, f),
                    i + f.field_terminator.len(),
                    false,
                ));
            }
            if self.starts_at(i, &f.line_terminator) {
                return Some((
                    finish_unenclosed(value, raw_null, f),
                    i + f.line_terminator.len(),
                    true,
                ));
            }
            if self.maybe_partial(i, &f.field_terminator)
                || self.maybe_partial(i, &f.line_terminator)
            {
                return None;
            }
            let Some(c) = at(i) else {
                return self
                    .eof
                    .then(|| (finish_unenclosed(value, raw_null, f), i, true));
            };
            if Some(c) == f.escaped_by {
                let Some(next) = at(i + 1) else {
                    if self.eof {
                        value.push(c);
                        return Some((finish_unenclosed(value, false, f), i + 1, true));
                    }
                    return None;
                };
                raw_null = i == start && next == b'N';
                value.push(unescape(next));
                i += 2;
                continue;
            }
            raw_null = false;
            value.push(c);
            i += 1;
        }
    }
}

fn finish_unenclosed(value: Vec<u8>, raw_null: bool, f: &FileFormat) -> Field {
    if raw_null && value == b"N" {
        return None;
    }
    if f.enclosed_by.is_some() && value == b"NULL" {
        return None;
    }
    Some(value)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(format: FileFormat, input: &[u8], chunk: usize) -> Vec<Vec<Field>> {
        let mut r = RecordReader::new(format);
        let mut out = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            r.push(piece);
            while let Some(rec) = r.next_record() {
                out.push(rec);
            }
        }
        r.finish();
        while let Some(rec) = r.next_record() {
            out.push(rec);
        }
        out
    }

    fn s(v: &str) -> Field {
        Some(v.as_bytes().to_vec())
    }

    fn pipes() -> FileFormat {
        FileFormat {
            field_terminator: b"|".to_vec(),
            ..FileFormat::default()
        }
    }

    #[test]
    fn dbgen_lines_have_a_trailing_empty_field() {
        let input = b"0|ALGERIA|0| haggle. carefully|\n1|ARGENTINA|1|al foxes|\n";
        let want = vec![
            vec![s("0"), s("ALGERIA"), s("0"), s(" haggle. carefully"), s("")],
            vec![s("1"), s("ARGENTINA"), s("1"), s("al foxes"), s("")],
        ];
        for chunk in [1, 2, 3, 7, 100] {
            assert_eq!(records(pipes(), input, chunk), want, "chunk {chunk}");
        }
    }

    #[test]
    fn escapes_nulls_and_a_missing_final_newline() {
        let input = b"a\\tb\t\\N\tx\\\ty\n\\\\N\tNULL";
        let want = vec![vec![s("a\tb"), None, s("x\ty")], vec![s("\\N"), s("NULL")]];
        for chunk in [1, 4, 100] {
            assert_eq!(records(FileFormat::default(), input, chunk), want);
        }
    }

    #[test]
    fn enclosed_fields_keep_terminators_and_doubled_quotes() {
        let f = FileFormat {
            field_terminator: b",".to_vec(),
            enclosed_by: Some(b'"'),
            line_terminator: b"\r\n".to_vec(),
            ..FileFormat::default()
        };
        let input = b"\"a,b\",\"say \"\"hi\"\"\",NULL,\"NULL\"\r\n1,\"x\r\ny\",3\r\n";
        let want = vec![
            vec![s("a,b"), s("say \"hi\""), None, s("NULL")],
            vec![s("1"), s("x\r\ny"), s("3")],
        ];
        for chunk in [1, 2, 5, 100] {
            assert_eq!(records(f.clone(), input, chunk), want, "chunk {chunk}");
        }
    }

    #[test]
    fn lines_starting_by_skips_text_before_the_prefix() {
        let f = FileFormat {
            field_terminator: b",".to_vec(),
            line_starting: b"xxx".to_vec(),
            ..FileFormat::default()
        };
        let input = b"xxx1,a\nskipped line\nsome xxx2,b\n";
        let want = vec![vec![s("1"), s("a")], vec![s("2"), s("b")]];
        for chunk in [1, 3, 100] {
            assert_eq!(records(f.clone(), input, chunk), want);
        }
    }
}
