//! GPU targets (`--target sm_90`) and PTX ISA versions.

use std::fmt;

/// A PTX ISA version, `.version MAJOR.MINOR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    pub major: u8,
    pub minor: u8,
}

impl PtxVersion {
    pub const fn new(major: u8, minor: u8) -> PtxVersion {
        PtxVersion { major, minor }
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A `--target`: the `.target` of the emitted PTX module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Target {
    Sm80,
    Sm86,
    Sm89,
    /// The default target.
    #[default]
    Sm90,
    Sm90a,
    Sm100,
    Sm100a,
    Sm120,
}

impl Target {
    pub const ALL: [Target; 8] = [
        Target::Sm80,
        Target::Sm86,
        Target::Sm89,
        Target::Sm90,
        Target::Sm90a,
        Target::Sm100,
        Target::Sm100a,
        Target::Sm120,
    ];

    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The name as written in `--target` and in `.target`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm_80",
            Target::Sm86 => "sm_86",
            Target::Sm89 => "sm_89",
            Target::Sm90 => "sm_90",
            Target::Sm90a => "sm_90a",
            Target::Sm100 => "sm_100",
            Target::Sm100a => "sm_100a",
            Target::Sm120 => "sm_120",
        }
    }

    /// The compute capability times ten (80, 90, 100, ...).
    pub fn sm(self) -> u32 {
        match self {
            Target::Sm80 => 80,
            Target::Sm86 => 86,
            Target::Sm89 => 89,
            Target::Sm90 | Target::Sm90a => 90,
            Target::Sm100 | Target::Sm100a => 100,
            Target::Sm120 => 120,
        }
    }

    /// The lowest `.version` ptxas accepts with this `.target` (checked
    /// against ptxas 13.5, `shared/design/ptx/cases/h01_header.ptx`).
    pub fn min_ptx_version(self) -> PtxVersion {
        match self {
            Target::Sm80 => PtxVersion::new(7, 0),
            Target::Sm86 => PtxVersion::new(7, 1),
            Target::Sm89 | Target::Sm90 => PtxVersion::new(7, 8),
            Target::Sm90a => PtxVersion::new(8, 0),
            Target::Sm100 | Target::Sm100a => PtxVersion::new(8, 6),
            Target::Sm120 => PtxVersion::new(8, 7),
        }
    }

    /// The most shared memory one CTA may use on this target, static and
    /// dynamic together, once the kernel opts in
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): the device
    /// attribute `MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`. From the CUDA C++
    /// Programming Guide, "Compute Capabilities", Table 27 ("Maximum amount
    /// of shared memory per thread block") and the shared-memory section of
    /// each compute capability: 163 KB on 8.0, 99 KB on 8.6 and 8.9, 227 KB
    /// on 9.0 and 10.0, 99 KB on 12.0 (1 KB of each SM's 164/100/228 KB is
    /// reserved by CUDA). docs/language.md §"Shared memory" cites them.
    pub fn max_shared_per_block(self) -> u64 {
        const KIB: u64 = 1024;
        match self {
            Target::Sm80 => 163 * KIB,
            Target::Sm86 | Target::Sm89 | Target::Sm120 => 99 * KIB,
            Target::Sm90 | Target::Sm90a | Target::Sm100 | Target::Sm100a => 227 * KIB,
        }
    }

    /// An architecture-specific target (`sm_90a`, `sm_100a`): its code runs
    /// on devices of exactly that compute capability.
    pub fn is_arch_specific(self) -> bool {
        matches!(self, Target::Sm90a | Target::Sm100a)
    }

    /// Hopper features: clusters, distributed shared memory, bulk copies,
    /// `mbarrier.try_wait`, scoped mbarrier operations.
    pub fn has_sm90_features(self) -> bool {
        self.sm() >= 90
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
