//! Address spaces and the byte stores behind them.
//!
//! - **Global** addresses are `alloc_base(i) + offset`: allocation `i` (a
//!   module variable or an array argument) owns 2^36 bytes of address
//!   space, so finding it is a shift and any access outside its length is
//!   caught — there is no neighbour to land in.
//! - **Shared** (`.shared::cta`) addresses are offsets into the CTA's
//!   shared memory. A `.shared::cluster` address is either such an offset
//!   (the CTA's own memory) or `(rank + 1) << 24 | offset` for the CTA of
//!   that rank, which is what `mapa` returns.
//! - **Generic** addresses are global addresses, or a window base plus a
//!   shared::cluster, local or kernel-parameter address.

use crate::sim::decode::ops::Space;

const ALLOC_SHIFT: u32 = 36;
pub const SHARED_WINDOW: u64 = 0x7f00_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x7e00_0000_0000_0000;
pub const PARAM_WINDOW: u64 = 0x7d00_0000_0000_0000;
const WINDOW_MASK: u64 = 0xff00_0000_0000_0000;
/// Bits of a shared::cluster address that hold the offset.
pub const RANK_SHIFT: u32 = 24;

/// The global address where allocation `index` starts.
pub fn alloc_base(index: usize) -> u64 {
    ((index as u64) + 1) << ALLOC_SHIFT
}

/// One global allocation.
#[derive(Clone, Debug)]
pub struct Alloc {
    pub name: String,
    pub data: Vec<u8>,
    pub read_only: bool,
    /// Element size, for reports (`element 1024 of x`).
    pub elem: u32,
    /// The kernel parameter index for an array argument.
    pub param: Option<usize>,
}

/// Where an access lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Global(usize),
    /// The shared memory of the CTA with this rank in the cluster.
    Shared(u32),
    Local,
    Param,
    FuncParam,
}

/// Why an access failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Outside every allocation of the space (`target` when the address
    /// decoded to one, with the offset into it).
    OutOfBounds {
        space: Space,
        addr: u64,
        target: Option<(Target, u64)>,
    },
    Misaligned {
        space: Space,
        addr: u64,
    },
    ReadOnly {
        space: Space,
        addr: u64,
        target: Target,
    },
    /// A shared::cluster address of a CTA that has exited.
    ExitedPeer {
        rank: u32,
        offset: u64,
    },
}

/// A resolved access: where, at which offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub target: Target,
    pub offset: u64,
}

/// The space a generic address falls in.
pub fn generic_space(addr: u64) -> Space {
    match addr & WINDOW_MASK {
        SHARED_WINDOW => Space::SharedCluster,
        LOCAL_WINDOW => Space::Local,
        PARAM_WINDOW => Space::Param,
        _ => Space::Global,
    }
}

/// Splits a shared::cluster address into (rank, offset); `own` is the
/// accessing CTA's rank.
pub fn split_cluster(addr: u64, own: u32) -> (u32, u64) {
    let a = addr & 0xffff_ffff;
    let hi = (a >> RANK_SHIFT) as u32;
    if hi == 0 {
        (own, a)
    } else {
        (hi - 1, a & ((1 << RANK_SHIFT) - 1))
    }
}

/// The rank [`cluster_addr`] gives a `mapa` past the cluster: the largest
/// its 8 bits hold, past every cluster (at most 16 CTAs), so that an
/// access through the address is out of bounds.
pub const NO_RANK: u32 = 254;

/// A shared::cluster address for `offset` in the CTA of `rank`.
pub fn cluster_addr(rank: u32, offset: u64) -> u64 {
    (u64::from(rank + 1) << RANK_SHIFT) | (offset & ((1 << RANK_SHIFT) - 1))
}

/// Sizes of the per-CTA and per-thread stores, for bounds checks.
#[derive(Clone, Debug, Default)]
pub struct Extents {
    pub shared: u64,
    pub local: u64,
    pub fparam: u64,
    pub param: u64,
    pub cluster_size: u32,
    /// The variable owning each byte of shared / local memory (0: a red
    /// zone between variables).
    pub shared_owner: Vec<u16>,
    pub local_owner: Vec<u16>,
}

/// Whether `[offset, offset + size)` lies inside one variable.
#[inline]
fn in_one_var(owner: &[u16], offset: u64, size: u64) -> bool {
    let first = owner.get(offset as usize).copied().unwrap_or(0);
    let last = owner
        .get((offset + size.max(1) - 1) as usize)
        .copied()
        .unwrap_or(0);
    first != 0 && first == last
}

