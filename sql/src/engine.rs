//! [`SqlExecutor`] runs SQL statements (DDL, DML, queries, transaction control) for one
//! connection's [`SessionState`] (current database, autocommit, open transaction,
//! LAST_INSERT_ID); [`PreparedPlan`] is a statement prepared once and executed many times.
//! The protocols do not call this directly: `session::SqlFrontend` puts session variables in
//! front of it and implements the `session` boundary traits.
//!
//! SELECTs the fast path does not run ([`Plan::Analytic`]: joins, subqueries, CTEs, set
//! operations, window functions, views, and every table-reading SELECT when the session's
//! [`ExecutionMode`] is DataFusion) run in the executor's [`AnalyticsEngine`] under the same
//! transaction rules: inside the open transaction (its snapshot plus its own writes), else over a
//! fresh snapshot; with autocommit off the query opens the transaction first, like any other.
//!
//! Transaction rules (MySQL's):
//! - autocommit on and no open transaction: each statement runs in its own storage transaction,
//!   committed durably before the result is returned;
//! - autocommit off: the first statement opens a transaction that stays open until COMMIT /
//!   ROLLBACK (or an implicit commit);
//! - BEGIN inside an open transaction commits it first; DDL commits the open transaction first;
//! - Deadlock (1213) rolls back the WHOLE transaction and leaves the session without one; any
//!   other failed statement, a lock wait timeout (1205) included, only discards its own writes
//!   (see `stmt_ctx.rs`; InnoDB's `innodb_rollback_on_timeout=OFF`) and leaves the transaction
//!   open, with the locks it took.
//!
//! Transaction characteristics ([`TxnCharacteristics`]): each transaction (an autocommitted
//! statement included) takes its isolation level and access mode from `START TRANSACTION`'s
//! own, else from a pending `SET TRANSACTION` (consumed by it), else from the session's.
//! REPEATABLE READ reads one snapshot for the whole transaction; READ COMMITTED takes a fresh
//! snapshot at the start of each statement. A READ ONLY transaction refuses DML and DDL with
//! 1792. Row-lock waits give up after the session's `innodb_lock_wait_timeout`.
//!
//! Admission ([`crate::admission`]): a transaction that stays open across statements (BEGIN,
//! or the first statement with autocommit off) first takes a slot of the executor's
//! [`TxnGate`], before its snapshot; it gives the slot back when it ends. Autocommitted
//! statements never wait there.

use crate::access;
use crate::admission::{Admission, DEFAULT_IDLE_REVOKE, TxnGate};
use crate::analytics::{AnalyticsConfig, AnalyticsEngine, RowReader, views};
use crate::catalog::Catalog;
use crate::ddl;
use crate::dml;
use crate::error::{SqlError, SqlResult};
use crate::information_schema;
use crate::plan::{self, ExecutionMode, Plan};
use crate::result::{OutputColumn, StatementResult};
use crate::select;
use crate::stmt_ctx::StmtCtx;
use crate::types::Datum;
use datafusion::sql::sqlparser::ast::{ObjectType, SchemaName, Statement, Use};
use orcinus_storage::{Engine, Transaction};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

/// The isolation levels the executor implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// One snapshot for the whole transaction (MySQL's default).
    #[default]
    RepeatableRead,
    /// A fresh snapshot for each statement (also what READ UNCOMMITTED runs as).
    ReadCommitted,
}

/// Characteristics of a transaction; `None` takes the next source's (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxnCharacteristics {
    /// Isolation level.
    pub isolation: Option<Isolation>,
    /// Access mode: true for READ ONLY.
    pub read_only: Option<bool>,
}

impl TxnCharacteristics {
    fn or(self, other: Self) -> Self {
        Self {
            isolation: self.isolation.or(other.isolation),
            read_only: self.read_only.or(other.read_only),
        }
    }
}

