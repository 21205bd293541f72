//! Read-only views of a timeline for people: draw.io diagrams and ASCII trees.

use crate::error::{Error, ErrorKind, Result};
use crate::model::Database;
use crate::service::Output;
use crate::spec::validate::Args;

pub fn run(_db: &mut Database, _args: &Args) -> Result<Output> {
    Err(Error::new(
        ErrorKind::Output,
        "export is not implemented yet in this build",
    ))
}
