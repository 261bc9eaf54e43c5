use super::*;

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
