//! A fake SQL engine for protocol tests: fixed answers keyed by exact query text, one table,
//! one database, two accounts, and an echo statement for binary-protocol round trips.

use orcinus_sql::session::{
    Account, ColumnDef, ColumnFlags, ColumnType, Credentials, Date, DateTime, ExecutedStatement,
    OkSummary, PreparedStatement, QueryOutcome, QueryResponse, ResultSet, SessionContext,
    SessionStatus, SqlEngine, SqlError, SqlResult, SqlSession, StatementId, Value,
};

pub struct FakeEngine;

pub struct FakeSession {
    database: Option<String>,
    multi: bool,
    autocommit: bool,
    in_transaction: bool,
    statements: Vec<(StatementId, String)>,
    next_id: StatementId,
}

fn check_db(name: &str) -> SqlResult<()> {
    if name == "test" {
        Ok(())
    } else {
        Err(SqlError::UnknownDatabase(name.to_owned()))
    }
}

/// Columns of the fixed table `t`.
pub fn table_columns() -> Vec<ColumnDef> {
    vec![
        ColumnDef::new("id", ColumnType::Long)
            .in_table("test", "t")
            .with_flags(ColumnFlags::NOT_NULL.with(ColumnFlags::PRIMARY_KEY)),
        ColumnDef::new("name", ColumnType::VarChar)
            .in_table("test", "t")
            .with_length(80),
        ColumnDef::new("price", ColumnType::Decimal)
            .in_table("test", "t")
            .with_length(12)
            .with_decimals(2),
        ColumnDef::new("created", ColumnType::DateTime).in_table("test", "t"),
        ColumnDef::new("data", ColumnType::Blob)
            .in_table("test", "t")
            .binary(),
    ]
}

pub fn table_rows() -> Vec<Vec<Value>> {
    let created = DateTime {
        date: Date {
            year: 2024,
            month: 2,
            day: 29,
        },
        hour: 13,
        minute: 14,
        second: 15,
        microsecond: 0,
    };
    vec![
        vec![
            Value::Int(1),
            Value::text("alpha"),
            Value::Decimal("12.50".into()),
            Value::DateTime(created),
            Value::Bytes(vec![0, 1, 0xff]),
        ],
        vec![
            Value::Int(2),
            Value::Null,
            Value::Decimal("-0.01".into()),
            Value::Null,
            Value::Null,
        ],
    ]
}

fn rows(columns: Vec<ColumnDef>, rows: Vec<Vec<Value>>) -> QueryOutcome {
    QueryOutcome::Rows(ResultSet {
        columns,
        rows,
        warnings: 0,
    })
}

impl SqlEngine for FakeEngine {
    type Session = FakeSession;

    async fn lookup_account(&self, user: &str) -> SqlResult<Option<Account>> {
        let credentials = match user {
            "root" => Credentials::NoPassword,
            "alice" => Credentials::from_password(b"secret"),
            _ => return Ok(None),
        };
        Ok(Some(Account {
            user: user.to_owned(),
            credentials,
        }))
    }

    async fn open_session(&self, context: SessionContext) -> SqlResult<FakeSession> {
        if let Some(db) = &context.database {
            check_db(db)?;
        }
        Ok(FakeSession {
            database: context.database,
            multi: context.multi_statements,
            autocommit: true,
            in_transaction: false,
            statements: Vec::new(),
            next_id: 1,
        })
    }
}

impl FakeSession {
    fn run(&mut self, sql: &str) -> SqlResult<QueryOutcome> {
        let one = |name: &str, t: ColumnType, v: Value| {
            rows(vec![ColumnDef::new(name, t)], vec![vec![v]])
        };
        Ok(match sql.trim() {
            "SELECT 1" => one("1", ColumnType::LongLong, Value::Int(1)),
            "select @@version_comment limit 1" | "SELECT @@version_comment LIMIT 1" => one(
                "@@version_comment",
                ColumnType::VarChar,
                Value::text("Orcinus fake"),
            ),
            "SELECT * FROM t" => rows(table_columns(), table_rows()),
            "SELECT bad_row" => rows(table_columns(), vec![vec![Value::Int(1)]]),
            "BEGIN" => {
                self.in_transaction = true;
                QueryOutcome::Done(OkSummary::default())
            }
            "COMMIT" => {
                self.in_transaction = false;
                QueryOutcome::Done(OkSummary::default())
            }
            "SET autocommit=0" => {
                self.autocommit = false;
                QueryOutcome::Done(OkSummary::default())
            }
            "INSERT INTO t VALUES (3), (4)" => QueryOutcome::Done(OkSummary {
                affected_rows: 2,
                last_insert_id: 42,
                warnings: 0,
                info: "Records: 2  Duplicates: 0  Warnings: 0".into(),
            }),
            "BAD" => {
                return Err(SqlError::Parse("BAD".into()));
            }
            "DEADLOCK" => return Err(SqlError::Deadlock),
            other => return Err(SqlError::NotSupported(other.to_owned())),
        })
    }
}

