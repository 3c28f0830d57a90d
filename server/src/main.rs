//! The `orcinus` binary: configuration, the two listeners, signal handling.
mod mysql;
mod resp;

fn main() {
    let _ = (mysql::serve, resp::serve);
}
