//! A small parser for the MySQL account statements: CREATE / ALTER / DROP USER, GRANT, REVOKE,
//! SET PASSWORD and SHOW GRANTS.
//!
//! Why not sqlparser: sqlparser 0.62 parses CREATE USER in Snowflake's form (`name key=value`)
//! and rejects `'u'@'h' IDENTIFIED BY 'p'`; ALTER USER, DROP USER `'u'@'h'` and SET PASSWORD FOR
//! fail too, and `SHOW GRANTS FOR 'u'@'%'` parses as `SHOW VARIABLE grants for`, dropping the
//! account (a test pins all of this). Only GRANT/REVOKE parse, into a model that is mostly
//! Snowflake's. One parser for the seven statements keeps their grammar in one place, and the
//! dispatcher must route these statements here BEFORE handing text to sqlparser.
//!
//! Invariants: [`recognize`] claims a text only by its leading keywords (so `CREATE TABLE user`
//! is never claimed); every clause it does not implement (REQUIRE, PASSWORD EXPIRE, WITH GRANT
//! OPTION, privilege lists, table-level grants, roles …) is an explicit `NotSupported` error
//! naming the clause, never ignored.

use super::record::{AccountName, AccountPlugin};
use crate::error::{SqlError, SqlResult};

/// An authentication clause: `IDENTIFIED [WITH plugin] [BY 'password']`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSpec {
    /// The plugin named with WITH, if any.
    pub plugin: Option<AccountPlugin>,
    /// The cleartext password (empty: no password).
    pub password: String,
}

/// One user of CREATE USER / ALTER USER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSpec {
    /// The account.
    pub name: UserRef,
    /// Its IDENTIFIED clause.
    pub auth: Option<AuthSpec>,
}

/// An account named in a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserRef {
    /// `'user'@'host'` (host `%` when omitted).
    Named(AccountName),
    /// `CURRENT_USER`, `CURRENT_USER()` or `USER()`.
    Current,
}

/// Where ALL PRIVILEGES apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantLevel {
    /// `*.*`.
    Global,
    /// `db.*`.
    Database(String),
}

/// A parsed account statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountStatement {
    /// CREATE USER [IF NOT EXISTS] spec [, spec] ...
    CreateUser {
        if_not_exists: bool,
        users: Vec<UserSpec>,
    },
    /// ALTER USER [IF EXISTS] spec [, spec] ... (each with IDENTIFIED).
    AlterUser {
        if_exists: bool,
        users: Vec<UserSpec>,
    },
    /// DROP USER [IF EXISTS] user [, user] ...
    DropUser {
        if_exists: bool,
        users: Vec<UserRef>,
    },
    /// GRANT ALL [PRIVILEGES] ON level TO user [, user] ...
    Grant {
        level: GrantLevel,
        users: Vec<UserRef>,
    },
    /// REVOKE ALL [PRIVILEGES] ON level FROM ... ; `level` None is
    /// `REVOKE ALL [PRIVILEGES], GRANT OPTION FROM ...` (everything).
    Revoke {
        level: Option<GrantLevel>,
        users: Vec<UserRef>,
    },
    /// SET PASSWORD [FOR user] = 'password'.
    SetPassword {
        user: Option<UserRef>,
        password: String,
    },
    /// SHOW GRANTS [FOR user].
    ShowGrants { user: Option<UserRef> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Backticked(String),
    Punct(char),
}

