//! The typed store of system variables (`@@autocommit`, `@@character_set_client` …): one
//! server-wide [`GlobalVariables`] and one [`SessionVariables`] per session.
//!
//! Invariants: every variable has a fixed type, a scope (MySQL's: GLOBAL only, SESSION only,
//! or both) and either a fixed value (read-only) or a validator; a `SET` that fails validation
//! changes nothing. A session starts from the global values of the moment it opens (so
//! `SET GLOBAL` changes new sessions, not running ones) and reads GLOBAL-only variables live.
//! Only variables whose values are true of Orcinus are listed: a variable whose setting nothing
//! would honour is absent (and `SELECT @@x` then fails with 1193) rather than present with an
//! invented value.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

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
    /// An integer, clamped into `min..=max` as MySQL does.
    Range(i64, i64),
    /// One of these names (case-insensitive), stored in the listed spelling.
    OneOf(&'static [&'static str]),
    /// One of these names or NULL.
    OneOfOrNull(&'static [&'static str]),
    /// A transaction isolation level (see [`ISOLATION_LEVELS`]).
    Isolation,
    /// Free text: the SQL layer validates when it interprets the value.
    AnyText,
}

/// Where a variable lives (MySQL's "Scope" of each variable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A global value that sessions start from, and a session value.
    Both,
    /// Only a global value (`SET SESSION` is 1229, `@@session.x` is 1238).
    Global,
    /// Only a session value (`SET GLOBAL` is 1228, `@@global.x` is 1238).
    Session,
    /// Both, but the session value is read-only: only `SET GLOBAL` changes it, for sessions
    /// opened later (1621 on `SET SESSION`, MySQL's `max_allowed_packet`).
    GlobalSet,
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
/// The isolation levels a transaction can run at: REPEATABLE READ (one snapshot per
/// transaction), READ COMMITTED (a fresh snapshot per statement) and READ UNCOMMITTED, which
/// runs as READ COMMITTED (a stronger level; there are no dirty reads to offer). SERIALIZABLE
/// is refused by name: without range (gap) locks it cannot be honoured.
pub const ISOLATION_LEVELS: &[&str] = &["READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ"];
/// Values of `orcinus_execution_mode` (see `plan::ExecutionMode`).
pub const EXECUTION_MODES: &[&str] = &["auto", "datafusion"];
/// MySQL 8.0's default sql_mode.
const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";
/// The longest timeout MySQL accepts for `wait_timeout` and its kin (a year, in seconds).
const MAX_TIMEOUT: i64 = 31_536_000;

#[derive(Debug, Clone)]
struct Definition {
    /// The compiled-in value (`SET GLOBAL x = DEFAULT`).
    default: VariableValue,
    rule: Rule,
    scope: Scope,
}

/// Server-wide values that the global variables start from: what the server enforces.
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
    /// storage per transaction).
    pub lock_wait_timeout: u64,
    /// `@@local_infile`: whether `LOAD DATA LOCAL` is allowed (the client must enable it too).
    pub local_infile: bool,
    /// `@@secure_file_priv`: the only directory server-side `LOAD DATA` reads from; `None`
    /// disables it (MySQL's NULL), an empty path allows any file (MySQL's empty value).
    pub secure_file_priv: Option<std::path::PathBuf>,
    /// `@@orcinus_max_active_transactions`: how many multi-statement transactions run at once,
    /// 0 for no limit (read-only; the executor's admission gate, `crate::admission`).
    pub max_active_transactions: u64,
}

#[cfg(test)]
impl VariableDefaults {
    /// MySQL's defaults, with a 1 MiB packet limit and a 2 s lock wait (for tests).
    pub(crate) fn for_test() -> Self {
        Self {
            version: "8.0.36-orcinus".into(),
            max_allowed_packet: 1 << 20,
            wait_timeout: 28800,
            interactive_timeout: 28800,
            net_read_timeout: 30,
            net_write_timeout: 60,
            max_connections: 4096,
            lock_wait_timeout: 2,
            local_infile: true,
            secure_file_priv: None,
            max_active_transactions: 32,
        }
    }
}

