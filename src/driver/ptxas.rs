//! `--emit cubin`: finding NVIDIA's `ptxas` and running it on our PTX.

use super::output::{reason, Staged};
use super::Fail;
use crate::target::Target;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL_HELP: &str =
    "help: `scripts/cuda-tools.sh` installs NVIDIA's ptxas from its PyPI wheels \
(no GPU or CUDA install needed) and prints its folder; then pass `--ptxas DIR/bin/ptxas` or set \
PTXAS=DIR/bin/ptxas. A CUDA toolkit's ptxas works too (set CUDA_HOME or put it on PATH).";

/// The ptxas to run: `--ptxas`, else `$PTXAS`, else the first `ptxas` on
/// `PATH`, else `$CUDA_HOME/bin/ptxas`. One named explicitly (flag or
/// `$PTXAS`) must exist: falling back past it would hide a typo.
pub fn find(flag: Option<&Path>) -> Result<PathBuf, Fail> {
    find_in(
        flag,
        std::env::var_os("PTXAS"),
        std::env::var_os("PATH"),
        std::env::var_os("CUDA_HOME"),
    )
}

fn find_in(
    flag: Option<&Path>,
    env_ptxas: Option<OsString>,
    path: Option<OsString>,
    cuda_home: Option<OsString>,
) -> Result<PathBuf, Fail> {
    if let Some(p) = flag {
        return existing(p, "--ptxas");
    }
    if let Some(p) = env_ptxas.filter(|p| !p.is_empty()) {
        return existing(Path::new(&p), "$PTXAS");
    }
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("ptxas"))
        .find(|p| p.is_file());
    if let Some(p) = on_path {
        return Ok(p);
    }
    if let Some(home) = cuda_home.filter(|h| !h.is_empty()) {
        let p = Path::new(&home).join("bin").join("ptxas");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(Fail::Usage(format!(
        "`--emit cubin` needs NVIDIA's ptxas, and none was found (looked at --ptxas, $PTXAS, PATH and $CUDA_HOME/bin)\n{INSTALL_HELP}"
    )))
}

fn existing(p: &Path, source: &str) -> Result<PathBuf, Fail> {
    if p.is_file() {
        Ok(p.to_path_buf())
    } else {
        Err(Fail::Usage(format!(
            "ptxas `{}` (from {source}) does not exist\n{INSTALL_HELP}",
            p.display()
        )))
    }
}

/// Runs `ptxas -arch=TARGET [-O n] PTX -o OUT` with the PTX in a temporary
/// file and the cubin written next to `out`, then moved onto it; returns
/// nothing on success. When `out` is `None` the cubin's bytes are returned
/// instead (for `-o -`).
pub fn assemble(
    ptxas: &Path,
    ptx: &str,
    target: Target,
    opt_level: Option<&str>,
    out: Option<&Path>,
) -> Result<Option<Vec<u8>>, Fail> {
    let scratch = |suffix: &str| {
        tempfile::Builder::new()
            .prefix("kdslc-")
            .suffix(suffix)
            .tempfile()
            .map_err(|e| {
                Fail::Usage(format!(
                    "cannot create a temporary file for ptxas: {}",
                    reason(&e)
                ))
            })
    };
    let mut input = scratch(".ptx")?;
    input
        .write_all(ptx.as_bytes())
        .and_then(|()| input.flush())
        .map_err(|e| {
            Fail::Usage(format!(
                "cannot write a temporary file for ptxas: {}",
                reason(&e)
            ))
        })?;

    // The cubin is staged beside its output; for stdout it goes to the
    // system's temporary folder and is read back.
    let staged = out.map(Staged::new).transpose()?;
    let loose = match staged {
        Some(_) => None,
        None => Some(scratch(".cubin")?),
    };
    let cubin_path = match (&staged, &loose) {
        (Some(s), _) => s.path(),
        (None, Some(t)) => t.path(),
        (None, None) => return Err(Fail::Internal("no file for the cubin".to_string())),
    };

    let mut cmd = Command::new(ptxas);
    cmd.arg(format!("-arch={}", target.name()));
    if let Some(level) = opt_level {
        cmd.arg(format!("-O{level}"));
    }
    cmd.arg(input.path()).arg("-o").arg(cubin_path);
    let result = cmd.output().map_err(|e| {
        Fail::Usage(format!(
            "cannot run ptxas `{}`: {}",
            ptxas.display(),
            reason(&e)
        ))
    })?;
    if !result.status.success() {
        let mut said = String::from_utf8_lossy(&result.stderr).into_owned();
        said.push_str(&String::from_utf8_lossy(&result.stdout));
        return Err(Fail::Message(format!(
            "ptxas rejected the PTX that kdslc generated ({}); this is a bug in kdslc, please report it with the input file\n{}",
            result.status,
            said.trim_end()
        )));
    }
    match staged {
        Some(staged) => staged.commit().map(|()| None),
        None => std::fs::read(cubin_path)
            .map(Some)
            .map_err(|e| Fail::Usage(format!("cannot read the cubin ptxas wrote: {}", reason(&e)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        for d in [&a, &b] {
            std::fs::create_dir_all(d.join("bin")).unwrap();
            std::fs::write(d.join("bin/ptxas"), "").unwrap();
        }
        let path = Some(a.join("bin").into_os_string());
        let home = Some(b.clone().into_os_string());
        let flag = b.join("bin/ptxas");
        assert_eq!(
            find_in(Some(&flag), None, path.clone(), None).unwrap(),
            flag
        );
        assert_eq!(
            find_in(None, None, path.clone(), home.clone()).unwrap(),
            a.join("bin/ptxas")
        );
        assert_eq!(
            find_in(None, None, None, home.clone()).unwrap(),
            b.join("bin/ptxas")
        );
        assert_eq!(
            find_in(
                None,
                Some(flag.clone().into_os_string()),
                path.clone(),
                None
            )
            .unwrap(),
            flag
        );
        // An explicit ptxas that is missing is an error, not a fallback.
        let missing = dir.path().join("nope");
        assert!(matches!(
            find_in(Some(&missing), None, path, home),
            Err(Fail::Usage(m)) if m.contains("does not exist")
        ));
        assert!(
            matches!(find_in(None, None, None, None), Err(Fail::Usage(m)) if m.contains("cuda-tools.sh"))
        );
    }
}
