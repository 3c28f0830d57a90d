//! DDL: CREATE/DROP DATABASE, CREATE TABLE, CREATE/DROP INDEX, DROP TABLE, TRUNCATE TABLE.
//!
//! Invariants: every DDL holds the catalog's DDL lock from validation to install; the catalog
//! records and any data writes (index build, deletions of dropped data) go into one storage
//! batch, and the in-memory snapshot is swapped only after that batch is durable. DDL implicitly
//! commits the session's open transaction first (done by the caller), as MySQL does.
//! CREATE INDEX builds from a snapshot while holding the DDL lock; rows written concurrently
//! by open transactions that still use the old definition are not indexed (documented limit).

use crate::bind::{literal, object_name_parts};
use crate::catalog::{Catalog, ColumnDef, IndexDef, TableDef, TableOptions};
use crate::codec::key;
use crate::coerce;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use crate::rowio;
use crate::types::{Datum, SqlType};
use datafusion::sql::sqlparser::ast::{
    CharacterLength, ColumnOption, ColumnOptionDef, CreateIndex, CreateTable, CreateTableOptions,
    DataType, ExactNumberInfo, Expr, IndexColumn, ObjectName, OrderByExpr, OrderByOptions,
    SqlOption, TableConstraint, UnaryOperator, Value,
};
use std::sync::Arc;

/// Resolves `[db.]name` against the session's current database.
pub fn resolve_name(name: &ObjectName, current_db: Option<&str>) -> SqlResult<(String, String)> {
    let parts = object_name_parts(name)?;
    match parts.as_slice() {
        [t] => Ok((
            current_db.ok_or(SqlError::NoDatabaseSelected)?.to_string(),
            t.clone(),
        )),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::Parse(name.to_string())),
    }
}

fn char_len(l: &Option<CharacterLength>, default: u32) -> SqlResult<u32> {
    match l {
        None => Ok(default),
        Some(CharacterLength::IntegerLength { length, .. }) => {
            u32::try_from(*length).map_err(|_| SqlError::unsupported(format!("length {length}")))
        }
        Some(CharacterLength::Max) => Err(SqlError::unsupported("length MAX")),
    }
}

fn map_type(t: &DataType) -> SqlResult<SqlType> {
    Ok(match t {
        DataType::TinyInt(_) => SqlType::TinyInt { unsigned: false },
        DataType::TinyIntUnsigned(_) => SqlType::TinyInt { unsigned: true },
        DataType::Bool | DataType::Boolean => SqlType::TinyInt { unsigned: false },
        DataType::SmallInt(_) => SqlType::SmallInt { unsigned: false },
        DataType::SmallIntUnsigned(_) => SqlType::SmallInt { unsigned: true },
        DataType::Int(_) | DataType::Integer(_) | DataType::MediumInt(_) => {
            SqlType::Int { unsigned: false }
        }
        DataType::IntUnsigned(_)
        | DataType::IntegerUnsigned(_)
        | DataType::MediumIntUnsigned(_) => SqlType::Int { unsigned: true },
        DataType::BigInt(_) => SqlType::BigInt { unsigned: false },
        DataType::BigIntUnsigned(_) => SqlType::BigInt { unsigned: true },
        DataType::Decimal(info) | DataType::Numeric(info) | DataType::Dec(info) => {
            let (p, s) = match info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => {
                    (*p, u64::try_from(*s).unwrap_or(u64::MAX))
                }
            };
            if p == 0 || p > 38 || s > 30 || s > p {
                return Err(SqlError::unsupported(format!(
                    "DECIMAL({p},{s}) (precision 1..38, scale ≤ 30)"
                )));
            }
            SqlType::Decimal {
                precision: u8::try_from(p).unwrap_or(38),
                scale: u8::try_from(s).unwrap_or(0),
            }
        }
        DataType::Double(_) | DataType::DoublePrecision | DataType::Real => SqlType::Double,
        DataType::Float(_) => SqlType::Float,
        DataType::Char(l) | DataType::Character(l) => SqlType::Char {
            len: char_len(l, 1)?,
        },
        DataType::Varchar(l) | DataType::CharacterVarying(l) | DataType::CharVarying(l) => {
            match l {
                None => return Err(SqlError::Parse("VARCHAR without a length".into())),
                Some(_) => SqlType::Varchar {
                    len: char_len(l, 0)?,
                },
            }
        }
        DataType::Text | DataType::TinyText | DataType::MediumText | DataType::LongText => {
            SqlType::Text
        }
        DataType::Blob(_) | DataType::TinyBlob | DataType::MediumBlob | DataType::LongBlob => {
            SqlType::Blob
        }
        DataType::Date => SqlType::Date,
        DataType::Datetime(_) => SqlType::DateTime,
        DataType::Timestamp(_, _) => SqlType::Timestamp,
        other => return Err(SqlError::unsupported(format!("column type {other}"))),
    })
}

