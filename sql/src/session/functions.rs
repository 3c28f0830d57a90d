//! Session functions and user variables inside expressions: `SELECT VERSION(), 1+1`,
//! `SELECT CONNECTION_ID() + 0`, `SET @a = 1; SELECT @a * 2`, `ROW_COUNT()`, `FOUND_ROWS()`,
//! and the clock functions without arguments (`NOW()`, `CURRENT_TIMESTAMP`, `CURDATE()`,
//! `CURTIME()`, `UTC_TIMESTAMP()`, `UNIX_TIMESTAMP()` …) in queries and DML: one instant per
//! statement, as MySQL evaluates them.
//!
//! The executors know no session: before a statement that mentions one of these reaches them,
//! each call (and each `@var`) is replaced in the parsed statement by a literal of its value
//! for this session — the value MySQL evaluates it to at the start of the statement — and the
//! statement is run from that rewritten text. Statements that mention none of them are not
//! parsed here at all.
//!
//! `SET @a = expr, …` evaluates each expression as `SELECT expr` (so it may use these functions,
//! other variables and anything a SELECT may) before assigning any; an unset variable is NULL.
//!
//! System variables inside expressions (`SELECT @@version, 1+1`, `WHERE @@autocommit = 1`,
//! `@@session.x`, `@@global.x`) are replaced the same way, by their typed value from the
//! variable store (integers as numbers, text as strings). A statement made only of variables
//! and session functions never gets here: the probe answers it (`probe.rs`).
//!
//! Invariant: only zero-argument calls of the listed names, `@name` identifiers and `@@name`
//! references are replaced.

use std::collections::HashMap;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Expr, Ident, SelectItem, SetExpr, Statement, Value as AstValue, visit_expressions_mut,
};

use crate::error::{SqlError, SqlResult};
use crate::plan;
use crate::types::Datum;
use crate::value;

use super::probe;
use super::variables::{SessionVariables, VariableValue};

/// Values the rewrite substitutes.
pub(super) struct SessionValues<'a> {
    pub version: String,
    pub connection_id: u32,
    /// `user@host` (USER(), SESSION_USER(), SYSTEM_USER()).
    pub user: String,
    /// `user@host-pattern` of the account (CURRENT_USER()).
    pub current_user: String,
    pub database: Option<&'a str>,
    pub last_insert_id: u64,
    pub row_count: i64,
    pub found_rows: u64,
    pub user_variables: &'a HashMap<String, Datum>,
    /// `@@name` reads these.
    pub variables: &'a SessionVariables,
}

const FUNCTIONS: &[&str] = &[
    "now",
    "sysdate",
    "curdate",
    "curtime",
    "utc_timestamp",
    "utc_date",
    "unix_timestamp",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtime",
    "localtimestamp",
    "version",
    "connection_id",
    "user",
    "session_user",
    "system_user",
    "current_user",
    "database",
    "schema",
    "last_insert_id",
    "row_count",
    "found_rows",
];

/// True if `statement` may contain a session function, a user variable or a system variable
/// (a cheap byte scan: an `@` followed by a letter or `_`, a `(` right after a word that ends
/// with one of [`FUNCTIONS`], or `current_` / `localtime`, in any case).
pub(super) fn may_mention(statement: &str) -> bool {
    let bytes = statement.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| match b {
        b'@' => bytes
            .get(i + 1)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_'),
        // The clock keywords that need no parentheses (CURRENT_TIMESTAMP, LOCALTIME …).
        b'c' | b'C' | b'l' | b'L' => {
            let rest = bytes.get(i..).unwrap_or_default();
            ["current_", "localtime"].iter().any(|word| {
                rest.get(..word.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(word.as_bytes()))
            })
        }
        b'(' => {
            let before = bytes.get(..i).unwrap_or_default();
            FUNCTIONS.iter().any(|f| {
                before.len() >= f.len()
                    && before
                        .get(before.len() - f.len()..)
                        .is_some_and(|tail| tail.eq_ignore_ascii_case(f.as_bytes()))
            })
        }
        _ => false,
    })
}

fn literal(d: &Datum) -> Expr {
    let v = match d {
        Datum::Null => AstValue::Null,
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal { .. } | Datum::Double(_) => {
            AstValue::Number(value::display(d), false)
        }
        other => AstValue::SingleQuotedString(value::display(other)),
    };
    Expr::Value(v.into())
}