/// One connection's execution state.
pub struct SessionState {
    db: Option<String>,
    autocommit: bool,
    txn: Option<Transaction>,
    /// The open transaction's slot in the executor's [`TxnGate`] (`None` when no
    /// transaction is open, or it was opened without one, e.g. by LOAD DATA).
    admission: Option<Admission>,
    last_insert_id: u64,
    warnings: u16,
    mode: ExecutionMode,
    /// The session's characteristics (`SET SESSION TRANSACTION`, `@@transaction_isolation`).
    session_isolation: Isolation,
    session_read_only: bool,
    /// Those of the next transaction only (`SET TRANSACTION`).
    next: TxnCharacteristics,
    /// Those of the open transaction (or of the running autocommitted statement).
    txn_isolation: Isolation,
    txn_read_only: bool,
    /// `@@innodb_lock_wait_timeout`; `None` is the storage engine's configured timeout.
    lock_wait_timeout: Option<Duration>,
}

impl Default for SessionState {
    fn default() -> Self {
        Self::new(None)
    }
}

impl SessionState {
    /// A new session with `db` as its current database (not checked here; see
    /// [`SqlExecutor::use_database`]) and autocommit on.
    #[must_use]
    pub fn new(db: Option<String>) -> Self {
        Self {
            db,
            autocommit: true,
            txn: None,
            admission: None,
            last_insert_id: 0,
            warnings: 0,
            mode: ExecutionMode::Auto,
            session_isolation: Isolation::RepeatableRead,
            session_read_only: false,
            next: TxnCharacteristics::default(),
            txn_isolation: Isolation::RepeatableRead,
            txn_read_only: false,
            lock_wait_timeout: None,
        }
    }

    /// The session's transaction characteristics (`SET SESSION TRANSACTION …`, also
    /// `SET transaction_isolation`): transactions started from now on take them.
    pub fn set_session_characteristics(&mut self, isolation: Isolation, read_only: bool) {
        self.session_isolation = isolation;
        self.session_read_only = read_only;
    }

    /// Characteristics of the next transaction only (`SET TRANSACTION …`); 1568 while a
    /// transaction is open, as in MySQL.
    pub fn set_next_transaction(&mut self, next: TxnCharacteristics) -> SqlResult<()> {
        if self.txn.is_some() {
            return Err(SqlError::TransactionInProgress);
        }
        self.next = next.or(self.next);
        Ok(())
    }

    /// `@@innodb_lock_wait_timeout`: how long this session's row-lock waits last, from its
    /// next lock request on (the open transaction's included).
    pub fn set_lock_wait_timeout(&mut self, timeout: Duration) {
        self.lock_wait_timeout = Some(timeout);
        if let Some(txn) = &mut self.txn {
            txn.set_lock_wait_timeout(timeout);
        }
    }

    /// A new storage transaction with the characteristics `explicit`, else the pending
    /// `SET TRANSACTION` ones (consumed here), else the session's; they become the open
    /// transaction's (`txn_*`).
    fn begin_transaction(&mut self, engine: &Engine, explicit: TxnCharacteristics) -> Transaction {
        let chosen = explicit.or(std::mem::take(&mut self.next));
        self.txn_isolation = chosen.isolation.unwrap_or(self.session_isolation);
        self.txn_read_only = chosen.read_only.unwrap_or(self.session_read_only);
        let mut txn = engine.begin();
        if let Some(timeout) = self.lock_wait_timeout {
            txn.set_lock_wait_timeout(timeout);
        }
        txn
    }

    /// Whether a statement that starts now runs READ ONLY: the open transaction's mode, else
    /// the one the next transaction would take.
    fn read_only_now(&self) -> bool {
        if self.txn.is_some() {
            self.txn_read_only
        } else {
            self.next.read_only.unwrap_or(self.session_read_only)
        }
    }

