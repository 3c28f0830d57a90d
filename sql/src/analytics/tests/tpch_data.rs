//! TPC-H data for the correctness test: the 8 tables generated in-process by `tpchgen` (the
//! dbgen-identical generator), their MySQL DDL, multi-row INSERT statements for the engine's
//! normal write path, and the same rows as Arrow batches for the DataFusion oracle.
//!
//! Both sides are built from the same `.tbl` text rows, parsed once per column type.

use datafusion::arrow::array::{
    ArrayRef, Date32Builder, Decimal128Builder, Int32Builder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

#[derive(Clone, Copy, PartialEq)]
pub enum Col {
    Int,
    Dec,
    Date,
    Str,
}

/// One generated table.
pub struct Table {
    pub name: &'static str,
    pub ddl: &'static str,
    pub cols: Vec<(&'static str, Col)>,
    /// Rows as `.tbl` fields.
    pub rows: Vec<Vec<String>>,
}

const DDL: [(&str, &str); 8] = [
    (
        "nation",
        "CREATE TABLE nation (n_nationkey INTEGER NOT NULL, n_name CHAR(25) NOT NULL, n_regionkey INTEGER NOT NULL, n_comment VARCHAR(152), PRIMARY KEY (n_nationkey))",
    ),
    (
        "region",
        "CREATE TABLE region (r_regionkey INTEGER NOT NULL, r_name CHAR(25) NOT NULL, r_comment VARCHAR(152), PRIMARY KEY (r_regionkey))",
    ),
    (
        "part",
        "CREATE TABLE part (p_partkey INTEGER NOT NULL, p_name VARCHAR(55) NOT NULL, p_mfgr CHAR(25) NOT NULL, p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL, p_size INTEGER NOT NULL, p_container CHAR(10) NOT NULL, p_retailprice DECIMAL(15,2) NOT NULL, p_comment VARCHAR(23) NOT NULL, PRIMARY KEY (p_partkey))",
    ),
    (
        "supplier",
        "CREATE TABLE supplier (s_suppkey INTEGER NOT NULL, s_name CHAR(25) NOT NULL, s_address VARCHAR(40) NOT NULL, s_nationkey INTEGER NOT NULL, s_phone CHAR(15) NOT NULL, s_acctbal DECIMAL(15,2) NOT NULL, s_comment VARCHAR(101) NOT NULL, PRIMARY KEY (s_suppkey))",
    ),
    (
        "partsupp",
        "CREATE TABLE partsupp (ps_partkey INTEGER NOT NULL, ps_suppkey INTEGER NOT NULL, ps_availqty INTEGER NOT NULL, ps_supplycost DECIMAL(15,2) NOT NULL, ps_comment VARCHAR(199) NOT NULL, PRIMARY KEY (ps_partkey, ps_suppkey))",
    ),
    (
        "customer",
        "CREATE TABLE customer (c_custkey INTEGER NOT NULL, c_name VARCHAR(25) NOT NULL, c_address VARCHAR(40) NOT NULL, c_nationkey INTEGER NOT NULL, c_phone CHAR(15) NOT NULL, c_acctbal DECIMAL(15,2) NOT NULL, c_mktsegment CHAR(10) NOT NULL, c_comment VARCHAR(117) NOT NULL, PRIMARY KEY (c_custkey))",
    ),
    (
        "orders",
        "CREATE TABLE orders (o_orderkey INTEGER NOT NULL, o_custkey INTEGER NOT NULL, o_orderstatus CHAR(1) NOT NULL, o_totalprice DECIMAL(15,2) NOT NULL, o_orderdate DATE NOT NULL, o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, o_shippriority INTEGER NOT NULL, o_comment VARCHAR(79) NOT NULL, PRIMARY KEY (o_orderkey))",
    ),
    (
        "lineitem",
        "CREATE TABLE lineitem (l_orderkey INTEGER NOT NULL, l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, l_linenumber INTEGER NOT NULL, l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL, l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, l_shipmode CHAR(10) NOT NULL, l_comment VARCHAR(44) NOT NULL, PRIMARY KEY (l_orderkey, l_linenumber))",
    ),
];

/// Column names and kinds read back from the DDL text.
fn columns_of(ddl: &str) -> Vec<(&'static str, Col)> {
    let body = &ddl[ddl.find('(').unwrap() + 1..ddl.find(", PRIMARY KEY").unwrap()];
    let leaked: &'static str = Box::leak(body.to_string().into_boxed_str());
    leaked
        .split(", ")
        .map(|c| {
            let mut it = c.split(' ');
            let name = it.next().unwrap();
            let ty = it.next().unwrap();
            let kind = if ty.starts_with("INTEGER") {
                Col::Int
            } else if ty.starts_with("DECIMAL") {
                Col::Dec
            } else if ty == "DATE" {
                Col::Date
            } else {
                Col::Str
            };
            (name, kind)
        })
        .collect()
}

fn tbl_rows<T: std::fmt::Display>(rows: impl Iterator<Item = T>) -> Vec<Vec<String>> {
    rows.map(|r| {
        let line = r.to_string();
        let line = line.strip_suffix('|').unwrap_or(&line);
        line.split('|').map(str::to_string).collect()
    })
    .collect()
}

/// Generates all 8 tables at scale factor `sf`.
pub fn generate(sf: f64) -> Vec<Table> {
    DDL.iter()
        .map(|(name, ddl)| {
            let rows = match *name {
                "nation" => tbl_rows(NationGenerator::new(sf, 1, 1).iter()),
                "region" => tbl_rows(RegionGenerator::new(sf, 1, 1).iter()),
                "part" => tbl_rows(PartGenerator::new(sf, 1, 1).iter()),
                "supplier" => tbl_rows(SupplierGenerator::new(sf, 1, 1).iter()),
                "partsupp" => tbl_rows(PartSuppGenerator::new(sf, 1, 1).iter()),
                "customer" => tbl_rows(CustomerGenerator::new(sf, 1, 1).iter()),
                "orders" => tbl_rows(OrderGenerator::new(sf, 1, 1).iter()),
                _ => tbl_rows(LineItemGenerator::new(sf, 1, 1).iter()),
            };
            Table {
                name,
                ddl,
                cols: columns_of(ddl),
                rows,
            }
        })
        .collect()
}

fn sql_literal(v: &str, kind: Col) -> String {
    match kind {
        Col::Int | Col::Dec => v.to_string(),
        Col::Date | Col::Str => format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''")),
    }
}

impl Table {
    /// Multi-row INSERT statements of at most `per_statement` rows each.
    pub fn inserts(&self, per_statement: usize) -> Vec<String> {
        self.rows
            .chunks(per_statement)
            .map(|chunk| {
                let values: Vec<String> = chunk
                    .iter()
                    .map(|r| {
                        let vals: Vec<String> = r
                            .iter()
                            .zip(&self.cols)
                            .map(|(v, (_, k))| sql_literal(v, *k))
                            .collect();
                        format!("({})", vals.join(","))
                    })
                    .collect();
                format!("INSERT INTO {} VALUES {}", self.name, values.join(","))
            })
            .collect()
    }

    /// The rows as one Arrow batch (INTEGER → Int32, DECIMAL(15,2), DATE → Date32, text → Utf8).
    pub fn batch(&self) -> RecordBatch {
        let fields: Vec<Field> = self
            .cols
            .iter()
            .map(|(n, k)| {
                let t = match k {
                    Col::Int => DataType::Int32,
                    Col::Dec => DataType::Decimal128(15, 2),
                    Col::Date => DataType::Date32,
                    Col::Str => DataType::Utf8,
                };
                Field::new(*n, t, false)
            })
            .collect();
        let arrays: Vec<ArrayRef> = self
            .cols
            .iter()
            .enumerate()
            .map(|(i, (_, k))| -> ArrayRef {
                let vals = self.rows.iter().map(|r| r[i].as_str());
                match k {
                    Col::Int => {
                        let mut b = Int32Builder::new();
                        vals.for_each(|v| b.append_value(v.parse().unwrap()));
                        Arc::new(b.finish())
                    }
                    Col::Dec => {
                        let mut b =
                            Decimal128Builder::new().with_data_type(DataType::Decimal128(15, 2));
                        vals.for_each(|v| b.append_value(parse_cents(v)));
                        Arc::new(b.finish())
                    }
                    Col::Date => {
                        let mut b = Date32Builder::new();
                        vals.for_each(|v| b.append_value(parse_date(v)));
                        Arc::new(b.finish())
                    }
                    Col::Str => {
                        let mut b = StringBuilder::new();
                        vals.for_each(|v| b.append_value(v));
                        Arc::new(b.finish())
                    }
                }
            })
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
    }
}

/// "-12.5" → -1250 (scale 2).
fn parse_cents(v: &str) -> i128 {
    let (neg, v) = v.strip_prefix('-').map_or((false, v), |r| (true, r));
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    let frac = format!("{frac:0<2}");
    let cents: i128 = int.parse::<i128>().unwrap() * 100 + frac[..2].parse::<i128>().unwrap();
    if neg { -cents } else { cents }
}

/// "YYYY-MM-DD" → days since 1970-01-01 (proleptic Gregorian).
fn parse_date(v: &str) -> i32 {
    let mut it = v.split('-').map(|p| p.parse::<i64>().unwrap());
    let (y, m, d) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i32
}

#[test]
fn dates_and_decimals_parse() {
    assert_eq!(parse_date("1970-01-01"), 0);
    assert_eq!(parse_date("1996-01-02"), 9497);
    assert_eq!(parse_cents("-3.25"), -325);
    assert_eq!(parse_cents("901.00"), 90100);
}