fn definitions(defaults: &VariableDefaults) -> BTreeMap<&'static str, Definition> {
    use Rule::{AnyText, Bool, OneOf, OneOfOrNull, Range, ReadOnly};
    use Scope::{Both, Global, GlobalSet, Session};
    let text = |s: &str| VariableValue::Text(s.to_owned());
    let int = |v: u64| VariableValue::Int(i64::try_from(v).unwrap_or(i64::MAX));
    let timeout = Range(1, MAX_TIMEOUT);
    let entries: Vec<(&'static str, VariableValue, Rule, Scope)> = vec![
        ("autocommit", VariableValue::Int(1), Bool, Both),
        (
            "auto_increment_increment",
            VariableValue::Int(1),
            ReadOnly,
            Both,
        ),
        (
            "character_set_client",
            text("utf8mb4"),
            OneOf(UTF8_CHARSETS),
            Both,
        ),
        (
            "character_set_connection",
            text("utf8mb4"),
            OneOf(UTF8_CHARSETS),
            Both,
        ),
        (
            "character_set_results",
            text("utf8mb4"),
            OneOfOrNull(UTF8_CHARSETS),
            Both,
        ),
        ("character_set_server", text("utf8mb4"), ReadOnly, Both),
        ("character_set_database", text("utf8mb4"), ReadOnly, Both),
        (
            "collation_connection",
            text("utf8mb4_0900_ai_ci"),
            OneOf(UTF8MB4_COLLATIONS),
            Both,
        ),
        (
            "collation_server",
            text("utf8mb4_0900_ai_ci"),
            ReadOnly,
            Both,
        ),
        (
            "collation_database",
            text("utf8mb4_0900_ai_ci"),
            ReadOnly,
            Both,
        ),
        // No init_connect statements are run.
        ("init_connect", text(""), ReadOnly, Global),
        (
            "interactive_timeout",
            int(defaults.interactive_timeout),
            timeout,
            Both,
        ),
        (
            "innodb_lock_wait_timeout",
            int(defaults.lock_wait_timeout),
            Range(1, 1_073_741_824),
            Both,
        ),
        ("license", text(env!("CARGO_PKG_LICENSE")), ReadOnly, Global),
        (
            "local_infile",
            VariableValue::Int(i64::from(defaults.local_infile)),
            Bool,
            Global,
        ),
        // Table and database names are compared as stored, case-sensitively.
        (
            "lower_case_table_names",
            VariableValue::Int(0),
            ReadOnly,
            Global,
        ),
        (
            "max_connections",
            int(defaults.max_connections),
            Range(1, 100_000),
            Global,
        ),
        // No statement time limit is enforced, which is what 0 means.
        ("max_execution_time", VariableValue::Int(0), ReadOnly, Both),
        (
            "max_allowed_packet",
            int(defaults.max_allowed_packet),
            Range(1024, 1_073_741_824),
            GlobalSet,
        ),
        (
            "net_read_timeout",
            int(defaults.net_read_timeout),
            timeout,
            Both,
        ),
        (
            "net_write_timeout",
            int(defaults.net_write_timeout),
            timeout,
            Both,
        ),
        // Which executor runs table-reading SELECTs: `auto` (fast path where it can) or
        // `datafusion` (all of them; the .slt suite runs in both modes). A per-session switch.
        (
            "orcinus_execution_mode",
            text("auto"),
            OneOf(EXECUTION_MODES),
            Session,
        ),
        (
            "orcinus_max_active_transactions",
            int(defaults.max_active_transactions),
            ReadOnly,
            Global,
        ),
        // There is no performance_schema.
        (
            "performance_schema",
            VariableValue::Int(0),
            ReadOnly,
            Global,
        ),
        ("sql_mode", text(DEFAULT_SQL_MODE), AnyText, Both),
        ("time_zone", text("SYSTEM"), AnyText, Both),
        (
            "secure_file_priv",
            defaults
                .secure_file_priv
                .as_ref()
                .map_or(VariableValue::Null, |p| text(&p.to_string_lossy())),
            ReadOnly,
            Global,
        ),
        // No Unix socket is served.
        ("socket", VariableValue::Null, ReadOnly, Global),
        ("system_time_zone", text("UTC"), ReadOnly, Global),
        (
            "transaction_isolation",
            text("REPEATABLE-READ"),
            Rule::Isolation,
            Both,
        ),
        ("transaction_read_only", VariableValue::Int(0), Bool, Both),
        ("version", text(&defaults.version), ReadOnly, Global),
        ("version_comment", text("Orcinus"), ReadOnly, Global),
        ("wait_timeout", int(defaults.wait_timeout), timeout, Both),
    ];
    entries
        .into_iter()
        .map(|(name, default, rule, scope)| {
            (
                name,
                Definition {
                    default,
                    rule,
                    scope,
                },
            )
        })
        .collect()
}