/// The statement with session functions and user variables replaced by literals; `None` when
/// it contains none (run the original text).
pub(super) fn rewrite(statement: &str, values: &SessionValues<'_>) -> SqlResult<Option<String>> {
    if !may_mention(statement) {
        return Ok(None);
    }
    let mut parsed = plan::parse(statement)?;
    let [stmt] = parsed.as_mut_slice() else {
        return Ok(None);
    };
    Ok(substitute(stmt, values)?.then(|| stmt.to_string()))
}

/// [`rewrite`] of a parsed statement, in place; true if anything was replaced.
pub(super) fn substitute(stmt: &mut Statement, values: &SessionValues<'_>) -> SqlResult<bool> {
    keep_column_names(stmt);
    // The clock is read once: every call in the statement sees the same instant, as in MySQL.
    // Only in statements that run now: in a column DEFAULT or a view it would be frozen.
    let clock = matches!(
        stmt,
        Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_)
    )
    .then(StatementClock::now);
    let mut changed = false;
    let mut failed = None;
    let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
    let _ = visit_expressions_mut(stmt, |e| {
        if let Some(reference) = system_variable_reference(e) {
            match system_variable(&reference, values.variables) {
                Ok(d) => {
                    *e = literal(&d);
                    changed = true;
                    return ControlFlow::Continue(());
                }
                Err(err) => {
                    failed = Some(err);
                    return ControlFlow::Break(());
                }
            }
        }
        let replacement = match e {
            Expr::Function(f) if plan::no_args(&f.args) => {
                match f.name.to_string().to_ascii_lowercase().as_str() {
                    "version" => Some(text(&values.version)),
                    "connection_id" => Some(Datum::UInt(u64::from(values.connection_id))),
                    "user" | "session_user" | "system_user" => Some(text(&values.user)),
                    "current_user" => Some(text(&values.current_user)),
                    "database" | "schema" => Some(values.database.map_or(Datum::Null, text)),
                    "last_insert_id" => Some(Datum::UInt(values.last_insert_id)),
                    "row_count" => Some(Datum::Int(values.row_count)),
                    "found_rows" => Some(Datum::UInt(values.found_rows)),
                    name => clock.as_ref().and_then(|c| c.function(name)),
                }
            }
            Expr::Identifier(ident)
                if ident.quote_style.is_none()
                    && ident.value.starts_with('@')
                    && !ident.value.starts_with("@@") =>
            {
                let name = ident.value.trim_start_matches('@').to_ascii_lowercase();
                Some(
                    values
                        .user_variables
                        .get(&name)
                        .cloned()
                        .unwrap_or(Datum::Null),
                )
            }
            _ => None,
        };
        if let Some(d) = replacement {
            *e = literal(&d);
            changed = true;
        }
        ControlFlow::<()>::Continue(())
    });
    match failed {
        Some(err) => Err(err),
        None => Ok(changed),
    }
}

/// The statement's instant for the clock functions, in UTC (`@@system_time_zone`; the session
/// `time_zone` is `SYSTEM`).
struct StatementClock {
    /// Whole seconds since the Unix epoch (the functions without a precision argument).
    seconds: i64,
}

impl StatementClock {
    fn now() -> Self {
        Self {
            seconds: value::now_seconds(),
        }
    }

    /// The value of clock function `name` (lower case, no arguments); `None` for another name.
    /// Dates and datetimes become string literals, which MySQL converts wherever a date is
    /// expected (comparisons, INSERT into a DATE / DATETIME column, DATE_ADD).
    fn function(&self, name: &str) -> Option<Datum> {
        let secs_per_day = 86_400;
        let days = i32::try_from(self.seconds.div_euclid(secs_per_day)).ok()?;
        let of_day = self.seconds.rem_euclid(secs_per_day);
        Some(match name {
            "now" | "sysdate" | "current_timestamp" | "localtime" | "localtimestamp"
            | "utc_timestamp" => Datum::DateTime(self.seconds.checked_mul(1_000_000)?),
            "curdate" | "current_date" | "utc_date" => Datum::Date(days),
            "curtime" | "current_time" => Datum::Bytes(
                format!(
                    "{:02}:{:02}:{:02}",
                    of_day / 3600,
                    of_day / 60 % 60,
                    of_day % 60
                )
                .into_bytes(),
            ),
            "unix_timestamp" => Datum::Int(self.seconds),
            _ => return None,
        })
    }
}