fn tokenize(sql: &str) -> SqlResult<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '#' => while chars.next_if(|&(_, c)| c != '\n').is_some() {},
            '-' if sql.get(i..).is_some_and(|s| s.starts_with("-- ")) => {
                while chars.next_if(|&(_, c)| c != '\n').is_some() {}
            }
            '/' if sql.get(i..).is_some_and(|s| s.starts_with("/*")) => {
                chars.next();
                let mut prev = ' ';
                loop {
                    match chars.next() {
                        Some((_, '/')) if prev == '*' => break,
                        Some((_, c)) => prev = c,
                        None => return Err(syntax(sql, i)),
                    }
                }
            }
            '\'' | '"' | '`' => {
                let mut text = String::new();
                loop {
                    match chars.next() {
                        Some((_, q)) if q == c => {
                            if chars.next_if(|&(_, n)| n == c).is_some() {
                                text.push(c);
                            } else {
                                break;
                            }
                        }
                        Some((_, '\\')) if c != '`' => match chars.next() {
                            Some((_, 'n')) => text.push('\n'),
                            Some((_, 't')) => text.push('\t'),
                            Some((_, 'r')) => text.push('\r'),
                            Some((_, '0')) => text.push('\0'),
                            Some((_, e)) => text.push(e),
                            None => return Err(syntax(sql, i)),
                        },
                        Some((_, ch)) => text.push(ch),
                        None => return Err(syntax(sql, i)),
                    }
                }
                out.push(if c == '`' {
                    Token::Backticked(text)
                } else {
                    Token::Quoted(text)
                });
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut word = String::from(c);
                while let Some((_, n)) =
                    chars.next_if(|&(_, n)| n.is_alphanumeric() || n == '_' || n == '$')
                {
                    word.push(n);
                }
                out.push(Token::Word(word));
            }
            '@' | '*' | '.' | '=' | ',' | '(' | ')' | ';' => out.push(Token::Punct(c)),
            _ => return Err(syntax(sql, i)),
        }
    }
    while out.last() == Some(&Token::Punct(';')) {
        out.pop();
    }
    Ok(out)
}

fn syntax(sql: &str, at: usize) -> SqlError {
    SqlError::Parse(sql.get(at..).unwrap_or("").chars().take(80).collect())
}