/// The server's global variables (`SET GLOBAL`, `@@global.x`, `SHOW GLOBAL VARIABLES`),
/// shared by every session.
#[derive(Debug)]
pub struct GlobalVariables {
    definitions: BTreeMap<&'static str, Definition>,
    values: RwLock<BTreeMap<&'static str, VariableValue>>,
}

impl GlobalVariables {
    /// The global variables at server start.
    #[must_use]
    pub fn new(defaults: &VariableDefaults) -> Arc<Self> {
        let definitions = definitions(defaults);
        let values = definitions
            .iter()
            .filter(|(_, d)| d.scope != Scope::Session)
            .map(|(name, d)| (*name, d.default.clone()))
            .collect();
        Arc::new(Self {
            definitions,
            values: RwLock::new(values),
        })
    }

    fn definition(&self, name: &str) -> SqlResult<(&'static str, &Definition)> {
        let key = canonical_name(name);
        self.definitions
            .get_key_value(key.as_str())
            .map(|(k, d)| (*k, d))
            .ok_or_else(|| SqlError::UnknownSystemVariable(name.to_owned()))
    }

    /// The global value of `name` (`@@global.name`); a SESSION-only variable is 1238.
    pub fn get(&self, name: &str) -> SqlResult<VariableValue> {
        let (key, def) = self.definition(name)?;
        if def.scope == Scope::Session {
            return Err(SqlError::WrongVariableScope {
                name: key.to_owned(),
                scope: "SESSION",
            });
        }
        Ok(self
            .values
            .read()
            .get(key)
            .cloned()
            .unwrap_or_else(|| def.default.clone()))
    }

    /// A global integer variable (for the protocol's limits); `None` if it is not one.
    #[must_use]
    pub fn get_int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Ok(VariableValue::Int(v)) => Some(v),
            _ => None,
        }
    }

    /// Checks that `SET GLOBAL name = value` is allowed and returns what to store (`None` as
    /// value is `DEFAULT`, the compiled-in value).
    pub fn validate(
        &self,
        name: &str,
        value: Option<&str>,
    ) -> SqlResult<(&'static str, VariableValue)> {
        let (key, def) = self.definition(name)?;
        if matches!(def.rule, Rule::ReadOnly) {
            return Err(SqlError::ReadOnlyVariable(key.to_owned()));
        }
        if def.scope == Scope::Session {
            return Err(SqlError::SessionOnlyVariable(key.to_owned()));
        }
        let stored = match value {
            None => def.default.clone(),
            Some(raw) => check(key, def.rule, raw)?,
        };
        Ok((key, stored))
    }

    /// Stores a value returned by [`Self::validate`].
    pub fn apply(&self, key: &'static str, value: VariableValue) {
        self.values.write().insert(key, value);
    }

    /// Every global variable with its value, ordered by name (`SHOW GLOBAL VARIABLES`).
    #[must_use]
    pub fn snapshot(&self) -> Vec<(&'static str, VariableValue)> {
        self.values
            .read()
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }
}

/// One session's system variables.
#[derive(Debug, Clone)]
pub struct SessionVariables {
    globals: Arc<GlobalVariables>,
    values: BTreeMap<&'static str, VariableValue>,
    interactive: bool,
}

impl SessionVariables {
    /// The variables of a new session: the current global values. An interactive session's
    /// `wait_timeout` starts from `interactive_timeout`, as in MySQL.
    #[must_use]
    pub fn new(globals: Arc<GlobalVariables>, interactive: bool) -> Self {
        let mut vars = Self {
            globals,
            values: BTreeMap::new(),
            interactive,
        };
        vars.reset();
        vars
    }

    /// Restores every session value from the global values (COM_RESET_CONNECTION).
    pub fn reset(&mut self) {
        let globals = self.globals.values.read();
        self.values = self
            .globals
            .definitions
            .iter()
            .filter(|(_, d)| d.scope != Scope::Global)
            .map(|(name, d)| {
                let source = if *name == "wait_timeout" && self.interactive {
                    "interactive_timeout"
                } else {
                    name
                };
                let value = globals
                    .get(source)
                    .cloned()
                    .unwrap_or_else(|| d.default.clone());
                (*name, value)
            })
            .collect();
    }

    /// The server's global variables.
    #[must_use]
    pub fn globals(&self) -> &Arc<GlobalVariables> {
        &self.globals
    }

    /// `@@version` as text.
    #[must_use]
    pub fn version(&self) -> String {
        match self.get("version") {
            Ok(VariableValue::Text(t)) => t,
            _ => String::new(),
        }
    }

