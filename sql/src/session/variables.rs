//! The typed store of session system variables (`@@autocommit`, `@@character_set_client` …).
//!
//! Invariants: every variable has a fixed type and either a fixed value (read-only) or a
//! validator; a `SET` that fails validation changes nothing. Only variables whose values are
//! true of Orcinus are listed: a variable whose setting nothing would honour is absent (and
//! `SELECT @@x` then fails with 1193) rather than present with an invented value.

use std::collections::BTreeMap;

use crate::error::{SqlError, SqlResult};

/// The value of a system variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VariableValue {
    /// An integer (MySQL reports these as BIGINT).
    Int(i64),
    /// Text.
    Text(String),
    /// SQL NULL (for example `character_set_results` after `SET character_set_results = NULL`).
    Null,
}

/// What values a variable accepts.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Cannot be set.
    ReadOnly,
    /// 0/1, also accepting ON/OFF/TRUE/FALSE.
    Bool,
    /// One of these names (case-insensitive), stored in the listed spelling.
    OneOf(&'static [&'static str]),
    /// One of these names or NULL.
    OneOfOrNull(&'static [&'static str]),
    /// Free text: the SQL layer validates when it interprets the value.
    AnyText,
}

/// Character sets whose text is valid in our utf8mb4 storage and results.
const UTF8_CHARSETS: &[&str] = &["utf8mb4", "utf8mb3", "utf8"];
/// Collations accepted for `collation_connection`.
const UTF8MB4_COLLATIONS: &[&str] = &[
    "utf8mb4_0900_ai_ci",
    "utf8mb4_general_ci",
    "utf8mb4_unicode_ci",
    "utf8mb4_bin",
];
/// The only isolation level implemented: each transaction reads one snapshot (so reads repeat)
/// and writes take row locks, which is MySQL's REPEATABLE READ as clients observe it.
const ISOLATION_LEVELS: &[&str] = &["REPEATABLE-READ"];
/// Values of `orcinus_execution_mode` (see `plan::ExecutionMode`).
pub const EXECUTION_MODES: &[&str] = &["auto", "datafusion"];
/// MySQL 8.0's default sql_mode.
const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

#[derive(Debug, Clone)]
struct Variable {
    value: VariableValue,
    default: VariableValue,
    rule: Rule,
}

/// Server-wide values that session variables start from: what the server enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableDefaults {
    /// `@@version`.
    pub version: String,
    /// `@@max_allowed_packet` in bytes (enforced by the protocol).
    pub max_allowed_packet: u64,
    /// `@@wait_timeout` in seconds for non-interactive clients (enforced by the protocol).
    pub wait_timeout: u64,
    /// `@@interactive_timeout` in seconds, the idle limit of CLIENT_INTERACTIVE clients.
    pub interactive_timeout: u64,
    /// `@@net_read_timeout` in seconds: time to receive the rest of a started packet.
    pub net_read_timeout: u64,
    /// `@@net_write_timeout` in seconds: time to send a response.
    pub net_write_timeout: u64,
    /// `@@max_connections` (enforced by the protocol).
    pub max_connections: u64,
    /// `@@innodb_lock_wait_timeout` in seconds: how long a row lock is waited for (enforced by
    /// storage, whose setting is in milliseconds; this is rounded up).
    pub lock_wait_timeout: u64,
    /// `@@local_infile`: whether `LOAD DATA LOCAL` is allowed (the client must enable it too).
    pub local_infile: bool,
    /// `@@secure_file_priv`: the only directory server-side `LOAD DATA` reads from; `None`
    /// disables it (MySQL's NULL), an empty path allows any file (MySQL's empty value).
    pub secure_file_priv: Option<std::path::PathBuf>,
}

/// Session system variables.
#[derive(Debug, Clone)]
pub struct SessionVariables {
    by_name: BTreeMap<&'static str, Variable>,
}

