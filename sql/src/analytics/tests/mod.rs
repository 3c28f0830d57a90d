//! Tests of the analytical executor: tables created and filled through the engine's normal
//! DDL and write path, queried through [`super::AnalyticsEngine`].

mod basics;