    /// Start of a statement in the open transaction: READ COMMITTED reads a fresh snapshot.
    fn start_statement(&mut self) {
        if self.txn_isolation == Isolation::ReadCommitted
            && let Some(txn) = &mut self.txn
        {
            txn.refresh_snapshot();
        }
    }

    /// Which executor runs table-reading SELECTs (`@@orcinus_execution_mode`).
    pub fn set_execution_mode(&mut self, mode: ExecutionMode) {
        self.mode = mode;
    }

    /// The current [`ExecutionMode`].
    #[must_use]
    pub fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    /// The current database.
    #[must_use]
    pub fn database(&self) -> Option<&str> {
        self.db.as_deref()
    }

    /// True while a transaction is open.
    #[must_use]
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// The autocommit flag.
    #[must_use]
    pub fn autocommit(&self) -> bool {
        self.autocommit
    }

    /// `LAST_INSERT_ID()`.
    #[must_use]
    pub fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    /// Warnings of the last statement (always 0: strict mode turns every problem into an error).
    #[must_use]
    pub fn warnings(&self) -> u16 {
        self.warnings
    }

    /// `SET autocommit = on|off`. Switching it on commits the open transaction (through
    /// `catalog`), as MySQL does.
    pub async fn set_autocommit(&mut self, on: bool, catalog: &Catalog) -> Result<(), SqlError> {
        if on
            && !self.autocommit
            && let Some(txn) = self.txn.take()
        {
            self.admission = None;
            catalog.commit_txn(txn).await?;
        }
        self.autocommit = on;
        Ok(())
    }

    /// Rolls back any open transaction (connection close, COM_RESET_CONNECTION).
    pub fn reset(&mut self) {
        self.admission = None;
        if let Some(txn) = self.txn.take() {
            txn.rollback();
        }
    }

    /// After a statement: a transaction still open is now idle between statements; if none is
    /// open (it ended, or a failure rolled it back), its admission slot is given back.
    fn after_statement(&mut self) {
        if self.txn.is_none() {
            self.admission = None;
        } else if let Some(admission) = &self.admission {
            admission.idle();
        }
    }

    /// The transaction a write statement outside this file (LOAD DATA) runs in, by `run_dml`'s
    /// rules: the open one; a new open one when autocommit is off; else a statement-local one
    /// placed in `local`, which the caller commits when the statement succeeds.
    pub(crate) fn write_transaction<'a>(
        &'a mut self,
        engine: &Engine,
        local: &'a mut Option<Transaction>,
    ) -> SqlResult<&'a mut Transaction> {
        self.warnings = 0;
        self.statement_transaction(engine, local, true)
    }

    /// The transaction a DML statement runs in (see [`Self::write_transaction`]), opened
    /// or refreshed by the transaction rules; 1792 for a write in a READ ONLY transaction.
    fn statement_transaction<'a>(
        &'a mut self,
        engine: &Engine,
        local: &'a mut Option<Transaction>,
        writes: bool,
    ) -> SqlResult<&'a mut Transaction> {
        if self.txn.is_some() {
            self.start_statement();
        } else {
            let txn = self.begin_transaction(engine, TxnCharacteristics::default());
            if self.autocommit {
                *local = Some(txn);
            } else {
                self.txn = Some(txn);
            }
        }
        if writes && self.txn_read_only {
            return Err(SqlError::ReadOnlyTransaction);
        }
        match (&mut self.txn, local) {
            (Some(t), _) | (None, Some(t)) => Ok(t),
            (None, None) => Err(SqlError::Internal(
                "no transaction for the statement".into(),
            )),
        }
    }

    /// Records the end of such a statement: its warning count and generated AUTO_INCREMENT id
    /// on success; on a failure that rolls back the transaction, the rollback.
    pub(crate) fn finish_write(&mut self, result: Result<(u16, Option<u64>), &SqlError>) {
        match result {
            Ok((warnings, generated)) => {
                self.warnings = warnings;
                if let Some(id) = generated {
                    self.last_insert_id = id;
                }
            }
            Err(e) if e.rolls_back_transaction() => self.reset(),
            Err(_) => {}
        }
    }

    /// Commits the open transaction, if any. Its admission slot is given back first: what is
    /// left (the journal append, waiting for durability, releasing its row locks) needs no
    /// slot, and the next transaction can start meanwhile.
    async fn commit_open(&mut self, catalog: &Catalog) -> SqlResult<()> {
        self.admission = None;
        if let Some(txn) = self.txn.take() {
            catalog.commit_txn(txn).await?;
        }
        Ok(())
    }
}

