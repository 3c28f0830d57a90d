//! The eight TPC-H tables: their DDL in MySQL dialect (TPC-H 2.18 §1.4: `DECIMAL(15,2)`, `DATE`,
//! `CHAR`/`VARCHAR`, the primary keys the spec names), the SQL literal kind of each column, and
//! the row source — the `tpchgen` generator of the table (byte-identical to dbgen's `.tbl`).
//!
//! Invariants: [`TABLES`] lists the tables in load order (small dimension tables first), each
//! table's `kinds` has exactly one entry per column of its DDL in DDL order, and every generated
//! row is a `|`-separated `.tbl` line with as many fields as the table has columns (checked per
//! row by the loader, which fails rather than loads a short row).

use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// How a `.tbl` field becomes an SQL literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// INTEGER or DECIMAL: written as is (dbgen prints plain decimal numbers).
    Number,
    /// CHAR, VARCHAR or DATE: a quoted string literal.
    Text,
}

use Kind::{Number as N, Text as T};

/// One TPC-H table.
#[derive(Debug, Clone, Copy)]
pub struct TableSpec {
    /// Table name (lower case, as the queries spell it).
    pub name: &'static str,
    /// `CREATE TABLE` statement.
    pub ddl: &'static str,
    /// Literal kind per column, in DDL order.
    pub kinds: &'static [Kind],
}

/// All eight tables, in load order.
pub static TABLES: [TableSpec; 8] = [
    TableSpec {
        name: "region",
        ddl: "CREATE TABLE region (r_regionkey INTEGER NOT NULL, r_name CHAR(25) NOT NULL, \
              r_comment VARCHAR(152), PRIMARY KEY (r_regionkey))",
        kinds: &[N, T, T],
    },
    TableSpec {
        name: "nation",
        ddl: "CREATE TABLE nation (n_nationkey INTEGER NOT NULL, n_name CHAR(25) NOT NULL, \
              n_regionkey INTEGER NOT NULL, n_comment VARCHAR(152), PRIMARY KEY (n_nationkey))",
        kinds: &[N, T, N, T],
    },
    TableSpec {
        name: "supplier",
        ddl: "CREATE TABLE supplier (s_suppkey INTEGER NOT NULL, s_name CHAR(25) NOT NULL, \
              s_address VARCHAR(40) NOT NULL, s_nationkey INTEGER NOT NULL, \
              s_phone CHAR(15) NOT NULL, s_acctbal DECIMAL(15,2) NOT NULL, \
              s_comment VARCHAR(101) NOT NULL, PRIMARY KEY (s_suppkey))",
        kinds: &[N, T, T, N, T, N, T],
    },
    TableSpec {
        name: "customer",
        ddl: "CREATE TABLE customer (c_custkey INTEGER NOT NULL, c_name VARCHAR(25) NOT NULL, \
              c_address VARCHAR(40) NOT NULL, c_nationkey INTEGER NOT NULL, \
              c_phone CHAR(15) NOT NULL, c_acctbal DECIMAL(15,2) NOT NULL, \
              c_mktsegment CHAR(10) NOT NULL, c_comment VARCHAR(117) NOT NULL, \
              PRIMARY KEY (c_custkey))",
        kinds: &[N, T, T, N, T, N, T, T],
    },
    TableSpec {
        name: "part",
        ddl: "CREATE TABLE part (p_partkey INTEGER NOT NULL, p_name VARCHAR(55) NOT NULL, \
              p_mfgr CHAR(25) NOT NULL, p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL, \
              p_size INTEGER NOT NULL, p_container CHAR(10) NOT NULL, \
              p_retailprice DECIMAL(15,2) NOT NULL, p_comment VARCHAR(23) NOT NULL, \
              PRIMARY KEY (p_partkey))",
        kinds: &[N, T, T, T, T, N, T, N, T],
    },
    TableSpec {
        name: "partsupp",
        ddl: "CREATE TABLE partsupp (ps_partkey INTEGER NOT NULL, ps_suppkey INTEGER NOT NULL, \
              ps_availqty INTEGER NOT NULL, ps_supplycost DECIMAL(15,2) NOT NULL, \
              ps_comment VARCHAR(199) NOT NULL, PRIMARY KEY (ps_partkey, ps_suppkey))",
        kinds: &[N, N, N, N, T],
    },
    TableSpec {
        name: "orders",
        ddl: "CREATE TABLE orders (o_orderkey INTEGER NOT NULL, o_custkey INTEGER NOT NULL, \
              o_orderstatus CHAR(1) NOT NULL, o_totalprice DECIMAL(15,2) NOT NULL, \
              o_orderdate DATE NOT NULL, o_orderpriority CHAR(15) NOT NULL, \
              o_clerk CHAR(15) NOT NULL, o_shippriority INTEGER NOT NULL, \
              o_comment VARCHAR(79) NOT NULL, PRIMARY KEY (o_orderkey))",
        kinds: &[N, N, T, N, T, T, T, N, T],
    },
    TableSpec {
        name: "lineitem",
        ddl: "CREATE TABLE lineitem (l_orderkey INTEGER NOT NULL, l_partkey INTEGER NOT NULL, \
              l_suppkey INTEGER NOT NULL, l_linenumber INTEGER NOT NULL, \
              l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL, \
              l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, \
              l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, \
              l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, \
              l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, \
              l_shipmode CHAR(10) NOT NULL, l_comment VARCHAR(44) NOT NULL, \
              PRIMARY KEY (l_orderkey, l_linenumber))",
        kinds: &[N, N, N, N, N, N, N, N, T, T, T, T, T, T, T, T],
    },
];

