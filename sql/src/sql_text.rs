//! Lexical pieces of SQL text needed before parsing: statement splitting at `;` outside quotes
//! and comments, and a token stream for statement routing and the session-state recognizer.
//!
//! Invariants: never panics on any input (unterminated quotes and comments end at the end of
//! the text); an executable comment `/*! … */` becomes [`Token::Unsupported`] rather than
//! being skipped, so its contents are never silently ignored.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Word(String),
    Quoted(String),
    SystemVariable(String),
    Number(String),
    Punct(char),
    /// Something no probe contains (user variable, executable comment, operator …).
    Unsupported,
}

/// Splits `sql` into statements at `;` outside quotes and comments; empty statements are
/// dropped.
pub(crate) fn split_statements(sql: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quote: Option<char> = None;
    let mut chars = sql.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), '\\') if q != '`' => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '/') if chars.peek().map(|p| p.1) == Some('*') => {
                chars.next();
                let mut prev = ' ';
                for (_, c) in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            (None, '#') => skip_line(&mut chars),
            (None, '-') if sql.get(i..).is_some_and(|r| r.starts_with("-- ")) => {
                skip_line(&mut chars)
            }
            (None, ';') => {
                parts.push(sql.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            (None, _) => {}
        }
    }
    parts.push(sql.get(start..).unwrap_or_default());
    parts
        .into_iter()
        .filter(|s| !tokenize_prefix(s, 1).is_empty())
        .collect()
}

fn skip_line(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) {
    for (_, c) in chars.by_ref() {
        if c == '\n' {
            break;
        }
    }
}

/// The tokens of `sql` (comments skipped).
pub(crate) fn tokenize(sql: &str) -> Vec<Token> {
    tokenize_prefix(sql, usize::MAX)
}

/// The first `max_tokens` tokens of `sql` (comments skipped).
pub(crate) fn tokenize_prefix(sql: &str, max_tokens: usize) -> Vec<Token> {
    let mut chars = DecodedPrefix {
        decoded: Vec::new(),
        rest: sql.chars(),
    };
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut tokens = Vec::new();
    let mut i = 0;
    while chars.has(i) && tokens.len() < max_tokens {
        let c = chars.at(i);
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.at(i + 1) == '*' {
            if chars.at(i + 2) == '!' {
                tokens.push(Token::Unsupported);
            }
            i += 2;
            while chars.has(i) && !(chars.at(i) == '*' && chars.at(i + 1) == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '#'
            || (c == '-' && chars.at(i + 1) == '-' && chars.at(i + 2).is_whitespace())
        {
            while chars.has(i) && chars.at(i) != '\n' {
                i += 1;
            }
        } else if matches!(c, '\'' | '"' | '`') {
            let mut text = String::new();
            i += 1;
            while chars.has(i) {
                let d = chars.at(i);
                if d == '\\' && c != '`' {
                    text.push(chars.at(i + 1));
                    i += 2;
                } else if d == c && chars.at(i + 1) == c {
                    text.push(c);
                    i += 2;
                } else if d == c {
                    break;
                } else {
                    text.push(d);
                    i += 1;
                }
            }
            i += 1;
            tokens.push(if c == '`' {
                Token::Word(text)
            } else {
                Token::Quoted(text)
            });
        } else if c == '@' && chars.at(i + 1) == '@' {
            let start = i + 2;
            i = start;
            while is_word(chars.at(i)) || chars.at(i) == '.' {
                i += 1;
            }
            tokens.push(Token::SystemVariable(chars.collect(start, i)));
        } else if c.is_ascii_digit() {
            let start = i;
            while is_word(chars.at(i)) || chars.at(i) == '.' {
                i += 1;
            }
            tokens.push(Token::Number(chars.collect(start, i)));
        } else if is_word(c) {
            let start = i;
            while is_word(chars.at(i)) {
                i += 1;
            }
            tokens.push(Token::Word(chars.collect(start, i)));
        } else if matches!(c, '(' | ')' | ',' | '=' | '.') {
            tokens.push(Token::Punct(c));
            i += 1;
        } else {
            tokens.push(Token::Unsupported);
            i += 1;
        }
    }
    tokens
}

/// The characters of a text decoded only as far as they are looked at, so reading the first
/// tokens of a long statement does not decode all of it.
struct DecodedPrefix<'a> {
    decoded: Vec<char>,
    rest: std::str::Chars<'a>,
}

impl DecodedPrefix<'_> {
    /// True if the text has a character at `i`.
    fn has(&mut self, i: usize) -> bool {
        while self.decoded.len() <= i {
            match self.rest.next() {
                Some(c) => self.decoded.push(c),
                None => return false,
            }
        }
        true
    }

    /// The character at `i`, `'\0'` past the end.
    fn at(&mut self, i: usize) -> char {
        if self.has(i) {
            self.decoded.get(i).copied().unwrap_or('\0')
        } else {
            '\0'
        }
    }

    /// The characters `start..end` (already looked at) as a string.
    fn collect(&self, start: usize, end: usize) -> String {
        self.decoded
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
    }
}

/// A statement that is entirely one MySQL executable comment (`/*!40101 SET NAMES utf8 */`, as
/// mysqldump writes them) is the statement inside it: MySQL runs the contents when its version
/// is at least the optional 5-digit version, and ours (8.0) is above every version dumps use.
/// Any other statement is returned unchanged.
pub(crate) fn unwrap_executable_comment(statement: &str) -> &str {
    let trimmed = statement.trim();
    let Some(inner) = trimmed
        .strip_prefix("/*!")
        .and_then(|s| s.strip_suffix("*/"))
    else {
        return statement;
    };
    if inner.contains("*/") {
        return statement;
    }
    let version_digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    inner.get(version_digits..).unwrap_or(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_comments_unwrap_only_when_they_are_the_whole_statement() {
        assert_eq!(
            unwrap_executable_comment(" /*!40101 SET NAMES utf8 */"),
            " SET NAMES utf8 "
        );
        assert_eq!(unwrap_executable_comment("/*! SET a = 1 */"), " SET a = 1 ");
        let mixed = "/*!40101 SET a = 1 */ /*!40101 SET b = 2 */";
        assert_eq!(unwrap_executable_comment(mixed), mixed);
        assert_eq!(unwrap_executable_comment("SELECT 1"), "SELECT 1");
    }
}
