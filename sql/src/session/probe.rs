//! Recognizes the statements answered from session state rather than by the executor: client
//! probes (`SELECT @@version_comment LIMIT 1`, `SELECT DATABASE(), USER()`), `SET` of system
//! variables (session or global), `SET NAMES`, `SET [GLOBAL|SESSION] TRANSACTION …`,
//! `START TRANSACTION [READ ONLY | READ WRITE | WITH CONSISTENT SNAPSHOT]`, `USE`,
//! `SHOW [GLOBAL] VARIABLES`, `SHOW STATUS`, `SHOW WARNINGS`.
//!
//! Invariants: recognition is exact: a statement with anything the grammar below does not
//! cover (a FROM clause, an operator, a user variable, an executable comment, PERSIST scope) is
//! not recognized and goes on to the executor, which runs it or rejects it naming it; it is
//! never answered approximately.

use crate::error::SqlResult;
#[cfg(test)]
use crate::sql_text::split_statements;
use crate::sql_text::{Token, tokenize};

use super::variables::{SessionVariables, VariableValue};

/// Which value of a system variable a statement names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// `@@name` or `SET name`: the session value (for `SET @@name` of a transaction
    /// characteristic, the next transaction's; see [`Assignment::bare`]).
    Default,
    /// `@@session.name`, `@@local.name`, `SET SESSION name`.
    Session,
    /// `@@global.name`, `SET GLOBAL name`.
    Global,
}

impl Scope {
    /// The value of system variable `name` in this scope, as `@@[scope.]name` reads it: the
    /// unknown name 1193, the wrong scope 1238.
    pub(super) fn read(self, variables: &SessionVariables, name: &str) -> SqlResult<VariableValue> {
        match self {
            Scope::Default => variables.get(name),
            Scope::Session => variables.get_session(name),
            Scope::Global => variables.globals().get(name),
        }
    }
}

/// A value a probe `SELECT` can compute from session state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ProbeExpr {
    /// `@@[session.|local.|global.]name`.
    SystemVariable(String, Scope),
    /// `DATABASE()` / `SCHEMA()`.
    Database,
    /// `USER()` / `SESSION_USER()` / `SYSTEM_USER()`.
    User,
    /// `CURRENT_USER()` / `CURRENT_USER`.
    CurrentUser,
    /// `CONNECTION_ID()`.
    ConnectionId,
    /// `VERSION()`.
    Version,
    /// `LAST_INSERT_ID()`.
    LastInsertId,
    /// An integer literal.
    Integer(i64),
    /// A string literal.
    Text(String),
}

/// One item of a probe `SELECT` with its result column name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ProbeItem {
    pub expr: ProbeExpr,
    pub name: String,
}

/// One `name = value` of a `SET`; `value` is `None` for `DEFAULT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Assignment {
    pub name: String,
    pub value: Option<String>,
    pub scope: Scope,
    /// Written `@@name` (no scope keyword or prefix): for the transaction characteristics this
    /// sets the next transaction only, as in MySQL.
    pub bare: bool,
}

/// A recognized statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Probe {
    Select {
        items: Vec<ProbeItem>,
        limit: Option<u64>,
    },
    Set(Vec<Assignment>),
    SetNames {
        charset: String,
        collation: Option<String>,
    },
    Use(String),
    ShowWarnings,
    /// `SHOW [SESSION|LOCAL|GLOBAL] VARIABLES [LIKE 'pattern']`.
    ShowVariables {
        global: bool,
        like: Option<String>,
    },
    /// `SHOW [SESSION|LOCAL|GLOBAL] STATUS [LIKE 'pattern']`.
    ShowStatus {
        global: bool,
        like: Option<String>,
    },
    /// `SET [GLOBAL|SESSION] TRANSACTION characteristic, …`: the isolation level in the
    /// variable's spelling (`REPEATABLE-READ`) and the access mode (true for READ ONLY);
    /// `Scope::Default` (no keyword) is the next transaction only.
    SetTransaction {
        scope: Scope,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    /// `START TRANSACTION [WITH CONSISTENT SNAPSHOT | READ ONLY | READ WRITE], …`: the access
    /// mode if one is given.
    StartTransaction {
        read_only: Option<bool>,
    },
}

/// Recognizes one statement (no `;` inside); `None` if it is not a session-state statement.
pub(super) fn recognize(statement: &str) -> Option<Probe> {
    let tokens = tokenize(statement);
    let mut cursor = Cursor {
        tokens: &tokens,
        pos: 0,
    };
    let probe = if cursor.keyword("SELECT") {
        parse_select(&mut cursor)
    } else if cursor.keyword("SET") {
        parse_set(&mut cursor)
    } else if cursor.keyword("USE") {
        cursor.name().map(Probe::Use)
    } else if cursor.keyword("SHOW") {
        parse_show(&mut cursor)
    } else if cursor.keyword("START") && cursor.keyword("TRANSACTION") {
        parse_start_transaction(&mut cursor)
    } else {
        None
    };
    probe.filter(|_| cursor.at_end())
}

