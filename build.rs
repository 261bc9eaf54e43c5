//! Generates the parser from `grammar/kdsl.lalrpop` with LALRPOP, and points
//! it at kdsl's own LR driver (`src/syntax/lr.rs`: LALRPOP's driver, with
//! error recovery that costs time in proportion to the parse rather than to
//! the depth of the parser's stack).
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=grammar/kdsl.lalrpop");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // Always generated afresh (this script runs only when the grammar
    // changed): LALRPOP would leave a file it made before, already rewritten.
    lalrpop::Configuration::new()
        .force_build(true)
        .set_in_dir("grammar")
        .set_out_dir(&out)
        .process()
        .expect("LALRPOP failed to generate the parser from grammar/kdsl.lalrpop");
    let generated = Path::new(&out).join("kdsl.rs");
    let text = std::fs::read_to_string(&generated).expect("LALRPOP wrote kdsl.rs");
    // The one call of LALRPOP's driver, in `FileParser::parse`; the
    // replacement takes the same definition and tokens, the terminal names
    // (for the expected tokens of an error) and the cut the grammar's
    // `errors` parameter shares (where the stack grew too deep).
    const DRIVER: &str = "__state_machine::Parser::drive(";
    assert_eq!(
        text.matches(DRIVER).count(),
        1,
        "the generated parser calls LALRPOP's driver once (a new LALRPOP version?)"
    );
    // LALRPOP's own, for the test that compares the two drivers.
    std::fs::write(Path::new(&out).join("kdsl_lalrpop.rs"), &text)
        .expect("kdsl_lalrpop.rs written");
    let text = text.replace(
        DRIVER,
        "crate::syntax::lr::Driver::drive(__TERMINAL, errors.cut_cell(), ",
    );
    std::fs::write(&generated, text).expect("kdsl.rs rewritten");
}
