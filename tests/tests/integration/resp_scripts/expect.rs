//! Expected replies: the one-line canonical text form (grammar in the parent module's docs),
//! parsing it, matching a wire [`Value`] against it under RESP2 or RESP3, and printing a value
//! back in that form (for failure messages and for completion from a reference server).

use super::wire::Value;

/// The protocol a script runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Resp2,
    Resp3,
}

/// One expected reply. The form records RESP3 types; under RESP2 each matches its RESP2
/// projection (map → flat array, set → array, double → bulk, boolean → 0/1, verbatim → bulk;
/// `nilarray` is `*-1` in RESP2 and `_` in RESP3).
#[derive(Debug, Clone, PartialEq)]
pub enum Exp {
    Simple(String),
    Error(String),
    Int(i64),
    IntRange(i64, i64),
    Bulk(Vec<u8>),
    Nil,
    NilArray,
    Double(String),
    Bool(bool),
    Verbatim(String, Vec<u8>),
    BigNumber(String),
    /// Array, set or map items; `sorted` = any order.
    Array(Vec<Exp>, bool),
    Set(Vec<Exp>, bool),
    Map(Vec<(Exp, Exp)>, bool),
    Any,
    Glob(String),
    /// `?` / `sorted?`: not written yet (never matches; completion fills it in).
    Placeholder(bool),
}

// ---------------------------------------------------------------- parsing

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) && !self.double_ahead() {
            self.pos += 1;
        }
    }

    /// A `,` followed by a number-ish character starts a double, not a separator.
    fn double_ahead(&self) -> bool {
        self.peek() == Some(b',')
            && matches!(self.text.get(self.pos + 1), Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'i' | b'n' | b'.'))
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.text[self.pos..].starts_with(s.as_bytes()) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn token(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(c, b' ' | b'\t' | b',' | b']' | b'}' | b':') {
                break;
            }
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()
    }

    fn quoted(&mut self) -> Result<Vec<u8>, String> {
        if !self.eat("\"") {
            return Err(format!("expected '\"' at column {}", self.pos + 1));
        }
        let mut out = Vec::new();
        loop {
            let c = self.peek().ok_or("unterminated string")?;
            self.pos += 1;
            match c {
                b'"' => return Ok(out),
                b'\\' => {
                    let e = self.peek().ok_or("unterminated escape")?;
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'x' => {
                            let hex = self.text.get(self.pos..self.pos + 2).ok_or("short \\x")?;
                            let hex = std::str::from_utf8(hex).map_err(|e| e.to_string())?;
                            out.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                            self.pos += 2;
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn text(&mut self) -> Result<String, String> {
        Ok(String::from_utf8_lossy(&self.quoted()?).into_owned())
    }

    fn items(&mut self, close: u8) -> Result<Vec<Exp>, String> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value()?);
        }
    }

    fn entries(&mut self) -> Result<Vec<(Exp, Exp)>, String> {
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.eat("}") {
                return Ok(entries);
            }
            let key = self.value()?;
            self.skip_space();
            if !self.eat(":") {
                return Err(format!("expected ':' in map at column {}", self.pos + 1));
            }
            self.skip_space();
            entries.push((key, self.value()?));
        }
    }

    fn value(&mut self) -> Result<Exp, String> {
        self.skip_space();
        let sorted = self.eat("sorted");
        let c = self.peek().ok_or("expected a value")?;
        let exp = match c {
            b'?' => {
                self.pos += 1;
                return Ok(Exp::Placeholder(sorted));
            }
            b'[' => {
                self.pos += 1;
                return Ok(Exp::Array(self.items(b']')?, sorted));
            }
            b'~' if self.eat("~[") => return Ok(Exp::Set(self.items(b']')?, sorted)),
            b'{' => {
                self.pos += 1;
                return Ok(Exp::Map(self.entries()?, sorted));
            }
            _ if sorted => return Err("`sorted` must precede [ ~[ { or ?".into()),
            b'"' => Exp::Bulk(self.quoted()?),
            b'+' => {
                self.pos += 1;
                if self.peek() == Some(b'"') {
                    Exp::Simple(self.text()?)
                } else {
                    Exp::Simple(self.token())
                }
            }
            b'-' if self.text.get(self.pos + 1) == Some(&b'"') => {
                self.pos += 1;
                Exp::Error(self.text()?)
            }
            b',' => {
                self.pos += 1;
                Exp::Double(self.token())
            }
            b'(' => {
                self.pos += 1;
                Exp::BigNumber(self.token())
            }
            b'#' => {
                self.pos += 1;
                match self.token().as_str() {
                    "t" => Exp::Bool(true),
                    "f" => Exp::Bool(false),
                    other => return Err(format!("bad boolean #{other}")),
                }
            }
            b'=' => {
                self.pos += 1;
                let format: String = self.text[self.pos..]
                    .iter()
                    .take(3)
                    .map(|&b| b as char)
                    .collect();
                self.pos += 3;
                Exp::Verbatim(format, self.quoted()?)
            }
            b'*' => {
                self.pos += 1;
                Exp::Any
            }
            _ if self.eat("glob\"") => {
                self.pos -= 1;
                Exp::Glob(self.text()?)
            }
            _ if self.eat("nilarray") => Exp::NilArray,
            _ if self.eat("nil") => Exp::Nil,
            _ => {
                let token = self.token();
                if let Some((lo, hi)) = token.split_once("..") {
                    let bound =
                        |s: &str| s.parse::<i64>().map_err(|_| format!("bad range {token}"));
                    Exp::IntRange(bound(lo)?, bound(hi)?)
                } else {
                    Exp::Int(
                        token
                            .parse()
                            .map_err(|_| format!("cannot read {token:?} as a reply"))?,
                    )
                }
            }
        };
        Ok(exp)
    }
}

