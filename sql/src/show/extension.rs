//! The SHOW forms the SQL parser does not model: SHOW CREATE {DATABASE | SCHEMA} (a syntax error
//! to the parser), and SHOW {INDEX | INDEXES | KEYS}, SHOW TABLE STATUS and SHOW [STORAGE]
//! ENGINES (which it reduces to a bare word list, dropping `.`, string literals and stopping at
//! `=`). They are recognised here from tokens — of the statement text (lossless), or of that word
//! list (`from_words`, where a LIKE pattern is gone and is refused rather than ignored).
//!
//! Grammar (MySQL 8.0):
//! - `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db`
//! - `SHOW {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db] [WHERE expr]`
//! - `SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'pattern' | WHERE expr]`
//! - `SHOW [STORAGE] ENGINES`
//!
//! Invariant: text that is not one of these forms (or holds more than one statement) is not
//! claimed (`None`), so the ordinary parser reports it.

use crate::error::{SqlError, SqlResult};
use datafusion::sql::sqlparser::ast::{Expr, Ident};
use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

/// Filter of the extension forms.
#[derive(Debug, Clone, PartialEq)]
pub enum ExtensionFilter {
    Like(String),
    Where(Box<Expr>),
}

/// A SHOW statement the parser does not model.
#[derive(Debug, Clone, PartialEq)]
pub enum ShowExtension {
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    Index {
        /// `[db,] table`.
        table: Vec<String>,
        filter: Option<Box<Expr>>,
    },
    TableStatus {
        db: Option<String>,
        filter: Option<ExtensionFilter>,
    },
    Engines,
}

struct Cursor {
    tokens: Vec<Token>,
    pos: usize,
    /// Tokens come from the parser's word list: dots between name parts are gone and string
    /// literals were dropped.
    lossy: bool,
}

impl Cursor {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
    }

    fn keyword(&mut self, kw: &str) -> bool {
        let found = self.peek_keyword(kw);
        if found {
            self.pos += 1;
        }
        found
    }

    fn near(&self) -> String {
        self.tokens
            .get(self.pos..)
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn syntax_error(&self) -> SqlError {
        SqlError::Parse(self.near())
    }

    fn identifier(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let v = w.value.clone();
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.syntax_error()),
        }
    }

    /// `name [. name]`; in lossy mode two adjacent words that are not clause keywords.
    fn object_name(&mut self) -> SqlResult<Vec<String>> {
        let first = self.identifier()?;
        if self.peek() == Some(&Token::Period) {
            self.pos += 1;
            return Ok(vec![first, self.identifier()?]);
        }
        let clause = ["FROM", "IN", "WHERE", "LIKE"];
        if self.lossy
            && matches!(self.peek(), Some(Token::Word(_)))
            && !clause.iter().any(|k| self.peek_keyword(k))
        {
            return Ok(vec![first, self.identifier()?]);
        }
        Ok(vec![first])
    }

    fn keyword_from_or_in(&mut self) -> bool {
        self.keyword("FROM") || self.keyword("IN")
    }

    fn at_end(&self) -> bool {
        matches!(
            self.tokens.get(self.pos..),
            Some([] | [Token::SemiColon] | [Token::EOF] | [Token::SemiColon, Token::EOF])
        )
    }

    fn expect_end(&self) -> SqlResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    /// The rest of the statement as an expression (`WHERE …`).
    fn expression(&mut self) -> SqlResult<Expr> {
        let rest: Vec<Token> = self
            .tokens
            .get(self.pos..)
            .unwrap_or_default()
            .iter()
            .filter(|t| !matches!(t, Token::SemiColon | Token::EOF))
            .cloned()
            .collect();
        self.pos = self.tokens.len();
        let dialect = MySqlDialect {};
        let mut parser = Parser::new(&dialect).with_tokens(rest);
        let e = parser
            .parse_expr()
            .map_err(|e| SqlError::Parse(e.to_string()))?;
        if parser.peek_token().token != Token::EOF {
            return Err(SqlError::Parse(parser.peek_token().to_string()));
        }
        Ok(e)
    }

    fn like_pattern(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ if self.lossy => Err(SqlError::unsupported(
                "LIKE in this SHOW statement once parsed (the pattern is lost)",
            )),
            _ => Err(self.syntax_error()),
        }
    }
}

fn parse(mut c: Cursor) -> Option<SqlResult<ShowExtension>> {
    if !c.keyword("SHOW") {
        return None;
    }
    if c.keyword("CREATE") {
        if !(c.keyword("DATABASE") || c.keyword("SCHEMA")) {
            return None;
        }
        return Some(parse_create_database(&mut c));
    }
    if c.peek_keyword("EXTENDED") {
        let mut probe = Cursor {
            tokens: c.tokens.clone(),
            pos: c.pos + 1,
            lossy: c.lossy,
        };
        if ["INDEX", "INDEXES", "KEYS"]
            .iter()
            .any(|k| probe.keyword(k))
        {
            return Some(Err(SqlError::unsupported("SHOW EXTENDED INDEX")));
        }
        return None;
    }
    if c.keyword("INDEX") || c.keyword("INDEXES") || c.keyword("KEYS") {
        return Some(parse_index(&mut c));
    }
    if c.keyword("TABLE") {
        if !c.keyword("STATUS") {
            return None;
        }
        return Some(parse_table_status(&mut c));
    }
    let storage = c.keyword("STORAGE");
    if c.keyword("ENGINES") {
        return Some(c.expect_end().map(|()| ShowExtension::Engines));
    }
    if storage {
        return Some(Err(c.syntax_error()));
    }
    None
}

