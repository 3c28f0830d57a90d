//! The parser of MySQL 8.0's `LOAD DATA` statement (sqlparser does not parse it):
//!
//! ```text
//! LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file' [REPLACE | IGNORE]
//!   INTO TABLE [db.]t [CHARACTER SET charset]
//!   [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY 'c']]
//!   [LINES [STARTING BY 's'] [TERMINATED BY 's']]
//!   [IGNORE n {LINES | ROWS}] [(col_or_@var, ...)] [SET col = expr, ...]
//! ```
//!
//! Invariants: string literals get MySQL's backslash escapes (`'\t'` is a tab); every clause not
//! listed above (PARTITION, ROWS IDENTIFIED BY, fixed-width rows) is an error naming it. A SET
//! expression is kept as text with each `@var` replaced by a `?` placeholder (the variable names
//! in placeholder order alongside), so the fast-path binder evaluates it per row with the
//! variables' field values as parameters.

use crate::error::{SqlError, SqlResult};

/// What to do with a row whose key already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Fail the statement (1062); the default without LOCAL.
    Error,
    /// Keep the existing row, skip the new one (IGNORE; the default with LOCAL).
    Ignore,
    /// Delete the existing row(s), then insert (REPLACE).
    Replace,
}

/// How the file is split into rows and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFormat {
    pub field_terminator: Vec<u8>,
    pub enclosed_by: Option<u8>,
    pub optionally_enclosed: bool,
    pub escaped_by: Option<u8>,
    pub line_starting: Vec<u8>,
    pub line_terminator: Vec<u8>,
}

impl Default for FileFormat {
    /// MySQL's defaults: `FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\'
    /// LINES TERMINATED BY '\n' STARTING BY ''`.
    fn default() -> Self {
        Self {
            field_terminator: b"\t".to_vec(),
            enclosed_by: None,
            optionally_enclosed: false,
            escaped_by: Some(b'\\'),
            line_starting: Vec::new(),
            line_terminator: b"\n".to_vec(),
        }
    }
}

/// Where one input field goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Column(String),
    Variable(String),
}

/// One `SET col = expr` assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAssignment {
    pub column: String,
    /// The expression's text with every `@var` replaced by `?`.
    pub expr: String,
    /// The variables, in placeholder order.
    pub variables: Vec<String>,
}

/// A parsed LOAD DATA statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadStatement {
    pub local: bool,
    pub file: String,
    pub duplicates: Option<Duplicates>,
    pub db: Option<String>,
    pub table: String,
    pub charset: Option<String>,
    pub format: FileFormat,
    pub ignore_lines: u64,
    pub targets: Option<Vec<Target>>,
    pub set: Vec<SetAssignment>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Ident(String),
    Str(Vec<u8>),
    Number(String),
    Var(String),
    Punct(char),
    Other(char),
}

/// A token with its byte range in the statement.
struct Spanned {
    tok: Tok,
    start: usize,
    end: usize,
}

fn syntax(near: &str) -> SqlError {
    SqlError::Syntax {
        near: near.chars().take(80).collect(),
        line: 1,
    }
}

/// MySQL's backslash escape sequences, in string literals and in ESCAPED BY fields.
pub(super) fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

