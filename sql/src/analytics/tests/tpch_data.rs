//! TPC-H data
