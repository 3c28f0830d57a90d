//! Recognizes the statements answered from session state rather than by the executor: client
//! probes (`SELECT @@version_comment LIMIT 1`, `SELECT DATABASE(), USER()`), `SET` of session
//! variables, `SET NAMES`, `SET [SESSION] TRANSACTION …`, `USE`, `SHOW VARIABLES`,
//! `SHOW STATUS`, `SHOW WARNINGS`.
//!
//! Invariants: recognition is exact: a statement with anything the grammar below does not
//! cover (a FROM clause, an operator, a user variable, an executable comment, GLOBAL scope) is
//! not recognized and goes on to the executor, which runs it or rejects it naming it; it is
//! never answered approximately.

#[cfg(test)]
use crate::sql_text::split_statements;
use crate::sql_text::{Token, tokenize};

/// A value a probe `SELECT` can compute from session state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ProbeExpr {
    /// `@@[session.|local.]name`.
    SystemVariable(String),
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
    /// `SHOW [SESSION|LOCAL|GLOBAL] VARIABLES [LIKE 'pattern']` (session and global values are
    /// the same: no variable can be set globally).
    ShowVariables {
        like: Option<String>,
    },
    /// `SHOW [SESSION|LOCAL|GLOBAL] STATUS [LIKE 'pattern']`.
    ShowStatus {
        global: bool,
        like: Option<String>,
    },
    /// `SET [SESSION] TRANSACTION characteristic, …`: the isolation level in the variable's
    /// spelling (`REPEATABLE-READ`) and the access mode (true for READ ONLY).
    SetTransaction {
        isolation: Option<String>,
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
        Probe::ShowVariables { like }
    } else {
        Probe::ShowStatus { global, like }
    })
}

/// `[ISOLATION LEVEL level | READ WRITE | READ ONLY], …` after `SET [SESSION] TRANSACTION`.
fn parse_transaction(c: &mut Cursor<'_>) -> Option<Probe> {
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
            let lower = v.to_ascii_lowercase();
            let bare = lower
                .strip_prefix("session.")
                .or_else(|| lower.strip_prefix("local."))
                .unwrap_or(&lower);
            if bare.contains('.') {
                return None;
            }
            (ProbeExpr::SystemVariable(bare.to_owned()), format!("@@{v}"))
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
    if c.keyword("TRANSACTION") || (c.keyword("SESSION") && c.keyword("TRANSACTION")) {
        return parse_transaction(c);
    }
    // `SESSION` was consumed by a failed `SESSION TRANSACTION` match: step back.
    c.pos = 1;
    let mut assignments = Vec::new();
    loop {
        let name = match c.next()? {
            Token::Word(w)
                if w.eq_ignore_ascii_case("SESSION") || w.eq_ignore_ascii_case("LOCAL") =>
            {
                c.name()?
            }
            Token::Word(w) => w,
            Token::SystemVariable(v) => {
                let lower = v.to_ascii_lowercase();
                let bare = lower
                    .strip_prefix("session.")
                    .or_else(|| lower.strip_prefix("local."))
                    .unwrap_or(&lower);
                if bare.contains('.') {
                    return None;
                }
                bare.to_owned()
            }
            _ => return None,
        };
        if name.eq_ignore_ascii_case("GLOBAL") || name.eq_ignore_ascii_case("PERSIST") {
            return None;
        }
        if !c.punct('=') {
            return None;
        }
        let value = match c.next()? {
            Token::Word(w) if w.eq_ignore_ascii_case("DEFAULT") => None,
            Token::Word(w) | Token::Quoted(w) | Token::Number(w) => Some(w),
            _ => return None,
        };
        assignments.push(Assignment { name, value });
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
                    expr: ProbeExpr::SystemVariable("version_comment".into()),
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
            "SET GLOBAL autocommit = 0",
            "SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE",
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
                    value: Some("OFF".into())
                },
                Assignment {
                    name: "sql_mode".into(),
                    value: None
                },
            ])
        );
    }

    #[test]
    fn show_and_transaction_forms() {
        assert_eq!(
            recognize("show session variables like 'auto%'").unwrap(),
            Probe::ShowVariables {
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
                isolation: Some("READ-COMMITTED".into()),
                read_only: Some(false)
            }
        );
        assert_eq!(
            recognize("SET session autocommit = 1").unwrap(),
            Probe::Set(vec![Assignment {
                name: "autocommit".into(),
                value: Some("1".into())
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
