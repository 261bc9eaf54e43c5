//! Where the simulator places kdslc's dynamic shared declarations
//! ([`DynamicLayout`]), to keep out-of-bounds reports as exact as for static
//! shared memory: each declaration is placed [`GAP`] bytes further than the
//! one before it ([`remap`], applied where the decoder resolves
//! `$dsmem+offset`), so that a red zone follows every declaration and an
//! index past the end of one faults (S0002, naming it) instead of landing
//! in the next. Addresses computed from a declaration's start keep their
//! offsets within it, which is all kdslc's PTX does with them.

use crate::launch::DynamicLayout;

/// What the simulator adds between consecutive declarations: at least a
/// red zone, and a multiple of 1024 so that every declaration keeps its
/// address modulo 1024 — its alignment, and the phase of the swizzle
/// patterns of tensor copies and wgmma, which are functions of the
/// absolute shared address with a repeat of up to 1024 bytes (PTX ISA
/// §5.5.7).
pub(crate) const GAP: u32 = 1024;

/// The index of the declaration `offset` (bytes into the dynamic array, as
/// the PTX has it) belongs to: the last one starting at or before it (an
/// offset in the padding after a declaration stays with it, and so lands
/// in its red zone).
fn owner(l: &DynamicLayout, offset: i64) -> usize {
    l.vars
        .iter()
        .rposition(|v| i64::from(v.offset) <= offset)
        .unwrap_or(0)
}

/// The simulator's offset for PTX offset `offset` into the dynamic array:
/// the same place relative to its declaration, which the simulator has
/// moved [`GAP`] bytes per declaration before it.
pub(crate) fn remap(l: &DynamicLayout, offset: i64) -> i64 {
    offset + i64::from(GAP) * owner(l, offset) as i64
}

/// Where the simulator places declaration `i`, from the start of the
/// dynamic shared memory.
pub(crate) fn placed(l: &DynamicLayout, i: usize) -> Option<u32> {
    let v = l.vars.get(i)?;
    u32::try_from(i)
        .ok()?
        .checked_mul(GAP)?
        .checked_add(v.offset)
}

/// The bytes the simulator's placement spans.
pub(crate) fn placed_end(l: &DynamicLayout) -> u32 {
    (0..l.vars.len())
        .filter_map(|i| Some(placed(l, i)?.saturating_add(l.vars.get(i)?.size)))
        .max()
        .unwrap_or(0)
}
