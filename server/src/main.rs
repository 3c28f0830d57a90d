//! The `orcinus` binary.
fn main() {}