/// A prepared statement: the parsed statement and its cached bound plan.
pub struct PreparedPlan {
    stmt: Statement,
    db: Option<String>,
    cached: Mutex<(u64, Arc<Plan>)>,
    param_count: usize,
    columns: Vec<OutputColumn>,
    mode: ExecutionMode,
}

impl PreparedPlan {
    /// Number of `?` parameters.
    #[must_use]
    pub fn param_count(&self) -> usize {
        self.param_count
    }

    /// Result columns (empty for statements without a result set).
    #[must_use]
    pub fn columns(&self) -> &[OutputColumn] {
        &self.columns
    }

    /// True if the plan was prepared under `session`'s current database and execution mode
    /// (the inputs of planning besides the statement and the catalog).
    #[must_use]
    pub fn fits(&self, session: &SessionState) -> bool {
        self.db.as_deref() == session.database() && self.mode == session.mode
    }
}

/// The statement executor: catalog plus storage. Shared by all sessions.
pub struct SqlExecutor {
    engine: Engine,
    catalog: Catalog,
    analytics: AnalyticsEngine,
    gate: Arc<TxnGate>,
}

/// Default for how many multi-statement transactions run at once ([`TxnGate`]). On two cores
/// with sysbench's oltp_read_write, 32 clients already keep the CPU busy; more open
/// transactions only age their snapshots and lengthen lock holds.
pub const DEFAULT_MAX_ACTIVE_TRANSACTIONS: usize = 32;

impl SqlExecutor {
    /// Opens the SQL layer over `engine`, loading the catalog, with the analytical executor's
    /// default settings ([`AnalyticsConfig::default`]: a quarter of RAM per query, one
    /// partition per core; the server configuration has no analytics section yet).
    pub fn open(engine: Engine) -> Result<Arc<Self>, SqlError> {
        Self::open_with(engine, AnalyticsConfig::default())
    }

    /// Opens the SQL layer with `analytics` as the analytical executor's settings.
    pub fn open_with(engine: Engine, analytics: AnalyticsConfig) -> Result<Arc<Self>, SqlError> {
        Self::open_configured(
            engine,
            analytics,
            TxnGate::new(DEFAULT_MAX_ACTIVE_TRANSACTIONS, DEFAULT_IDLE_REVOKE),
        )
    }

    /// Opens the SQL layer with `analytics` as the analytical executor's settings and `gate`
    /// admitting its multi-statement transactions.
    pub fn open_configured(
        engine: Engine,
        analytics: AnalyticsConfig,
        gate: Arc<TxnGate>,
    ) -> Result<Arc<Self>, SqlError> {
        let catalog = Catalog::open(&engine)?;
        Ok(Arc::new(Self {
            engine,
            catalog,
            analytics: AnalyticsEngine::new(analytics),
            gate,
        }))
    }

    /// The transaction admission gate (its counters).
    #[must_use]
    pub fn admission(&self) -> &TxnGate {
        &self.gate
    }

    /// The storage engine (statements outside this file open their transactions on it).
    pub(crate) fn storage(&self) -> &Engine {
        &self.engine
    }

    /// The analytical executor (its column-cache counters).
    #[must_use]
    pub fn analytics(&self) -> &AnalyticsEngine {
        &self.analytics
    }