fn lex(sql: &str) -> SqlResult<Vec<Spanned>> {
    let b = sql.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = at(i);
        let start = i;
        let tok = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c == b'/' && at(i + 1) == b'*' {
            if at(i + 2) == b'!' {
                return Err(SqlError::unsupported(
                    "executable comments inside LOAD DATA",
                ));
            }
            while i < b.len() && !(at(i) == b'*' && at(i + 1) == b'/') {
                i += 1;
            }
            i += 2;
            continue;
        } else if c == b'#' || (c == b'-' && at(i + 1) == b'-' && at(i + 2).is_ascii_whitespace()) {
            while i < b.len() && at(i) != b'\n' {
                i += 1;
            }
            continue;
        } else if c == b'\'' || c == b'"' || c == b'`' {
            let mut text = Vec::new();
            i += 1;
            loop {
                if i >= b.len() {
                    return Err(syntax(sql.get(start..).unwrap_or_default()));
                }
                let d = at(i);
                if d == b'\\' && c != b'`' {
                    text.push(unescape(at(i + 1)));
                    i += 2;
                } else if d == c && at(i + 1) == c {
                    text.push(c);
                    i += 2;
                } else if d == c {
                    i += 1;
                    break;
                } else {
                    text.push(d);
                    i += 1;
                }
            }
            if c == b'`' {
                Tok::Ident(String::from_utf8_lossy(&text).into_owned())
            } else {
                Tok::Str(text)
            }
        } else if c == b'@' {
            i += 1;
            let name_start = i;
            if matches!(at(i), b'\'' | b'"' | b'`') {
                return Err(SqlError::unsupported(
                    "quoted user variable names in LOAD DATA",
                ));
            }
            while is_word(at(i)) || at(i) == b'.' {
                i += 1;
            }
            if i == name_start {
                return Err(syntax(sql.get(start..).unwrap_or_default()));
            }
            Tok::Var(
                sql.get(name_start..i)
                    .unwrap_or_default()
                    .to_ascii_lowercase(),
            )
        } else if c.is_ascii_digit() {
            while is_word(at(i)) || at(i) == b'.' {
                i += 1;
            }
            Tok::Number(sql.get(start..i).unwrap_or_default().to_owned())
        } else if is_word(c) {
            while is_word(at(i)) {
                i += 1;
            }
            Tok::Word(sql.get(start..i).unwrap_or_default().to_owned())
        } else {
            i += 1;
            match c {
                b'(' | b')' | b',' | b'=' | b'.' => Tok::Punct(char::from(c)),
                other => Tok::Other(char::from(other)),
            }
        };
        out.push(Spanned { tok, start, end: i });
    }
    Ok(out)
}

struct Parser<'a> {
    sql: &'a str,
    toks: Vec<Spanned>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|s| &s.tok)
    }

    fn error(&self) -> SqlError {
        let at = self.toks.get(self.pos).map_or(self.sql.len(), |s| s.start);
        syntax(self.sql.get(at..).unwrap_or_default())
    }

    fn keyword(&mut self, kw: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kw: &str) -> SqlResult<()> {
        if self.keyword(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn punct(&mut self, p: char) -> bool {
        if self.peek() == Some(&Tok::Punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> SqlResult<Vec<u8>> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error()),
        }
    }

    /// A one-character string (or empty) for ENCLOSED BY / ESCAPED BY.
    fn char_or_empty(&mut self, clause: &str) -> SqlResult<Option<u8>> {
        let s = self.string()?;
        match s.as_slice() {
            [] => Ok(None),
            [c] => Ok(Some(*c)),
            _ => Err(SqlError::WrongArguments(clause.to_owned())),
        }
    }

    fn identifier(&mut self) -> SqlResult<String> {
        match self.peek() {
            Some(Tok::Word(w) | Tok::Ident(w)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error()),
        }
    }

    fn fields_clause(&mut self, format: &mut FileFormat) -> SqlResult<()> {
        let mut any = false;
        loop {
            if self.keyword("TERMINATED") {
                self.expect("BY")?;
                format.field_terminator = self.string()?;
            } else if self.keyword("OPTIONALLY") {
                self.expect("ENCLOSED")?;
                self.expect("BY")?;
                format.enclosed_by = self.char_or_empty("ENCLOSED BY")?;
                format.optionally_enclosed = true;
            } else if self.keyword("ENCLOSED") {
                self.expect("BY")?;
                format.enclosed_by = self.char_or_empty("ENCLOSED BY")?;
            } else if self.keyword("ESCAPED") {
                self.expect("BY")?;
                format.escaped_by = self.char_or_empty("ESCAPED BY")?;
            } else {
                break;
            }
            any = true;
        }
        if any { Ok(()) } else { Err(self.error()) }
    }

    fn lines_clause(&mut self, format: &mut FileFormat) -> SqlResult<()> {
        let mut any = false;
        loop {
            if self.keyword("STARTING") {
                self.expect("BY")?;
                format.line_starting = self.string()?;
            } else if self.keyword("TERMINATED") {
                self.expect("BY")?;
                format.line_terminator = self.string()?;
            } else {
                break;
            }
            any = true;
        }
        if any { Ok(()) } else { Err(self.error()) }
    }

    fn targets(&mut self) -> SqlResult<Vec<Target>> {
        let mut targets = Vec::new();
        if self.punct(')') {
            return Ok(targets);
        }
        loop {
            match self.peek() {
                Some(Tok::Var(v)) => {
                    targets.push(Target::Variable(v.clone()));
                    self.pos += 1;
                }
                _ => targets.push(Target::Column(self.column_name()?)),
            }
            if self.punct(')') {
                return Ok(targets);
            }
            if !self.punct(',') {
                return Err(self.error());
            }
        }
    }

    /// `col` or `t.col` / `db.t.col` (the qualifier must name the target table; checked later
    /// only by name, as the last part).
    fn column_name(&mut self) -> SqlResult<String> {
        let mut name = self.identifier()?;
        while self.punct('.') {
            name = self.identifier()?;
        }
        Ok(name)
    }

    fn set_clause(&mut self) -> SqlResult<Vec<SetAssignment>> {
        let mut out = Vec::new();
        loop {
            let column = self.column_name()?;
            if !self.punct('=') {
                return Err(self.error());
            }
            let first = self.pos;
            let mut depth = 0usize;
            while let Some(t) = self.peek() {
                match t {
                    Tok::Punct('(') => depth += 1,
                    Tok::Punct(')') => depth = depth.saturating_sub(1),
                    Tok::Punct(',') if depth == 0 => break,
                    _ => {}
                }
                self.pos += 1;
            }
            if self.pos == first {
                return Err(self.error());
            }
            let mut expr = String::new();
            let mut variables = Vec::new();
            let mut copied = self.toks.get(first).map_or(0, |s| s.start);
            for s in self.toks.get(first..self.pos).unwrap_or_default() {
                if let Tok::Var(v) = &s.tok {
                    expr.push_str(self.sql.get(copied..s.start).unwrap_or_default());
                    expr.push('?');
                    variables.push(v.clone());
                    copied = s.end;
                }
            }
            let end = self
                .toks
                .get(self.pos.saturating_sub(1))
                .map_or(copied, |s| s.end);
            expr.push_str(self.sql.get(copied..end).unwrap_or_default());
            out.push(SetAssignment {
                column,
                expr,
                variables,
            });
            if !self.punct(',') {
                return Ok(out);
            }
        }
    }
}

