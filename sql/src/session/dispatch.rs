//! Statement routing: the one place that decides who answers a statement.
//!
//! - session-state statements (`SELECT @@x`, `SET x = …`, `SHOW VARIABLES`, … see `probe.rs`)
//!   are answered from the session's typed variable store and state;
//! - `SHOW …`, `DESCRIBE table` and queries naming `information_schema` go to
//!   [`show_statement`] (the catalog's metadata views);
//! - `LOAD DATA` goes to `load_data.rs`; `KILL` and `SHOW [FULL] PROCESSLIST` to `kill.rs`
//!   (the server's process list);
//! - account statements (`CREATE/ALTER/DROP/RENAME USER`, `GRANT`, `REVOKE`, `SET PASSWORD`,
//!   `SHOW GRANTS`) go to `crate::accounts::account_statement` (the shared account table);
//! - `SET @var = …` assigns user variables (`functions.rs`);
//! - everything else goes to the executor ([`crate::SqlExecutor`]), whose SELECT shapes the
//!   fast path cannot run end in `plan::unsupported_shape` and go to the analytical executor;
//!   session functions (`VERSION()`, `CONNECTION_ID()`, …) and `@var`s in it are first replaced
//!   by their values (`functions.rs`).
//!
//! Invariants: routing looks only at the statement's leading words (comments skipped) and, for
//! `information_schema`, at its identifiers, so it never tokenizes a long INSERT; a statement
//! routed to a part that does not exist yet fails with 1235 naming the statement, never with a
//! silently empty answer.

use crate::SqlExecutor;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use crate::sql_text::{Token, tokenize, tokenize_prefix};
use crate::types::Datum;
use crate::{plan, show};

use super::functions::{self, SessionValues};
use super::probe::{Probe, recognize};

/// Where a statement goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// Answered from session state.
    SessionState(Probe),
    /// Metadata: SHOW, DESCRIBE, information_schema. Carries the statement's name.
    Show(String),
    /// Account management. Carries the statement's name.
    Accounts(String),
    /// `LOAD DATA [LOCAL] INFILE`.
    LoadData,
    /// `KILL [CONNECTION | QUERY] id`.
    Kill,
    /// `SHOW [FULL] PROCESSLIST`; true for FULL.
    ProcessList(bool),
    /// The SQL executor.
    Executor,
}

/// Words that end a statement's name (`SHOW TABLES FROM db` is named `SHOW TABLES`).
const NAME_ENDS_AT: &[&str] = &["FROM", "IN", "LIKE", "WHERE", "FOR"];

/// Routes one statement (no `;` inside).
pub(super) fn route(statement: &str) -> Route {
    let lead = leading_words(statement, 4);
    let word = |i: usize| lead.get(i).map_or("", String::as_str);
    let first = word(0);
    match (first, word(1)) {
        ("CREATE" | "ALTER" | "DROP" | "RENAME", "USER" | "ROLE")
        | ("SET", "PASSWORD" | "ROLE") => {
            return Route::Accounts(format!("{first} {}", word(1)));
        }
        ("GRANT" | "REVOKE", _) => return Route::Accounts(first.to_owned()),
        ("SHOW", "GRANTS") => return Route::Accounts("SHOW GRANTS".to_owned()),
        ("LOAD", "DATA") => return Route::LoadData,
        ("KILL", _) => return Route::Kill,
        ("SHOW", "PROCESSLIST") if lead.len() == 2 => return Route::ProcessList(false),
        ("SHOW", "FULL") if word(2) == "PROCESSLIST" && lead.len() == 3 => {
            return Route::ProcessList(true);
        }
        _ => {}
    }
    if matches!(first, "SELECT" | "SET" | "USE" | "SHOW" | "START")
        && let Some(probe) = recognize(statement)
    {
        return Route::SessionState(probe);
    }
    match (first, word(1)) {
        ("SHOW", _) => return Route::Show(statement_name(&lead)),
        ("DESCRIBE" | "DESC" | "EXPLAIN", second)
            if !matches!(
                second,
                "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "WITH" | "TABLE" | ""
            ) && !second.starts_with("FORMAT") =>
        {
            return Route::Show(format!("{first} table"));
        }
        _ => {}
    }
    if names_information_schema(statement) {
        return Route::Show("information_schema queries".to_owned());
    }
    Route::Executor
}

/// SHOW statements, DESCRIBE and information_schema queries: answered from one catalog
/// snapshot by [`crate::show`], with `params` bound to the placeholders of an
/// information_schema query (a prepared one) and session functions and variables replaced by
/// their values (`functions.rs`); a form it does not claim fails with 1235 naming the
/// statement.
pub(super) fn show_statement(
    executor: &SqlExecutor,
    values: &SessionValues<'_>,
    statement: &str,
    name: &str,
    params: &[Datum],
) -> SqlResult<StatementResult> {
    let snapshot = executor.catalog().snapshot();
    let current_db = values.database;
    if params.is_empty()
        && let Some(result) = show::execute_show_text(&snapshot, current_db, statement)
    {
        return result;
    }
    let mut parsed = plan::parse(statement)?;
    let [parsed] = parsed.as_mut_slice() else {
        return Err(SqlError::NotSupported(name.to_owned()));
    };
    if functions::may_mention(statement) {
        functions::substitute(parsed, values)?;
    }
    show::execute_show(&snapshot, current_db, parsed, params)
        .unwrap_or_else(|| Err(SqlError::NotSupported(name.to_owned())))
}

