//! The PostgreSQL engine.

// Wired into connecting with the engine's core; until then only its unit tests use it.
#[allow(dead_code)]
pub(crate) mod tls;