/// Parses one LOAD DATA statement.
pub fn parse(sql: &str) -> SqlResult<LoadStatement> {
    let toks = lex(sql)?;
    let mut p = Parser { sql, toks, pos: 0 };
    p.expect("LOAD")?;
    if p.keyword("XML") {
        return Err(SqlError::unsupported("LOAD XML"));
    }
    p.expect("DATA")?;
    // Scheduling hints for table-locking engines; rows here take row locks either way.
    let _ = p.keyword("LOW_PRIORITY") || p.keyword("CONCURRENT");
    let local = p.keyword("LOCAL");
    p.expect("INFILE")?;
    let file = String::from_utf8(p.string()?)
        .map_err(|_| SqlError::unsupported("a LOAD DATA file name that is not UTF-8"))?;
    let duplicates = if p.keyword("REPLACE") {
        Some(Duplicates::Replace)
    } else if p.keyword("IGNORE") {
        Some(Duplicates::Ignore)
    } else {
        None
    };
    p.expect("INTO")?;
    p.expect("TABLE")?;
    let mut table = p.identifier()?;
    let mut db = None;
    if p.punct('.') {
        db = Some(table);
        table = p.identifier()?;
    }
    if p.keyword("PARTITION") {
        return Err(SqlError::unsupported("LOAD DATA ... PARTITION"));
    }
    let mut charset = None;
    if p.keyword("CHARACTER") {
        p.expect("SET")?;
        charset = Some(
            p.identifier()
                .or_else(|_| p.string().map(|s| String::from_utf8_lossy(&s).into_owned()))?,
        );
    } else if p.keyword("CHARSET") {
        charset = Some(p.identifier()?);
    }
    let mut format = FileFormat::default();
    if p.keyword("FIELDS") || p.keyword("COLUMNS") {
        p.fields_clause(&mut format)?;
    }
    if p.keyword("LINES") {
        p.lines_clause(&mut format)?;
    }
    let mut ignore_lines = 0;
    if p.keyword("IGNORE") {
        ignore_lines = match p.peek() {
            Some(Tok::Number(n)) => n.parse().map_err(|_| p.error())?,
            _ => return Err(p.error()),
        };
        p.pos += 1;
        if !(p.keyword("LINES") || p.keyword("ROWS")) {
            return Err(p.error());
        }
    }
    let targets = if p.punct('(') {
        Some(p.targets()?)
    } else {
        None
    };
    let set = if p.keyword("SET") {
        p.set_clause()?
    } else {
        Vec::new()
    };
    if p.pos < p.toks.len() {
        return Err(p.error());
    }
    if format.field_terminator.is_empty() && format.enclosed_by.is_none() {
        return Err(SqlError::unsupported(
            "LOAD DATA with fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY '')",
        ));
    }
    if format.line_terminator.is_empty() {
        return Err(SqlError::unsupported(
            "LOAD DATA with LINES TERMINATED BY ''",
        ));
    }
    Ok(LoadStatement {
        local,
        file,
        duplicates,
        db,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_dbgen_form_with_defaults_filled_in() {
        let s = parse("LOAD DATA LOCAL INFILE '/tmp/nation.tbl' INTO TABLE tpch.nation FIELDS TERMINATED BY '|'").unwrap();
        assert!(s.local);
        assert_eq!(s.file, "/tmp/nation.tbl");
        assert_eq!(s.db.as_deref(), Some("tpch"));
        assert_eq!(s.table, "nation");
        assert_eq!(s.format.field_terminator, b"|");
        assert_eq!(s.format.line_terminator, b"\n");
        assert_eq!(s.format.escaped_by, Some(b'\\'));
        assert_eq!(s.duplicates, None);
    }

    #[test]
    fn parses_every_clause() {
        let s = parse(
            "load data infile 'x.csv' replace into table `t` character set utf8mb4 \
             columns terminated by ',' optionally enclosed by '\"' escaped by '' \
             lines starting by 'xx' terminated by '\\r\\n' ignore 1 lines \
             (a, @v, c) set b = @v * 2, d = concat(@v, ',', a)",
        )
        .unwrap();
        assert_eq!(s.duplicates, Some(Duplicates::Replace));
        assert_eq!(s.charset.as_deref(), Some("utf8mb4"));
        assert_eq!(s.format.enclosed_by, Some(b'"'));
        assert!(s.format.optionally_enclosed);
        assert_eq!(s.format.escaped_by, None);
        assert_eq!(s.format.line_starting, b"xx");
        assert_eq!(s.format.line_terminator, b"\r\n");
        assert_eq!(s.ignore_lines, 1);
        assert_eq!(
            s.targets,
            Some(vec![
                Target::Column("a".into()),
                Target::Variable("v".into()),
                Target::Column("c".into())
            ])
        );
        assert_eq!(s.set.len(), 2);
        assert_eq!(s.set[0].expr, "? * 2");
        assert_eq!(s.set[1].expr, "concat(?, ',', a)");
        assert_eq!(s.set[1].variables, vec!["v".to_string()]);
    }

    #[test]
    fn rejects_what_it_does_not_support_by_name() {
        let err = |sql: &str| parse(sql).unwrap_err();
        assert_eq!(
            err("LOAD DATA INFILE 'f' INTO TABLE t PARTITION (p0)").code(),
            1235
        );
        assert_eq!(err("LOAD XML INFILE 'f' INTO TABLE t").code(), 1235);
        assert_eq!(
            err("LOAD DATA INFILE 'f' INTO TABLE t FIELDS TERMINATED BY ''").code(),
            1235
        );
        assert_eq!(err("LOAD DATA INFILE 'f' INTO TABLE t junk").code(), 1064);
        assert_eq!(err("LOAD DATA INFILE INTO TABLE t").code(), 1064);
        assert_eq!(err("LOAD DATA INFILE 'f").code(), 1064);
    }
}
