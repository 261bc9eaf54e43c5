//! `--grid`, `--block`, `--cluster`: parsing `X[,Y[,Z]]` and checking a
//! launch shape against the kernel's attributes and the hardware's limits.

use super::error::{dims_flag, LaunchError};
use super::{KernelSignature, Origin};

/// A launch dimension: x, y, z.
pub type Dims = [u32; 3];

/// The limits of every GPU kdslc targets (compute capability 8.0 to 12.0,
/// CUDA C Programming Guide, "Technical Specifications per Compute
/// Capability").
pub mod limits {
    use super::Dims;
    /// Threads per block.
    pub const BLOCK_THREADS: u64 = 1024;
    /// Per-axis block size.
    pub const BLOCK: Dims = [1024, 1024, 64];
    /// Per-axis grid size.
    pub const GRID: Dims = [i32::MAX as u32, 65535, 65535];
    /// CTAs per cluster that every cluster-capable GPU launches.
    pub const CLUSTER_PORTABLE: u64 = 8;
    /// CTAs per cluster with the non-portable size attribute (sm_90, sm_100).
    pub const CLUSTER_MAX: u64 = 16;
}

/// Parses `X`, `X,Y` or `X,Y,Z` (missing dimensions are 1); each at least 1.
/// The error is a phrase for clap's "invalid value" message.
pub fn parse_dims(text: &str) -> Result<Dims, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "`{text}` has {} dimensions; give X, X,Y or X,Y,Z",
            parts.len()
        ));
    }
    let mut dims = [1u32; 3];
    for (slot, part) in dims.iter_mut().zip(&parts) {
        let n: u32 = part.replace('_', "").parse().map_err(|_| {
            if part.is_empty() {
                format!("`{text}` has an empty dimension; give X, X,Y or X,Y,Z")
            } else {
                format!("`{part}` is not a whole number from 1 to {}", u32::MAX)
            }
        })?;
        if n == 0 {
            return Err(format!(
                "`{text}`: every dimension is at least 1 (a launch of zero threads does nothing)"
            ));
        }
        *slot = n;
    }
    Ok(dims)
}

/// The number of elements of a shape (as u64: no overflow).
pub fn volume(d: Dims) -> u64 {
    d.iter().map(|&x| u64::from(x)).product()
}

/// The grid, block and cluster shapes of a launch, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shapes {
    pub grid: Dims,
    pub block: Dims,
    pub cluster: Dims,
}

/// Fills in `--block` and `--cluster` from the kernel's attributes when left
/// out, and checks the three shapes ([`check`]).
pub fn resolve(
    sig: &KernelSignature,
    origin: Origin,
    grid: Dims,
    block: Option<Dims>,
    cluster: Option<Dims>,
) -> Result<Shapes, LaunchError> {
    let Some(block) = block.or(sig.reqntid) else {
        return Err(LaunchError::NoBlock {
            kernel: sig.name.clone(),
            maxntid: sig.maxntid,
        });
    };
    let shapes = Shapes {
        grid,
        block,
        cluster: cluster.or(sig.cluster).unwrap_or([1, 1, 1]),
    };
    check(sig, origin, shapes)?;
    Ok(shapes)
}

/// Checks launch shapes against the kernel's attributes and the hardware's
/// limits: the one check of a launch shape, for [`resolve`] and for an
/// executor handed a [`super::Launch`] built elsewhere (the simulator's
/// library callers).
pub fn check(sig: &KernelSignature, origin: Origin, shapes: Shapes) -> Result<(), LaunchError> {
    let Shapes {
        grid,
        block,
        cluster,
    } = shapes;
    // An attribute of 0 (ptxas takes `.reqnctapercluster 0, 1, 1`) is
    // named as such, not as the flag it stood in for.
    let attributes = [
        sig.cluster.map(|c| origin.cluster_attribute(c)),
        sig.reqntid.map(|b| origin.block_attribute(b)),
        sig.maxntid
            .map(|m| format!(".maxntid {}, {}, {}", m[0], m[1], m[2])),
    ];
    for (dims, attribute) in [sig.cluster, sig.reqntid, sig.maxntid]
        .iter()
        .zip(attributes)
    {
        if let (Some(d), Some(attribute)) = (dims, attribute) {
            if d.contains(&0) {
                return Err(LaunchError::EmptyAttribute { attribute });
            }
        }
    }
    for (flag, given) in [("grid", grid), ("block", block), ("cluster", cluster)] {
        if given.contains(&0) {
            return Err(LaunchError::Empty { flag, given });
        }
    }
    if let Some(req) = sig.reqntid.filter(|&r| r != block) {
        return Err(LaunchError::Contradicts {
            flag: "block",
            given: block,
            attribute: origin.block_attribute(req),
        });
    }
    if let Some(req) = sig.cluster.filter(|&c| c != cluster) {
        return Err(LaunchError::Contradicts {
            flag: "cluster",
            given: cluster,
            attribute: origin.cluster_attribute(req),
        });
    }
    check_block(block, sig.maxntid)?;
    check_grid(grid)?;
    check_cluster(grid, cluster)
}

