//! SQL-level prepared statements: `PREPARE name FROM 'text' | @var`,
//! `EXECUTE name [USING @a, …]`, `{DEALLOCATE | DROP} PREPARE name` — the statements of the
//! binary protocol's COM_STMT_* reached from SQL text, as the `mysql` client uses them.
//!
//! They share the session's prepared-statement table with COM_STMT_PREPARE (a name maps to a
//! statement id), so a statement behaves the same whichever way it was prepared. `EXECUTE`
//! binds the user variables' values to the placeholders in order.
//!
//! Invariant: recognition looks only at the leading words; anything after them that does not
//! fit the grammar is a 1064, never a guess.

use crate::error::{SqlError, SqlResult};
use crate::sql_text::{Token, tokenize_prefix};

/// Where `PREPARE` takes the statement text from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    /// A string literal.
    Text(String),
    /// A user variable (lower-case name, without `@`).
    Variable(String),
}

/// A recognized SQL-level prepared-statement command. Names are lower-case (MySQL's statement
/// names are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SqlPrepare {
    Prepare { name: String, source: Source },
    Execute { name: String, using: Vec<String> },
    Deallocate { name: String },
}

/// Recognizes `PREPARE`, `EXECUTE` and `DEALLOCATE/DROP PREPARE`; `None` for other statements.
pub(super) fn recognize(statement: &str) -> Option<SqlResult<SqlPrepare>> {
    let lead = tokenize_prefix(statement, 3);
    let word = |i: usize| match lead.get(i) {
        Some(Token::Word(w)) => Some(w.to_ascii_uppercase()),
        _ => None,
    };
    let first = word(0)?;
    let syntax = || SqlError::Syntax {
        near: statement.trim().chars().take(80).collect(),
        line: 1,
    };
    let name_at = |i: usize| match lead.get(i) {
        Some(Token::Word(w)) => Some(w.to_ascii_lowercase()),
        _ => None,
    };
    Some(match first.as_str() {
        "PREPARE" => {
            let Some(name) = name_at(1) else {
                return Some(Err(syntax()));
            };
            let rest = after_words(statement, 2);
            let Some(from) = strip_keyword(rest, "FROM") else {
                return Some(Err(syntax()));
            };
            let from = from.trim();
            let source = if let Some(var) = from.strip_prefix('@') {
                match variable_name(var) {
                    Some(v) => Source::Variable(v),
                    None => return Some(Err(syntax())),
                }
            } else {
                match crate::sql_text::tokenize(from).as_slice() {
                    [Token::Quoted(text)] if from.starts_with(['\'', '"']) => {
                        Source::Text(text.clone())
                    }
                    _ => return Some(Err(syntax())),
                }
            };
            Ok(SqlPrepare::Prepare { name, source })
        }
        "EXECUTE" => {
            let Some(name) = name_at(1) else {
                return Some(Err(syntax()));
            };
            let rest = after_words(statement, 2).trim();
            if rest.is_empty() {
                return Some(Ok(SqlPrepare::Execute {
                    name,
                    using: Vec::new(),
                }));
            }
            let Some(list) = strip_keyword(rest, "USING") else {
                return Some(Err(syntax()));
            };
            let mut using = Vec::new();
            for part in list.split(',') {
                match part.trim().strip_prefix('@').and_then(variable_name) {
                    Some(v) => using.push(v),
                    None => return Some(Err(syntax())),
                }
            }
            Ok(SqlPrepare::Execute { name, using })
        }
        "DEALLOCATE" | "DROP" if word(1).as_deref() == Some("PREPARE") => match name_at(2) {
            Some(name) if after_words(statement, 3).trim().is_empty() => {
                Ok(SqlPrepare::Deallocate { name })
            }
            _ => Err(syntax()),
        },
        _ => return None,
    })
}

/// The text after the first `n` words (and any comments and spaces before them).
fn after_words(statement: &str, n: usize) -> &str {
    let mut rest = statement.trim_start();
    for _ in 0..n {
        rest = rest.trim_start();
        let end = if rest.starts_with('`') {
            rest.get(1..)
                .and_then(|r| r.find('`'))
                .map_or(rest.len(), |i| i + 2)
        } else {
            rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .unwrap_or(rest.len())
        };
        rest = rest.get(end..).unwrap_or_default();
    }
    rest
}

/// `rest` without a leading keyword `kw` (case-insensitive, followed by a non-word character).
fn strip_keyword<'a>(rest: &'a str, kw: &str) -> Option<&'a str> {
    let rest = rest.trim_start();
    let head = rest.get(..kw.len())?;
    let tail = rest.get(kw.len()..)?;
    (head.eq_ignore_ascii_case(kw) && !tail.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        .then_some(tail)
}

/// A user-variable name (after `@`), lower-cased; `None` if it is not one whole name.
fn variable_name(text: &str) -> Option<String> {
    let text = text.trim();
    let ok = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.');
    ok.then(|| text.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_commands() {
        assert_eq!(
            recognize("PREPARE s1 FROM 'SELECT ? + 1'")
                .unwrap()
                .unwrap(),
            SqlPrepare::Prepare {
                name: "s1".into(),
                source: Source::Text("SELECT ? + 1".into())
            }
        );
        assert_eq!(
            recognize("prepare `My` from @Sql").unwrap().unwrap(),
            SqlPrepare::Prepare {
                name: "my".into(),
                source: Source::Variable("sql".into())
            }
        );
        assert_eq!(
            recognize("EXECUTE s1 USING @a, @b").unwrap().unwrap(),
            SqlPrepare::Execute {
                name: "s1".into(),
                using: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(
            recognize("execute s1").unwrap().unwrap(),
            SqlPrepare::Execute {
                name: "s1".into(),
                using: vec![]
            }
        );
        assert_eq!(
            recognize("DEALLOCATE PREPARE s1").unwrap().unwrap(),
            SqlPrepare::Deallocate { name: "s1".into() }
        );
        assert_eq!(
            recognize("drop prepare s1").unwrap().unwrap(),
            SqlPrepare::Deallocate { name: "s1".into() }
        );
        assert!(recognize("DROP TABLE t").is_none());
        assert!(recognize("SELECT 1").is_none());
        for bad in [
            "PREPARE s1",
            "PREPARE s1 FROM SELECT 1",
            "EXECUTE s1 USING 1",
            "EXECUTE s1 WITH @a",
            "DEALLOCATE PREPARE",
        ] {
            assert_eq!(recognize(bad).unwrap().unwrap_err().code(), 1064, "{bad}");
        }
    }
}
