//! A minimal blocking RESP2 client for integration tests: sends commands as multibulk arrays and
//! parses replies exactly, so tests can assert on Redis error strings and pipeline freely.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A parsed RESP reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The bulk payload as UTF-8, panicking with the reply otherwise (tests only).
    pub fn text(&self) -> String {
        match self {
            Self::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            Self::Simple(s) => s.clone(),
            other => panic!("expected a string reply, got {other:?}"),
        }
    }
}

pub struct RespClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl RespClient {
    pub fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Encodes a command without flushing a reply read (for pipelining).
    pub fn send(&mut self, args: &[&[u8]]) -> std::io::Result<()> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&buf)
    }

    pub fn read_reply(&mut self) -> std::io::Result<Reply> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        let line = line.trim_end_matches("\r\n");
        let (tag, rest) = line.split_at(1);
        let bad = |what: &str| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{what}: {line}"))
        };
        Ok(match tag {
            "+" => Reply::Simple(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Integer(rest.parse().map_err(|_| bad("integer"))?),
            "$" => {
                let len: i64 = rest.parse().map_err(|_| bad("bulk length"))?;
                if len < 0 {
                    Reply::Bulk(None)
                } else {
                    let mut body = vec![0; len as usize + 2];
                    self.reader.read_exact(&mut body)?;
                    body.truncate(len as usize);
                    Reply::Bulk(Some(body))
                }
            }
            "*" => {
                let n: i64 = rest.parse().map_err(|_| bad("array length"))?;
                if n < 0 {
                    Reply::Array(None)
                } else {
                    let mut items = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        items.push(self.read_reply()?);
                    }
                    Reply::Array(Some(items))
                }
            }
            _ => return Err(bad("unknown reply type")),
        })
    }

    /// Sends one command and reads its reply.
    pub fn cmd(&mut self, args: &[&str]) -> std::io::Result<Reply> {
        let raw: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(&raw)?;
        self.read_reply()
    }

    /// Writes raw bytes (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)
    }
}
