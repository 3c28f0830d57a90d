//! One integration-test binary for the whole server.
