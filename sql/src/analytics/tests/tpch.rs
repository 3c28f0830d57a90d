//! TPC-H
