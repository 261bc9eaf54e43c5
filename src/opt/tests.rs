use super::*;
use crate::ir::{print, verify};
use crate::{compile_str, Options};

/// The checked module of `src`, before any pass (shared by the passes'
/// own tests in `opt/*/tests.rs`).
pub(super) fn checked(src: &str) -> Module {
    let opts = Options {
        passes: Passes::none(),
        ..Options::default()
    };
    let c = compile_str("t.kdsl", src, &opts);
    assert_eq!(c.error_count(), 0, "{:?}", c.diagnostics);
    c.module.expect("a module")
}

/// The IR after `pass` ran on the checked module of `src` (verified), and
/// whether the pass changed it.
pub(super) fn after_pass(pass: fn(&mut Module) -> bool, src: &str) -> (String, bool) {
    let mut m = checked(src);
    let changed = pass(&mut m);
    if let Err(e) = verify::module(&m, verify::Mode::Complete) {
        panic!("{e:?}\n{}", print::print(&m));
    }
    (print::print(&m), changed)
}

#[test]
fn passes_parse_all_none_and_lists_in_pipeline_order() {
    assert_eq!(Passes::parse("all"), Ok(Passes::all()));
    assert_eq!(Passes::parse("none"), Ok(Passes::none()));
    let p = Passes::parse("unroll,special").expect("a list");
    assert_eq!(
        p.iter().collect::<Vec<_>>(),
        vec![Pass::Special, Pass::Unroll]
    );
    let p = Passes::parse("unroll").expect("one pass");
    assert!(p.contains(Pass::Unroll) && !p.contains(Pass::Special));
    let e = Passes::parse("unroll,gvn").expect_err("no such pass");
    assert!(
        e.contains("`gvn`") && e.contains("special, unroll, stream, licm"),
        "{e}"
    );
    assert!(Passes::parse("").is_err());
}
