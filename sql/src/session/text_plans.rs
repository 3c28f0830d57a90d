//! Plans for text-protocol `INSERT` / `REPLACE … VALUES` statements, kept per session by shape.
//!
//! A client that does not prepare (sysbench's `oltp_insert`, most ORMs' INSERTs) sends the same
//! statement with different values each time. Its *shape* — the text with each value literal
//! replaced by `?` — is prepared once and kept in a small per-session map, and each statement of
//! that shape runs the prepared plan with its literals bound as parameters. The parameters are
//! the datums the binder makes of those literals (`bind::literal`: an integer literal is
//! `Datum::Int`, a string literal `Datum::Bytes`), and a bound parameter evaluates to its datum
//! where a literal evaluates to its constant, so the statement does what its text does.
//!
//! Invariants:
//! - Only statements led by `INSERT` or `REPLACE` that contain `VALUES`/`VALUE` and no `SELECT`
//!   are shaped, and only if every literal in them is a lone value: an unsigned decimal integer
//!   that fits `i64`, or a single-quoted string without backslashes, standing between `(`/`,`
//!   and `,`/`)`. Anything else (comments, double quotes, `?`, backslashes, other literal forms
//!   such as `-1`, `1.5`, `X'..'`, `_utf8'..'`, `DATE '..'`, adjacent strings) is not shaped
//!   and runs the ordinary text path.
//! - A shape whose prepare fails (unknown table, wrong value count, …) is not kept; the
//!   statement then runs as text, so its error is the text path's.
//! - A kept plan is used only under the database and execution mode it was prepared with, and
//!   is re-bound when DDL changed the catalog (as every prepared plan is).

use std::collections::HashMap;
use std::sync::Arc;

use crate::PreparedPlan;
use crate::types::Datum;

/// Most shapes a session keeps; when full, the map is emptied and refilled.
const MAX_SHAPES: usize = 32;

/// A statement split into its shape and the literals taken out of it.
#[derive(Debug, PartialEq)]
pub(super) struct Shaped {
    /// The statement with every literal replaced by `?`.
    pub shape: String,
    /// The literals, in order.
    pub params: Vec<Datum>,
}

/// The session's prepared shapes.
#[derive(Default)]
pub(super) struct TextPlans {
    plans: HashMap<String, Arc<PreparedPlan>>,
}

impl TextPlans {
    /// The plan kept for `shape`, if any.
    pub fn get(&self, shape: &str) -> Option<Arc<PreparedPlan>> {
        self.plans.get(shape).cloned()
    }

    /// Keeps `plan` for `shape`.
    pub fn insert(&mut self, shape: String, plan: Arc<PreparedPlan>) {
        if self.plans.len() >= MAX_SHAPES && !self.plans.contains_key(&shape) {
            self.plans.clear();
        }
        self.plans.insert(shape, plan);
    }

    /// Forgets every shape.
    pub fn clear(&mut self) {
        self.plans.clear();
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// True if the first byte at or after `i` that is not whitespace is `,` or `)`.
fn separator_follows(bytes: &[u8], i: usize) -> bool {
    bytes
        .iter()
        .skip(i)
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b',' | b')'))
}

