//! The property and state-machine suites (proptest), in process, in a binary of their own: they run
//! the library directly rather than the binaries, and their random cases take most of their time.
//! `tests/suite/layout.rs` checks that every file here is declared below. proptest keeps each
//! module's failing cases in `<module>.proptest-regressions` beside its file.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod properties;
mod sessions;
mod state_machine;
