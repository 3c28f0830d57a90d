//! `orcinus tpch --sf N [--data-dir DIR] [--database NAME] [--config FILE]`: generates the
//! TPC-H data set with `tpchgen` and loads it into a data directory through the SQL write path
//! ([`loader`]), then shuts the engine down cleanly so a server can start on the directory.
//!
//! Invariants: the data directory is opened exactly as the server opens it (same configuration
//! resolution, same exclusive lock), so loading into the directory of a running server fails
//! with the server's "data directory … is locked" error and changes nothing; a failed load
//! exits 1 with one `orcinus: error: tpch load failed: …` line and leaves the partial database
//! in place (the message says so), never a silently truncated one.

mod loader;
mod schema;

pub use loader::{LoadError, LoadOptions, load, rows_per_second};

use crate::cli::CliOverrides;
use crate::config::Config;
use crate::error::ServerError;
use crate::startup::open_engine;
use orcinus_sql::SqlExecutor;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

/// Usage of the subcommand, printed by `orcinus tpch --help`.
pub const USAGE: &str = "\
Usage: orcinus tpch --sf N [OPTIONS]

Generates TPC-H data (tpchgen, identical to dbgen) at scale factor N and loads it into the data
directory through the SQL engine: CREATE DATABASE, the 8 tables with their primary keys, then
multi-row INSERTs committed in large transactions, one session per core. The server must not be
running on the directory; start it afterwards. Progress is printed to stderr.

Options:
      --sf N             scale factor from 0.01 to 1000, e.g. 0.01, 0.1, 1 (required)
      --data-dir DIR     data directory (default: ./orcinus-data)
      --database NAME    database to create; it must not exist yet (default: tpch)
      --config FILE      TOML configuration file (storage settings)
  -h, --help             print this help and exit
";

/// Parsed `orcinus tpch` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct TpchArgs {
    /// Scale factor.
    pub sf: f64,
    /// `--data-dir` and `--config`, resolved as for the server.
    pub overrides: CliOverrides,
    /// Database name.
    pub database: String,
}

/// What `orcinus tpch …` asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum TpchCommand {
    /// Print [`USAGE`].
    Help,
    /// Load.
    Load(TpchArgs),
}

/// Parses the arguments after `tpch`.
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<TpchCommand, ServerError> {
    let usage = |m: String| ServerError::Usage(format!("tpch: {m}"));
    let mut sf = None;
    let mut database = "tpch".to_string();
    let mut overrides = CliOverrides::default();
    let mut args = args.into_iter();
    while let Some(raw) = args.next() {
        let arg = raw
            .into_string()
            .map_err(|a| usage(format!("non-UTF-8 argument {}", a.to_string_lossy())))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        if flag == "-h" || flag == "--help" {
            return Ok(TpchCommand::Help);
        }
        if !matches!(
            flag.as_str(),
            "--sf" | "--data-dir" | "--database" | "--config"
        ) {
            return Err(usage(format!("unknown argument {flag}")));
        }
        let value = match inline {
            Some(v) => v,
            None => args
                .next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| usage(format!("{flag} needs a UTF-8 value")))?,
        };
        match flag.as_str() {
            "--sf" => sf = Some(parse_sf(&value).map_err(usage)?),
            "--data-dir" if value.is_empty() => {
                return Err(usage("--data-dir must not be empty".into()));
            }
            "--data-dir" => overrides.data_dir = Some(PathBuf::from(value)),
            "--config" => overrides.config_file = Some(PathBuf::from(value)),
            _ => database = check_database_name(value).map_err(usage)?,
        }
    }
    let sf = sf.ok_or_else(|| usage("--sf N is required".into()))?;
    Ok(TpchCommand::Load(TpchArgs {
        sf,
        overrides,
        database,
    }))
}

/// Below SF 0.01 (fewer than 100 suppliers) dbgen's partsupp repeats (ps_partkey, ps_suppkey)
/// pairs — at SF 0.001 part 31 gets supplier 2 twice — which the primary key rejects.
const MIN_SF: f64 = 0.01;

fn parse_sf(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(sf) if sf.is_finite() && (MIN_SF..=1000.0).contains(&sf) => Ok(sf),
        _ => Err(format!(
            "--sf expects a scale factor from 0.01 to 1000 (below 0.01 dbgen's partsupp \
             repeats primary keys), got {value:?}"
        )),
    }
}

/// Database names are restricted to `[A-Za-z0-9_]` (1–64 chars) so they need no quoting rules.
fn check_database_name(name: String) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "--database expects 1-64 letters, digits or '_', got {name:?}"
        ))
    }
}

/// Runs the load described by `args`, reporting to stderr.
pub fn run(args: &TpchArgs) -> Result<(), ServerError> {
    let config = Config::from_cli(&args.overrides)?;
    // One load task per core (the SQL write path is CPU-bound), at least two.
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .thread_name("orcinus-tpch")
        .build()
        .map_err(ServerError::Runtime)?;
    let engine = open_engine(config.storage.clone())?;
    let options = LoadOptions {
        sf: args.sf,
        database: args.database.clone(),
        rows_per_insert: 1000,
        rows_per_commit: 100_000,
        parts: workers,
    };
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        let executor = SqlExecutor::open(engine.clone()).map_err(|e| LoadError {
            message: format!("cannot open the SQL catalog: {e}"),
            database_created: false,
        })?;
        load(&executor, &options, &mut std::io::stderr()).await
    });
    let shutdown = engine.shutdown();
    runtime.shutdown_background();
    let reports = outcome.map_err(|e| {
        let note = if e.database_created {
            format!(
                " (database {} in {} is partly loaded; drop it before retrying)",
                args.database,
                config.server.data_dir.display()
            )
        } else {
            String::new()
        };
        ServerError::TpchLoad(format!("{}{note}", e.message))
    })?;
    shutdown.map_err(ServerError::Shutdown)?;
    let rows: u64 = reports.iter().map(|r| r.rows).sum();
    let elapsed = started.elapsed();
    eprintln!(
        "loaded TPC-H SF {} into database {} in {}: {rows} rows in {:.1} s ({:.0} rows/s)",
        args.sf,
        args.database,
        config.server.data_dir.display(),
        elapsed.as_secs_f64(),
        rows_per_second(rows, elapsed)
    );
    Ok(())
}

#[cfg(test)]
mod tests;