fn check_block(block: Dims, maxntid: Option<Dims>) -> Result<(), LaunchError> {
    let limit = |why: String| LaunchError::Limit {
        flag: "block",
        given: block,
        why,
    };
    let threads = volume(block);
    if threads > limits::BLOCK_THREADS {
        return Err(limit(format!(
            "{threads} threads, and a block has at most {}",
            limits::BLOCK_THREADS
        )));
    }
    for ((axis, &n), &max) in ['x', 'y', 'z'].iter().zip(&block).zip(&limits::BLOCK) {
        if n > max {
            return Err(limit(format!("{axis} = {n}, and at most {max} in {axis}")));
        }
    }
    if let Some(max) = maxntid {
        if threads > volume(max) {
            return Err(LaunchError::Contradicts {
                flag: "block",
                given: block,
                attribute: format!(
                    ".maxntid {}, {}, {} (at most {} threads)",
                    max[0],
                    max[1],
                    max[2],
                    volume(max)
                ),
            });
        }
    }
    Ok(())
}

fn check_grid(grid: Dims) -> Result<(), LaunchError> {
    for ((axis, &n), &max) in ['x', 'y', 'z'].iter().zip(&grid).zip(&limits::GRID) {
        if n > max {
            return Err(LaunchError::Limit {
                flag: "grid",
                given: grid,
                why: format!("{axis} = {n}, and a grid has at most {max} blocks in {axis}"),
            });
        }
    }
    Ok(())
}

fn check_cluster(grid: Dims, cluster: Dims) -> Result<(), LaunchError> {
    let ctas = volume(cluster);
    if ctas > limits::CLUSTER_MAX {
        return Err(LaunchError::Limit {
            flag: "cluster",
            given: cluster,
            why: format!(
                "{ctas} CTAs, and a cluster has at most {} ({} portably)",
                limits::CLUSTER_MAX,
                limits::CLUSTER_PORTABLE
            ),
        });
    }
    for ((axis, &g), &c) in ['x', 'y', 'z'].iter().zip(&grid).zip(&cluster) {
        if g % c != 0 {
            return Err(LaunchError::GridNotClusters {
                grid,
                cluster,
                axis: *axis,
            });
        }
    }
    Ok(())
}

impl Origin {
    /// How the block attribute is spelled where the kernel came from.
    fn block_attribute(self, d: Dims) -> String {
        match self {
            Origin::Kdsl => format!("block({})", dims_args(d)),
            Origin::Ptx => format!(".reqntid {}, {}, {}", d[0], d[1], d[2]),
        }
    }

    fn cluster_attribute(self, d: Dims) -> String {
        match self {
            Origin::Kdsl => format!("cluster({})", dims_args(d)),
            Origin::Ptx => format!(".reqnctapercluster {}, {}, {}", d[0], d[1], d[2]),
        }
    }
}

