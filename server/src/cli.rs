//! Command-line parsing for `orcinus`: a hand-written parser for a handful of long flags.
//!
//! Accepted forms are `--flag VALUE` and `--flag=VALUE`; a flag given twice keeps its last value
//! (so wrappers can append overrides). `-h`/`--help` and `--version` win over everything after
//! them. Anything else — an unknown flag, a positional argument, a missing or malformed value —
//! is a [`ServerError::Usage`], which exits with status 2. Parsing touches nothing on disk.

use crate::error::ServerError;
use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
orcinus — a database server speaking the MySQL protocol and RESP over one storage engine

Usage: orcinus [OPTIONS]
       orcinus tpch --sf N [--data-dir DIR] [--database NAME]   (load TPC-H; tpch --help)

Options:
      --data-dir DIR     data directory (default: ./orcinus-data)
      --bind ADDR        IP address both listeners bind to (default: 127.0.0.1)
      --mysql-port N     MySQL protocol port, 0 picks a free port (default: 3306)
      --redis-port N     RESP (Redis protocol) port, 0 picks a free port (default: 6379)
      --config FILE      TOML configuration file (see server/orcinus.example.toml);
                         flags override its settings
  -h, --help             print this help and exit
      --version          print the version and exit

On start-up the server prints one line per listener to stdout, e.g.
  mysql listening on 127.0.0.1:3306
  redis listening on 127.0.0.1:6379
Logs go to stderr; the level comes from RUST_LOG, else from server.log_level.
SIGINT or SIGTERM shuts down cleanly (exit status 0).
";

/// Settings given on the command line; `None` means "not given, keep the config file's value".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliOverrides {
    /// `--data-dir`
    pub data_dir: Option<PathBuf>,
    /// `--bind`
    pub bind: Option<IpAddr>,
    /// `--mysql-port`
    pub mysql_port: Option<u16>,
    /// `--redis-port`
    pub redis_port: Option<u16>,
    /// `--config`
    pub config_file: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum CliCommand {
    /// Print [`USAGE`] and exit 0.
    Help,
    /// Print the version and exit 0.
    Version,
    /// Run the server with these overrides.
    Run(CliOverrides),
    /// `orcinus tpch …`: generate and load TPC-H data (see [`crate::tpch`]).
    Tpch(crate::tpch::TpchCommand),
}

/// Parses the arguments after the program name.
pub fn parse_args<I>(args: I) -> Result<CliCommand, ServerError>
where
    I: IntoIterator<Item = OsString>,
{
    let mut overrides = CliOverrides::default();
    let mut args = args.into_iter().peekable();
    if args.peek().is_some_and(|first| first == "tpch") {
        return crate::tpch::parse_args(args.skip(1)).map(CliCommand::Tpch);
    }
    while let Some(raw) = args.next() {
        let Some(arg) = raw.to_str() else {
            return Err(usage(format!(
                "unexpected non-UTF-8 argument {}",
                raw.to_string_lossy()
            )));
        };
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(OsString::from(value))),
            _ => (arg, None),
        };
        match flag {
            "-h" | "--help" if inline_value.is_none() => return Ok(CliCommand::Help),
            "--version" if inline_value.is_none() => return Ok(CliCommand::Version),
            "-h" | "--help" | "--version" => {
                return Err(usage(format!("{flag} takes no value")));
            }
            "--data-dir" => {
                let value = flag_value(flag, inline_value, &mut args)?;
                if value.is_empty() {
                    return Err(usage("--data-dir must not be empty".into()));
                }
                overrides.data_dir = Some(PathBuf::from(value));
            }
            "--config" => {
                let value = flag_value(flag, inline_value, &mut args)?;
                overrides.config_file = Some(PathBuf::from(value));
            }
            "--bind" => {
                let value = utf8_value(flag, flag_value(flag, inline_value, &mut args)?)?;
                let ip = value
                    .parse::<IpAddr>()
                    .map_err(|_| usage(format!("--bind expects an IP address, got {value:?}")))?;
                overrides.bind = Some(ip);
            }
            "--mysql-port" => {
                let value = flag_value(flag, inline_value, &mut args)?;
                overrides.mysql_port = Some(parse_port(flag, value)?);
            }
            "--redis-port" => {
                let value = flag_value(flag, inline_value, &mut args)?;
                overrides.redis_port = Some(parse_port(flag, value)?);
            }
            other if other.starts_with('-') => {
                return Err(usage(format!("unknown flag {other}")));
            }
            other => return Err(usage(format!("unexpected argument {other:?}"))),
        }
    }
    Ok(CliCommand::Run(overrides))
}

