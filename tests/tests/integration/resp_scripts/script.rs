//! Reading a conversation script (format in the parent module's docs) into [`Script`] steps,
//! and splitting command lines into arguments the way redis-cli does.

use super::expect::{self, Exp, Proto};

/// What a step does.
#[derive(Debug)]
pub enum Action {
    /// Send `args` on connection `conn`; `read` = read the reply now (else later by `Recv`).
    Send {
        conn: String,
        args: Vec<Vec<u8>>,
        read: bool,
    },
    /// Read the oldest unread reply of `conn`.
    Recv {
        conn: String,
    },
    Sleep(u64),
    Restart,
}

/// An expectation line (0-based line index and the parsed form).
#[derive(Debug, Clone)]
pub struct Line {
    pub index: usize,
    pub exp: Exp,
}

/// What a reading step expects.
#[derive(Debug, Default)]
pub struct Expectation {
    pub main: Option<Line>,
    /// `resp2:` — RESP2's reply when it is not the projection of `main`.
    pub resp2: Option<Line>,
    /// `orcinus:` — Orcinus's deliberate difference from the reference.
    pub orcinus: Option<Line>,
}

impl Expectation {
    /// The expectation for a run under `proto`, against Orcinus or the reference.
    pub fn pick(&self, proto: Proto, orcinus: bool) -> Option<&Exp> {
        let line = match (&self.orcinus, &self.resp2) {
            (Some(o), _) if orcinus => o,
            (_, Some(r)) if proto == Proto::Resp2 => r,
            _ => self.main.as_ref()?,
        };
        Some(&line.exp)
    }
}

#[derive(Debug)]
pub struct Step {
    /// 1-based line of the action.
    pub line: usize,
    pub text: String,
    pub action: Action,
    pub expect: Expectation,
}

#[derive(Debug)]
pub struct Script {
    pub protocols: Vec<Proto>,
    /// `#! since X.Y`: the Redis version that introduced what the file tests.
    pub since: Option<(u32, u32)>,
    /// `#! requirepass PASSWORD`: run against a server that requires it.
    pub requirepass: Option<String>,
    pub steps: Vec<Step>,
    pub lines: Vec<String>,
}

/// Splits a command line like redis-cli (`sdssplitargs`): `"…"` with `\n \r \t \xHH \" \\`
/// escapes, `'…'` with `\'`.
pub fn split_args(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let bytes = line.as_bytes();
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if i >= bytes.len() {
            return Ok(args);
        }
        let mut arg = Vec::new();
        match bytes[i] {
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return Err("unterminated \"".into()),
                        Some(b'"') => break,
                        Some(b'\\') => {
                            let e = *bytes.get(i + 1).ok_or("dangling \\")?;
                            i += 2;
                            match e {
                                b'n' => arg.push(b'\n'),
                                b'r' => arg.push(b'\r'),
                                b't' => arg.push(b'\t'),
                                b'x' => {
                                    let hex = line.get(i..i + 2).ok_or("short \\x")?;
                                    arg.push(
                                        u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?,
                                    );
                                    i += 2;
                                }
                                other => arg.push(other),
                            }
                        }
                        Some(&c) => {
                            arg.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'\'' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return Err("unterminated '".into()),
                        Some(b'\'') => break,
                        Some(b'\\') if bytes.get(i + 1) == Some(&b'\'') => {
                            arg.push(b'\'');
                            i += 2;
                        }
                        Some(&c) => {
                            arg.push(c);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            _ => {
                while let Some(&c) = bytes.get(i) {
                    if c.is_ascii_whitespace() {
                        break;
                    }
                    arg.push(c);
                    i += 1;
                }
            }
        }
        if bytes.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
            return Err("a closing quote must be followed by a space".into());
        }
        args.push(arg);
    }
}

/// `name>`, `name>>`, `name<` prefixes: (connection, kind, rest).
fn action_prefix(line: &str) -> Option<(String, &'static str, &str)> {
    let end = line.find(['>', '<'])?;
    let name = &line[..end];
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let conn = if name.is_empty() { "main" } else { name }.to_string();
    let rest = &line[end..];
    for kind in [">>", ">", "<"] {
        if let Some(after) = rest.strip_prefix(kind) {
            return Some((conn, kind, after));
        }
    }
    None
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Parses a script's text; errors name the line.
pub fn parse(text: &str) -> Result<Script, String> {
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut script = Script {
        protocols: vec![Proto::Resp2, Proto::Resp3],
        since: None,
        requirepass: None,
        steps: Vec::new(),
        lines: Vec::new(),
    };
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        let number = i + 1;
        let at = |e: String| format!("line {number}: {e}");
        i += 1;
        if let Some(directive) = line.strip_prefix("#!") {
            match directive.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["resp2"] => script.protocols = vec![Proto::Resp2],
                ["resp3"] => script.protocols = vec![Proto::Resp3],
                ["requirepass", password] => script.requirepass = Some((*password).to_string()),
                ["since", v] => {
                    script.since = Some(parse_version(v).ok_or_else(|| at("bad version".into()))?)
                }
                _ => return Err(at(format!("unknown directive {directive:?}"))),
            }
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (action, reads) = if let Some(ms) = line.strip_prefix("sleep ") {
            (
                Action::Sleep(ms.trim().parse().map_err(|_| at("bad sleep".into()))?),
                false,
            )
        } else if line == "restart" {
            (Action::Restart, false)
        } else if let Some((conn, kind, rest)) = action_prefix(line) {
            match kind {
                "<" if rest.trim().is_empty() => (Action::Recv { conn }, true),
                "<" => return Err(at("nothing may follow `<`".into())),
                _ => {
                    let args = split_args(rest).map_err(at)?;
                    if args.is_empty() {
                        return Err(at("empty command".into()));
                    }
                    let read = kind == ">";
                    (Action::Send { conn, args, read }, read)
                }
            }
        } else {
            return Err(at(format!("expected a step, got {line:?}")));
        };
        let mut step = Step {
            line: i,
            text: line.to_string(),
            action,
            expect: Expectation::default(),
        };
        if reads {
            let main = lines
                .get(i)
                .ok_or_else(|| at("missing the expected reply".into()))?;
            step.expect.main = Some(Line {
                index: i,
                exp: expect::parse(main).map_err(|e| format!("line {}: {e}", i + 1))?,
            });
            i += 1;
            while let Some(next) = lines.get(i) {
                let (slot, rest) = if let Some(rest) = next.strip_prefix("resp2:") {
                    (&mut step.expect.resp2, rest)
                } else if let Some(rest) = next.strip_prefix("orcinus:") {
                    (&mut step.expect.orcinus, rest)
                } else {
                    break;
                };
                *slot = Some(Line {
                    index: i,
                    exp: expect::parse(rest).map_err(|e| format!("line {}: {e}", i + 1))?,
                });
                i += 1;
            }
        }
        script.steps.push(step);
    }
    if script.requirepass.is_some() && script.protocols != [Proto::Resp2] {
        return Err(
            "a `#! requirepass` file must also be `#! resp2` (its connections start \
                    unauthenticated, so they cannot send HELLO 3 first)"
                .into(),
        );
    }
    script.lines = lines;
    Ok(script)
}