fn parse_create_database(c: &mut Cursor) -> SqlResult<ShowExtension> {
    let if_not_exists = if c.keyword("IF") {
        if !(c.keyword("NOT") && c.keyword("EXISTS")) {
            return Err(c.syntax_error());
        }
        true
    } else {
        false
    };
    let name = c.identifier()?;
    c.expect_end()?;
    Ok(ShowExtension::CreateDatabase {
        name,
        if_not_exists,
    })
}

fn parse_index(c: &mut Cursor) -> SqlResult<ShowExtension> {
    if !c.keyword_from_or_in() {
        return Err(c.syntax_error());
    }
    let mut table = c.object_name()?;
    if c.keyword_from_or_in() {
        let db = c.identifier()?;
        let name = table.pop().ok_or_else(|| c.syntax_error())?;
        table = vec![db, name];
    }
    let filter = if c.keyword("WHERE") {
        Some(Box::new(c.expression()?))
    } else {
        None
    };
    c.expect_end()?;
    Ok(ShowExtension::Index { table, filter })
}

fn parse_table_status(c: &mut Cursor) -> SqlResult<ShowExtension> {
    let db = if c.keyword_from_or_in() {
        Some(c.identifier()?)
    } else {
        None
    };
    let filter = if c.keyword("LIKE") {
        Some(ExtensionFilter::Like(c.like_pattern()?))
    } else if c.keyword("WHERE") {
        Some(ExtensionFilter::Where(Box::new(c.expression()?)))
    } else {
        None
    };
    c.expect_end()?;
    Ok(ShowExtension::TableStatus { db, filter })
}

/// Recognises an extension form in statement text. `None` if the text is not one (or does not
/// tokenize, which the ordinary parser then reports).
#[must_use]
pub fn from_text(sql: &str) -> Option<SqlResult<ShowExtension>> {
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    // More than one statement: leave it to the ordinary path.
    let first_semicolon = tokens.iter().position(|t| *t == Token::SemiColon);
    if let Some(p) = first_semicolon
        && tokens.get(p + 1..).is_some_and(|rest| {
            rest.iter()
                .any(|t| *t != Token::SemiColon && *t != Token::EOF)
        })
    {
        return None;
    }
    parse(Cursor {
        tokens,
        pos: 0,
        lossy: false,
    })
}

/// Recognises an extension form in the word list the parser made of `SHOW <words>`
/// (`Statement::ShowVariable`). `None` if the words are not one.
#[must_use]
pub fn from_words(words: &[Ident]) -> Option<SqlResult<ShowExtension>> {
    let mut tokens = vec![Token::make_keyword("SHOW")];
    tokens.extend(
        words
            .iter()
            .map(|w| Token::make_word(&w.value, w.quote_style)),
    );
    parse(Cursor {
        tokens,
        pos: 0,
        lossy: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> ShowExtension {
        from_text(sql)
            .unwrap_or_else(|| panic!("{sql}: not recognised"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    #[test]
    fn recognises_the_forms() {
        assert_eq!(
            parsed("show create database if not exists `sb``t`;"),
            ShowExtension::CreateDatabase {
                name: "sb`t".into(),
                if_not_exists: true
            }
        );
        assert_eq!(
            parsed("/* tool */ SHOW KEYS IN t FROM d"),
            ShowExtension::Index {
                table: vec!["d".into(), "t".into()],
                filter: None
            }
        );
        assert!(matches!(
            parsed("SHOW INDEX FROM d.t WHERE Key_name = 'PRIMARY'"),
            ShowExtension::Index { table, filter: Some(_) } if table == ["d", "t"]
        ));
        assert_eq!(
            parsed("SHOW TABLE STATUS FROM d LIKE 'sb%'"),
            ShowExtension::TableStatus {
                db: Some("d".into()),
                filter: Some(ExtensionFilter::Like("sb%".into()))
            }
        );
        assert_eq!(parsed("SHOW STORAGE ENGINES"), ShowExtension::Engines);
    }

    #[test]
    fn leaves_other_text_alone() {
        for sql in [
            "SHOW TABLES",
            "SHOW CREATE TABLE t",
            "SELECT 1",
            "SHOW INDEX FROM t; SELECT 1",
            "SHOW WARNINGS",
        ] {
            assert!(from_text(sql).is_none(), "{sql}");
        }
    }

    #[test]
    fn syntax_errors_are_errors() {
        for sql in [
            "SHOW INDEX t",
            "SHOW ENGINES x",
            "SHOW CREATE DATABASE IF EXISTS d",
            "SHOW TABLE STATUS LIKE x",
            "SHOW INDEX FROM t WHERE",
        ] {
            let e = from_text(sql).unwrap().unwrap_err();
            assert_eq!(e.code(), 1064, "{sql}: {e}");
        }
    }

    #[test]
    fn lossy_word_lists_refuse_a_lost_pattern() {
        let words = |s: &str| -> Vec<Ident> { s.split(' ').map(Ident::new).collect() };
        assert_eq!(
            from_words(&words("INDEX FROM d t")).unwrap().unwrap(),
            ShowExtension::Index {
                table: vec!["d".into(), "t".into()],
                filter: None
            }
        );
        let e = from_words(&words("TABLE STATUS LIKE"))
            .unwrap()
            .unwrap_err();
        assert_eq!(e.code(), 1235);
        assert!(from_words(&words("WARNINGS")).is_none());
    }
}
