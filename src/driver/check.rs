//! `kdslc check FILE...`: every file's diagnostics, nothing written.

use super::build::{cannot_read, options};
use super::cli::CheckArgs;
use super::report::Reporter;
use super::Fail;

/// Exit 2 if a file could not be read, else 1 if any file has errors.
/// Every file is checked either way.
pub fn check(args: &CheckArgs, reporter: &mut Reporter) -> Result<(), Fail> {
    let opts = options(&args.common, true)?;
    let mut unreadable = false;
    let mut failed = false;
    for file in &args.files {
        match crate::compile(file, &opts) {
            Ok(c) => {
                reporter.report(&c.sources, &c.diagnostics);
                failed |= c.failed(&opts);
            }
            Err(e) => {
                reporter.fail(&cannot_read(file, &e));
                unreadable = true;
            }
        }
    }
    if unreadable {
        Err(Fail::Exit(2))
    } else if failed {
        Err(Fail::Exit(1))
    } else {
        Ok(())
    }
}