fn parse_show(c: &mut Cursor<'_>) -> Option<Probe> {
    if c.keyword("WARNINGS") {
        return Some(Probe::ShowWarnings);
    }
    let global = c.keyword("GLOBAL");
    if !global {
        let _ = c.keyword("SESSION") || c.keyword("LOCAL");
    }
    let variables = if c.keyword("VARIABLES") {
        true
    } else if c.keyword("STATUS") {
        false
    } else {
        return None;
    };
    let like = if c.keyword("LIKE") {
        match c.next()? {
            Token::Quoted(p) => Some(p),
            _ => return None,
        }
    } else {
        None
    };
    Some(if variables {
        Probe::ShowVariables { global, like }
    } else {
        Probe::ShowStatus { global, like }
    })
}

/// `[WITH CONSISTENT SNAPSHOT | READ WRITE | READ ONLY], …` after `START TRANSACTION` (at most
/// one access mode, as MySQL's grammar has it).
fn parse_start_transaction(c: &mut Cursor<'_>) -> Option<Probe> {
    let mut read_only = None;
    if c.at_end() {
        return Some(Probe::StartTransaction { read_only });
    }
    loop {
        if c.keyword("WITH") {
            if !(c.keyword("CONSISTENT") && c.keyword("SNAPSHOT")) {
                return None;
            }
        } else if c.keyword("READ") {
            let mode = if c.keyword("ONLY") {
                true
            } else if c.keyword("WRITE") {
                false
            } else {
                return None;
            };
            if read_only.replace(mode).is_some() {
                return None;
            }
        } else {
            return None;
        }
        if !c.punct(',') {
            break;
        }
    }
    Some(Probe::StartTransaction { read_only })
}

/// `[ISOLATION LEVEL level | READ WRITE | READ ONLY], …` after `SET [scope] TRANSACTION`.
fn parse_transaction(c: &mut Cursor<'_>, scope: Scope) -> Option<Probe> {
    let (mut isolation, mut read_only) = (None, None);
    loop {
        if c.keyword("ISOLATION") {
            if !c.keyword("LEVEL") {
                return None;
            }
            let level = if c.keyword("REPEATABLE") && c.keyword("READ") {
                "REPEATABLE-READ"
            } else if c.keyword("SERIALIZABLE") {
                "SERIALIZABLE"
            } else if c.keyword("READ") {
                if c.keyword("COMMITTED") {
                    "READ-COMMITTED"
                } else if c.keyword("UNCOMMITTED") {
                    "READ-UNCOMMITTED"
                } else {
                    return None;
                }
            } else {
                return None;
            };
            isolation = Some(level.to_owned());
        } else if c.keyword("READ") {
            read_only = Some(if c.keyword("ONLY") {
                true
            } else if c.keyword("WRITE") {
                false
            } else {
                return None;
            });
        } else {
            return None;
        }
        if !c.punct(',') {
            break;
        }
    }
    Some(Probe::SetTransaction {
        scope,
        isolation,
        read_only,
    })
}

struct Cursor<'a> {
    tokens: &'a [Token],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }
    fn keyword(&mut self, kw: &str) -> bool {
        let hit = matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(kw));
        if hit {
            self.pos += 1;
        }
        hit
    }
    fn punct(&mut self, p: char) -> bool {
        let hit = self.peek() == Some(&Token::Punct(p));
        if hit {
            self.pos += 1;
        }
        hit
    }
    /// An identifier or quoted name.
    fn name(&mut self) -> Option<String> {
        match self.next()? {
            Token::Word(w) | Token::Quoted(w) => Some(w),
            _ => None,
        }
    }
}

fn parse_select(c: &mut Cursor<'_>) -> Option<Probe> {
    let mut items = Vec::new();
    loop {
        items.push(parse_item(c)?);
        if !c.punct(',') {
            break;
        }
    }
    let limit = if c.keyword("LIMIT") {
        match c.next()? {
            Token::Number(n) => Some(n.parse().ok()?),
            _ => return None,
        }
    } else {
        None
    };
    Some(Probe::Select { items, limit })
}