impl SessionVariables {
    /// The variables of a new session. An interactive session's `wait_timeout` starts from
    /// `interactive_timeout`, as in MySQL.
    #[must_use]
    pub fn new(defaults: &VariableDefaults, interactive: bool) -> Self {
        let text = |s: &str| VariableValue::Text(s.to_owned());
        let int = |v: u64| VariableValue::Int(i64::try_from(v).unwrap_or(i64::MAX));
        let wait = if interactive {
            defaults.interactive_timeout
        } else {
            defaults.wait_timeout
        };
        let version = defaults.version.as_str();
        let entries: Vec<(&'static str, VariableValue, Rule)> = vec![
            ("autocommit", VariableValue::Int(1), Rule::Bool),
            (
                "auto_increment_increment",
                VariableValue::Int(1),
                Rule::ReadOnly,
            ),
            (
                "character_set_client",
                text("utf8mb4"),
                Rule::OneOf(UTF8_CHARSETS),
            ),
            (
                "character_set_connection",
                text("utf8mb4"),
                Rule::OneOf(UTF8_CHARSETS),
            ),
            (
                "character_set_results",
                text("utf8mb4"),
                Rule::OneOfOrNull(UTF8_CHARSETS),
            ),
            ("character_set_server", text("utf8mb4"), Rule::ReadOnly),
            ("character_set_database", text("utf8mb4"), Rule::ReadOnly),
            (
                "collation_connection",
                text("utf8mb4_0900_ai_ci"),
                Rule::OneOf(UTF8MB4_COLLATIONS),
            ),
            (
                "collation_server",
                text("utf8mb4_0900_ai_ci"),
                Rule::ReadOnly,
            ),
            (
                "collation_database",
                text("utf8mb4_0900_ai_ci"),
                Rule::ReadOnly,
            ),
            // No init_connect statements are run.
            ("init_connect", text(""), Rule::ReadOnly),
            (
                "interactive_timeout",
                int(defaults.interactive_timeout),
                Rule::ReadOnly,
            ),
            (
                "innodb_lock_wait_timeout",
                int(defaults.lock_wait_timeout),
                Rule::ReadOnly,
            ),
            ("license", text(env!("CARGO_PKG_LICENSE")), Rule::ReadOnly),
            (
                "local_infile",
                VariableValue::Int(i64::from(defaults.local_infile)),
                Rule::ReadOnly,
            ),
            // Table and database names are compared as stored, case-sensitively.
            (
                "lower_case_table_names",
                VariableValue::Int(0),
                Rule::ReadOnly,
            ),
            (
                "max_connections",
                int(defaults.max_connections),
                Rule::ReadOnly,
            ),
            // No statement time limit is enforced, which is what 0 means.
            ("max_execution_time", VariableValue::Int(0), Rule::ReadOnly),
            (
                "max_allowed_packet",
                int(defaults.max_allowed_packet),
                Rule::ReadOnly,
            ),
            (
                "net_read_timeout",
                int(defaults.net_read_timeout),
                Rule::ReadOnly,
            ),
            (
                "net_write_timeout",
                int(defaults.net_write_timeout),
                Rule::ReadOnly,
            ),
            // There is no performance_schema.
            // Which executor runs table-reading SELECTs: `auto` (fast path where it can) or
            // `datafusion` (all of them; the .slt suite runs in both modes).
            (
                "orcinus_execution_mode",
                text("auto"),
                Rule::OneOf(EXECUTION_MODES),
            ),
            ("performance_schema", VariableValue::Int(0), Rule::ReadOnly),
            ("sql_mode", text(DEFAULT_SQL_MODE), Rule::AnyText),
            ("time_zone", text("SYSTEM"), Rule::AnyText),
            (
                "secure_file_priv",
                defaults
                    .secure_file_priv
                    .as_ref()
                    .map_or(VariableValue::Null, |p| text(&p.to_string_lossy())),
                Rule::ReadOnly,
            ),
            // No Unix socket is served.
            ("socket", VariableValue::Null, Rule::ReadOnly),
            ("system_time_zone", text("UTC"), Rule::ReadOnly),
            (
                "transaction_isolation",
                text("REPEATABLE-READ"),
                Rule::OneOf(ISOLATION_LEVELS),
            ),
            (
                "transaction_read_only",
                VariableValue::Int(0),
                Rule::ReadOnly,
            ),
            ("version", text(version), Rule::ReadOnly),
            ("version_comment", text("Orcinus"), Rule::ReadOnly),
            ("wait_timeout", int(wait), Rule::ReadOnly),
        ];
        let by_name = entries
            .into_iter()
            .map(|(name, value, rule)| {
                let default = value.clone();
                (
                    name,
                    Variable {
                        value,
                        default,
                        rule,
                    },
                )
            })
            .collect();
        Self { by_name }
    }

    /// `@@version` as text.
    #[must_use]
    pub fn version(&self) -> &str {
        match self.by_name.get("version").map(|v| &v.value) {
            Some(VariableValue::Text(t)) => t,
            _ => "",
        }
    }

    /// The value of `name` (case-insensitive; `tx_isolation` is an alias).
    pub fn get(&self, name: &str) -> SqlResult<&VariableValue> {
        let key = canonical_name(name);
        self.by_name
            .get(key.as_str())
            .map(|v| &v.value)
            .ok_or_else(|| SqlError::UnknownSystemVariable(name.to_owned()))
    }