    /// The catalog (metadata statements and COM_FIELD_LIST read its snapshot).
    #[must_use]
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Checks that `db` exists and makes it the session's current database (COM_INIT_DB).
    pub fn use_database(&self, session: &mut SessionState, db: &str) -> Result<(), SqlError> {
        // information_schema is not in the catalog: its views are computed (crate::show).
        if information_schema::is_information_schema(db) {
            session.db = Some(information_schema::INFORMATION_SCHEMA.to_string());
            return Ok(());
        }
        if !self.catalog.snapshot().dbs.contains_key(db) {
            return Err(SqlError::UnknownDatabase(db.to_string()));
        }
        session.db = Some(db.to_string());
        Ok(())
    }

    /// Runs one or more `;`-separated statements, stopping at the first error (whose result is
    /// the last element).
    pub async fn execute(
        &self,
        session: &mut SessionState,
        sql: &str,
    ) -> Vec<Result<StatementResult, SqlError>> {
        let stmts = match plan::parse(sql) {
            Ok(s) => s,
            Err(e) => return vec![Err(e)],
        };
        let mut out = Vec::with_capacity(stmts.len());
        for stmt in &stmts {
            let snap = self.catalog.snapshot();
            let res = match plan::plan_in_mode(stmt, &snap, session.db.as_deref(), session.mode) {
                Ok(p) => self.run(session, &p, &[]).await,
                Err(e) => Err(e),
            };
            let failed = res.is_err();
            out.push(res);
            if failed {
                break;
            }
        }
        out
    }

    /// `BEGIN` / `START TRANSACTION [READ ONLY | READ WRITE]`: commits the open transaction,
    /// then opens one with `characteristics` (see the module docs). Every transaction reads
    /// from a snapshot taken when it starts, so `WITH CONSISTENT SNAPSHOT` needs nothing more.
    pub async fn begin(
        &self,
        session: &mut SessionState,
        characteristics: TxnCharacteristics,
    ) -> SqlResult<()> {
        session.commit_open(&self.catalog).await?;
        session.admission = Some(self.gate.admit().await);
        let txn = session.begin_transaction(&self.engine, characteristics);
        session.txn = Some(txn);
        // Waiting for the client's first statement: idle, so a client that never sends one
        // cannot keep the slot from others.
        session.after_statement();
        Ok(())
    }

    /// Prepares one statement: parameters and result columns are known from here on (for an
    /// analytical query, from DataFusion's plan of it over the current catalog).
    pub async fn prepare(
        &self,
        session: &SessionState,
        sql: &str,
    ) -> Result<PreparedPlan, SqlError> {
        let mut stmts = plan::parse(sql)?;
        if stmts.len() != 1 {
            return Err(SqlError::Parse(
                "multiple statements in one prepared statement".into(),
            ));
        }
        let stmt = stmts.pop().ok_or(SqlError::EmptyQuery)?;
        let snap = self.catalog.snapshot();
        let p = plan::plan_in_mode(&stmt, &snap, session.db.as_deref(), session.mode)?;
        let columns = match &p {
            Plan::Analytic(analytic) => self.describe(session, analytic).await?,
            _ => p.columns(),
        };
        Ok(PreparedPlan {
            param_count: p.param_count(),
            mode: session.mode,
            columns,
            db: session.db.clone(),
            stmt,
            cached: Mutex::new((snap.version, Arc::new(p))),
        })
    }

    /// Executes a prepared statement with typed parameters (re-binding if DDL changed the
    /// catalog since it was prepared).
    pub async fn execute_prepared(
        &self,
        session: &mut SessionState,
        stmt: &PreparedPlan,
        params: &[Datum],
    ) -> Result<StatementResult, SqlError> {
        if params.len() != stmt.param_count {
            return Err(SqlError::WrongArguments("mysqld_stmt_execute".into()));
        }
        let snap = self.catalog.snapshot();
        let cached = {
            let c = stmt.cached.lock();
            (c.0 == snap.version).then(|| c.1.clone())
        };
        let p = match cached {
            Some(p) => p,
            None => {
                let p = Arc::new(plan::plan_in_mode(
                    &stmt.stmt,
                    &snap,
                    stmt.db.as_deref(),
                    stmt.mode,
                )?);
                *stmt.cached.lock() = (snap.version, p.clone());
                p
            }
        };
        self.run(session, &p, params).await
    }