/// `256` / `16, 16` / `4, 4, 2`, as in `block(16, 16)`.
fn dims_args(d: Dims) -> String {
    dims_flag(d).replace(',', ", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::KernelSignature;

    fn sig(reqntid: Option<Dims>, maxntid: Option<Dims>, cluster: Option<Dims>) -> KernelSignature {
        KernelSignature {
            name: "k".into(),
            params: vec![],
            reqntid,
            maxntid,
            cluster,
            dynamic_shared: Some(0),
        }
    }

    #[test]
    fn parses_one_two_or_three_dimensions() {
        assert_eq!(parse_dims("7"), Ok([7, 1, 1]));
        assert_eq!(parse_dims("16,8"), Ok([16, 8, 1]));
        assert_eq!(parse_dims("4, 3, 2"), Ok([4, 3, 2]));
        assert_eq!(parse_dims("1_024"), Ok([1024, 1, 1]));
        assert_eq!(
            parse_dims("1,2,3,4").unwrap_err(),
            "`1,2,3,4` has 4 dimensions; give X, X,Y or X,Y,Z"
        );
        assert_eq!(
            parse_dims("8,0").unwrap_err(),
            "`8,0`: every dimension is at least 1 (a launch of zero threads does nothing)"
        );
        assert_eq!(
            parse_dims("x").unwrap_err(),
            "`x` is not a whole number from 1 to 4294967295"
        );
        assert_eq!(
            parse_dims("-1").unwrap_err(),
            "`-1` is not a whole number from 1 to 4294967295"
        );
        assert_eq!(
            parse_dims("4,,2").unwrap_err(),
            "`4,,2` has an empty dimension; give X, X,Y or X,Y,Z"
        );
        assert!(parse_dims("99999999999").is_err());
    }

    #[test]
    fn block_and_cluster_default_to_the_attributes() {
        let s = resolve(
            &sig(Some([256, 1, 1]), None, Some([2, 1, 1])),
            Origin::Kdsl,
            [8, 1, 1],
            None,
            None,
        )
        .unwrap();
        assert_eq!(s.block, [256, 1, 1]);
        assert_eq!(s.cluster, [2, 1, 1]);
        let s = resolve(
            &sig(None, None, None),
            Origin::Kdsl,
            [8, 1, 1],
            Some([32, 4, 1]),
            None,
        )
        .unwrap();
        assert_eq!((s.block, s.cluster), ([32, 4, 1], [1, 1, 1]));
        // Restating the attribute is fine.
        assert!(resolve(
            &sig(Some([256, 1, 1]), None, None),
            Origin::Kdsl,
            [1, 1, 1],
            Some([256, 1, 1]),
            None
        )
        .is_ok());
    }

    #[test]
    fn a_contradiction_names_the_attribute() {
        let e = resolve(
            &sig(Some([256, 1, 1]), None, None),
            Origin::Kdsl,
            [1, 1, 1],
            Some([128, 1, 1]),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--block 128` contradicts the kernel's `block(256)`; leave `--block` out to use it"
        );
        let e = resolve(
            &sig(Some([16, 16, 1]), None, None),
            Origin::Ptx,
            [1, 1, 1],
            Some([256, 1, 1]),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--block 256` contradicts the kernel's `.reqntid 16, 16, 1`; leave `--block` out to use it"
        );
        let e = resolve(
            &sig(Some([128, 1, 1]), None, Some([2, 1, 1])),
            Origin::Kdsl,
            [4, 1, 1],
            None,
            Some([4, 1, 1]),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--cluster 4` contradicts the kernel's `cluster(2)`; leave `--cluster` out to use it"
        );
        let e = resolve(
            &sig(None, None, Some([2, 2, 1])),
            Origin::Ptx,
            [4, 4, 1],
            Some([32, 1, 1]),
            Some([4, 1, 1]),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("`.reqnctapercluster 2, 2, 1`"),
            "{e}"
        );
        let e = resolve(
            &sig(None, Some([256, 1, 1]), None),
            Origin::Ptx,
            [1, 1, 1],
            Some([512, 1, 1]),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--block 512` contradicts the kernel's `.maxntid 256, 1, 1 (at most 256 threads)`; leave `--block` out to use it"
        );
        assert!(resolve(
            &sig(None, Some([256, 1, 1]), None),
            Origin::Ptx,
            [1, 1, 1],
            Some([16, 16, 1]),
            None
        )
        .is_ok());
    }

    #[test]
    fn no_block_anywhere_is_an_error() {
        let e = resolve(&sig(None, None, None), Origin::Kdsl, [1, 1, 1], None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--block X[,Y[,Z]]` is required: kernel `k` declares no block shape"
        );
        let e = resolve(
            &sig(None, Some([256, 1, 1]), None),
            Origin::Ptx,
            [1, 1, 1],
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`--block X[,Y[,Z]]` is required: kernel `k` declares no block shape (its `.maxntid 256, 1, 1` is only an upper bound, as from `__launch_bounds__`)"
        );
    }

    #[test]
    fn a_launch_built_elsewhere_is_checked_the_same() {
        let s = sig(Some([64, 1, 1]), None, None);
        let shapes = |grid, block, cluster| Shapes {
            grid,
            block,
            cluster,
        };
        assert!(check(&s, Origin::Ptx, shapes([2, 1, 1], [64, 1, 1], [1, 1, 1])).is_ok());
        assert_eq!(
            check(&s, Origin::Ptx, shapes([0, 1, 1], [64, 1, 1], [1, 1, 1]))
                .unwrap_err()
                .to_string(),
            "`--grid 0` has a dimension of 0: every dimension is at least 1"
        );
        assert_eq!(
            check(&s, Origin::Ptx, shapes([1, 1, 1], [32, 1, 1], [1, 1, 1]))
                .unwrap_err()
                .to_string(),
            "`--block 32` contradicts the kernel's `.reqntid 64, 1, 1`; leave `--block` out to use it"
        );
        let free = sig(None, None, None);
        assert_eq!(
            check(
                &free,
                Origin::Ptx,
                shapes([1, 1, 1], [1, 1, 128], [1, 1, 1])
            )
            .unwrap_err()
            .to_string(),
            "`--block 1,1,128` is too large: z = 128, and at most 64 in z"
        );
        assert_eq!(
            check(&free, Origin::Ptx, shapes([5, 1, 1], [32, 1, 1], [2, 0, 1]))
                .unwrap_err()
                .to_string(),
            "`--cluster 2,0` has a dimension of 0: every dimension is at least 1"
        );
    }

    #[test]
    fn hardware_limits() {
        let s = sig(None, None, None);
        let err = |g: Dims, b: Dims, c: Option<Dims>| {
            resolve(&s, Origin::Kdsl, g, Some(b), c)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err([1, 1, 1], [64, 32, 1], None),
            "`--block 64,32` is too large: 2048 threads, and a block has at most 1024"
        );
        assert_eq!(
            err([1, 1, 1], [1, 1, 128], None),
            "`--block 1,1,128` is too large: z = 128, and at most 64 in z"
        );
        assert_eq!(
            err([1, 65536, 1], [32, 1, 1], None),
            "`--grid 1,65536` is too large: y = 65536, and a grid has at most 65535 blocks in y"
        );
        assert_eq!(
            err([2147483648, 1, 1], [32, 1, 1], None),
            "`--grid 2147483648` is too large: x = 2147483648, and a grid has at most 2147483647 blocks in x"
        );
        assert_eq!(
            err([32, 1, 1], [32, 1, 1], Some([32, 1, 1])),
            "`--cluster 32` is too large: 32 CTAs, and a cluster has at most 16 (8 portably)"
        );
        assert_eq!(
            err([6, 1, 1], [32, 1, 1], Some([4, 1, 1])),
            "the grid (6, 1, 1) is not a whole number of clusters (4, 1, 1): x = 6 is not a multiple of 4"
        );
        assert_eq!(
            err([4, 3, 1], [32, 1, 1], Some([2, 2, 1])),
            "the grid (4, 3, 1) is not a whole number of clusters (2, 2, 1): y = 3 is not a multiple of 2"
        );
        // The largest legal shapes pass.
        assert!(resolve(
            &s,
            Origin::Kdsl,
            [i32::MAX as u32, 65535, 65535],
            Some([1024, 1, 1]),
            None
        )
        .is_ok());
        assert!(resolve(
            &s,
            Origin::Kdsl,
            [16, 1, 1],
            Some([8, 8, 16]),
            Some([16, 1, 1])
        )
        .is_ok());
    }

    /// A kernel attribute with a zero dimension (ptxas takes
    /// `.reqnctapercluster 0, 1, 1`) is a usage error that names it,
    /// whether `--cluster` is given or not, never a remainder by zero.
    #[test]
    fn a_zero_attribute_is_named() {
        for (s, name) in [
            (
                sig(None, None, Some([0, 1, 1])),
                ".reqnctapercluster 0, 1, 1",
            ),
            (
                sig(None, None, Some([2, 0, 1])),
                ".reqnctapercluster 2, 0, 1",
            ),
            (sig(Some([0, 4, 1]), None, None), ".reqntid 0, 4, 1"),
            (sig(None, Some([32, 0, 1]), None), ".maxntid 32, 0, 1"),
        ] {
            for cluster in [None, Some([1, 1, 1]), Some([2, 1, 1])] {
                let e = resolve(&s, Origin::Ptx, [4, 1, 1], Some([32, 1, 1]), cluster)
                    .expect_err("refused");
                assert_eq!(
                    e.to_string(),
                    format!("the kernel's `{name}` has a dimension of 0: no launch fits it (every dimension is at least 1)")
                );
            }
        }
        let e = resolve(
            &sig(None, None, Some([0, 1, 1])),
            Origin::Kdsl,
            [4, 1, 1],
            Some([32, 1, 1]),
            None,
        )
        .expect_err("refused");
        assert!(e.to_string().contains("`cluster(0)`"), "{e}");
    }
}
