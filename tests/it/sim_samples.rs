//! Every sample runs in the simulator on inputs that use every CTA and
//! pipeline-stage path, and its outputs match a reference computed here:
//! exactly for integers, within a relative tolerance for floats (the
//! tolerance is stated at each comparison; sums are accumulated in a
//! different order than the reference's, so they differ by rounding).

use crate::sim_support::*;

fn sample(name: &str) -> Loaded {
    kdsl_file(&root().join("samples").join(format!("{name}.kdsl")))
}

#[test]
fn saxpy() {
    let k = sample("saxpy");
    let n = 1000u32;
    let x = rand_f32(n as usize, 1);
    let y = rand_f32(n as usize, 2);
    let l = launch("saxpy", [4, 1, 1], [256, 1, 1], [1, 1, 1], vec![f32v(2.5), f32s("x", &x), f32s("y", &y), u32v(n)]);
    let o = run_clean(&k, &l);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
    // a * x + y is one fused or two rounded operations: within 1 ulp.
    assert_close("y", &as_f32(&o.arrays[1]), &want, 1e-6);
}