    async fn run(
        &self,
        session: &mut SessionState,
        p: &Plan,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        match &session.admission {
            Some(admission) => admission.busy(),
            None if session.txn.is_none() && !session.autocommit && p.opens_transaction() => {
                session.admission = Some(self.gate.admit().await);
            }
            None => {}
        }
        let res = self.run_admitted(session, p, params).await;
        session.after_statement();
        res
    }

    async fn run_admitted(
        &self,
        session: &mut SessionState,
        p: &Plan,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        session.warnings = 0;
        match p {
            Plan::Begin => {
                self.begin(session, TxnCharacteristics::default()).await?;
                Ok(StatementResult::affected(0))
            }
            Plan::Commit => {
                session.commit_open(&self.catalog).await?;
                Ok(StatementResult::affected(0))
            }
            Plan::Rollback => {
                session.reset();
                Ok(StatementResult::affected(0))
            }
            Plan::Ddl(stmt) => {
                let changes_data = !matches!(stmt.as_ref(), Statement::Use(_));
                if changes_data && session.read_only_now() {
                    return Err(SqlError::ReadOnlyTransaction);
                }
                session.commit_open(&self.catalog).await?;
                // Boxed: DDL is rare and its future large (see `run_analytic`).
                Box::pin(self.run_ddl(session, stmt)).await
            }
            Plan::Select(_) | Plan::Insert(_) | Plan::Modify(_) | Plan::Explain(_) => {
                self.run_dml(session, p, params).await
            }
            Plan::Analytic(stmt) => self.run_analytic(session, stmt, params).await,
        }
    }

    /// Runs a query in the analytical executor, inside the session's transaction (opened first
    /// when autocommit is off) or over a fresh snapshot.
    async fn run_analytic(
        &self,
        session: &mut SessionState,
        stmt: &Statement,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        if session.txn.is_none() && !session.autocommit {
            let txn = session.begin_transaction(&self.engine, TxnCharacteristics::default());
            session.txn = Some(txn);
        } else if session.txn.is_none() {
            // An autocommitted query reads its own fresh snapshot; it still is the
            // transaction a pending `SET TRANSACTION` applies to.
            session.next = TxnCharacteristics::default();
        } else {
            session.start_statement();
        }
        // Boxed: DataFusion's futures are many KiB, and an unboxed one would make every
        // statement's future (fast path included) that large, copied at each call level.
        let res = Box::pin(self.analytics.execute_for_session(
            &self.catalog,
            &mut session.txn,
            session.db.as_deref(),
            stmt,
            params,
        ))
        .await;
        if let Err(e) = &res
            && e.rolls_back_transaction()
        {
            session.reset();
        }
        res
    }

    /// Result columns of an analytical query (COM_STMT_PREPARE), planned over a fresh snapshot.
    async fn describe(
        &self,
        session: &SessionState,
        stmt: &Statement,
    ) -> SqlResult<Vec<OutputColumn>> {
        let query = match stmt {
            Statement::Query(q) => q,
            Statement::Explain { .. } => return Ok(vec![crate::analytics::explain_column()]),
            _ => return Err(SqlError::Internal("not an analytical statement".into())),
        };
        let reader: Arc<dyn RowReader> = Arc::new(self.catalog.engine_snapshot());
        // Boxed for the reason given in `run_analytic`.
        Box::pin(self.analytics.describe(
            self.catalog.snapshot(),
            self.catalog.data().clone(),
            reader,
            session.db.as_deref(),
            query,
        ))
        .await
    }