/// Clause keywords of MySQL's account statements that Orcinus does not implement; meeting one
/// where a statement could end names it in a `NotSupported` error instead of a syntax error.
const OPTION_KEYWORDS: &[&str] = &[
    "REQUIRE",
    "WITH",
    "PASSWORD",
    "ACCOUNT",
    "COMMENT",
    "ATTRIBUTE",
    "DEFAULT",
    "FAILED_LOGIN_ATTEMPTS",
    "PASSWORD_LOCK_TIME",
    "RETAIN",
    "DISCARD",
    "REPLACE",
    "USING",
    "GRANTED",
    "AS",
    "IGNORE",
];

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn rest_text(&self) -> String {
        let mut s = String::new();
        for t in self.tokens.iter().skip(self.pos) {
            match t {
                Token::Word(w) => s.push_str(w),
                Token::Quoted(q) => s.push_str(&format!("'{q}'")),
                Token::Backticked(b) => s.push_str(&format!("`{b}`")),
                Token::Punct(p) => s.push(*p),
            }
            s.push(' ');
        }
        s.trim_end().chars().take(80).collect()
    }

    fn error(&self) -> SqlError {
        SqlError::Parse(self.rest_text())
    }

    fn is_word(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    fn eat_word(&mut self, kw: &str) -> bool {
        let hit = self.is_word(kw);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn eat_words(&mut self, kws: &[&str]) -> bool {
        let all = kws.iter().enumerate().all(|(i, kw)| {
            matches!(self.tokens.get(self.pos + i), Some(Token::Word(w)) if w.eq_ignore_ascii_case(kw))
        });
        if all {
            self.pos += kws.len();
        }
        all
    }

    fn expect_word(&mut self, kw: &str) -> SqlResult<()> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn eat_punct(&mut self, p: char) -> bool {
        let hit = self.peek() == Some(&Token::Punct(p));
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn expect_punct(&mut self, p: char) -> SqlResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    /// Errors unless the statement is complete; a leading keyword names the unsupported clause.
    fn finish(&self, statement: &str) -> SqlResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(Token::Word(w)) if OPTION_KEYWORDS.iter().any(|k| w.eq_ignore_ascii_case(k)) => {
                Err(SqlError::unsupported(format!(
                    "{statement} ... {}",
                    w.to_uppercase()
                )))
            }
            Some(_) => Err(self.error()),
        }
    }

    fn string(&mut self) -> SqlResult<String> {
        match self.peek().cloned() {
            Some(Token::Quoted(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error()),
        }
    }

    fn name_part(&mut self) -> SqlResult<String> {
        match self.peek().cloned() {
            Some(Token::Quoted(s) | Token::Backticked(s) | Token::Word(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error()),
        }
    }

    fn user(&mut self) -> SqlResult<UserRef> {
        let user_function =
            self.is_word("USER") && self.tokens.get(self.pos + 1) == Some(&Token::Punct('('));
        if self.eat_word("CURRENT_USER") || (user_function && self.eat_word("USER")) {
            if self.eat_punct('(') {
                self.expect_punct(')')?;
            }
            return Ok(UserRef::Current);
        }
        let user = self.name_part()?;
        let host = if self.eat_punct('@') {
            self.name_part()?
        } else {
            "%".to_owned()
        };
        Ok(UserRef::Named(AccountName::new(&user, &host)?))
    }

    fn users(&mut self) -> SqlResult<Vec<UserRef>> {
        let mut users = vec![self.user()?];
        while self.eat_punct(',') {
            users.push(self.user()?);
        }
        Ok(users)
    }

    fn auth(&mut self, statement: &str) -> SqlResult<Option<AuthSpec>> {
        if !self.eat_word("IDENTIFIED") {
            return Ok(None);
        }
        let plugin = if self.eat_word("WITH") {
            Some(AccountPlugin::from_name(&self.name_part()?)?)
        } else {
            None
        };
        let password = if self.eat_word("BY") {
            if self.eat_words(&["RANDOM", "PASSWORD"]) {
                return Err(SqlError::unsupported(format!(
                    "{statement} ... IDENTIFIED BY RANDOM PASSWORD"
                )));
            }
            self.string()?
        } else if self.eat_word("AS") {
            return Err(SqlError::unsupported(format!(
                "{statement} ... IDENTIFIED WITH ... AS <hash>"
            )));
        } else if plugin.is_some() {
            String::new()
        } else {
            return Err(self.error());
        };
        if self.is_word("REPLACE") || self.is_word("RETAIN") {
            return Err(SqlError::unsupported(format!(
                "{statement} ... IDENTIFIED BY ... {}",
                self.rest_text().to_uppercase()
            )));
        }
        Ok(Some(AuthSpec { plugin, password }))
    }

    fn user_specs(&mut self, statement: &str) -> SqlResult<Vec<UserSpec>> {
        let mut users = Vec::new();
        loop {
            let name = self.user()?;
            let auth = self.auth(statement)?;
            users.push(UserSpec { name, auth });
            if !self.eat_punct(',') {
                return Ok(users);
            }
        }
    }

    fn level(&mut self, statement: &str) -> SqlResult<GrantLevel> {
        if self.is_word("TABLE") || self.is_word("FUNCTION") || self.is_word("PROCEDURE") {
            return Err(SqlError::unsupported(format!(
                "{statement} ... ON {}: only *.* and db.* levels",
                self.rest_text().to_uppercase()
            )));
        }
        if self.eat_punct('*') {
            if !self.eat_punct('.') {
                return Err(SqlError::unsupported(format!(
                    "{statement} ... ON * (the current database): name it as db.*"
                )));
            }
            self.expect_punct('*')?;
            return Ok(GrantLevel::Global);
        }
        let db = self.name_part()?;
        self.expect_punct('.')?;
        if self.eat_punct('*') {
            return Ok(GrantLevel::Database(db));
        }
        Err(SqlError::unsupported(format!(
            "{statement} ... ON {db}.{}: table-level privileges",
            self.rest_text()
        )))
    }

    /// `ALL [PRIVILEGES]`; any other privilege list is unsupported.
    fn all_privileges(&mut self, statement: &str) -> SqlResult<()> {
        if self.eat_word("ALL") {
            self.eat_word("PRIVILEGES");
            return Ok(());
        }
        Err(SqlError::unsupported(format!(
            "{statement} {}: only ALL [PRIVILEGES] is supported (no privilege lists or roles)",
            self.rest_text().to_uppercase()
        )))
    }
}

/// Parses `sql` if it is an account statement; `None` if its leading keywords are not one.
#[must_use]
pub fn recognize(sql: &str) -> Option<SqlResult<AccountStatement>> {
    let tokens = match tokenize(sql) {
        Ok(t) => t,
        // Not ours to report: the text may be another statement the main parser explains.
        Err(_) => return None,
    };
    let mut p = Parser { tokens, pos: 0 };
    let claimed = ["CREATE", "ALTER", "DROP"].iter().any(|kw| {
        p.is_word(kw)
            && matches!(p.tokens.get(1), Some(Token::Word(w)) if w.eq_ignore_ascii_case("USER"))
    }) || p.is_word("GRANT")
        || p.is_word("REVOKE")
        || matches!((p.tokens.first(), p.tokens.get(1)), (Some(Token::Word(a)), Some(Token::Word(b)))
            if a.eq_ignore_ascii_case("SET") && b.eq_ignore_ascii_case("PASSWORD"))
        || matches!((p.tokens.first(), p.tokens.get(1)), (Some(Token::Word(a)), Some(Token::Word(b)))
            if a.eq_ignore_ascii_case("SHOW") && b.eq_ignore_ascii_case("GRANTS"));
    claimed.then(|| parse_claimed(&mut p))
}

fn parse_claimed(p: &mut Parser) -> SqlResult<AccountStatement> {
    let stmt = if p.eat_words(&["CREATE", "USER"]) {
        let if_not_exists = p.eat_words(&["IF", "NOT", "EXISTS"]);
        let users = p.user_specs("CREATE USER")?;
        p.finish("CREATE USER")?;
        AccountStatement::CreateUser {
            if_not_exists,
            users,
        }
    } else if p.eat_words(&["ALTER", "USER"]) {
        let if_exists = p.eat_words(&["IF", "EXISTS"]);
        let users = p.user_specs("ALTER USER")?;
        p.finish("ALTER USER")?;
        if users.iter().any(|u| u.auth.is_none()) {
            return Err(SqlError::unsupported(
                "ALTER USER without IDENTIFIED (only password changes are supported)",
            ));
        }
        AccountStatement::AlterUser { if_exists, users }
    } else if p.eat_words(&["DROP", "USER"]) {
        let if_exists = p.eat_words(&["IF", "EXISTS"]);
        let users = p.users()?;
        p.finish("DROP USER")?;
        AccountStatement::DropUser { if_exists, users }
    } else if p.eat_word("GRANT") {
        p.all_privileges("GRANT")?;
        p.expect_word("ON")?;
        let level = p.level("GRANT")?;
        p.expect_word("TO")?;
        let users = p.users()?;
        if p.eat_words(&["WITH", "GRANT", "OPTION"]) {
            return Err(SqlError::unsupported("GRANT ... WITH GRANT OPTION"));
        }
        p.finish("GRANT")?;
        AccountStatement::Grant { level, users }
    } else if p.eat_word("REVOKE") {
        if p.is_word("IF") || p.is_word("IGNORE") {
            return Err(SqlError::unsupported(format!(
                "REVOKE {}",
                p.rest_text().to_uppercase()
            )));
        }
        p.all_privileges("REVOKE")?;
        let level = if p.eat_punct(',') {
            if !p.eat_words(&["GRANT", "OPTION"]) {
                return Err(p.error());
            }
            None
        } else {
            p.expect_word("ON")?;
            Some(p.level("REVOKE")?)
        };
        p.expect_word("FROM")?;
        let users = p.users()?;
        p.finish("REVOKE")?;
        AccountStatement::Revoke { level, users }
    } else if p.eat_words(&["SET", "PASSWORD"]) {
        let user = if p.eat_word("FOR") {
            Some(p.user()?)
        } else {
            None
        };
        if p.eat_words(&["TO", "RANDOM"]) {
            return Err(SqlError::unsupported("SET PASSWORD ... TO RANDOM"));
        }
        p.expect_punct('=')?;
        if p.is_word("PASSWORD") {
            return Err(SqlError::unsupported("SET PASSWORD ... = PASSWORD(...)"));
        }
        let password = p.string()?;
        p.finish("SET PASSWORD")?;
        AccountStatement::SetPassword { user, password }
    } else if p.eat_words(&["SHOW", "GRANTS"]) {
        let user = if p.eat_word("FOR") {
            Some(p.user()?)
        } else {
            None
        };
        if p.is_word("USING") {
            return Err(SqlError::unsupported("SHOW GRANTS ... USING (roles)"));
        }
        p.finish("SHOW GRANTS")?;
        AccountStatement::ShowGrants { user }
    } else {
        return Err(p.error());
    };
    if !p.at_end() {
        return Err(p.error());
    }
    Ok(stmt)
}