/// Decodes an address of `space` into a place, checking alignment to
/// `align` and that `size` bytes fit.
#[inline(always)]
pub fn resolve(
    space: Space,
    addr: u64,
    size: u64,
    align: u64,
    own_rank: u32,
    ext: &Extents,
    allocs: &[Alloc],
) -> Result<Place, Fault> {
    let (space, local_addr) = match space {
        Space::Generic => {
            let s = generic_space(addr);
            let a = if s == Space::Global {
                addr
            } else {
                addr & !WINDOW_MASK
            };
            (s, a)
        }
        s => (s, addr),
    };
    // Alignments are powers of two but for a few bulk forms: a mask, not
    // a division, on the interpreter's path.
    let misaligned = if align.is_power_of_two() {
        local_addr & (align - 1) != 0
    } else {
        align > 1 && local_addr % align != 0
    };
    if misaligned {
        return Err(Fault::Misaligned { space, addr });
    }
    let oob = |target| Fault::OutOfBounds {
        space,
        addr,
        target,
    };
    let (target, offset, limit) = match space {
        Space::Global | Space::Const | Space::Generic => {
            let index = (local_addr >> ALLOC_SHIFT) as usize;
            let offset = local_addr & ((1u64 << ALLOC_SHIFT) - 1);
            let Some(alloc) = index.checked_sub(1).and_then(|i| allocs.get(i)) else {
                return Err(oob(None));
            };
            (Target::Global(index - 1), offset, alloc.data.len() as u64)
        }
        Space::Shared => (
            Target::Shared(own_rank),
            local_addr & 0xffff_ffff,
            ext.shared,
        ),
        Space::SharedCluster => {
            let (rank, offset) = split_cluster(local_addr, own_rank);
            if rank >= ext.cluster_size {
                return Err(oob(None));
            }
            (Target::Shared(rank), offset, ext.shared)
        }
        Space::Local => (Target::Local, local_addr, ext.local),
        Space::Param => (Target::Param, local_addr, ext.param),
        Space::FuncParam => (Target::FuncParam, local_addr, ext.fparam),
    };
    if offset.checked_add(size).is_none_or(|end| end > limit) {
        return Err(oob(Some((target, offset))));
    }
    let owners = match target {
        Target::Shared(_) => Some(&ext.shared_owner),
        Target::Local => Some(&ext.local_owner),
        _ => None,
    };
    if owners.is_some_and(|o| !in_one_var(o, offset, size)) {
        return Err(oob(Some((target, offset))));
    }
    Ok(Place { target, offset })
}

/// Little-endian read of `size` (1..=8) bytes.
#[inline(always)]
pub fn read(bytes: &[u8], offset: u64, size: u64) -> Option<u64> {
    let start = usize::try_from(offset).ok()?;
    let slice = bytes.get(start..start.checked_add(size as usize)?)?;
    // The common widths as one load each, the most frequent first (the
    // interpreter's hot path: tested branches predict better than a
    // jump on the length).
    if let Ok(w) = <[u8; 4]>::try_from(slice) {
        return Some(u64::from(u32::from_le_bytes(w)));
    }
    if let Ok(w) = <[u8; 8]>::try_from(slice) {
        return Some(u64::from_le_bytes(w));
    }
    let mut v = 0u64;
    for (i, b) in slice.iter().enumerate() {
        v |= u64::from(*b) << (8 * i);
    }
    Some(v)
}

/// Little-endian write of the low `size` bytes of `value`.
#[inline(always)]
pub fn write(bytes: &mut [u8], offset: u64, size: u64, value: u64) -> Option<()> {
    let start = usize::try_from(offset).ok()?;
    let slice = bytes.get_mut(start..start.checked_add(size as usize)?)?;
    let le = value.to_le_bytes();
    match slice.len() {
        // The common widths as one store each (the interpreter's hot path).
        1 | 2 | 4 | 8 => slice.copy_from_slice(le.get(..slice.len())?),
        _ => {
            for (i, b) in slice.iter_mut().enumerate() {
                *b = (value >> (8 * i)) as u8;
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_resolve_with_bounds() {
        let allocs = vec![Alloc {
            name: "x".into(),
            data: vec![0; 16],
            read_only: false,
            elem: 4,
            param: Some(0),
        }];
        let mut owner = vec![0u16; 2048];
        owner[1024..1040].fill(1);
        let ext = Extents {
            shared: 2048,
            local: 0,
            fparam: 0,
            param: 8,
            cluster_size: 2,
            shared_owner: owner,
            local_owner: Vec::new(),
        };
        let base = alloc_base(0);
        let ok = resolve(Space::Global, base + 12, 4, 4, 0, &ext, &allocs);
        assert_eq!(
            ok,
            Ok(Place {
                target: Target::Global(0),
                offset: 12
            })
        );
        assert!(matches!(
            resolve(Space::Global, base + 16, 4, 4, 0, &ext, &allocs),
            Err(Fault::OutOfBounds {
                target: Some((Target::Global(0), 16)),
                ..
            })
        ));
        assert!(matches!(
            resolve(Space::Global, base + 2, 4, 4, 0, &ext, &allocs),
            Err(Fault::Misaligned { .. })
        ));
        assert!(matches!(
            resolve(Space::Global, 0, 4, 4, 0, &ext, &allocs),
            Err(Fault::OutOfBounds { target: None, .. })
        ));
        let remote = cluster_addr(1, 1024);
        assert_eq!(
            resolve(Space::SharedCluster, remote, 4, 4, 0, &ext, &allocs),
            Ok(Place {
                target: Target::Shared(1),
                offset: 1024
            })
        );
        assert_eq!(
            resolve(Space::Generic, SHARED_WINDOW + 1024, 4, 4, 1, &ext, &allocs),
            Ok(Place {
                target: Target::Shared(1),
                offset: 1024
            })
        );
        // Past the variable, into the red zone.
        assert!(matches!(
            resolve(Space::Shared, 1040, 4, 4, 0, &ext, &allocs),
            Err(Fault::OutOfBounds {
                target: Some((Target::Shared(0), 1040)),
                ..
            })
        ));
        assert!(resolve(Space::Shared, 0, 4, 4, 0, &ext, &allocs).is_err());
        let mut bytes = vec![0u8; 8];
        write(&mut bytes, 2, 4, 0x1122_3344);
        assert_eq!(read(&bytes, 2, 4), Some(0x1122_3344));
        assert_eq!(read(&bytes, 6, 4), None);
    }
}