    /// Checks that `name` may be set to `value` and returns the value to store.
    /// `None` as value means `DEFAULT`.
    pub fn validate(&self, name: &str, value: Option<&str>) -> SqlResult<(String, VariableValue)> {
        let key = canonical_name(name);
        let var = self
            .by_name
            .get(key.as_str())
            .ok_or_else(|| SqlError::UnknownSystemVariable(name.to_owned()))?;
        let Some(raw) = value else {
            if matches!(var.rule, Rule::ReadOnly) {
                return Err(SqlError::ReadOnlyVariable(key));
            }
            return Ok((key, var.default.clone()));
        };
        let wrong = || SqlError::WrongValueForVariable {
            name: key.clone(),
            value: raw.to_owned(),
        };
        let stored = match var.rule {
            Rule::ReadOnly => return Err(SqlError::ReadOnlyVariable(key)),
            Rule::Bool => match raw.to_ascii_uppercase().as_str() {
                "1" | "ON" | "TRUE" => VariableValue::Int(1),
                "0" | "OFF" | "FALSE" => VariableValue::Int(0),
                _ => return Err(wrong()),
            },
            Rule::OneOfOrNull(_) if raw.eq_ignore_ascii_case("NULL") => VariableValue::Null,
            Rule::OneOf(allowed) | Rule::OneOfOrNull(allowed) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(raw))
                .map(|a| VariableValue::Text((*a).to_owned()))
                .ok_or_else(wrong)?,
            Rule::AnyText => VariableValue::Text(raw.to_owned()),
        };
        Ok((key, stored))
    }

    /// Stores a value returned by [`Self::validate`].
    pub fn apply(&mut self, key: &str, value: VariableValue) -> SqlResult<()> {
        let var = self
            .by_name
            .get_mut(key)
            .ok_or_else(|| SqlError::UnknownSystemVariable(key.to_owned()))?;
        var.value = value;
        Ok(())
    }

    /// Restores every variable to its default (COM_RESET_CONNECTION).
    pub fn reset(&mut self) {
        for var in self.by_name.values_mut() {
            var.value = var.default.clone();
        }
    }

    /// Every variable with its value, ordered by name (`SHOW VARIABLES`).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &VariableValue)> {
        self.by_name.iter().map(|(name, var)| (*name, &var.value))
    }

    /// `@@orcinus_execution_mode` as the executor's mode.
    #[must_use]
    pub fn execution_mode(&self) -> crate::plan::ExecutionMode {
        match self.get("orcinus_execution_mode") {
            Ok(VariableValue::Text(m)) if m == "datafusion" => {
                crate::plan::ExecutionMode::DataFusion
            }
            _ => crate::plan::ExecutionMode::Auto,
        }
    }

    /// `@@autocommit` as a boolean.
    #[must_use]
    pub fn autocommit(&self) -> bool {
        matches!(self.get("autocommit"), Ok(VariableValue::Int(v)) if *v != 0)
    }
}

fn canonical_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    match lower.as_str() {
        "tx_isolation" => "transaction_isolation".to_owned(),
        "tx_read_only" => "transaction_read_only".to_owned(),
        _ => lower,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> SessionVariables {
        SessionVariables::new(
            &VariableDefaults {
                version: "8.0.36-orcinus".into(),
                max_allowed_packet: 1024,
                wait_timeout: 10,
                interactive_timeout: 20,
                net_read_timeout: 30,
                net_write_timeout: 60,
                max_connections: 4096,
                lock_wait_timeout: 50,
                local_infile: true,
                secure_file_priv: None,
            },
            true,
        )
    }

    #[test]
    fn autocommit_accepts_on_off_and_rejects_garbage() {
        let mut v = vars();
        let (k, val) = v.validate("AUTOCOMMIT", Some("off")).unwrap();
        v.apply(&k, val).unwrap();
        assert!(!v.autocommit());
        assert!(matches!(
            v.validate("autocommit", Some("maybe")),
            Err(SqlError::WrongValueForVariable { .. })
        ));
    }

    #[test]
    fn read_only_and_unknown_variables_are_errors() {
        let v = vars();
        assert!(matches!(
            v.validate("version_comment", Some("x")),
            Err(SqlError::ReadOnlyVariable(_))
        ));
        assert!(matches!(
            v.get("query_cache_size"),
            Err(SqlError::UnknownSystemVariable(_))
        ));
        assert_eq!(
            v.get("lower_case_table_names").unwrap(),
            &VariableValue::Int(0)
        );
        assert_eq!(v.get("wait_timeout").unwrap(), &VariableValue::Int(20));
        assert_eq!(
            v.get("tx_isolation").unwrap(),
            &VariableValue::Text("REPEATABLE-READ".into())
        );
    }

    #[test]
    fn execution_mode_is_auto_or_datafusion() {
        let mut v = vars();
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::Auto);
        let (k, val) = v
            .validate("ORCINUS_EXECUTION_MODE", Some("DataFusion"))
            .unwrap();
        v.apply(&k, val).unwrap();
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::DataFusion);
        assert!(matches!(
            v.validate("orcinus_execution_mode", Some("fast")),
            Err(SqlError::WrongValueForVariable { .. })
        ));
        assert!(v.iter().any(|(n, _)| n == "orcinus_execution_mode"));
        v.reset();
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::Auto);
    }

    #[test]
    fn reset_restores_defaults() {
        let mut v = vars();
        let (k, val) = v.validate("character_set_results", Some("NULL")).unwrap();
        v.apply(&k, val).unwrap();
        assert_eq!(
            v.get("character_set_results").unwrap(),
            &VariableValue::Null
        );
        v.reset();
        assert_eq!(
            v.get("character_set_results").unwrap(),
            &VariableValue::Text("utf8mb4".into())
        );
    }
}
