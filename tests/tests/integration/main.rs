//! The one integration-test binary: every test here starts the real `orcinus` process through
//! [`harness`] (port 0, a temporary data dir) and talks to it over its ports or signals.
//!
//! Panicking is how a test fails, so the workspace's no-panic lints are lifted for this binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod accounts;
mod command_line;
mod config_file;
mod crash;
mod harness;
mod lifecycle;
mod mysql_analytics;
mod mysql_client;
mod mysql_drivers;
mod mysql_kill;
mod mysql_load_data;
mod mysql_sql;
mod mysql_sysbench;
mod mysql_variables;
mod resp_bad_input;
mod resp_client;
mod resp_redis_benchmark;
mod resp_redis_cli;
mod resp_redis_py;
mod resp_scripts;
mod sql_logic;
mod startup_conflicts;
mod tools;
mod tpch_load;