fn value_column(i: usize, v: &Value) -> ColumnDef {
    let t = match v {
        Value::Null => ColumnType::Null,
        Value::Int(_) => ColumnType::LongLong,
        Value::UInt(_) => ColumnType::LongLong,
        Value::Float(_) => ColumnType::Float,
        Value::Double(_) => ColumnType::Double,
        Value::Decimal(_) => ColumnType::Decimal,
        Value::Bytes(_) => ColumnType::Blob,
        Value::Date(_) => ColumnType::Date,
        Value::DateTime(_) => ColumnType::DateTime,
        Value::Time(_) => ColumnType::Time,
    };
    let mut c = ColumnDef::new(format!("p{i}"), t);
    if matches!(v, Value::UInt(_)) {
        c = c.with_flags(ColumnFlags::UNSIGNED);
    }
    if matches!(v, Value::DateTime(_)) {
        c = c.with_decimals(6);
    }
    c
}

impl SqlSession for FakeSession {
    fn status(&self) -> SessionStatus {
        SessionStatus {
            autocommit: self.autocommit,
            in_transaction: self.in_transaction,
        }
    }

    fn set_multi_statements(&mut self, enabled: bool) {
        self.multi = enabled;
    }

    async fn use_database(&mut self, name: &str) -> SqlResult<()> {
        check_db(name)?;
        self.database = Some(name.to_owned());
        Ok(())
    }

    async fn query(&mut self, sql: &str) -> QueryResponse {
        let parts: Vec<&str> = sql.split(';').filter(|s| !s.trim().is_empty()).collect();
        if parts.len() > 1 && !self.multi {
            return QueryResponse::failed(SqlError::Parse(sql.into()));
        }
        let mut response = QueryResponse::default();
        for part in parts {
            match self.run(part) {
                Ok(outcome) => response.completed.push(ExecutedStatement {
                    outcome,
                    status: self.status(),
                }),
                Err(e) => {
                    response.error = Some(e);
                    break;
                }
            }
        }
        response
    }

    async fn field_list(&mut self, table: &str, _pattern: &str) -> SqlResult<Vec<ColumnDef>> {
        match table {
            "t" => Ok(table_columns()),
            _ => Err(SqlError::NoSuchTable {
                db: "test".into(),
                table: table.into(),
            }),
        }
    }

    async fn prepare(&mut self, sql: &str) -> SqlResult<PreparedStatement> {
        let (param_count, columns) = if sql == "SELECT * FROM t WHERE id = ?" {
            (1, table_columns())
        } else if let Some(rest) = sql.strip_prefix("ECHO") {
            let n = rest.matches('?').count();
            (
                n as u16,
                (0..n)
                    .map(|i| ColumnDef::new(format!("p{i}"), ColumnType::VarChar))
                    .collect(),
            )
        } else if sql == "BEGIN" {
            return Err(SqlError::UnsupportedInPreparedStatement);
        } else {
            return Err(SqlError::NotSupported(sql.to_owned()));
        };
        let id = self.next_id;
        self.next_id += 1;
        self.statements.push((id, sql.to_owned()));
        Ok(PreparedStatement {
            id,
            param_count,
            columns,
        })
    }

    async fn execute_prepared(
        &mut self,
        id: StatementId,
        params: Vec<Value>,
    ) -> SqlResult<QueryOutcome> {
        let sql = self
            .statements
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, s)| s.clone())
            .ok_or(SqlError::UnknownStatement {
                id,
                command: "mysqld_stmt_execute",
            })?;
        if sql.starts_with("ECHO") {
            let columns = params
                .iter()
                .enumerate()
                .map(|(i, v)| value_column(i, v))
                .collect();
            return Ok(rows(columns, vec![params]));
        }
        let wanted = match params.first() {
            Some(Value::Int(i)) => *i,
            Some(Value::UInt(u)) => *u as i64,
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).parse().unwrap_or(0),
            _ => return Err(SqlError::WrongArguments("fake select".into())),
        };
        let found = table_rows()
            .into_iter()
            .filter(|r| r[0] == Value::Int(wanted))
            .collect();
        Ok(rows(table_columns(), found))
    }

    fn close_prepared(&mut self, id: StatementId) {
        self.statements.retain(|(i, _)| *i != id);
    }

    async fn reset(&mut self) -> SqlResult<()> {
        self.statements.clear();
        self.autocommit = true;
        self.in_transaction = false;
        Ok(())
    }

    async fn close(self) {}
}
