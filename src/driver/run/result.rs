//! A CUDA driver result as the number the driver returned, and the names
//! of the numbers `cuda.h` defines.
//!
//! The driver's `CUresult` is a C enum: a newer driver returns codes an
//! older header does not list (cudarc's bundled enum has neither 35 nor 36
//! nor anything added since), so kdslc never reads a result as a Rust enum
//! (a value outside it is undefined behaviour: cudarc's `Debug` formatting
//! died with SIGILL or SIGSEGV). Every call's result is a [`CuResult`], a
//! plain number; its name comes from [`NAMES`] when it has one.

use std::fmt;

/// What a driver call returned: the C enum's value, whatever it is (the
/// same representation as the enum, so the driver's functions can be
/// declared to return it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct CuResult(pub u32);

impl CuResult {
    pub(crate) const SUCCESS: CuResult = CuResult(0);
    pub(crate) const INVALID_VALUE: CuResult = CuResult(1);
    pub(crate) const NO_DEVICE: CuResult = CuResult(100);
    pub(crate) const INVALID_PTX: CuResult = CuResult(218);
    pub(crate) const INVALID_HANDLE: CuResult = CuResult(400);
    pub(crate) const NOT_FOUND: CuResult = CuResult(500);
    pub(crate) const NOT_READY: CuResult = CuResult(600);

    /// `CUDA_ERROR_ILLEGAL_ADDRESS`, for a code `cuda.h` names.
    pub(crate) fn name(self) -> Option<&'static str> {
        NAMES
            .binary_search_by_key(&self.0, |&(code, _)| code)
            .ok()
            .and_then(|i| NAMES.get(i))
            .map(|&(_, name)| name)
    }
}

/// `CUDA_ERROR_INVALID_PTX (error 218)`, or `error 35 (a code this kdslc
/// does not know)`.
impl fmt::Display for CuResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} (error {})", self.0),
            None => write!(f, "error {} (a code this kdslc does not know)", self.0),
        }
    }
}

