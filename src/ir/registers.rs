//! Registers per thread: `set_max_regs`'s range and the count a warp
//! starts with.

/// The registers per thread every warp of a kernel starts with when one
/// CTA of `threads` threads runs per SM (`.minnctapersm 1`), the largest
/// `set_max_regs` being `largest`: `min(255, 8 * floor(65536 / (8 * T)),
/// largest)` (ptxas 13.5 lowers the count at entry to the largest
/// `setmaxnreg` when that is below what the launch allows;
/// `shared/design/hopper.md` §4.3). `None` for a block of no threads.
pub fn entry_registers(threads: u32, largest: Option<u32>) -> Option<u32> {
    let per_thread = REGS_PER_SM.checked_div(threads.checked_mul(REGS_STEP)?)? * REGS_STEP;
    let e = per_thread.min(REGS_PER_THREAD);
    Some(largest.map_or(e, |l| e.min(l)))
}

/// The fewest registers per thread `set_max_regs` may ask for
/// (`setmaxnreg`'s range, PTX ISA §9.7.19.5; ptxas checks it).
pub const REGS_MIN: u32 = 24;
/// The most registers per thread `set_max_regs` may ask for.
pub const REGS_MAX: u32 = 256;
/// `set_max_regs` counts registers in steps of 8.
pub const REGS_STEP: u32 = 8;
/// The registers of one SM, shared by the CTAs on it: a CTA's pool when it
/// is the only one (`.minnctapersm 1`).
pub const REGS_PER_SM: u32 = 65536;
/// The most registers one thread can have.
pub const REGS_PER_THREAD: u32 = 255;