fn parse_item(c: &mut Cursor<'_>) -> Option<ProbeItem> {
    let (expr, default_name) = match c.next()? {
        Token::SystemVariable(v) => {
            let (name, scope) = scoped_name(&v)?;
            (ProbeExpr::SystemVariable(name, scope), format!("@@{v}"))
        }
        Token::Number(n) => (ProbeExpr::Integer(n.parse().ok()?), n),
        Token::Quoted(s) => (ProbeExpr::Text(s.clone()), s),
        Token::Word(w) => {
            let parens = c.punct('(') && c.punct(')');
            let expr = match (w.to_ascii_uppercase().as_str(), parens) {
                ("DATABASE" | "SCHEMA", true) => ProbeExpr::Database,
                ("USER" | "SESSION_USER" | "SYSTEM_USER", true) => ProbeExpr::User,
                ("CURRENT_USER", _) => ProbeExpr::CurrentUser,
                ("CONNECTION_ID", true) => ProbeExpr::ConnectionId,
                ("VERSION", true) => ProbeExpr::Version,
                ("LAST_INSERT_ID", true) => ProbeExpr::LastInsertId,
                _ => return None,
            };
            (expr, if parens { format!("{w}()") } else { w })
        }
        _ => return None,
    };
    let alias = if c.keyword("AS") {
        Some(c.name()?)
    } else {
        match c.peek() {
            Some(Token::Word(w)) if !w.eq_ignore_ascii_case("LIMIT") => c.name(),
            Some(Token::Quoted(_)) => c.name(),
            _ => None,
        }
    };
    Some(ProbeItem {
        expr,
        name: alias.unwrap_or(default_name),
    })
}

/// `session.name` / `local.name` / `global.name` / `name` after `@@`: the lower-case name and
/// its scope; `None` for another prefix (`persist.`).
pub(super) fn scoped_name(v: &str) -> Option<(String, Scope)> {
    let lower = v.to_ascii_lowercase();
    let (name, scope) = if let Some(n) = lower
        .strip_prefix("session.")
        .or_else(|| lower.strip_prefix("local."))
    {
        (n, Scope::Session)
    } else if let Some(n) = lower.strip_prefix("global.") {
        (n, Scope::Global)
    } else {
        (lower.as_str(), Scope::Default)
    };
    (!name.contains('.')).then(|| (name.to_owned(), scope))
}

/// A scope keyword of `SET` (`GLOBAL`, `SESSION`, `LOCAL`).
fn scope_keyword(c: &mut Cursor<'_>) -> Option<Scope> {
    if c.keyword("GLOBAL") {
        Some(Scope::Global)
    } else if c.keyword("SESSION") || c.keyword("LOCAL") {
        Some(Scope::Session)
    } else {
        None
    }
}