/// Parses one expectation line.
pub fn parse(line: &str) -> Result<Exp, String> {
    let trimmed = line.trim_start();
    // A top-level error is the rest of the line, unquoted.
    if let Some(rest) = trimmed.strip_prefix('-')
        && !rest.starts_with('"')
        && !rest.starts_with(|c: char| c.is_ascii_digit())
    {
        return Ok(Exp::Error(rest.trim_end_matches('\r').to_string()));
    }
    let mut parser = Parser {
        text: trimmed.as_bytes(),
        pos: 0,
    };
    let exp = parser.value()?;
    parser.skip_space();
    if parser.pos != parser.text.len() {
        return Err(format!(
            "unexpected text after the reply: {:?}",
            &trimmed[parser.pos..]
        ));
    }
    Ok(exp)
}

// ---------------------------------------------------------------- matching

fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob_match(rest, &text[i..])),
        Some((b'?', rest)) => !text.is_empty() && glob_match(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && glob_match(rest, &text[1..]),
    }
}

/// Matches `items` against `values` in order, or as a multiset when `sorted`.
fn match_items(items: &[Exp], values: &[Value], sorted: bool, proto: Proto) -> bool {
    if items.len() != values.len() {
        return false;
    }
    if !sorted {
        return items.iter().zip(values).all(|(e, v)| matches(e, v, proto));
    }
    let mut used = vec![false; values.len()];
    items.iter().all(|e| {
        let found = values
            .iter()
            .enumerate()
            .position(|(i, v)| !used[i] && matches(e, v, proto));
        found.map(|i| used[i] = true).is_some()
    })
}

/// RESP2 sends a map as a flat array of key, value, ….
fn flat_pairs(values: &[Value]) -> Option<Vec<(Value, Value)>> {
    values.len().is_multiple_of(2).then(|| {
        values
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect()
    })
}