    async fn run_dml(
        &self,
        session: &mut SessionState,
        p: &Plan,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let last_id = session.last_insert_id;
        let mut local = None;
        let writes = matches!(p, Plan::Insert(_) | Plan::Modify(_));
        let txn = session.statement_transaction(&self.engine, &mut local, writes)?;
        let outcome = self.run_in_txn(txn, p, params, last_id).await;
        match outcome {
            Ok((res, generated)) => {
                if let Some(t) = local {
                    self.catalog.commit_txn(t).await?;
                }
                if let Some(id) = generated {
                    session.last_insert_id = id;
                }
                Ok(res)
            }
            Err(e) => {
                if e.rolls_back_transaction() {
                    session.reset();
                }
                Err(e)
            }
        }
    }

    async fn run_in_txn(
        &self,
        txn: &mut Transaction,
        p: &Plan,
        params: &[Datum],
        last_id: u64,
    ) -> SqlResult<(StatementResult, Option<u64>)> {
        let mut ctx = StmtCtx::new(txn, self.catalog.data().clone());
        let out = match p {
            Plan::Select(s) => match s.lock {
                None => (select::execute(s, &ctx, params, last_id)?, None),
                Some(wait) => (
                    select::execute_locking(s, &mut ctx, params, last_id, wait).await?,
                    None,
                ),
            },
            Plan::Insert(i) => dml::execute_insert(i, &mut ctx, params, last_id).await?,
            Plan::Modify(m) => (
                dml::execute_modify(m, &mut ctx, params, last_id).await?,
                None,
            ),
            Plan::Explain(inner) => (explain(inner, params, last_id)?, None),
            _ => return Err(SqlError::Internal("not a DML plan".into())),
        };
        ctx.apply().await?;
        Ok(out)
    }

