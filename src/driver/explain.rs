//! `kdslc explain CODE`: the long explanation of a diagnostic code.

use super::cli::ExplainArgs;
use super::output::write_stdout;
use super::Fail;
use crate::diagnostics::catalog;

pub fn explain(args: &ExplainArgs) -> Result<(), Fail> {
    // `lookup` ignores case and surrounding blanks: `e0301` finds E0301.
    let Some(info) = catalog::lookup(&args.code) else {
        return Err(Fail::Usage(format!(
            "no diagnostic code `{}`; see `docs/diagnostics.md` for the list",
            args.code
        )));
    };
    // The explanation is markdown that opens with `# CODE: title`.
    let text = format!("{}\n", info.explanation.trim_end());
    write_stdout(text.as_bytes())
}
