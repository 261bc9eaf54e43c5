//! What the fuzz targets do, as plain functions: `fuzz_targets/*.rs` only
//! hand libFuzzer's input to them.
//!
//! Both targets check more than "no panic" (libfuzzer-sys turns every
//! panic, even one the language server catches, into an abort, and a
//! stack overflow aborts anyway): the invariants every compilation keeps
//! (a label inside its file, on character boundaries; a known code; PTX
//! exactly when there is no error) and the protocol's (every request gets
//! an answer, never an internal error; the server exits cleanly).

pub mod lsp;
pub mod pipeline;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A folder the inputs are written into, with files they may import:
/// `lib.kdsl` (a constant, a function and a kernel), `bad.kdsl` (not
/// UTF-8), `cycle.kdsl` (imports `main.kdsl` back) and `deep/inner.kdsl`
/// (imports `../lib.kdsl`). Made once per process.
pub fn workdir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kdsl-fuzz-{}", std::process::id()));
        let files: [(&str, &[u8]); 4] = [
            (
                "lib.kdsl",
                b"const TILE: u32 = 32;\nfn square(x: f32) -> f32 { x * x }\n\
                  kernel lib_kernel(o: global mut [f32]) block(32) { o[0] = square(1.0); }\n",
            ),
            ("bad.kdsl", b"const A: u32 = 1;\n// caf\xe9\nfn f() {}\n"),
            ("cycle.kdsl", b"import \"main.kdsl\";\nconst C: u32 = 2;\n"),
            (
                "deep/inner.kdsl",
                b"import \"../lib.kdsl\";\nfn inner(x: u32) -> u32 { x + TILE }\n",
            ),
        ];
        for (name, text) in files {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(path, text);
        }
        dir
    })
}