/// True when `value` is what `exp` describes under `proto`.
pub fn matches(exp: &Exp, value: &Value, proto: Proto) -> bool {
    use Value as V;
    let resp3 = proto == Proto::Resp3;
    match (exp, value) {
        (Exp::Any, _) => true,
        (Exp::Placeholder(_), _) => false,
        (Exp::Simple(a), V::Simple(b)) | (Exp::Error(a), V::Error(b)) => a == b,
        (Exp::Int(a), V::Integer(b)) => a == b,
        (Exp::IntRange(lo, hi), V::Integer(b)) => lo <= b && b <= hi,
        (Exp::Bulk(a), V::Bulk(b)) => a == b,
        (Exp::Nil, V::Nil) => true,
        (Exp::NilArray, V::NilArray) => !resp3,
        (Exp::NilArray, V::Nil) => resp3,
        (Exp::Double(a), V::Double(b)) => resp3 && a == b,
        (Exp::Double(a), V::Bulk(b)) => !resp3 && a.as_bytes() == b.as_slice(),
        (Exp::Bool(a), V::Boolean(b)) => resp3 && a == b,
        (Exp::Bool(a), V::Integer(b)) => !resp3 && i64::from(*a) == *b,
        (Exp::Verbatim(f, a), V::Verbatim(g, b)) => resp3 && f == g && a == b,
        (Exp::Verbatim(_, a), V::Bulk(b)) => !resp3 && a == b,
        (Exp::BigNumber(a), V::BigNumber(b)) => resp3 && a == b,
        (Exp::BigNumber(a), V::Bulk(b)) => !resp3 && a.as_bytes() == b.as_slice(),
        (Exp::Glob(p), V::Bulk(t) | V::Verbatim(_, t)) => glob_match(p.as_bytes(), t),
        (Exp::Glob(p), V::Simple(t)) => glob_match(p.as_bytes(), t.as_bytes()),
        (Exp::Array(items, sorted), V::Array(values)) => match_items(items, values, *sorted, proto),
        (Exp::Set(items, sorted), V::Set(values)) if resp3 => {
            match_items(items, values, *sorted, proto)
        }
        (Exp::Set(items, sorted), V::Array(values)) if !resp3 => {
            match_items(items, values, *sorted, proto)
        }
        (Exp::Map(entries, sorted), V::Map(pairs)) if resp3 => {
            match_entries(entries, pairs, *sorted, proto)
        }
        (Exp::Map(entries, sorted), V::Array(values)) if !resp3 => {
            flat_pairs(values).is_some_and(|pairs| match_entries(entries, &pairs, *sorted, proto))
        }
        _ => false,
    }
}

fn match_entries(
    entries: &[(Exp, Exp)],
    pairs: &[(Value, Value)],
    sorted: bool,
    proto: Proto,
) -> bool {
    let keys: Vec<Exp> = entries
        .iter()
        .map(|(k, v)| Exp::Array(vec![k.clone(), v.clone()], false))
        .collect();
    let values: Vec<Value> = pairs
        .iter()
        .map(|(k, v)| Value::Array(vec![k.clone(), v.clone()]))
        .collect();
    match_items(&keys, &values, sorted, proto)
}

// ---------------------------------------------------------------- printing

fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

fn bare_simple(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/'))
}

fn join(items: &[String]) -> String {
    items.join(", ")
}

/// The canonical text of an expectation (`top` = a whole line, where errors need no quotes).
pub fn show(exp: &Exp, top: bool) -> String {
    let sorted = |s: bool| if s { "sorted" } else { "" };
    match exp {
        Exp::Simple(s) if bare_simple(s) => format!("+{s}"),
        Exp::Simple(s) => format!("+{}", quote(s.as_bytes())),
        Exp::Error(s) if top && s.trim() == s && !s.is_empty() => format!("-{s}"),
        Exp::Error(s) => format!("-{}", quote(s.as_bytes())),
        Exp::Int(n) => n.to_string(),
        Exp::IntRange(lo, hi) => format!("{lo}..{hi}"),
        Exp::Bulk(b) => quote(b),
        Exp::Nil => "nil".into(),
        Exp::NilArray => "nilarray".into(),
        Exp::Double(d) => format!(",{d}"),
        Exp::Bool(b) => if *b { "#t" } else { "#f" }.into(),
        Exp::Verbatim(f, t) => format!("={f}{}", quote(t)),
        Exp::BigNumber(n) => format!("({n}"),
        Exp::Array(items, s) => {
            let items: Vec<String> = items.iter().map(|e| show(e, false)).collect();
            format!("{}[{}]", sorted(*s), join(&items))
        }
        Exp::Set(items, s) => {
            let items: Vec<String> = items.iter().map(|e| show(e, false)).collect();
            format!("{}~[{}]", sorted(*s), join(&items))
        }
        Exp::Map(entries, s) => {
            let items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", show(k, false), show(v, false)))
                .collect();
            format!("{}{{{}}}", sorted(*s), join(&items))
        }
        Exp::Any => "*".into(),
        Exp::Glob(p) => format!("glob{}", quote(p.as_bytes())),
        Exp::Placeholder(s) => format!("{}?", sorted(*s)),
    }
}

