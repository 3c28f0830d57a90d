//! The `orcinus` binary: parses the command line, loads and validates the configuration, then
//! hands over to [`lifecycle::run`], which binds both listeners, opens the engine and serves.
//!
//! Invariants: every failure is reported as exactly one stderr line, `orcinus: error: ...`, and
//! the exit status is 2 for usage errors, 1 for every other failure, 0 after a clean shutdown.
//! `std::process::exit` is called only here, at the very end, after everything is dropped.

mod accounts;
mod cli;
mod config;
mod error;
mod lifecycle;
mod logging;
mod mysql;
mod resp;
mod startup;
mod tpch;

use crate::cli::{CliCommand, USAGE};
use crate::config::Config;
use crate::error::ServerError;
use std::io::Write;

/// mimalloc instead of glibc malloc: the per-statement paths allocate many small, short-lived
/// buffers, and glibc's malloc/free showed up as about a fifth of the server's CPU under sysbench.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = match run_command() {
        Ok(()) => 0,
        Err(err) => {
            // Nothing better to do if stderr itself is gone.
            let _ = writeln!(std::io::stderr(), "orcinus: error: {}", err.one_line());
            err.exit_code()
        }
    };
    std::process::exit(code);
}

fn run_command() -> Result<(), ServerError> {
    match cli::parse_args(std::env::args_os().skip(1))? {
        CliCommand::Help => print_stdout(USAGE),
        CliCommand::Version => print_stdout(&format!("orcinus {}\n", env!("CARGO_PKG_VERSION"))),
        CliCommand::Run(overrides) => {
            let config = Config::from_cli(&overrides)?;
            logging::init(config.server.log_level)?;
            lifecycle::run(config)
        }
        CliCommand::Tpch(tpch::TpchCommand::Help) => print_stdout(tpch::USAGE),
        CliCommand::Tpch(tpch::TpchCommand::Load(args)) => {
            logging::init(Config::from_cli(&args.overrides)?.server.log_level)?;
            tpch::run(&args)
        }
    }
}

fn print_stdout(text: &str) -> Result<(), ServerError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(ServerError::Stdout)
}
