// Compiles the saxpy sample to PTX, its launch manifest and the manifest as
// Rust constants (OUT_DIR/saxpy.rs), with its diagnostics as Cargo warnings
// and errors and a rerun whenever the file (or anything it imports) changes.
// A failure has been said (cargo::error lines, the diagnostics on stderr):
// the build script only exits with an error.
fn main() {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/saxpy.kdsl");
    let built = kdsl::host::Build::new(sample)
        .target(kdsl::target::Target::Sm90)
        .compile();
    if built.is_err() {
        std::process::exit(1);
    }
}