    /// The value of `name` as `@@name` reads it (case-insensitive; `tx_isolation` is an
    /// alias): the session value, or the global one of a GLOBAL-only variable.
    pub fn get(&self, name: &str) -> SqlResult<VariableValue> {
        let (key, def) = self.globals.definition(name)?;
        if def.scope == Scope::Global {
            return self.globals.get(key);
        }
        Ok(self
            .values
            .get(key)
            .cloned()
            .unwrap_or_else(|| def.default.clone()))
    }

    /// `@@session.name`: a GLOBAL-only variable is 1238.
    pub fn get_session(&self, name: &str) -> SqlResult<VariableValue> {
        let (key, def) = self.globals.definition(name)?;
        if def.scope == Scope::Global {
            return Err(SqlError::WrongVariableScope {
                name: key.to_owned(),
                scope: "GLOBAL",
            });
        }
        self.get(key)
    }

    /// An integer session variable; `None` if it is not one.
    #[must_use]
    pub fn get_int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Ok(VariableValue::Int(v)) => Some(v),
            _ => None,
        }
    }

    /// Checks that `SET [SESSION] name = value` is allowed and returns the key and value to
    /// store. `None` as value means `DEFAULT` (the global value, as in MySQL).
    pub fn validate(
        &self,
        name: &str,
        value: Option<&str>,
    ) -> SqlResult<(&'static str, VariableValue)> {
        let (key, def) = self.globals.definition(name)?;
        if matches!(def.rule, Rule::ReadOnly) {
            return Err(SqlError::ReadOnlyVariable(key.to_owned()));
        }
        match def.scope {
            Scope::Global => return Err(SqlError::GlobalOnlyVariable(key.to_owned())),
            Scope::GlobalSet => return Err(SqlError::SessionReadOnlyVariable(key.to_owned())),
            Scope::Both | Scope::Session => {}
        }
        let stored = match value {
            None if def.scope == Scope::Session => def.default.clone(),
            None => self.globals.get(key)?,
            Some(raw) => check(key, def.rule, raw)?,
        };
        Ok((key, stored))
    }

    /// Stores a value returned by [`Self::validate`].
    pub fn apply(&mut self, key: &'static str, value: VariableValue) {
        self.values.insert(key, value);
    }

    /// Every variable with its value as this session sees it, ordered by name
    /// (`SHOW [SESSION] VARIABLES`).
    #[must_use]
    pub fn snapshot(&self) -> Vec<(&'static str, VariableValue)> {
        let globals = self.globals.values.read();
        self.globals
            .definitions
            .iter()
            .map(|(name, d)| {
                let value = if d.scope == Scope::Global {
                    globals.get(name)
                } else {
                    self.values.get(name)
                };
                (*name, value.cloned().unwrap_or_else(|| d.default.clone()))
            })
            .collect()
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
        matches!(self.get("autocommit"), Ok(VariableValue::Int(v)) if v != 0)
    }
}

