//! Modules with instructions outside the simulator's subset: every one is
//! listed (not only the first), and only the kernels that reach one — in
//! their own body or in a function they call — are refused; the module's
//! other kernels run.

use crate::common::sim::*;
use kdsl::diagnostics::render;

/// Kernel `good` stores 7; `bad` has two unsupported instructions and
/// calls `helper`, which has a third; `also_bad` calls `helper` only.
const MODULE: &str = ".version 8.0
.target sm_90
.address_size 64

.func helper()
{
	.reg .b32 %r<4>;
	sad.u32 %r1, %r2, %r3, %r1;
	ret;
}

.visible .entry good(.param .u64 out)
{
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	st.global.u32 [%rd1], 7;
	ret;
}

.visible .entry bad(.param .u64 out)
{
	.reg .b32 %r<4>;
	mul24.lo.u32 %r1, %r2, %r3;
	testp.finite.f32 %p1, %r1;
	call helper;
	ret;
}

.visible .entry also_bad(.param .u64 out)
{
	call helper;
	ret;
}
";

fn text(l: &Loaded, d: &[kdsl::diagnostics::Diagnostic]) -> String {
    render::human(&l.sources, d, false)
}

#[test]
fn only_the_kernels_that_reach_one_are_refused() {
    let k = ptx_str("m.ptx", MODULE).unwrap_or_else(|e| panic!("{e}"));
    assert!(k.program.refusals("good").is_empty());
    let o = run(&k, &launch("good", 1, 1, 1, vec![u32s("out", &[0])]));
    assert!(!o.faulted, "{}", rendered(&k, &o));
    assert_eq!(as_u32(&o.arrays[0]), [7]);

    // Every instruction `bad` reaches, in its body and in `helper`.
    let refused = k.program.refusals("bad");
    let t = text(&k, &refused);
    assert_eq!(refused.len(), 3, "{t}");
    for (name, line) in [
        ("mul24.lo.u32", 23),
        ("testp.finite.f32", 24),
        ("sad.u32", 8),
    ] {
        assert!(
            t.contains(&format!(
                "error[S0013]: PTX instruction `{name}` is outside the simulator's subset"
            )),
            "{t}"
        );
        assert!(t.contains(&format!("m.ptx:{line}:2")), "{name}:\n{t}");
    }
    // A run of it is refused with the same reports, nothing executed.
    let o = run(&k, &launch("bad", 1, 1, 1, vec![u32s("out", &[0])]));
    assert!(o.faulted);
    assert_eq!(report_codes(&o), ["S0013", "S0013", "S0013"]);
    assert_eq!(o.stats.steps, 0);
    assert_eq!(as_u32(&o.arrays[0]), [0]);
    // Through a call only.
    let t = text(&k, &k.program.refusals("also_bad"));
    assert!(t.contains("`sad.u32`") && !t.contains("mul24"), "{t}");
}

/// A module none of whose kernels can run does not load, and the error
/// lists every unsupported instruction of the module.
#[test]
fn a_module_with_no_runnable_kernel_lists_every_one() {
    let only_bad = MODULE.replace(
        "st.global.u32 [%rd1], 7;",
        "st.global.u32 [%rd1], 7;\n\tmul24.hi.u32 %r1, %r1, %r1;",
    );
    let err = ptx_str("m.ptx", &only_bad).err().expect("a load error");
    for name in [
        "mul24.lo.u32",
        "testp.finite.f32",
        "sad.u32",
        "mul24.hi.u32",
    ] {
        assert!(err.contains(&format!("`{name}` is outside")), "{err}");
    }
    assert_eq!(err.matches("error[S0013]").count(), 4, "{err}");
}

/// A recursive function refuses the kernels that call it, not the others.
#[test]
fn recursion_refuses_only_its_callers() {
    let ptx = ".version 8.0
.target sm_90
.address_size 64
.func r()
{
	call r;
	ret;
}
.visible .entry calls(.param .u64 out)
{
	call r;
	ret;
}
.visible .entry plain(.param .u64 out)
{
	ret;
}
";
    let k = ptx_str("r.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    assert!(k.program.refusals("plain").is_empty());
    let t = text(&k, &k.program.refusals("calls"));
    assert!(t.contains("recursive call of `r`"), "{t}");
    assert!(t.contains("r.ptx:6:2"), "{t}");
}

/// A flood of unsupported instructions: the first 100 are listed, then one
/// report for the rest.
#[test]
fn a_flood_is_capped() {
    let body: String = (0..150)
        .map(|_| "\tmul24.lo.u32 %r1, %r1, %r1;\n")
        .collect();
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k()\n{{\n\t.reg .b32 %r<2>;\n{body}\tret;\n}}\n"
    );
    let err = ptx_str("f.ptx", &ptx).err().expect("a load error");
    assert_eq!(err.matches("error[S0013]: PTX instruction").count(), 100);
    assert!(
        err.contains("error[S0013]: and 50 more PTX instructions outside the simulator's subset"),
        "{err}"
    );
}

/// From the command line: `--kernel good` runs; `--kernel bad` is exit 2
/// with its three instructions listed.
#[test]
fn kdslc_sim_runs_the_kernels_it_can() {
    use crate::sim::cli::{kdslc, status, stderr, stdout};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("m.ptx");
    std::fs::write(&path, MODULE).expect("writes");
    let p = path.to_str().expect("UTF-8");
    let ok = kdslc(&[
        "sim",
        p,
        "--kernel",
        "good",
        "--grid",
        "1",
        "--block",
        "1",
        "--arg",
        "0=u32:zeros:1",
        "--dump",
        "out",
    ]);
    assert_eq!(status(&ok), 0, "{}", stderr(&ok));
    assert!(stdout(&ok).contains("[7]"), "{}", stdout(&ok));
    let bad = kdslc(&[
        "sim",
        p,
        "--kernel",
        "bad",
        "--grid",
        "1",
        "--block",
        "1",
        "--arg",
        "0=u32:zeros:1",
    ]);
    assert_eq!(status(&bad), 2, "{}", stderr(&bad));
    assert_eq!(
        stderr(&bad).matches("error[S0013]").count(),
        3,
        "{}",
        stderr(&bad)
    );
}
