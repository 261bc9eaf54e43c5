//! The `kdslc` command line.

/// Runs `kdslc` with the process's arguments; returns the exit status.
pub fn main() -> i32 {
    0
}