/// Validates `raw` for a variable with `rule` and returns the value to store.
fn check(key: &str, rule: Rule, raw: &str) -> SqlResult<VariableValue> {
    let wrong = || SqlError::WrongValueForVariable {
        name: key.to_owned(),
        value: raw.to_owned(),
    };
    Ok(match rule {
        Rule::ReadOnly => return Err(SqlError::ReadOnlyVariable(key.to_owned())),
        Rule::Bool => match raw.to_ascii_uppercase().as_str() {
            "1" | "ON" | "TRUE" => VariableValue::Int(1),
            "0" | "OFF" | "FALSE" => VariableValue::Int(0),
            _ => return Err(wrong()),
        },
        Rule::Range(min, max) => {
            // MySQL takes an integer (1232 for anything else) and clamps it into range.
            let v: i128 = raw
                .trim()
                .parse()
                .map_err(|_| SqlError::WrongTypeForVariable(key.to_owned()))?;
            VariableValue::Int(
                i64::try_from(v.clamp(i128::from(min), i128::from(max))).unwrap_or(max),
            )
        }
        Rule::OneOfOrNull(_) if raw.eq_ignore_ascii_case("NULL") => VariableValue::Null,
        Rule::OneOf(allowed) | Rule::OneOfOrNull(allowed) => allowed
            .iter()
            .find(|a| a.eq_ignore_ascii_case(raw))
            .map(|a| VariableValue::Text((*a).to_owned()))
            .ok_or_else(wrong)?,
        Rule::Isolation => {
            let spelled = raw.trim().to_ascii_uppercase().replace(' ', "-");
            if spelled == "SERIALIZABLE" {
                return Err(SqlError::unsupported(
                    "transaction isolation level SERIALIZABLE",
                ));
            }
            ISOLATION_LEVELS
                .iter()
                .find(|a| **a == spelled)
                .map(|a| VariableValue::Text((*a).to_owned()))
                .ok_or_else(wrong)?
        }
        Rule::AnyText => VariableValue::Text(raw.to_owned()),
    })
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

    fn globals() -> Arc<GlobalVariables> {
        GlobalVariables::new(&VariableDefaults {
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
            max_active_transactions: 32,
        })
    }

    fn vars() -> SessionVariables {
        SessionVariables::new(globals(), true)
    }

    #[test]
    fn autocommit_accepts_on_off_and_rejects_garbage() {
        let mut v = vars();
        let (k, val) = v.validate("AUTOCOMMIT", Some("off")).unwrap();
        v.apply(k, val);
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
            VariableValue::Int(0)
        );
        assert_eq!(v.get("wait_timeout").unwrap(), VariableValue::Int(20));
        assert_eq!(
            v.get("tx_isolation").unwrap(),
            VariableValue::Text("REPEATABLE-READ".into())
        );
    }

    #[test]
    fn isolation_levels_and_ranges() {
        let v = vars();
        assert_eq!(
            v.validate("transaction_isolation", Some("read committed"))
                .unwrap()
                .1,
            VariableValue::Text("READ-COMMITTED".into())
        );
        assert_eq!(
            v.validate("transaction_isolation", Some("SERIALIZABLE"))
                .unwrap_err()
                .code(),
            1235
        );
        assert_eq!(
            v.validate("innodb_lock_wait_timeout", Some("0")).unwrap().1,
            VariableValue::Int(1)
        );
        assert_eq!(
            v.validate("wait_timeout", Some("x")).unwrap_err().code(),
            1232
        );
    }

    #[test]
    fn scopes_follow_mysql() {
        let g = globals();
        let mut v = SessionVariables::new(Arc::clone(&g), false);
        assert_eq!(
            v.validate("max_connections", Some("10"))
                .unwrap_err()
                .code(),
            1229
        );
        assert_eq!(
            v.validate("max_allowed_packet", Some("4096"))
                .unwrap_err()
                .code(),
            1621
        );
        assert_eq!(
            g.validate("orcinus_execution_mode", Some("auto"))
                .unwrap_err()
                .code(),
            1228
        );
        assert_eq!(v.get_session("max_connections").unwrap_err().code(), 1238);
        assert_eq!(g.get("orcinus_execution_mode").unwrap_err().code(), 1238);
        let (k, val) = g.validate("max_connections", Some("10")).unwrap();
        g.apply(k, val);
        assert_eq!(v.get("max_connections").unwrap(), VariableValue::Int(10));
        let (k, val) = g.validate("autocommit", Some("0")).unwrap();
        g.apply(k, val);
        assert!(v.autocommit(), "a running session keeps its value");
        assert!(!SessionVariables::new(Arc::clone(&g), false).autocommit());
        let (k, val) = v.validate("autocommit", None).unwrap();
        v.apply(k, val);
        assert!(
            !v.autocommit(),
            "SET SESSION x = DEFAULT takes the global value"
        );
    }

    #[test]
    fn execution_mode_is_auto_or_datafusion() {
        let mut v = vars();
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::Auto);
        let (k, val) = v
            .validate("ORCINUS_EXECUTION_MODE", Some("DataFusion"))
            .unwrap();
        v.apply(k, val);
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::DataFusion);
        assert!(matches!(
            v.validate("orcinus_execution_mode", Some("fast")),
            Err(SqlError::WrongValueForVariable { .. })
        ));
        assert!(
            v.snapshot()
                .iter()
                .any(|(n, _)| *n == "orcinus_execution_mode")
        );
        v.reset();
        assert_eq!(v.execution_mode(), crate::plan::ExecutionMode::Auto);
    }

    #[test]
    fn reset_restores_defaults() {
        let mut v = vars();
        let (k, val) = v.validate("character_set_results", Some("NULL")).unwrap();
        v.apply(k, val);
        assert_eq!(v.get("character_set_results").unwrap(), VariableValue::Null);
        v.reset();
        assert_eq!(
            v.get("character_set_results").unwrap(),
            VariableValue::Text("utf8mb4".into())
        );
    }
}
