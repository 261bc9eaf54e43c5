//! `kdslc check FILE...`: every file's diagnostics, nothing written.
//! Exit 3 when one of them met a compiler bug.

use super::build::{cannot_read, options};
use super::cli::CheckArgs;
use super::report::Reporter;
use super::Fail;

/// Exit 3 for an internal error, else 2 if a file could not be read, else 1
/// if any file has errors.
/// Every file is checked either way.
pub fn check(args: &CheckArgs, reporter: &mut Reporter) -> Result<(), Fail> {
    let opts = options(&args.common, true)?;
    let mut unreadable = false;
    let mut failed = false;
    let mut internal = None;
    for file in &args.files {
        match crate::compile(file, &opts) {
            Ok(c) if c.usage_error.is_some() => {
                let usage = c.usage_error.unwrap_or_default();
                reporter.fail(&super::Fail::Usage(usage));
                unreadable = true;
            }
            Ok(c) => {
                reporter.report(&c.sources, &c.diagnostics);
                failed |= c.failed(&opts);
                internal = internal.or(c.internal_error);
            }
            Err(e) => {
                reporter.fail(&cannot_read(file, &e));
                unreadable = true;
            }
        }
    }
    if let Some(e) = internal {
        Err(Fail::Internal(e))
    } else if unreadable {
        Err(Fail::Exit(2))
    } else if failed {
        Err(Fail::Exit(1))
    } else {
        Ok(())
    }
}