/// The text after `@@` of a system variable reference (`version`, `session.autocommit`), if
/// `e` is one: the parser reads `@@name` as one identifier and `@@scope.name` as two.
fn system_variable_reference(e: &Expr) -> Option<String> {
    let unquoted_system = |ident: &Ident| {
        ident
            .value
            .strip_prefix("@@")
            .filter(|_| ident.quote_style.is_none())
            .map(str::to_owned)
    };
    match e {
        Expr::Identifier(ident) => unquoted_system(ident),
        Expr::CompoundIdentifier(parts) => {
            let (first, rest) = parts.split_first()?;
            let mut text = unquoted_system(first)?;
            for part in rest {
                text.push('.');
                text.push_str(&part.value);
            }
            Some(text)
        }
        _ => None,
    }
}

/// The value of `@@reference` as a literal's datum.
fn system_variable(reference: &str, variables: &SessionVariables) -> SqlResult<Datum> {
    let (name, scope) = probe::scoped_name(reference).ok_or_else(|| {
        SqlError::unsupported(format!("the system variable reference @@{reference}"))
    })?;
    Ok(match scope.read(variables, &name)? {
        VariableValue::Int(v) => Datum::Int(v),
        VariableValue::Text(t) => Datum::Bytes(t.into_bytes()),
        VariableValue::Null => Datum::Null,
    })
}

/// Gives each unaliased select item that will be rewritten its original text as alias, so the
/// result column is still named `VERSION()`, not after the literal that replaces it.
fn keep_column_names(stmt: &mut Statement) {
    let Statement::Query(q) = stmt else {
        return;
    };
    let SetExpr::Select(select) = q.body.as_mut() else {
        return;
    };
    for item in &mut select.projection {
        if let SelectItem::UnnamedExpr(e) = item {
            let name = e.to_string();
            if may_mention(&name) {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: Ident::with_quote('`', name),
                };
            }
        }
    }
}

/// `SET @a = expr [, @b := expr …]`: the variable names (lower case) and expression texts;
/// `None` if the statement is not a user-variable assignment.
pub(super) fn parse_user_variable_set(statement: &str) -> Option<SqlResult<Vec<(String, String)>>> {
    let trimmed = statement.trim_start();
    let rest = trimmed
        .get(..3)
        .filter(|w| w.eq_ignore_ascii_case("set"))
        .and_then(|_| trimmed.get(3..))?;
    if !rest.starts_with(char::is_whitespace) || !rest.trim_start().starts_with('@') {
        return None;
    }
    let rest = rest.trim_start();
    if rest.starts_with("@@") {
        return None;
    }
    let mut out = Vec::new();
    for part in split_top_level(rest) {
        let part = part.trim();
        let syntax = || SqlError::Syntax {
            near: part.chars().take(80).collect(),
            line: 1,
        };
        let Some(body) = part.strip_prefix('@') else {
            return Some(Err(if part.starts_with("@@") || !part.contains('@') {
                SqlError::unsupported("SET mixing user and system variables")
            } else {
                syntax()
            }));
        };
        let name_len = body
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
            .unwrap_or(body.len());
        let (name, after) = body.split_at(name_len);
        let after = after.trim_start();
        let expr = after.strip_prefix(":=").or_else(|| after.strip_prefix('='));
        match expr {
            Some(e) if !name.is_empty() && !e.trim().is_empty() => {
                out.push((name.to_ascii_lowercase(), e.trim().to_owned()));
            }
            _ => return Some(Err(syntax())),
        }
    }
    Some(Ok(out))
}