    async fn run_ddl(
        &self,
        session: &mut SessionState,
        stmt: &Statement,
    ) -> SqlResult<StatementResult> {
        let db = session.db.clone();
        let cat = &self.catalog;
        match stmt {
            Statement::CreateTable(ct) => ddl::create_table(cat, ct, db.as_deref()).await,
            Statement::CreateView(cv) => {
                views::create_view(&self.analytics, cat, cv, db.as_deref()).await
            }
            Statement::CreateIndex(ci) => ddl::create_index(cat, ci, db.as_deref()).await,
            Statement::Truncate(t) => {
                let datafusion::sql::sqlparser::ast::Truncate {
                    table_names,
                    partitions,
                    table: _,
                    if_exists,
                    identity,
                    cascade,
                    on_cluster,
                } = t;
                if partitions.is_some()
                    || *if_exists
                    || identity.is_some()
                    || cascade.is_some()
                    || on_cluster.is_some()
                {
                    return Err(SqlError::unsupported(format!("{stmt}")));
                }
                let [one] = table_names.as_slice() else {
                    return Err(SqlError::unsupported("TRUNCATE of several tables"));
                };
                ddl::truncate(cat, &one.name, db.as_deref()).await
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                location,
                managed_location,
                or_replace,
                transient,
                clone,
                data_retention_time_in_days,
                max_data_extension_time_in_days,
                external_volume,
                catalog,
                replace_invalid_characters,
                default_ddl_collation,
                storage_serialization_policy,
                comment,
                catalog_sync,
                catalog_sync_namespace_mode,
                catalog_sync_namespace_flatten_delimiter,
                with_tags,
                with_contacts,
                default_charset,
                default_collation,
            } => {
                let _ = (default_charset, default_collation);
                if location.is_some()
                    || managed_location.is_some()
                    || *or_replace
                    || *transient
                    || clone.is_some()
                    || data_retention_time_in_days.is_some()
                    || max_data_extension_time_in_days.is_some()
                    || external_volume.is_some()
                    || catalog.is_some()
                    || replace_invalid_characters.is_some()
                    || default_ddl_collation.is_some()
                    || storage_serialization_policy.is_some()
                    || comment.is_some()
                    || catalog_sync.is_some()
                    || catalog_sync_namespace_mode.is_some()
                    || catalog_sync_namespace_flatten_delimiter.is_some()
                    || with_tags.is_some()
                    || with_contacts.is_some()
                {
                    return Err(SqlError::unsupported(format!("{stmt}")));
                }
                let name = crate::bind::object_name_parts(db_name)?.join(".");
                ddl::create_database(cat, &name, *if_not_exists).await
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                with,
                options,
                default_collate_spec,
                clone,
            } => {
                if with.is_some()
                    || options.is_some()
                    || default_collate_spec.is_some()
                    || clone.is_some()
                {
                    return Err(SqlError::unsupported(format!("{stmt}")));
                }
                let SchemaName::Simple(n) = schema_name else {
                    return Err(SqlError::unsupported(format!("{stmt}")));
                };
                let name = crate::bind::object_name_parts(n)?.join(".");
                ddl::create_database(cat, &name, *if_not_exists).await
            }
            Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                restrict,
                purge,
                temporary,
                table,
            } => {
                if *cascade || *restrict || *purge || *temporary {
                    return Err(SqlError::unsupported(format!("{stmt}")));
                }
                match object_type {
                    ObjectType::Table if table.is_none() => {
                        ddl::drop_tables(cat, names, *if_exists, db.as_deref()).await
                    }
                    ObjectType::View if table.is_none() => {
                        views::drop_views(cat, names, *if_exists, db.as_deref()).await
                    }
                    ObjectType::Database | ObjectType::Schema if table.is_none() => {
                        let [one] = names.as_slice() else {
                            return Err(SqlError::Parse(format!("{stmt}")));
                        };
                        let name = crate::bind::object_name_parts(one)?.join(".");
                        let res = ddl::drop_database(cat, &name, *if_exists).await?;
                        if session.db.as_deref() == Some(name.as_str()) {
                            session.db = None;
                        }
                        Ok(res)
                    }
                    ObjectType::Index => {
                        let (Some(t), [ix]) = (table, names.as_slice()) else {
                            return Err(SqlError::Parse(format!("{stmt}")));
                        };
                        let ix_name = crate::bind::object_name_parts(ix)?
                            .last()
                            .cloned()
                            .unwrap_or_default();
                        ddl::drop_index(cat, &ix_name, t, db.as_deref()).await
                    }
                    _ => Err(SqlError::unsupported(format!("{stmt}"))),
                }
            }
            Statement::Use(u) => {
                let name = match u {
                    Use::Object(n) | Use::Database(n) | Use::Schema(n) => {
                        crate::bind::object_name_parts(n)?.join(".")
                    }
                    other => return Err(SqlError::unsupported(format!("USE {other}"))),
                };
                self.use_database(session, &name)?;
                Ok(StatementResult::affected(0))
            }
            other => Err(SqlError::unsupported(format!("{other}"))),
        }
    }
}

fn explain(inner: &Plan, params: &[Datum], last_id: u64) -> SqlResult<StatementResult> {
    let (table, filter) = match inner {
        Plan::Select(s) => (s.table.clone(), &s.filter),
        Plan::Modify(m) => (Some(m.table.clone()), &m.filter),
        _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
    };
    let bound = select::bind_filter(table.as_deref(), filter, params, last_id)?;
    let (name, access) = match &table {
        Some(t) => (t.def.name.clone(), access::describe(t, &bound.access)),
        None => (String::new(), "NO TABLE".into()),
    };
    Ok(StatementResult::Rows {
        columns: plan::explain_columns(),
        rows: vec![vec![
            Datum::Bytes(name.into_bytes()),
            Datum::Bytes(access.into_bytes()),
        ]],
    })
}
