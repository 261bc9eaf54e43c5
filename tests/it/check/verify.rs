//! The IR verifier (`kdsl::ir::verify`) on the IR the checker builds from
//! every program in the repository: samples, valid programs, UI tests (whose
//! errors leave partial IR), fixtures and the simulator's broken kernels.
//! The hand-built modules of `ptx::build` are verified where they are
//! written (`ptx::writer::assemble`).

use crate::common::repo_root;
use kdsl::ir::verify::{self, Mode};
use kdsl::Options;
use std::path::{Path, PathBuf};

fn kdsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            kdsl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "kdsl") {
            out.push(p);
        }
    }
}

#[test]
fn every_program_in_the_repository_verifies() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["samples", "tests"] {
        kdsl_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "only {} programs found", files.len());
    let opts = Options {
        check_only: true,
        ..Options::default()
    };
    let (mut complete, mut partial) = (0, 0);
    for f in &files {
        let c = kdsl::compile(f, &opts).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(c.internal_error, None, "{}", f.display());
        let Some(m) = &c.module else { continue };
        let mode = if c.error_count() == 0 {
            complete += 1;
            Mode::Complete
        } else {
            partial += 1;
            Mode::Partial
        };
        if let Err(errors) = verify::module(m, mode) {
            panic!("{} ({mode:?}):\n{errors:#?}", f.display());
        }
    }
    assert!(
        complete > 20 && partial > 50,
        "{complete} complete, {partial} partial"
    );
}