/// Splits at commas outside quotes and parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                parts.push(s.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(s.get(start..).unwrap_or_default());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values<'a>(
        vars: &'a HashMap<String, Datum>,
        variables: &'a SessionVariables,
    ) -> SessionValues<'a> {
        SessionValues {
            version: "8.0.36-orcinus".into(),
            connection_id: 7,
            user: "root@127.0.0.1".into(),
            current_user: "root@%".into(),
            database: Some("db"),
            last_insert_id: 3,
            row_count: -1,
            found_rows: 2,
            user_variables: vars,
            variables,
        }
    }

    fn variables() -> SessionVariables {
        let defaults = crate::session::VariableDefaults::for_test();
        SessionVariables::new(
            super::super::variables::GlobalVariables::new(&defaults),
            false,
        )
    }

    #[test]
    fn functions_and_variables_become_literals() {
        let mut vars = HashMap::new();
        vars.insert("a".to_string(), Datum::Int(5));
        vars.insert("s".to_string(), Datum::Bytes(b"it's".to_vec()));
        let variables = variables();
        let v = values(&vars, &variables);
        assert_eq!(rewrite("SELECT 1 + 1", &v).unwrap(), None);
        assert_eq!(
            rewrite(
                "SELECT VERSION(), CONNECTION_ID() + 0, @a * 2, @s, @nope",
                &v
            )
            .unwrap(),
            Some(
                "SELECT '8.0.36-orcinus' AS `VERSION()`, 7 + 0 AS `CONNECTION_ID() + 0`, \
                 5 * 2 AS `@a * 2`, 'it''s' AS `@s`, NULL AS `@nope`"
                    .to_string()
            )
        );
        assert_eq!(
            rewrite(
                "select database(), row_count(), found_rows(), @@version",
                &v
            )
            .unwrap(),
            Some(
                "SELECT 'db' AS `database()`, -1 AS `row_count()`, 2 AS `found_rows()`, \
                 '8.0.36-orcinus' AS `@@version`"
                    .to_string()
            )
        );
    }

    #[test]
    fn clock_functions_read_one_instant_in_queries_and_dml_only() {
        let vars = HashMap::new();
        let variables = variables();
        let v = values(&vars, &variables);
        let rewritten = rewrite(
            "SELECT NOW(), CURRENT_TIMESTAMP, CURDATE(), UNIX_TIMESTAMP() FROM t",
            &v,
        )
        .unwrap()
        .unwrap();
        let clock = StatementClock::now();
        let date = crate::value::format_date(clock.seconds.div_euclid(86_400) as i32);
        // The instant is read once: NOW() and CURRENT_TIMESTAMP agree.
        let now_text = rewritten
            .split('\'')
            .nth(1)
            .expect("a quoted datetime")
            .to_owned();
        assert!(now_text.starts_with(&date), "{rewritten}");
        assert!(
            rewritten.contains(&format!("'{now_text}' AS `CURRENT_TIMESTAMP`")),
            "{rewritten}"
        );
        assert!(
            rewritten.contains(&format!("'{date}' AS `CURDATE()`")),
            "{rewritten}"
        );
        assert!(
            rewrite("UPDATE t SET d = CURRENT_DATE WHERE id = 1", &v)
                .unwrap()
                .unwrap()
                .starts_with(&format!("UPDATE t SET d = '{date}'"))
        );
        // A column default is evaluated at each insert, not frozen at CREATE TABLE.
        assert_eq!(
            rewrite("CREATE TABLE t (d DATETIME DEFAULT NOW())", &v).unwrap(),
            None
        );
    }

    #[test]
    fn system_variables_become_typed_literals() {
        let vars = HashMap::new();
        let variables = variables();
        let v = values(&vars, &variables);
        assert_eq!(
            rewrite(
                "SELECT @@autocommit + 1, @@SESSION.sql_mode IS NULL, @@global.max_connections",
                &v
            )
            .unwrap(),
            Some(
                "SELECT 1 + 1 AS `@@autocommit + 1`, \
                 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
                 ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION' IS NULL \
                 AS `@@SESSION.sql_mode IS NULL`, 4096 AS `@@global.max_connections`"
                    .to_string()
            )
        );
        assert_eq!(
            rewrite("SELECT 1 FROM t WHERE @@autocommit = 1", &v).unwrap(),
            Some("SELECT 1 FROM t WHERE 1 = 1".to_string())
        );
        let code = |sql| rewrite(sql, &v).unwrap_err().code();
        assert_eq!(code("SELECT @@no_such_variable + 1"), 1193);
        assert_eq!(code("SELECT @@session.max_connections + 1"), 1238);
        assert_eq!(code("SELECT @@persist.autocommit + 1"), 1235);
    }

    #[test]
    fn user_variable_assignments() {
        assert_eq!(
            parse_user_variable_set("SET @a = 1, @B := CONCAT('x', ','), @c=@a+1")
                .unwrap()
                .unwrap(),
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "CONCAT('x', ',')".into()),
                ("c".into(), "@a+1".into())
            ]
        );
        assert!(parse_user_variable_set("SET autocommit = 1").is_none());
        assert!(parse_user_variable_set("SET @@autocommit = 1").is_none());
        assert_eq!(
            parse_user_variable_set("SET @a")
                .unwrap()
                .unwrap_err()
                .code(),
            1064
        );
    }
}