/// The shape and literals of `statement`, or `None` if it is not a statement this module
/// shapes (see the module docs).
pub(super) fn shape(statement: &str) -> Option<Shaped> {
    let bytes = statement.as_bytes();
    let lead_start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = bytes.get(lead_start..)?;
    let lead_len = rest.iter().take_while(|b| is_word_byte(**b)).count();
    let lead = rest.get(..lead_len)?;
    if !lead.eq_ignore_ascii_case(b"INSERT") && !lead.eq_ignore_ascii_case(b"REPLACE") {
        return None;
    }
    let mut shape = String::with_capacity(statement.len());
    let mut params = Vec::new();
    let mut saw_values = false;
    // The last byte of the shape that is not whitespace.
    let mut last = 0u8;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\'' => {
                if !matches!(last, b'(' | b',') {
                    return None;
                }
                let mut text = Vec::new();
                let mut j = i + 1;
                loop {
                    match *bytes.get(j)? {
                        b'\\' => return None,
                        b'\'' if bytes.get(j + 1) == Some(&b'\'') => {
                            text.push(b'\'');
                            j += 2;
                        }
                        b'\'' => break,
                        c => {
                            text.push(c);
                            j += 1;
                        }
                    }
                }
                i = j + 1;
                if !separator_follows(bytes, i) {
                    return None;
                }
                params.push(Datum::Bytes(text));
                shape.push('?');
                last = b'?';
            }
            b'0'..=b'9' => {
                if !matches!(last, b'(' | b',') {
                    return None;
                }
                let len = bytes
                    .iter()
                    .skip(i)
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                let end = i + len;
                if bytes
                    .get(end)
                    .is_some_and(|c| is_word_byte(*c) || *c == b'.')
                    || !separator_follows(bytes, end)
                {
                    return None;
                }
                let value = statement.get(i..end)?.parse::<i64>().ok()?;
                params.push(Datum::Int(value));
                shape.push('?');
                last = b'?';
                i = end;
            }
            b'`' => {
                let len = bytes.iter().skip(i + 1).position(|c| *c == b'`')?;
                shape.push_str(statement.get(i..i + len + 2)?);
                last = b'`';
                i += len + 2;
            }
            b'"' | b'?' | b'#' | b'\\' | b'@' => return None,
            b'/' if bytes.get(i + 1) == Some(&b'*') => return None,
            b'-' if bytes.get(i + 1) == Some(&b'-') => return None,
            _ if is_word_byte(b) => {
                let len = bytes
                    .iter()
                    .skip(i)
                    .take_while(|c| is_word_byte(**c))
                    .count();
                let word = statement.get(i..i + len)?;
                if word.eq_ignore_ascii_case("SELECT") {
                    return None;
                }
                saw_values |=
                    word.eq_ignore_ascii_case("VALUES") || word.eq_ignore_ascii_case("VALUE");
                shape.push_str(word);
                last = b'a';
                i += len;
            }
            _ => {
                // ASCII punctuation or whitespace (bytes >= 0x80 are word bytes).
                shape.push(char::from(b));
                if !b.is_ascii_whitespace() {
                    last = b;
                }
                i += 1;
            }
        }
    }
    saw_values.then_some(Shaped { shape, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> Datum {
        Datum::Bytes(s.as_bytes().to_vec())
    }

    #[test]
    fn sysbench_insert_is_shaped() {
        let s = shape("INSERT INTO sbtest3 (id, k, c, pad) VALUES (0, 4993, '838-67', '677-76')");
        assert_eq!(
            s,
            Some(Shaped {
                shape: "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)".into(),
                params: vec![
                    Datum::Int(0),
                    Datum::Int(4993),
                    bytes("838-67"),
                    bytes("677-76")
                ],
            })
        );
    }

    #[test]
    fn multi_row_quotes_and_keywords() {
        let s = shape("replace into `t 1` values (1,'it''s',NULL),( 2 , '' , DEFAULT )");
        assert_eq!(
            s,
            Some(Shaped {
                shape: "replace into `t 1` values (?,?,NULL),( ? , ? , DEFAULT )".into(),
                params: vec![Datum::Int(1), bytes("it's"), Datum::Int(2), bytes("")],
            })
        );
    }

    #[test]
    fn other_literal_forms_are_not_shaped() {
        for sql in [
            "INSERT INTO t VALUES (-1)",
            "INSERT INTO t VALUES (1.5)",
            "INSERT INTO t VALUES (1e3)",
            "INSERT INTO t VALUES (0x41)",
            "INSERT INTO t VALUES (X'41')",
            "INSERT INTO t VALUES (_utf8mb4'a')",
            "INSERT INTO t VALUES (DATE '2020-01-01')",
            "INSERT INTO t VALUES ('a' 'b')",
            "INSERT INTO t VALUES ('a\\'b')",
            "INSERT INTO t VALUES (\"a\")",
            "INSERT INTO t VALUES (1 + 2)",
            "INSERT INTO t VALUES (?)",
            "INSERT INTO t VALUES (@a)",
            "INSERT INTO t VALUES (1) /* c */",
            "INSERT INTO t VALUES (1) -- c",
            "INSERT INTO t VALUES (99999999999999999999)",
            "INSERT INTO t VALUES ('unterminated",
            "INSERT INTO t SELECT 1",
            "INSERT INTO t (a) SELECT a FROM u WHERE b IN (1, 2)",
            "INSERT INTO t SET a = 1",
            "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
            "UPDATE t SET a = 1",
            "SELECT 1",
        ] {
            assert_eq!(shape(sql), None, "{sql}");
        }
    }

    #[test]
    fn identifiers_with_digits_stay_in_the_shape() {
        let s = shape("INSERT INTO t2 (c1) VALUES (7)").map(|s| s.shape);
        assert_eq!(s.as_deref(), Some("INSERT INTO t2 (c1) VALUES (?)"));
    }
}
