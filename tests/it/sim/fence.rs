//! The `wgmma.fence` rule in the simulator (S0028, PTX ISA §9.7.15.7.1):
//! a fence before a warpgroup's first wgmma, and between a thread's read
//! or write of a register and a wgmma that uses it (accumulators across
//! wgmmas of one shape excepted). Small PTX kernels of one warpgroup, each
//! one way of getting the rule right or wrong; the RS form's A fragment is
//! the explain page's example, and the attention sample without its fence
//! is `tests/sim/broken/flash_attention_no_fence.ptx`.

use crate::common::sim::*;
use kdsl::sim::Schedule;

/// A kernel of 128 threads that zeroes its operands (64×16 A, 16×16 B of
/// bf16), builds their descriptors (`%rd1`, `%rd2`), runs `body` and
/// stores `%f0`.
fn kernel(body: &str) -> String {
    format!(
        r#".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out)
.reqntid 128, 1, 1
{{
	.reg .b32 %r<8>;
	.reg .b64 %rd<6>;
	.reg .f32 %f<8>;
	.reg .pred %p<2>;
	.shared .align 128 .b8 sa[2048];
	.shared .align 128 .b8 sb[512];
	mov.u32 %r5, %tid.x;
	{{
	.reg .b32 %z<4>;
	.reg .pred %q;
	mov.u32 %z0, 0;
	shl.b32 %z1, %r5, 4;
	mov.u32 %z2, sa;
	add.u32 %z2, %z2, %z1;
	st.shared.v4.u32 [%z2], {{%z0, %z0, %z0, %z0}};
	setp.lt.u32 %q, %r5, 32;
	mov.u32 %z3, sb;
	add.u32 %z3, %z3, %z1;
	@%q st.shared.v4.u32 [%z3], {{%z0, %z0, %z0, %z0}};
	fence.proxy.async.shared::cta;
	bar.sync 0;
	}}
	mov.u32 %r1, sa;
	shr.u32 %r1, %r1, 4;
	cvt.u64.u32 %rd1, %r1;
	or.b64 %rd1, %rd1, 0x0000001000080000;
	mov.u32 %r2, sb;
	shr.u32 %r2, %r2, 4;
	cvt.u64.u32 %rd2, %r2;
	or.b64 %rd2, %rd2, 0x0000001000080000;
{body}
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
	ld.param.u64 %rd3, [out];
	mul.wide.u32 %rd4, %r5, 4;
	add.s64 %rd3, %rd3, %rd4;
	st.global.f32 [%rd3], %f0;
	ret;
}}
"#
    )
}

const N8: &str =
    "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, %rd2";
const N16: &str = "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, %rd1, %rd2";
const FENCE: &str = "wgmma.fence.sync.aligned;";
const WAIT: &str = "wgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;";

/// The S0028 reports of a run of `body` (under `schedule`), with the
/// first's title.
fn reports(body: &str, schedule: Schedule) -> (usize, String) {
    let ptx = kernel(body);
    let k = ptx_str("fence.ptx", &ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let l = launch(
        "k",
        [1, 1, 1],
        [128, 1, 1],
        [1, 1, 1],
        vec![u32s("out", &[0; 128])],
    );
    let o = run_with(&k, &l, schedule, 10_000_000);
    let others: Vec<&str> = o
        .reports
        .iter()
        .map(|d| d.code)
        .filter(|&c| c != "S0028")
        .collect();
    assert!(
        others.is_empty(),
        "{body}: {others:?}\n{}",
        rendered(&k, &o)
    );
    let fence: Vec<_> = o.reports.iter().filter(|d| d.code == "S0028").collect();
    let title = fence.first().map_or(String::new(), |d| d.message.clone());
    (fence.len(), title)
}

fn lines(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| format!("\t{p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_fence_before_the_wgmmas_is_clean() {
    for schedule in [Schedule::InOrder, Schedule::Random(1)] {
        // A fence, then wgmmas of one shape on one accumulator: the ISA
        // orders accumulator accesses across them by default.
        let body = lines(&[
            FENCE,
            &format!("{N8}, 0, 1, 1, 0, 0;"),
            &format!("{N8}, 1, 1, 1, 0, 0;"),
        ]);
        assert_eq!(reports(&body, schedule), (0, String::new()), "{body}");
        // Zeroed by `mov`, then the fence: the write is ordered.
        let body = lines(&[
            "mov.f32 %f0, 0f00000000;",
            FENCE,
            &format!("{N8}, 1, 1, 1, 0, 0;"),
        ]);
        assert_eq!(reports(&body, schedule).0, 0, "{body}");
        // The epilogue reads the accumulator, a fence, the next wgmma.
        let body = lines(&[
            FENCE,
            &format!("{N8}, 0, 1, 1, 0, 0;"),
            WAIT,
            "add.f32 %f4, %f0, %f1;",
            FENCE,
            &format!("{N8}, 0, 1, 1, 0, 0;"),
        ]);
        assert_eq!(reports(&body, schedule).0, 0, "{body}");
    }
}

#[test]
fn a_missing_fence_is_reported() {
    let cases: [(Vec<&str>, &str); 5] = [
        // No fence before the warpgroup's first wgmma.
        (
            vec!["N8 0"],
            "no `wgmma.fence` before the first wgmma of a warp",
        ),
        // The accumulator zeroed after the fence: scale-d = 0 does not
        // read D, but the wgmma writes it, and the ISA wants the fence
        // between any access and the wgmma.
        (
            vec![FENCE, "mov.f32 %f2, 0f00000000;", "N8 0"],
            "accumulator register `%f2` written and then used by a wgmma with no `wgmma.fence` between",
        ),
        // Accumulating into an accumulator written after the fence.
        (
            vec![FENCE, "mov.f32 %f0, 0f3F800000;", "N8 1"],
            "accumulator register `%f0` written and then used by a wgmma with no `wgmma.fence` between",
        ),
        // The epilogue's read, then the next tile's wgmma (which
        // overwrites the register) without a fence.
        (
            vec![FENCE, "N8 0", WAIT, "add.f32 %f4, %f1, %f1;", "N8 0"],
            "accumulator register `%f1` read and then used by a wgmma with no `wgmma.fence` between",
        ),
        // Two shapes on one accumulator: the exception is for one shape.
        (
            vec![FENCE, "N8 0", "N16 1"],
            "accumulator register `%f0` used by wgmmas of two shapes with no `wgmma.fence` between",
        ),
    ];
    for (parts, title) in cases {
        let parts: Vec<String> = parts
            .iter()
            .map(|p| match *p {
                "N8 0" => format!("{N8}, 0, 1, 1, 0, 0;"),
                "N8 1" => format!("{N8}, 1, 1, 1, 0, 0;"),
                "N16 1" => format!("{N16}, 1, 1, 1, 0, 0;"),
                p => p.to_string(),
            })
            .collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let body = lines(&refs);
        for schedule in [Schedule::InOrder, Schedule::Random(3)] {
            let (n, got) = reports(&body, schedule);
            assert_eq!((n, got.as_str()), (1, title), "{body}");
        }
    }
}