/// `CURRENT_TIMESTAMP`, `CURRENT_TIMESTAMP()`, `NOW()`, `LOCALTIME[()]`, `LOCALTIMESTAMP[()]`
/// (a column default evaluated at each INSERT; no fractional-seconds precision).
fn is_current_timestamp(e: &Expr) -> bool {
    let Expr::Function(f) = e else {
        return false;
    };
    let name = f.name.to_string().to_ascii_lowercase();
    crate::plan::no_args(&f.args)
        && matches!(
            name.as_str(),
            "current_timestamp" | "now" | "localtime" | "localtimestamp"
        )
}

fn const_expr(e: &Expr) -> SqlResult<Datum> {
    match e {
        Expr::Value(v) => literal(&v.value),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => crate::value::negate(&const_expr(expr)?),
        Expr::Nested(inner) => const_expr(inner),
        other => Err(SqlError::unsupported(format!("DEFAULT {other}"))),
    }
}

fn index_columns(def: &TableDef, cols: &[IndexColumn]) -> SqlResult<Vec<usize>> {
    cols.iter()
        .map(|c| {
            let IndexColumn {
                column:
                    OrderByExpr {
                        expr,
                        options: OrderByOptions { asc, nulls_first },
                        with_fill,
                    },
                operator_class,
            } = c;
            if asc == &Some(false)
                || nulls_first.is_some()
                || with_fill.is_some()
                || operator_class.is_some()
            {
                return Err(SqlError::unsupported(format!("index column option in {c}")));
            }
            let name = match expr {
                Expr::Identifier(id) => id.value.clone(),
                other => {
                    return Err(SqlError::unsupported(format!(
                        "index on expression {other}"
                    )));
                }
            };
            def.column_index(&name)
                .ok_or(SqlError::KeyColumnMissing(name))
        })
        .collect()
}

fn add_index(
    def: &mut TableDef,
    name: Option<String>,
    cols: Vec<usize>,
    unique: bool,
    id: u32,
) -> SqlResult<()> {
    let name = match name {
        Some(n) => n,
        None => {
            let base = cols
                .first()
                .and_then(|c| def.columns.get(*c))
                .map_or("idx".to_string(), |c| c.name.clone());
            let mut n = base.clone();
            let mut i = 2;
            while def.indexes.iter().any(|x| x.name.eq_ignore_ascii_case(&n)) {
                n = format!("{base}_{i}");
                i += 1;
            }
            n
        }
    };
    if name.eq_ignore_ascii_case("PRIMARY")
        || def
            .indexes
            .iter()
            .any(|x| x.name.eq_ignore_ascii_case(&name))
    {
        return Err(SqlError::DuplicateKeyName(name));
    }
    def.indexes.push(IndexDef {
        id,
        name,
        columns: cols,
        unique,
    });
    Ok(())
}

fn set_primary(def: &mut TableDef, cols: Vec<usize>) -> SqlResult<()> {
    if !def.primary_key.is_empty() {
        return Err(SqlError::MultiplePrimaryKey);
    }
    for &c in &cols {
        if let Some(col) = def.columns.get_mut(c) {
            col.nullable = false;
            if col.default == Some(Datum::Null) {
                col.default = None;
            }
        }
    }
    def.primary_key = cols;
    Ok(())
}