/// Every `CUresult` of `cuda.h` from CUDA 13.5, by number.
const NAMES: &[(u32, &str)] = &[
    (0, "CUDA_SUCCESS"),
    (1, "CUDA_ERROR_INVALID_VALUE"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY"),
    (3, "CUDA_ERROR_NOT_INITIALIZED"),
    (4, "CUDA_ERROR_DEINITIALIZED"),
    (5, "CUDA_ERROR_PROFILER_DISABLED"),
    (6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"),
    (7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"),
    (8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"),
    (34, "CUDA_ERROR_STUB_LIBRARY"),
    (36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"),
    (46, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
    (47, "CUDA_ERROR_MULTICAST_RESOURCE_FULL"),
    (100, "CUDA_ERROR_NO_DEVICE"),
    (101, "CUDA_ERROR_INVALID_DEVICE"),
    (102, "CUDA_ERROR_DEVICE_NOT_LICENSED"),
    (200, "CUDA_ERROR_INVALID_IMAGE"),
    (201, "CUDA_ERROR_INVALID_CONTEXT"),
    (202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"),
    (205, "CUDA_ERROR_MAP_FAILED"),
    (206, "CUDA_ERROR_UNMAP_FAILED"),
    (207, "CUDA_ERROR_ARRAY_IS_MAPPED"),
    (208, "CUDA_ERROR_ALREADY_MAPPED"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    (210, "CUDA_ERROR_ALREADY_ACQUIRED"),
    (211, "CUDA_ERROR_NOT_MAPPED"),
    (212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"),
    (213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"),
    (214, "CUDA_ERROR_ECC_UNCORRECTABLE"),
    (215, "CUDA_ERROR_UNSUPPORTED_LIMIT"),
    (216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"),
    (217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"),
    (218, "CUDA_ERROR_INVALID_PTX"),
    (219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"),
    (220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"),
    (221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"),
    (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
    (223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"),
    (224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"),
    (225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"),
    (226, "CUDA_ERROR_CONTAINED"),
    (227, "CUDA_ERROR_INSUFFICIENT_LOADER_VERSION"),
    (300, "CUDA_ERROR_INVALID_SOURCE"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND"),
    (302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"),
    (303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"),
    (304, "CUDA_ERROR_OPERATING_SYSTEM"),
    (400, "CUDA_ERROR_INVALID_HANDLE"),
    (401, "CUDA_ERROR_ILLEGAL_STATE"),
    (402, "CUDA_ERROR_LOSSY_QUERY"),
    (500, "CUDA_ERROR_NOT_FOUND"),
    (600, "CUDA_ERROR_NOT_READY"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
    (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT"),
    (703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"),
    (704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"),
    (705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"),
    (708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"),
    (709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"),
    (710, "CUDA_ERROR_ASSERT"),
    (711, "CUDA_ERROR_TOO_MANY_PEERS"),
    (712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
    (713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"),
    (714, "CUDA_ERROR_HARDWARE_STACK_ERROR"),
    (715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
    (716, "CUDA_ERROR_MISALIGNED_ADDRESS"),
    (717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"),
    (718, "CUDA_ERROR_INVALID_PC"),
    (719, "CUDA_ERROR_LAUNCH_FAILED"),
    (720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
    (721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"),
    (800, "CUDA_ERROR_NOT_PERMITTED"),
    (801, "CUDA_ERROR_NOT_SUPPORTED"),
    (802, "CUDA_ERROR_SYSTEM_NOT_READY"),
    (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
    (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
    (805, "CUDA_ERROR_MPS_CONNECTION_FAILED"),
    (806, "CUDA_ERROR_MPS_RPC_FAILURE"),
    (807, "CUDA_ERROR_MPS_SERVER_NOT_READY"),
    (808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"),
    (809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"),
    (810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"),
    (811, "CUDA_ERROR_CDP_NOT_SUPPORTED"),
    (812, "CUDA_ERROR_CDP_VERSION_MISMATCH"),
    (900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"),
    (901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
    (902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"),
    (903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"),
    (904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"),
    (905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"),
    (906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"),
    (907, "CUDA_ERROR_CAPTURED_EVENT"),
    (908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"),
    (909, "CUDA_ERROR_TIMEOUT"),
    (910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"),
    (911, "CUDA_ERROR_EXTERNAL_DEVICE"),
    (912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"),
    (913, "CUDA_ERROR_FUNCTION_NOT_LOADED"),
    (914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"),
    (915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"),
    (916, "CUDA_ERROR_KEY_ROTATION"),
    (917, "CUDA_ERROR_STREAM_DETACHED"),
    (918, "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE"),
    (919, "CUDA_ERROR_FABRIC_NOT_READY"),
    (999, "CUDA_ERROR_UNKNOWN"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sorted_and_unique() {
        assert!(NAMES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(NAMES.len(), 106);
    }

    #[test]
    fn known_and_unknown_codes() {
        assert_eq!(CuResult(0).name(), Some("CUDA_SUCCESS"));
        assert_eq!(
            CuResult(36).to_string(),
            "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER (error 36)"
        );
        assert_eq!(CuResult::INVALID_PTX.name(), Some("CUDA_ERROR_INVALID_PTX"));
        assert_eq!(CuResult::NOT_READY.name(), Some("CUDA_ERROR_NOT_READY"));
        assert_eq!(CuResult::NO_DEVICE.name(), Some("CUDA_ERROR_NO_DEVICE"));
        assert_eq!(
            CuResult::INVALID_HANDLE.name(),
            Some("CUDA_ERROR_INVALID_HANDLE")
        );
        assert_eq!(CuResult::NOT_FOUND.name(), Some("CUDA_ERROR_NOT_FOUND"));
        assert_eq!(
            CuResult::INVALID_VALUE.name(),
            Some("CUDA_ERROR_INVALID_VALUE")
        );
        assert_eq!(
            CuResult(35).to_string(),
            "error 35 (a code this kdslc does not know)"
        );
        assert_eq!(CuResult(u32::MAX).name(), None);
    }
}