/// A table's rows as `.tbl` lines (trailing `|` included, as dbgen writes them).
pub type Rows = Box<dyn Iterator<Item = String> + Send>;

impl TableSpec {
    /// The table's generated rows at scale factor `sf`, in key order.
    #[must_use]
    pub fn rows(&self, sf: f64) -> Rows {
        self.part_rows(sf, 1, 1)
    }

    /// Part `part` (1-based) of `parts` of the table's rows: consecutive key ranges, which
    /// together are exactly [`TableSpec::rows`] (tpchgen's part split, as dbgen's `-S`).
    /// Region and nation are never split (one part holds them whole, the others nothing).
    #[must_use]
    pub fn part_rows(&self, sf: f64, part: i32, parts: i32) -> Rows {
        fn lines<T: std::fmt::Display>(it: impl Iterator<Item = T> + Send + 'static) -> Rows {
            Box::new(it.map(|row| row.to_string()))
        }
        match self.name {
            "region" | "nation" if part != 1 => Box::new(std::iter::empty()),
            "region" => lines(RegionGenerator::new(sf, 1, 1).iter()),
            "nation" => lines(NationGenerator::new(sf, 1, 1).iter()),
            "supplier" => lines(SupplierGenerator::new(sf, part, parts).iter()),
            "customer" => lines(CustomerGenerator::new(sf, part, parts).iter()),
            "part" => lines(PartGenerator::new(sf, part, parts).iter()),
            "partsupp" => lines(PartSuppGenerator::new(sf, part, parts).iter()),
            "orders" => lines(OrderGenerator::new(sf, part, parts).iter()),
            _ => lines(LineItemGenerator::new(sf, part, parts).iter()),
        }
    }

    /// How many rows [`TableSpec::rows`] yields. Lineitem has 1–7 lines per order drawn from
    /// the generator's random stream, so it is counted by generating (about a second at SF 1).
    #[must_use]
    pub fn row_count(&self, sf: f64) -> u64 {
        let exact = match self.name {
            "region" => Some(5),
            "nation" => Some(25),
            "supplier" => Some(SupplierGenerator::calculate_row_count(sf, 1, 1)),
            "customer" => Some(CustomerGenerator::calculate_row_count(sf, 1, 1)),
            "part" => Some(PartGenerator::calculate_row_count(sf, 1, 1)),
            // Its count is of parts; each part has four suppliers.
            "partsupp" => PartSuppGenerator::calculate_row_count(sf, 1, 1).checked_mul(4),
            "orders" => Some(OrderGenerator::calculate_row_count(sf, 1, 1)),
            _ => None,
        };
        match exact.and_then(|n| u64::try_from(n).ok()) {
            Some(n) => n,
            None => self.rows(sf).count() as u64,
        }
    }

    /// Appends one `.tbl` line as an SQL tuple `(v1,'v2',…)` to `out`.
    pub fn append_tuple(&self, line: &str, out: &mut String) -> Result<(), String> {
        let line = line.strip_suffix('|').unwrap_or(line);
        let mut fields = line.split('|');
        out.push('(');
        for (i, kind) in self.kinds.iter().enumerate() {
            let Some(field) = fields.next() else {
                return Err(format!(
                    "{}: generated row has {i} fields, expected {}: {line}",
                    self.name,
                    self.kinds.len()
                ));
            };
            if i > 0 {
                out.push(',');
            }
            match kind {
                Kind::Number => out.push_str(field),
                Kind::Text => {
                    out.push('\'');
                    for c in field.chars() {
                        match c {
                            '\'' => out.push_str("''"),
                            '\\' => out.push_str("\\\\"),
                            c => out.push(c),
                        }
                    }
                    out.push('\'');
                }
            }
        }
        if fields.next().is_some() {
            return Err(format!(
                "{}: generated row has more than {} fields: {line}",
                self.name,
                self.kinds.len()
            ));
        }
        out.push(')');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_match_the_ddl_columns() {
        for t in &TABLES {
            let columns_text = t.ddl.split(", PRIMARY KEY").next().unwrap();
            // DECIMAL(15,2) has no space after its comma.
            let columns = columns_text.matches(", ").count() + 1;
            assert_eq!(t.kinds.len(), columns, "{}", t.name);
        }
    }

    #[test]
    fn counts_match_the_generators() {
        for t in &TABLES {
            assert_eq!(
                t.row_count(0.001),
                t.rows(0.001).count() as u64,
                "{}",
                t.name
            );
        }
        let nation = TABLES.iter().find(|t| t.name == "nation").unwrap();
        assert_eq!(nation.row_count(0.01), 25);
    }

    #[test]
    fn tuples_quote_text_and_escape() {
        let region = TABLES.iter().find(|t| t.name == "region").unwrap();
        let mut out = String::new();
        region
            .append_tuple("0|AFRICA|it's \\ ok|", &mut out)
            .unwrap();
        assert_eq!(out, "(0,'AFRICA','it''s \\\\ ok')");
        assert!(
            region
                .append_tuple("0|AFRICA|", &mut String::new())
                .is_err()
        );
        assert!(region.append_tuple("0|A|b|c|", &mut String::new()).is_err());
    }
}