fn table_options(opts: &CreateTableOptions, out: &mut TableOptions) -> SqlResult<()> {
    let list = match opts {
        CreateTableOptions::None => return Ok(()),
        CreateTableOptions::Plain(l) => l,
        other => return Err(SqlError::unsupported(format!("table options {other}"))),
    };
    for o in list {
        match o {
            SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("ENGINE") && l.values.is_empty() =>
            {
                let engine = l.name.as_ref().map(|n| n.value.clone()).unwrap_or_default();
                if !engine.eq_ignore_ascii_case("innodb") {
                    return Err(SqlError::UnknownEngine(engine));
                }
                out.engine = "InnoDB".into();
            }
            SqlOption::KeyValue { key, value } => {
                let v = match value {
                    Expr::Identifier(i) => i.value.clone(),
                    Expr::Value(v) => match &v.value {
                        Value::SingleQuotedString(s)
                        | Value::DoubleQuotedString(s)
                        | Value::Number(s, _) => s.clone(),
                        other => other.to_string(),
                    },
                    other => other.to_string(),
                };
                match key.value.to_ascii_uppercase().as_str() {
                    "DEFAULT CHARSET" | "CHARSET" | "DEFAULT CHARACTER SET" | "CHARACTER SET" => {
                        out.charset = Some(v)
                    }
                    "DEFAULT COLLATE" | "COLLATE" => out.collate = Some(v),
                    other => return Err(SqlError::unsupported(format!("table option {other}"))),
                }
            }
            SqlOption::Comment(c) => {
                out.comment = Some(match c {
                    datafusion::sql::sqlparser::ast::CommentDef::WithEq(s)
                    | datafusion::sql::sqlparser::ast::CommentDef::WithoutEq(s) => s.clone(),
                });
            }
            other => return Err(SqlError::unsupported(format!("table option {other}"))),
        }
    }
    Ok(())
}