/// The exact expectation for `value` (failure messages; completion's starting point).
pub fn exact(value: &Value) -> Exp {
    match value {
        Value::Simple(s) => Exp::Simple(s.clone()),
        Value::Error(s) => Exp::Error(s.clone()),
        Value::Integer(n) => Exp::Int(*n),
        Value::Bulk(b) => Exp::Bulk(b.clone()),
        Value::Nil => Exp::Nil,
        Value::NilArray => Exp::NilArray,
        Value::Array(items) | Value::Push(items) => {
            Exp::Array(items.iter().map(exact).collect(), false)
        }
        Value::Set(items) => Exp::Set(items.iter().map(exact).collect(), false),
        Value::Map(pairs) => Exp::Map(
            pairs.iter().map(|(k, v)| (exact(k), exact(v))).collect(),
            false,
        ),
        Value::Double(d) => Exp::Double(d.clone()),
        Value::Boolean(b) => Exp::Bool(*b),
        Value::Verbatim(f, t) => Exp::Verbatim(f.clone(), t.clone()),
        Value::BigNumber(n) => Exp::BigNumber(n.clone()),
    }
}

/// Completion: the expectation for `primary` (the RESP3 reply, or the RESP2 one in a RESP2-only
/// file), keeping `old`'s wildcards, ranges and `sorted` markers where they still match, and
/// recording RESP2's `*-1` where RESP3 said `_`. Sets and maps come out `sorted` (their order
/// is not part of the reply's meaning). The caller checks the result against RESP2.
pub fn complete(old: Option<&Exp>, primary: &Value, resp2: Option<&Value>, proto: Proto) -> Exp {
    if let Some(old) = old
        && matches(old, primary, proto)
        && resp2.is_none_or(|v| matches(old, v, Proto::Resp2))
    {
        return old.clone();
    }
    let old_sorted = matches!(
        old,
        Some(Exp::Placeholder(true) | Exp::Array(_, true) | Exp::Set(_, true) | Exp::Map(_, true))
    );
    let child = |i: usize| match old {
        Some(Exp::Array(items, _) | Exp::Set(items, _)) => items.get(i),
        _ => None,
    };
    let mut exp = match (primary, resp2) {
        (Value::Nil, Some(Value::NilArray)) => Exp::NilArray,
        (Value::Array(a), Some(Value::Array(b))) | (Value::Set(a), Some(Value::Array(b)))
            if a.len() == b.len() =>
        {
            let items = a
                .iter()
                .zip(b)
                .enumerate()
                .map(|(i, (x, y))| complete(child(i), x, Some(y), proto))
                .collect();
            if matches!(primary, Value::Set(_)) {
                Exp::Set(items, true)
            } else {
                Exp::Array(items, false)
            }
        }
        (Value::Array(a), None) => Exp::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| complete(child(i), x, None, proto))
                .collect(),
            false,
        ),
        _ => exact(primary),
    };
    match &mut exp {
        Exp::Array(items, s) | Exp::Set(items, s)
            if old_sorted || matches!(primary, Value::Set(_)) =>
        {
            *s = true;
            items.sort_by_key(|e| show(e, false));
        }
        Exp::Map(entries, s) => {
            *s = true;
            entries.sort_by_key(|(k, _)| show(k, false));
        }
        _ => {}
    }
    exp
}
