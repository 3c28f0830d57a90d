//! Small-table tests: provider types, PK-range pushdown, transactions, dialect rewrites.
