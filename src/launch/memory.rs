//! How large an argument may be. Arrays are built in memory before a launch
//! (and the simulator works on copies), so one larger than the memory the
//! machine has available is refused with a clear error, before it is
//! allocated or read, instead of the process being killed when the pages
//! are touched (Linux overcommits, so the allocation itself succeeds).

use crate::input::Limit;
use std::path::Path;

/// The bytes of memory available to new allocations (`MemAvailable` of
/// `/proc/meminfo`); `None` where that is not known.
pub fn available() -> Option<u64> {
    let bytes = crate::input::read_file(Path::new("/proc/meminfo"), Limit::Source).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line
        .trim_start_matches("MemAvailable:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The most bytes a file of data may have: what is available.
pub fn limit() -> Limit {
    Limit::Memory(available())
}

/// `Err` when `bytes` are more than the memory available.
pub fn check(bytes: u64) -> Result<(), String> {
    match available() {
        Some(free) if bytes > free => Err(format!(
            "{bytes} bytes are more than the {free} bytes of memory this machine has available"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_there_is_is_refused() {
        assert!(check(0).is_ok());
        if available().is_some() {
            assert!(check(u64::MAX).is_err());
        }
    }
}
