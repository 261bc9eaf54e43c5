//! Hostile PTX and launches: what ptxas refuses the simulator refuses too
//! (each case also assembled by ptxas to show it does), attributes and
//! ranks out of range, and work that grows without bound.

use crate::common::ptxas::{assemble, require_ptxas};
use crate::common::sim::*;
use crate::sim::cli::{kdslc, status, stderr};

/// `mapa` to a rank past the cluster: reported where it is asked for, and
/// the store through the address it returns is out of bounds — not
/// wrapped modulo 256 into the own or a peer's shared memory.
#[test]
fn mapa_past_the_cluster_is_out_of_bounds() {
    let ptx = ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 rank)
.reqnctapercluster 2, 1, 1
{
	.reg .b32 %r<8>;
	.shared .align 4 .b8 s[64];
	ld.param.u32 %r1, [rank];
	mov.u32 %r2, s;
	st.shared.u32 [%r2], 7;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	mapa.shared::cluster.u32 %r3, %r2, %r1;
	st.shared::cluster.u32 [%r3], 99;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	ld.shared.u32 %r4, [%r2];
	setp.ne.u32 %p1, %r4, 7;
	@%p1 trap;
	ret;
}
"
    .replace(".reg .b32 %r<8>;", ".reg .b32 %r<8>;\n\t.reg .pred %p<2>;");
    let k = ptx_str("m.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
    for rank in [2u32, 3, 257, 300, 0xffff_ffff] {
        let o = run(&k, &launch("k", 2, 32, 2, vec![u32v(rank)]));
        let text = rendered(&k, &o);
        assert_eq!(report_codes(&o), ["S0002", "S0002"], "rank {rank}:\n{text}");
        assert!(
            text.contains(&format!(
                "error[S0002]: out-of-bounds `mapa` in shared::cluster memory: CTA rank {rank} of a cluster of 2 CTAs"
            )),
            "{text}"
        );
        assert!(text.contains("m.ptx:15:2"), "{text}");
        // No CTA's `s` was overwritten (that would be a trap).
        assert!(!text.contains("S0016"), "{text}");
    }
    // Ranks in the cluster are fine.
    let o = run(&k, &launch("k", 2, 32, 2, vec![u32v(1)]));
    assert_eq!(report_codes(&o), ["S0016"], "the peer's `s` is written");
}

/// `.reqnctapercluster` with a zero dimension (ptxas takes it): exit 2
/// naming the attribute, with or without `--cluster`, never a panic.
#[test]
fn a_zero_cluster_attribute_is_a_usage_error() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry k()\n.reqnctapercluster 0, 1, 1\n{\n\tret;\n}\n";
    if let Some(ptxas) = require_ptxas() {
        assemble(&ptxas, ptx, "sm_90").expect("ptxas takes it");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("z.ptx");
    std::fs::write(&path, ptx).expect("writes");
    let p = path.to_str().expect("UTF-8");
    for extra in [&[][..], &["--cluster", "2"]] {
        let args = [&["sim", p, "--grid", "2", "--block", "32"][..], extra].concat();
        let o = kdslc(&args);
        assert_eq!(status(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("the kernel's `.reqnctapercluster 0, 1, 1` has a dimension of 0"),
            "{}",
            stderr(&o)
        );
    }
}