fn usage(message: String) -> ServerError {
    ServerError::Usage(message)
}

/// The flag's value: the `=VALUE` part, else the next argument.
fn flag_value(
    flag: &str,
    inline_value: Option<OsString>,
    rest: &mut impl Iterator<Item = OsString>,
) -> Result<OsString, ServerError> {
    match inline_value.or_else(|| rest.next()) {
        Some(value) => Ok(value),
        None => Err(usage(format!("{flag} needs a value"))),
    }
}

fn utf8_value(flag: &str, value: OsString) -> Result<String, ServerError> {
    value.into_string().map_err(|bad| {
        usage(format!(
            "{flag}: value {} is not UTF-8",
            bad.to_string_lossy()
        ))
    })
}

fn parse_port(flag: &str, value: OsString) -> Result<u16, ServerError> {
    let value = utf8_value(flag, value)?;
    value.parse::<u16>().map_err(|_| {
        usage(format!(
            "{flag} expects a port number 0-65535, got {value:?}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<CliCommand, ServerError> {
        parse_args(args.iter().map(OsString::from))
    }

    fn overrides(args: &[&str]) -> CliOverrides {
        match parse(args) {
            Ok(CliCommand::Run(o)) => o,
            other => panic!("expected Run, got {other:?}"),
        }
    }

    fn usage_message(args: &[&str]) -> String {
        match parse(args) {
            Err(ServerError::Usage(message)) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn no_flags_overrides_nothing() {
        assert_eq!(overrides(&[]), CliOverrides::default());
    }

    #[test]
    fn every_flag_in_both_forms() {
        let o = overrides(&[
            "--data-dir",
            "/tmp/d",
            "--bind=::1",
            "--mysql-port",
            "0",
            "--redis-port=7000",
            "--config",
            "c.toml",
        ]);
        assert_eq!(o.data_dir, Some(PathBuf::from("/tmp/d")));
        assert_eq!(o.bind, Some("::1".parse().unwrap()));
        assert_eq!(o.mysql_port, Some(0));
        assert_eq!(o.redis_port, Some(7000));
        assert_eq!(o.config_file, Some(PathBuf::from("c.toml")));
    }

    #[test]
    fn last_occurrence_wins() {
        let o = overrides(&["--mysql-port", "1", "--mysql-port", "2"]);
        assert_eq!(o.mysql_port, Some(2));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&["--help"]).unwrap(), CliCommand::Help);
        assert_eq!(parse(&["-h"]).unwrap(), CliCommand::Help);
        assert_eq!(parse(&["--version"]).unwrap(), CliCommand::Version);
        assert_eq!(
            parse(&["--mysql-port", "1", "-h"]).unwrap(),
            CliCommand::Help
        );
    }

    #[test]
    fn unknown_flag_is_a_usage_error_naming_it() {
        assert!(usage_message(&["--frobnicate"]).contains("--frobnicate"));
        assert!(usage_message(&["-x"]).contains("-x"));
        assert!(usage_message(&["--help=yes"]).contains("takes no value"));
    }

    #[test]
    fn positional_argument_is_rejected() {
        assert!(usage_message(&["serve"]).contains("serve"));
    }

    #[test]
    fn missing_value_is_rejected() {
        assert!(usage_message(&["--data-dir"]).contains("needs a value"));
        assert!(usage_message(&["--data-dir="]).contains("must not be empty"));
    }

    #[test]
    fn bad_port_and_address_are_rejected() {
        assert!(usage_message(&["--mysql-port", "65536"]).contains("65536"));
        assert!(usage_message(&["--redis-port", "-1"]).contains("port number"));
        assert!(usage_message(&["--redis-port", "abc"]).contains("abc"));
        assert!(usage_message(&["--bind", "localhost"]).contains("IP address"));
    }
}
