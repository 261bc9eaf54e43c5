//! The `kdslc` command line.

/// Runs `kdslc` with the process's arguments; returns the exit status.
pub fn main() -> i32 {
    // Minimal dispatch until the full CLI lands: `kdslc lsp` runs the
    // language server.
    if std::env::args().nth(1).as_deref() == Some("lsp") {
        return crate::lsp::run_stdio();
    }
    0
}
