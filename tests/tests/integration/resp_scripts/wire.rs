//! A minimal blocking RESP2/RESP3 client for the conversation scripts: sends commands as
//! multibulk arrays and parses every RESP3 reply type into a [`Value`] that keeps the wire type
//! (so a script can tell a RESP3 map from an array, a double from a bulk string).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a script waits for one reply before failing the step.
const READ_TIMEOUT: Duration = Duration::from_secs(15);

/// One reply as it came over the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Vec<u8>),
    /// `$-1` (RESP2) or `_` (RESP3).
    Nil,
    /// `*-1` (RESP2 only).
    NilArray,
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Set(Vec<Value>),
    /// The double's text as sent after `,`.
    Double(String),
    Boolean(bool),
    Verbatim(String, Vec<u8>),
    BigNumber(String),
    Push(Vec<Value>),
}

/// One connection of a script.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

impl Connection {
    pub fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    pub fn send(&mut self, args: &[Vec<u8>]) -> std::io::Result<()> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&buf)
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&str]) -> std::io::Result<Value> {
        let owned: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        self.send(&owned)?;
        self.read()
    }

    /// True once the server has closed the connection (reads end of file).
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        match self.reader.read(&mut byte) {
            Ok(n) => n == 0,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        if !line.ends_with(b"\r\n") {
            return Err(invalid(format!(
                "line without CRLF: {:?}",
                String::from_utf8_lossy(&line)
            )));
        }
        line.truncate(line.len() - 2);
        String::from_utf8(line).map_err(|e| invalid(format!("non-UTF-8 header line: {e}")))
    }

    fn blob(&mut self, len: &str) -> std::io::Result<Option<Vec<u8>>> {
        let len: i64 = len
            .parse()
            .map_err(|_| invalid(format!("bad length {len:?}")))?;
        if len < 0 {
            return Ok(None);
        }
        let mut body = vec![0; len as usize + 2];
        self.reader.read_exact(&mut body)?;
        if !body.ends_with(b"\r\n") {
            return Err(invalid("blob without CRLF".into()));
        }
        body.truncate(len as usize);
        Ok(Some(body))
    }

    fn items(&mut self, count: &str) -> std::io::Result<Option<Vec<Value>>> {
        let n: i64 = count
            .parse()
            .map_err(|_| invalid(format!("bad count {count:?}")))?;
        if n < 0 {
            return Ok(None);
        }
        (0..n)
            .map(|_| self.read())
            .collect::<Result<_, _>>()
            .map(Some)
    }

    fn pairs(&mut self, count: &str) -> std::io::Result<Vec<(Value, Value)>> {
        let n: usize = count
            .parse()
            .map_err(|_| invalid(format!("bad map size {count:?}")))?;
        (0..n).map(|_| Ok((self.read()?, self.read()?))).collect()
    }

    /// Reads one reply.
    pub fn read(&mut self) -> std::io::Result<Value> {
        let line = self.line()?;
        let mut chars = line.chars();
        let tag = chars.next().ok_or_else(|| invalid("empty line".into()))?;
        let rest = chars.as_str();
        Ok(match tag {
            '+' => Value::Simple(rest.to_string()),
            '-' => Value::Error(rest.to_string()),
            ':' => Value::Integer(
                rest.parse()
                    .map_err(|_| invalid(format!("bad integer {rest:?}")))?,
            ),
            '$' => self.blob(rest)?.map_or(Value::Nil, Value::Bulk),
            '*' => self.items(rest)?.map_or(Value::NilArray, Value::Array),
            '_' => Value::Nil,
            ',' => Value::Double(rest.to_string()),
            '#' => Value::Boolean(rest == "t"),
            '(' => Value::BigNumber(rest.to_string()),
            '!' => {
                Value::Error(String::from_utf8_lossy(&self.blob(rest)?.unwrap_or_default()).into())
            }
            '=' => {
                let body = self.blob(rest)?.unwrap_or_default();
                let (format, text) = body.split_at(body.len().min(4));
                let format = String::from_utf8_lossy(format)
                    .trim_end_matches(':')
                    .to_string();
                Value::Verbatim(format, text.to_vec())
            }
            '%' => Value::Map(self.pairs(rest)?),
            '~' => Value::Set(self.items(rest)?.unwrap_or_default()),
            '>' => Value::Push(self.items(rest)?.unwrap_or_default()),
            '|' => {
                // An attribute precedes the reply it describes; scripts ignore it.
                self.pairs(rest)?;
                self.read()?
            }
            _ => return Err(invalid(format!("unknown reply type in {line:?}"))),
        })
    }
}