/// Number of `?` placeholders in `statement` (outside quotes and comments).
pub(super) fn placeholder_count(statement: &str) -> usize {
    let mut count = 0;
    let mut chars = statement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                while let Some(d) = chars.next() {
                    if d == '\\' && c != '`' {
                        chars.next();
                    } else if d == c {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = '\0';
                for d in chars.by_ref() {
                    if last == '*' && d == '/' {
                        break;
                    }
                    last = d;
                }
            }
            '#' => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                chars.next();
                if chars.peek().is_none_or(|c| c.is_whitespace()) {
                    for d in chars.by_ref() {
                        if d == '\n' {
                            break;
                        }
                    }
                }
            }
            '?' => count += 1,
            _ => {}
        }
    }
    count
}

/// The first `n` words of `statement`, upper-cased; stops at the first non-word token.
fn leading_words(statement: &str, n: usize) -> Vec<String> {
    tokenize_prefix(statement, n)
        .into_iter()
        .map_while(|t| match t {
            Token::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        })
        .collect()
}

fn statement_name(lead: &[String]) -> String {
    lead.iter()
        .take_while(|w| !NAME_ENDS_AT.contains(&w.as_str()))
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
}

/// True if an identifier (not a string literal) of the statement is `information_schema`.
fn names_information_schema(statement: &str) -> bool {
    const NAME: &str = "information_schema";
    let mentioned = statement
        .as_bytes()
        .windows(NAME.len())
        .any(|w| w.eq_ignore_ascii_case(NAME.as_bytes()));
    if !mentioned {
        return false;
    }
    tokenize(statement)
        .iter()
        .any(|t| matches!(t, Token::Word(w) if w.eq_ignore_ascii_case(NAME)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_leading_words() {
        assert!(matches!(
            route("/* c */ select @@version_comment limit 1"),
            Route::SessionState(_)
        ));
        assert_eq!(route("SHOW TABLES"), Route::Show("SHOW TABLES".into()));
        assert_eq!(
            route("show full tables from db like 'x'"),
            Route::Show("SHOW FULL TABLES".into())
        );
        assert_eq!(route("DESC sbtest1"), Route::Show("DESC table".into()));
        assert_eq!(route("EXPLAIN SELECT 1"), Route::Executor);
        assert_eq!(
            route("CREATE USER 'a'@'%' IDENTIFIED BY 'x'"),
            Route::Accounts("CREATE USER".into())
        );
        assert_eq!(
            route("GRANT ALL ON *.* TO a"),
            Route::Accounts("GRANT".into())
        );
        assert_eq!(
            route("SET PASSWORD = 'x'"),
            Route::Accounts("SET PASSWORD".into())
        );
        assert_eq!(route("CREATE TABLE t (a INT)"), Route::Executor);
        assert_eq!(route("SELECT c FROM t WHERE id = 1"), Route::Executor);
        assert!(matches!(
            route("SET GLOBAL autocommit = 0"),
            Route::SessionState(_)
        ));
        assert_eq!(route("SET PERSIST autocommit = 0"), Route::Executor);
        assert_eq!(
            route("LOAD DATA LOCAL INFILE 'f' INTO TABLE t"),
            Route::LoadData
        );
        assert_eq!(route("kill query 5"), Route::Kill);
        assert_eq!(route("SHOW PROCESSLIST"), Route::ProcessList(false));
        assert_eq!(route("show full processlist"), Route::ProcessList(true));
    }

    #[test]
    fn placeholders_outside_quotes_and_comments() {
        assert_eq!(placeholder_count("SELECT ? FROM t WHERE a = ?"), 2);
        assert_eq!(
            placeholder_count("SELECT '?', \"?\", `?`, 'it''s ?' /* ? */ -- ?\n, ? # ?"),
            1
        );
        assert_eq!(placeholder_count("SELECT 'a\\'?' , ?"), 1);
    }

    #[test]
    fn information_schema_only_as_an_identifier() {
        assert_eq!(
            route("SELECT * FROM INFORMATION_SCHEMA.TABLES"),
            Route::Show("information_schema queries".into())
        );
        assert_eq!(
            route("SELECT * FROM `information_schema`.`columns`"),
            Route::Show("information_schema queries".into())
        );
        assert_eq!(
            route("INSERT INTO t VALUES ('information_schema')"),
            Route::Executor
        );
    }
}