fn parse_set(c: &mut Cursor<'_>) -> Option<Probe> {
    if c.keyword("NAMES") {
        let charset = c.name()?;
        let collation = if c.keyword("COLLATE") {
            Some(c.name()?)
        } else {
            None
        };
        return Some(Probe::SetNames { charset, collation });
    }
    let first_scope = scope_keyword(c);
    if c.keyword("TRANSACTION") {
        return parse_transaction(c, first_scope.unwrap_or(Scope::Default));
    }
    // A scope keyword applies to the assignments after it until the next one (MySQL's rule).
    c.pos = 1;
    let mut keyword_scope = Scope::Default;
    let mut assignments = Vec::new();
    loop {
        if let Some(scope) = scope_keyword(c) {
            keyword_scope = scope;
        }
        let (name, scope, bare) = match c.next()? {
            Token::Word(w)
                if w.eq_ignore_ascii_case("PERSIST") || w.eq_ignore_ascii_case("PERSIST_ONLY") =>
            {
                return None;
            }
            Token::Word(w) => (w.to_ascii_lowercase(), keyword_scope, false),
            Token::SystemVariable(v) => {
                let (name, scope) = scoped_name(&v)?;
                let bare = scope == Scope::Default;
                (name, scope, bare)
            }
            _ => return None,
        };
        if !c.punct('=') {
            return None;
        }
        let value = match c.next()? {
            Token::Word(w) if w.eq_ignore_ascii_case("DEFAULT") => None,
            Token::Word(w) | Token::Quoted(w) | Token::Number(w) => Some(w),
            _ => return None,
        };
        assignments.push(Assignment {
            name,
            value,
            scope,
            bare,
        });
        if !c.punct(',') {
            break;
        }
    }
    Some(Probe::Set(assignments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(sql in "\\PC{0,80}", bytes in proptest::collection::vec(any::<char>(), 0..40)) {
            for part in split_statements(&sql) {
                let _ = recognize(part);
            }
            let text: String = bytes.into_iter().collect();
            for part in split_statements(&text) {
                let _ = recognize(part);
            }
        }

        #[test]
        fn unterminated_quotes_and_comments_never_panic(prefix in "(SELECT|SET|USE) ", tail in "['\"`/*#@-]{0,6}[a-z]{0,4}") {
            let sql = format!("{prefix}{tail}");
            for part in split_statements(&sql) {
                let _ = recognize(part);
            }
        }
    }

    #[test]
    fn banner_probe_is_recognized_with_its_column_name() {
        let p = recognize("select @@version_comment limit 1").unwrap();
        assert_eq!(
            p,
            Probe::Select {
                items: vec![ProbeItem {
                    expr: ProbeExpr::SystemVariable("version_comment".into(), Scope::Default),
                    name: "@@version_comment".into()
                }],
                limit: Some(1)
            }
        );
    }

    #[test]
    fn leading_comments_are_skipped_and_aliases_kept() {
        let p = recognize("/* mysql-connector-j */SELECT @@session.autocommit AS ac, DATABASE()")
            .unwrap();
        let Probe::Select { items, .. } = p else {
            panic!("not a select")
        };
        assert_eq!(items[0].name, "ac");
        assert_eq!(items[1].expr, ProbeExpr::Database);
        assert_eq!(items[1].name, "DATABASE()");
    }

    #[test]
    fn anything_else_is_unsupported() {
        for sql in [
            "SELECT c FROM sbtest1 WHERE id = 1",
            "SELECT 1 + 1",
            "SET @x = 1",
            "SET PERSIST autocommit = 0",
            "SET @@persist.autocommit = 0",
            "SHOW TABLES",
            "SHOW VARIABLES WHERE Variable_name = 'x'",
            "/*!40101 SET NAMES utf8 */",
            "BEGIN",
        ] {
            assert_eq!(recognize(sql), None, "{sql}");
        }
    }

    #[test]
    fn set_forms() {
        assert_eq!(
            recognize("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_0900_ai_ci'").unwrap(),
            Probe::SetNames {
                charset: "utf8mb4".into(),
                collation: Some("utf8mb4_0900_ai_ci".into())
            }
        );
        assert_eq!(
            recognize("SET @@session.autocommit = OFF, sql_mode = DEFAULT").unwrap(),
            Probe::Set(vec![
                Assignment {
                    name: "autocommit".into(),
                    value: Some("OFF".into()),
                    scope: Scope::Session,
                    bare: false,
                },
                Assignment {
                    name: "sql_mode".into(),
                    value: None,
                    scope: Scope::Default,
                    bare: false,
                },
            ])
        );
        assert_eq!(
            recognize("SET GLOBAL max_connections = 10, wait_timeout = 5, SESSION autocommit = 0, @@global.x = 1, @@y = 2")
                .unwrap(),
            Probe::Set(vec![
                Assignment { name: "max_connections".into(), value: Some("10".into()), scope: Scope::Global, bare: false },
                Assignment { name: "wait_timeout".into(), value: Some("5".into()), scope: Scope::Global, bare: false },
                Assignment { name: "autocommit".into(), value: Some("0".into()), scope: Scope::Session, bare: false },
                Assignment { name: "x".into(), value: Some("1".into()), scope: Scope::Global, bare: false },
                Assignment { name: "y".into(), value: Some("2".into()), scope: Scope::Default, bare: true },
            ])
        );
        assert_eq!(
            recognize("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").unwrap(),
            Probe::StartTransaction {
                read_only: Some(true)
            }
        );
        assert_eq!(
            recognize("start transaction").unwrap(),
            Probe::StartTransaction { read_only: None }
        );
        assert_eq!(recognize("START TRANSACTION READ ONLY, READ WRITE"), None);
        assert_eq!(
            recognize("SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED").unwrap(),
            Probe::SetTransaction {
                scope: Scope::Global,
                isolation: Some("READ-COMMITTED".into()),
                read_only: None
            }
        );
    }

    #[test]
    fn show_and_transaction_forms() {
        assert_eq!(
            recognize("show session variables like 'auto%'").unwrap(),
            Probe::ShowVariables {
                global: false,
                like: Some("auto%".into())
            }
        );
        assert_eq!(
            recognize("SHOW GLOBAL STATUS").unwrap(),
            Probe::ShowStatus {
                global: true,
                like: None
            }
        );
        assert_eq!(
            recognize("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE")
                .unwrap(),
            Probe::SetTransaction {
                scope: Scope::Session,
                isolation: Some("READ-COMMITTED".into()),
                read_only: Some(false)
            }
        );
        assert_eq!(
            recognize("SET session autocommit = 1").unwrap(),
            Probe::Set(vec![Assignment {
                name: "autocommit".into(),
                value: Some("1".into()),
                scope: Scope::Session,
                bare: false,
            }])
        );
    }

    #[test]
    fn statements_split_outside_quotes_and_comments() {
        assert_eq!(
            split_statements("select 'a;b'; /* ; */ select 2;"),
            vec!["select 'a;b'", " /* ; */ select 2"]
        );
        assert!(split_statements("  ;  ").is_empty());
    }
}
