//! saxpy (`samples/saxpy.kdsl`) on a GPU through cudarc: the PTX, the entry
//! name, the block shape, the dynamic shared memory and the parameters'
//! order and sizes all come from the kernel's launch manifest, which
//! build.rs turned into the constants of `OUT_DIR/saxpy.rs`.
//!
//!     cargo run -p kdsl-cudarc-saxpy --release
//!
//! Exit status 0 when y = a·x + y matches a CPU reference, 1 when it does
//! not, 2 on a CUDA error (no GPU, no driver).

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

mod saxpy {
    include!(concat!(env!("OUT_DIR"), "/saxpy.rs"));
}

/// The kernel's parameters as this program passes them, checked against the
/// manifest: the same names in the same order, each Rust type the size the
/// kernel reads.
fn check_layout(ours: &[(&str, usize)]) {
    let theirs = saxpy::saxpy::PARAMS;
    assert_eq!(
        ours.len(),
        theirs.len(),
        "the kernel has {} parameters",
        theirs.len()
    );
    for ((name, size), p) in ours.iter().zip(theirs) {
        assert_eq!(
            (*name, *size),
            (p.name, p.size),
            "parameter `{}` ({})",
            p.name,
            p.ty
        );
    }
}

fn run() -> Result<bool, cudarc::driver::DriverError> {
    const N: u32 = 1 << 20;
    let a = 2.5f32;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 7) as f32 * 0.5).collect();
    check_layout(&[
        ("a", size_of::<f32>()),
        ("x", size_of::<u64>()),
        ("y", size_of::<u64>()),
        ("n", size_of::<u32>()),
    ]);

    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = ctx.load_module(Ptx::from_src(saxpy::PTX))?;
    let f = module.load_function(saxpy::saxpy::NAME)?;
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y)?;
    let block = saxpy::saxpy::BLOCK.expect("saxpy has block(256)");
    let cfg = LaunchConfig {
        grid_dim: (N.div_ceil(block.0), 1, 1),
        block_dim: block,
        shared_mem_bytes: saxpy::saxpy::DYNAMIC_SHARED_BYTES,
    };
    let n = N;
    let mut launch = stream.launch_builder(&f);
    launch.arg(&a).arg(&dx).arg(&mut dy).arg(&n);
    // SAFETY: the arguments are the kernel's, in order, of the sizes its
    // manifest gives (check_layout), and the arrays hold N elements.
    unsafe { launch.launch(cfg) }?;
    let out = stream.clone_dtoh(&dy)?;
    let bad = (0..N as usize)
        .filter(|&i| out[i] != a * x[i] + y[i])
        .count();
    if bad > 0 {
        eprintln!("saxpy: {bad} of {N} elements differ from the CPU's");
        return Ok(false);
    }
    println!(
        "saxpy ({}, {}): {N} elements match the CPU",
        saxpy::TARGET,
        saxpy::saxpy::NAME
    );
    Ok(true)
}

fn main() {
    // cudarc panics when it cannot load the driver library: no GPU here.
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(run);
    std::panic::set_hook(quiet);
    match result {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => std::process::exit(1),
        Ok(Err(e)) => {
            eprintln!("saxpy: CUDA: {e:?}");
            std::process::exit(2);
        }
        Err(_) => {
            eprintln!("saxpy: no CUDA driver could be loaded (libcuda.so)");
            std::process::exit(2);
        }
    }
}