fn column_def(
    c: &datafusion::sql::sqlparser::ast::ColumnDef,
    table: &mut TableDef,
    pending_unique: &mut Vec<(Option<String>, Vec<usize>)>,
) -> SqlResult<()> {
    let datafusion::sql::sqlparser::ast::ColumnDef {
        name,
        data_type,
        options,
    } = c;
    let ty = map_type(data_type)?;
    let pos = table.columns.len();
    if table.column_index(&name.value).is_some() {
        return Err(SqlError::DuplicateColumn(name.value.clone()));
    }
    let mut col = ColumnDef {
        name: name.value.clone(),
        ty,
        nullable: true,
        default: None,
        auto_increment: false,
        default_now: false,
    };
    let mut explicit_default = None;
    let mut primary = false;
    for ColumnOptionDef { name: _, option } in options {
        match option {
            ColumnOption::Null => col.nullable = true,
            ColumnOption::NotNull => col.nullable = false,
            ColumnOption::Default(e) if is_current_timestamp(e) => {
                if !matches!(col.ty, SqlType::DateTime | SqlType::Timestamp) {
                    return Err(SqlError::InvalidDefault(name.value.clone()));
                }
                col.default_now = true;
            }
            ColumnOption::Default(e) => explicit_default = Some(const_expr(e)?),
            ColumnOption::PrimaryKey(_) => primary = true,
            ColumnOption::Unique(_) => pending_unique.push((None, vec![pos])),
            ColumnOption::DialectSpecific(tokens)
                if tokens.len() == 1
                    && tokens
                        .iter()
                        .all(|t| t.to_string().eq_ignore_ascii_case("AUTO_INCREMENT")) =>
            {
                if !ty.is_integer() {
                    return Err(SqlError::WrongArguments(format!(
                        "AUTO_INCREMENT on column '{}'",
                        name.value
                    )));
                }
                col.auto_increment = true;
            }
            ColumnOption::Comment(_) => {}
            ColumnOption::CharacterSet(cs) if ty.is_text() => {
                let cs = cs.to_string().to_ascii_lowercase();
                if !cs.starts_with("utf8") && cs != "ascii" && cs != "latin1" && cs != "binary" {
                    return Err(SqlError::unsupported(format!("CHARACTER SET {cs}")));
                }
            }
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    col.default = match explicit_default {
        _ if col.default_now => None,
        Some(d) => {
            let v = coerce::coerce(&d, &col, 1)
                .map_err(|_| SqlError::InvalidDefault(col.name.clone()))?;
            if v.is_null() && !col.nullable {
                return Err(SqlError::InvalidDefault(col.name.clone()));
            }
            Some(v)
        }
        None if col.nullable => Some(Datum::Null),
        None => None,
    };
    table.columns.push(col);
    if primary {
        set_primary(table, vec![pos])?;
    }
    Ok(())
}

/// Builds a table definition from CREATE TABLE. Index and table ids are assigned by the caller.
pub fn table_def_from_ast(
    ct: &CreateTable,
    db: String,
    name: String,
) -> SqlResult<(TableDef, bool)> {
    let CreateTable {
        or_replace,
        temporary,
        external,
        dynamic,
        global,
        if_not_exists,
        transient,
        volatile,
        iceberg,
        snapshot,
        name: _,
        columns,
        constraints,
        hive_distribution,
        hive_formats,
        table_options: options,
        file_format,
        location,
        query,
        without_rowid,
        like,
        clone,
        version,
        comment,
        on_commit,
        on_cluster,
        primary_key,
        order_by,
        partition_by,
        cluster_by,
        clustered_by,
        inherits,
        partition_of,
        for_values,
        strict,
        copy_grants,
        enable_schema_evolution,
        change_tracking,
        data_retention_time_in_days,
        max_data_extension_time_in_days,
        default_ddl_collation,
        with_aggregation_policy,
        with_row_access_policy,
        with_storage_lifecycle_policy,
        with_tags,
        external_volume,
        base_location,
        catalog,
        catalog_sync,
        storage_serialization_policy,
        target_lag,
        warehouse,
        refresh_mode,
        initialize,
        require_user,
        diststyle,
        distkey,
        sortkey,
        backup,
    } = ct;
    let flags = [
        (*or_replace, "OR REPLACE"),
        (*temporary, "TEMPORARY"),
        (*external, "EXTERNAL"),
        (*dynamic, "DYNAMIC"),
        (global.is_some(), "GLOBAL"),
        (*transient, "TRANSIENT"),
        (*volatile, "VOLATILE"),
        (*iceberg, "ICEBERG"),
        (*snapshot, "SNAPSHOT"),
        (hive_formats.is_some(), "ROW FORMAT/STORED AS"),
        (file_format.is_some(), "STORED AS"),
        (location.is_some(), "LOCATION"),
        (query.is_some(), "CREATE TABLE … AS SELECT"),
        (*without_rowid, "WITHOUT ROWID"),
        (like.is_some(), "CREATE TABLE … LIKE"),
        (clone.is_some(), "CLONE"),
        (version.is_some(), "table version"),
        (on_commit.is_some(), "ON COMMIT"),
        (on_cluster.is_some(), "ON CLUSTER"),
        (primary_key.is_some(), "PRIMARY KEY expression"),
        (order_by.is_some(), "ORDER BY"),
        (partition_by.is_some(), "PARTITION BY"),
        (cluster_by.is_some(), "CLUSTER BY"),
        (clustered_by.is_some(), "CLUSTERED BY"),
        (inherits.is_some(), "INHERITS"),
        (partition_of.is_some(), "PARTITION OF"),
        (for_values.is_some(), "FOR VALUES"),
        (*strict, "STRICT"),
        (*copy_grants, "COPY GRANTS"),
        (enable_schema_evolution.is_some(), "ENABLE_SCHEMA_EVOLUTION"),
        (change_tracking.is_some(), "CHANGE_TRACKING"),
        (
            data_retention_time_in_days.is_some(),
            "DATA_RETENTION_TIME_IN_DAYS",
        ),
        (
            max_data_extension_time_in_days.is_some(),
            "MAX_DATA_EXTENSION_TIME_IN_DAYS",
        ),
        (default_ddl_collation.is_some(), "DEFAULT_DDL_COLLATION"),
        (with_aggregation_policy.is_some(), "AGGREGATION POLICY"),
        (with_row_access_policy.is_some(), "ROW ACCESS POLICY"),
        (
            with_storage_lifecycle_policy.is_some(),
            "STORAGE LIFECYCLE POLICY",
        ),
        (with_tags.is_some(), "TAG"),
        (external_volume.is_some(), "EXTERNAL_VOLUME"),
        (base_location.is_some(), "BASE_LOCATION"),
        (catalog.is_some(), "CATALOG"),
        (catalog_sync.is_some(), "CATALOG_SYNC"),
        (
            storage_serialization_policy.is_some(),
            "STORAGE_SERIALIZATION_POLICY",
        ),
        (target_lag.is_some(), "TARGET_LAG"),
        (warehouse.is_some(), "WAREHOUSE"),
        (refresh_mode.is_some(), "REFRESH_MODE"),
        (initialize.is_some(), "INITIALIZE"),
        (*require_user, "REQUIRE USER"),
        (backup.is_some(), "BACKUP"),
        (diststyle.is_some(), "DISTSTYLE"),
        (distkey.is_some(), "DISTKEY"),
        (sortkey.is_some(), "SORTKEY"),
        (
            *hive_distribution != datafusion::sql::sqlparser::ast::HiveDistributionStyle::NONE,
            "PARTITIONED BY",
        ),
    ];
    if let Some((_, what)) = flags.iter().find(|(set, _)| *set) {
        return Err(SqlError::unsupported(format!("CREATE TABLE with {what}")));
    }
    let mut def = TableDef {
        id: 0,
        db,
        name,
        columns: Vec::new(),
        primary_key: Vec::new(),
        indexes: Vec::new(),
        options: TableOptions {
            engine: "InnoDB".into(),
            ..TableOptions::default()
        },
    };
    if let Some(c) = comment {
        def.options.comment = Some(c.to_string());
    }
    let mut uniques = Vec::new();
    for c in columns {
        column_def(c, &mut def, &mut uniques)?;
    }
    let mut secondary: Vec<(Option<String>, Vec<usize>, bool)> =
        uniques.into_iter().map(|(n, c)| (n, c, true)).collect();
    for tc in constraints {
        match tc {
            TableConstraint::PrimaryKey(pk) => {
                if pk.index_type.is_some()
                    || !pk.index_options.is_empty()
                    || pk.characteristics.is_some()
                {
                    return Err(SqlError::unsupported(format!(
                        "primary key options in {tc}"
                    )));
                }
                let cols = index_columns(&def, &pk.columns)?;
                set_primary(&mut def, cols)?;
            }
            TableConstraint::Unique(u) => {
                if u.index_type.is_some()
                    || !u.index_options.is_empty()
                    || u.characteristics.is_some()
                {
                    return Err(SqlError::unsupported(format!("unique key options in {tc}")));
                }
                let name = u
                    .index_name
                    .as_ref()
                    .or(u.name.as_ref())
                    .map(|i| i.value.clone());
                secondary.push((name, index_columns(&def, &u.columns)?, true));
            }
            TableConstraint::Index(ix) => {
                if ix.index_type.is_some() || !ix.index_options.is_empty() {
                    return Err(SqlError::unsupported(format!("index options in {tc}")));
                }
                secondary.push((
                    ix.name.as_ref().map(|i| i.value.clone()),
                    index_columns(&def, &ix.columns)?,
                    false,
                ));
            }
            other => return Err(SqlError::unsupported(format!("table constraint {other}"))),
        }
    }
    for (name, cols, unique) in secondary {
        add_index(&mut def, name, cols, unique, 0)?;
    }
    if let Some(a) = def.auto_increment_column() {
        let keyed = def.primary_key.first() == Some(&a)
            || def.indexes.iter().any(|i| i.columns.first() == Some(&a));
        if !keyed || def.columns.iter().filter(|c| c.auto_increment).count() > 1 {
            return Err(SqlError::BadAutoIncrement);
        }
        if let Some(col) = def.columns.get_mut(a) {
            col.nullable = false;
            if col.default == Some(Datum::Null) {
                col.default = None;
            }
        }
    }
    table_options(options, &mut def.options)?;
    Ok((def, *if_not_exists))
}

/// CREATE TABLE.
pub async fn create_table(
    catalog: &Catalog,
    ct: &CreateTable,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let (db, name) = resolve_name(&ct.name, current_db)?;
    let (mut def, if_not_exists) = table_def_from_ast(ct, db.clone(), name.clone())?;
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let tables = snap
        .dbs
        .get(&db)
        .ok_or_else(|| SqlError::UnknownDatabase(db.clone()))?;
    // Tables and views share one namespace.
    if tables.contains_key(&name) || snap.view(&db, &name).is_some() {
        if if_not_exists {
            return Ok(StatementResult::affected(0));
        }
        return Err(SqlError::TableExists(name));
    }
    let mut batch = catalog.batch();
    let n = u32::try_from(def.indexes.len() + 1)
        .map_err(|_| SqlError::unsupported("that many indexes"))?;
    let first = catalog.allocate_ids(&mut batch, n)?;
    def.id = first;
    for (i, ix) in def.indexes.iter_mut().enumerate() {
        ix.id = first + 1 + u32::try_from(i).unwrap_or(0);
    }
    catalog.commit_table(&snap, batch, db, name, def).await?;
    Ok(StatementResult::affected(0))
}

/// CREATE INDEX: adds the index and builds its entries over the existing rows.
pub async fn create_index(
    catalog: &Catalog,
    ci: &CreateIndex,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let CreateIndex {
        name,
        table_name,
        using,
        columns,
        unique,
        concurrently,
        if_not_exists,
        include,
        nulls_distinct,
        with,
        predicate,
        index_options,
        alter_options,
    } = ci;
    if using.is_some()
        || *concurrently
        || !include.is_empty()
        || nulls_distinct.is_some()
        || !with.is_empty()
        || predicate.is_some()
        || !index_options.is_empty()
        || !alter_options.is_empty()
    {
        return Err(SqlError::unsupported(format!("index options in {ci}")));
    }
    let (db, tname) = resolve_name(table_name, current_db)?;
    let ix_name = match name {
        Some(n) => object_name_parts(n)?
            .last()
            .cloned()
            .ok_or_else(|| SqlError::Parse(n.to_string()))?,
        None => return Err(SqlError::Parse("CREATE INDEX without a name".into())),
    };
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let table = snap.table(&db, &tname)?;
    let mut def = table.def.clone();
    if *if_not_exists
        && def
            .indexes
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(&ix_name))
    {
        return Ok(StatementResult::affected(0));
    }
    let cols = index_columns(&def, columns)?;
    let mut batch = catalog.batch();
    let id = catalog.allocate_ids(&mut batch, 1)?;
    add_index(&mut def, Some(ix_name), cols, *unique, id)?;
    let ix = def
        .indexes
        .last()
        .cloned()
        .ok_or_else(|| SqlError::Internal("index vanished".into()))?;
    rowio::build_index(catalog, &def, &ix, &mut batch)?;
    catalog.commit_table(&snap, batch, db, tname, def).await?;
    Ok(StatementResult::affected(0))
}

/// DROP INDEX name ON table.
pub async fn drop_index(
    catalog: &Catalog,
    ix_name: &str,
    table_name: &ObjectName,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let (db, tname) = resolve_name(table_name, current_db)?;
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let table = snap.table(&db, &tname)?;
    let mut def = table.def.clone();
    if ix_name.eq_ignore_ascii_case("PRIMARY") {
        return Err(SqlError::unsupported("DROP PRIMARY KEY"));
    }
    let pos = def
        .indexes
        .iter()
        .position(|i| i.name.eq_ignore_ascii_case(ix_name))
        .ok_or_else(|| SqlError::CantDropKey(ix_name.to_string()))?;
    let ix = def.indexes.remove(pos);
    if let Some(a) = def.auto_increment_column()
        && def.primary_key.first() != Some(&a)
        && !def.indexes.iter().any(|i| i.columns.first() == Some(&a))
    {
        return Err(SqlError::BadAutoIncrement);
    }
    let mut batch = catalog.batch();
    catalog.delete_prefix(&mut batch, &key::index_prefix(ix.id))?;
    catalog.commit_table(&snap, batch, db, tname, def).await?;
    Ok(StatementResult::affected(0))
}

/// DROP TABLE [IF EXISTS] t1, t2 …: all named tables must exist unless IF EXISTS.
pub async fn drop_tables(
    catalog: &Catalog,
    names: &[ObjectName],
    if_exists: bool,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let mut found: Vec<Arc<crate::catalog::Table>> = Vec::new();
    let mut missing = Vec::new();
    for n in names {
        let (db, t) = resolve_name(n, current_db)?;
        match snap.table(&db, &t) {
            Ok(table) => found.push(table),
            Err(_) => missing.push(format!("{db}.{t}")),
        }
    }
    if !missing.is_empty() && !if_exists {
        return Err(SqlError::UnknownTable(missing.join(",")));
    }
    let mut batch = catalog.batch();
    let mut next = (*snap).clone();
    for t in &found {
        catalog.delete_table(&mut batch, &t.def)?;
        catalog.delete_table_data(&mut batch, &t.def)?;
        if let Some(tables) = next.dbs.get_mut(&t.def.db) {
            tables.remove(&t.def.name);
        }
    }
    let ids: Vec<u32> = found.iter().map(|t| t.def.id).collect();
    catalog.commit_dropping(batch, &ids).await?;
    for t in &found {
        catalog.forget_counter(t.def.id);
    }
    catalog.install(next);
    Ok(StatementResult::affected(0))
}

/// TRUNCATE TABLE: the table gets fresh ids (old data deleted in the same batch) and its
/// AUTO_INCREMENT counter restarts.
pub async fn truncate(
    catalog: &Catalog,
    name: &ObjectName,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let (db, tname) = resolve_name(name, current_db)?;
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let table = snap.table(&db, &tname)?;
    let mut def = table.def.clone();
    let mut batch = catalog.batch();
    catalog.delete_table_data(&mut batch, &def)?;
    let n = u32::try_from(def.indexes.len() + 1)
        .map_err(|_| SqlError::unsupported("that many indexes"))?;
    let first = catalog.allocate_ids(&mut batch, n)?;
    def.id = first;
    for (i, ix) in def.indexes.iter_mut().enumerate() {
        ix.id = first + 1 + u32::try_from(i).unwrap_or(0);
    }
    catalog.put_table(&mut batch, &def)?;
    catalog.commit_dropping(batch, &[table.def.id]).await?;
    catalog.forget_counter(table.def.id);
    let mut next = (*snap).clone();
    next.dbs
        .entry(db)
        .or_default()
        .insert(tname, catalog.table_from_def(def)?);
    catalog.install(next);
    Ok(StatementResult::affected(0))
}

/// CREATE DATABASE.
pub async fn create_database(
    catalog: &Catalog,
    name: &str,
    if_not_exists: bool,
) -> SqlResult<StatementResult> {
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    if snap.dbs.contains_key(name) {
        if if_not_exists {
            return Ok(StatementResult::affected(0));
        }
        return Err(SqlError::DatabaseExists(name.to_string()));
    }
    let mut batch = catalog.batch();
    catalog.put_database(&mut batch, name)?;
    catalog.commit(batch).await?;
    let mut next = (*snap).clone();
    next.dbs.insert(name.to_string(), Default::default());
    catalog.install(next);
    Ok(StatementResult::affected(1))
}

/// DROP DATABASE: drops its tables and their data.
pub async fn drop_database(
    catalog: &Catalog,
    name: &str,
    if_exists: bool,
) -> SqlResult<StatementResult> {
    let _guard = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let Some(tables) = snap.dbs.get(name) else {
        if if_exists {
            return Ok(StatementResult::affected(0));
        }
        return Err(SqlError::DropMissingDatabase(name.to_string()));
    };
    let mut batch = catalog.batch();
    for t in tables.values() {
        catalog.delete_table(&mut batch, &t.def)?;
        catalog.delete_table_data(&mut batch, &t.def)?;
    }
    catalog.delete_database(&mut batch, name)?;
    let mut next = (*snap).clone();
    crate::analytics::views::forget_database(catalog, &mut batch, &mut next, name)?;
    let ids: Vec<u32> = tables.values().map(|t| t.def.id).collect();
    catalog.commit_dropping(batch, &ids).await?;
    for t in tables.values() {
        catalog.forget_counter(t.def.id);
    }
    let count = tables.len() as u64;
    next.dbs.remove(name);
    catalog.install(next);
    Ok(StatementResult::affected(count))
}
