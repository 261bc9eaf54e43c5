//! How large an argument may be. Arrays are built in memory before a launch
//! (and the simulator works on copies), so one larger than the memory the
//! machine has available is refused with a clear error, before it is
//! allocated or read, instead of the process being killed when the pages
//! are touched (Linux overcommits, so the allocation itself succeeds).

/// The bytes of memory available to new allocations (`MemAvailable` of
/// `/proc/meminfo`); `None` where that is not known.
pub fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
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
