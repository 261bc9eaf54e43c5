//! `--emit cubin`: finding NVIDIA's `ptxas` and running it on our PTX.

use super::output::Staged;
use super::Fail;
use crate::input::{self, io_reason};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const INSTALL_HELP: &str =
    "help: `scripts/cuda-tools.sh` installs NVIDIA's ptxas from its PyPI wheels \
(no GPU or CUDA install needed) and prints its folder; then pass `--ptxas DIR/bin/ptxas` or set \
PTXAS=DIR/bin/ptxas. A CUDA toolkit's ptxas works too (set CUDA_HOME or put it on PATH).";

/// The ptxas to run: `--ptxas`, else `$PTXAS`, else the first `ptxas` on
/// `PATH`, else `$CUDA_HOME/bin/ptxas`, else the one `scripts/cuda-tools.sh`
/// installs (`${KDSL_CUDA_TOOLS:-~/.cache/kdsl-cuda-13.5}/nvidia/cu13/bin`,
/// where the tests find it too). One named explicitly (flag or `$PTXAS`)
/// must be an executable file: falling back past it would hide a typo.
pub fn find(flag: Option<&Path>) -> Result<PathBuf, Fail> {
    find_in(
        flag,
        &Env {
            ptxas: std::env::var_os("PTXAS"),
            path: std::env::var_os("PATH"),
            cuda_home: std::env::var_os("CUDA_HOME"),
            cuda_tools: std::env::var_os("KDSL_CUDA_TOOLS"),
            home: std::env::var_os("HOME"),
        },
    )
}

/// The environment variables [`find`] reads.
#[derive(Default)]
struct Env {
    ptxas: Option<OsString>,
    path: Option<OsString>,
    cuda_home: Option<OsString>,
    cuda_tools: Option<OsString>,
    home: Option<OsString>,
}

/// The folder `scripts/cuda-tools.sh` installs into when `$KDSL_CUDA_TOOLS`
/// is not set, under `$HOME`.
const CUDA_TOOLS_CACHE: &str = ".cache/kdsl-cuda-13.5";

fn find_in(flag: Option<&Path>, env: &Env) -> Result<PathBuf, Fail> {
    let set = |v: &Option<OsString>| v.clone().filter(|v| !v.is_empty());
    if let Some(p) = flag {
        return explicit(p, "--ptxas");
    }
    if let Some(p) = set(&env.ptxas) {
        return explicit(Path::new(&p), "$PTXAS");
    }
    let on_path = env
        .path
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join("ptxas"));
    let cuda_home = set(&env.cuda_home).map(|h| Path::new(&h).join("bin").join("ptxas"));
    let tools = set(&env.cuda_tools)
        .map(PathBuf::from)
        .or_else(|| set(&env.home).map(|h| Path::new(&h).join(CUDA_TOOLS_CACHE)))
        .map(|root| root.join("nvidia").join("cu13").join("bin").join("ptxas"));
    if let Some(p) = on_path
        .chain(cuda_home)
        .chain(tools)
        .find(|p| executable(p).is_ok())
    {
        return Ok(p);
    }
    Err(Fail::Usage(format!(
        "`--emit cubin` needs NVIDIA's ptxas, and none was found (looked at --ptxas, $PTXAS, PATH, $CUDA_HOME/bin and the scripts/cuda-tools.sh folder ${{KDSL_CUDA_TOOLS:-~/{CUDA_TOOLS_CACHE}}})\n{INSTALL_HELP}"
    )))
}

/// A ptxas the user named: it must be an executable file.
fn explicit(p: &Path, source: &str) -> Result<PathBuf, Fail> {
    match executable(p) {
        Ok(()) => Ok(p.to_path_buf()),
        Err(why) => Err(Fail::Usage(format!(
            "ptxas `{}` (from {source}) {why}\n{INSTALL_HELP}",
            p.display()
        ))),
    }
}

/// `Ok` for an executable file; otherwise what it is instead, as it
/// follows "ptxas `PATH` ".
fn executable(p: &Path) -> Result<(), &'static str> {
    let meta = std::fs::metadata(p).map_err(|_| "does not exist")?;
    if meta.is_dir() {
        return Err("is a directory, not the ptxas program");
    }
    if !meta.is_file() {
        return Err("is not a regular file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err("is not executable (no execute permission)");
        }
    }
    Ok(())
}

/// What running ptxas gave: its messages, and the cubin unless it
/// failed, not yet in place ([`Assembly::finish`] puts it there).
pub struct Assembly {
    /// Everything ptxas printed: its `-v` report, advisories, errors.
    pub log: String,
    /// ptxas's exit status, when it failed.
    pub failed: Option<std::process::ExitStatus>,
    /// The cubin staged beside its output, or a temporary file for stdout.
    staged: Option<Staged>,
    loose: Option<tempfile::NamedTempFile>,
    /// Where the PTX was written for ptxas (which names it so).
    ptx_path: PathBuf,
}

impl Assembly {
    /// Puts the cubin in place; for stdout (no output file), returns its
    /// bytes instead.
    pub fn finish(self) -> Result<Option<Vec<u8>>, Fail> {
        match (self.staged, self.loose) {
            (Some(staged), _) => staged.commit().map(|()| None),
            (None, Some(t)) => input::read_file(t.path(), crate::launch::memory::limit())
                .map(Some)
                .map_err(|e| Fail::Usage(format!("cannot read the cubin ptxas wrote: {e}"))),
            (None, None) => Err(Fail::Internal("no file for the cubin".to_string())),
        }
    }

    /// ptxas's rejection of the PTX as an internal error: kdslc promises
    /// PTX that ptxas accepts (exit 3), unless a diagnostic explains it.
    pub fn rejection(&self, ptxas: &Path) -> Fail {
        let status = self.failed.map_or_else(String::new, |s| format!(" ({s})"));
        Fail::Internal(format!(
            "ptxas `{}` rejected the PTX that kdslc generated{status}\n{}",
            ptxas.display(),
            self.log.trim_end()
        ))
    }
}

/// Runs `ptxas -v -arch=TARGET [-O n] PTX -o OUT` with the PTX in a
/// temporary file and the cubin written next to `out` (or, when `out` is
/// `None`, for `-o -`, to a temporary file), and returns what it printed:
/// the caller turns its advisories into diagnostics
/// ([`crate::ptx::advice`]) and then puts the cubin in place or not.
pub fn assemble(
    ptxas: &Path,
    ptx: &str,
    arch: Option<&str>,
    opt_level: Option<&str>,
    out: Option<&Path>,
) -> Result<Assembly, Fail> {
    let scratch = |suffix: &str| {
        tempfile::Builder::new()
            .prefix("kdslc-")
            .suffix(suffix)
            .tempfile()
            .map_err(|e| {
                Fail::Usage(format!(
                    "cannot create a temporary file for ptxas: {}",
                    io_reason(&e)
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
                io_reason(&e)
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
    if let Some(arch) = arch {
        cmd.arg(format!("-arch={arch}"));
    }
    if let Some(level) = opt_level {
        cmd.arg(format!("-O{level}"));
    }
    // `-v` for the advisories (`ptx::advice`) and the register counts.
    cmd.arg("-v");
    cmd.arg(input.path()).arg("-o").arg(cubin_path);
    let result = cmd.output().map_err(|e| {
        Fail::Usage(format!(
            "cannot run ptxas `{}`: {}",
            ptxas.display(),
            io_reason(&e)
        ))
    })?;
    let mut log = String::from_utf8_lossy(&result.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&result.stdout));
    Ok(Assembly {
        log,
        failed: (!result.status.success()).then_some(result.status),
        staged,
        loose,
        ptx_path: input.path().to_path_buf(),
    })
}

/// `kdslc sim --ptxas`: assembles the PTX to be run and refuses it, exit
/// 2, with ptxas's messages when ptxas does: a module a GPU would not load
/// does not run. It is assembled for the module's `.target` when that is
/// architecture-specific (`sm_90a`, `sm_100f`), else for `target` (the
/// GPU simulated, `--target`), as a driver compiles portable PTX for its
/// own GPU. `name` is the input's name, put where ptxas names its
/// temporary copy.
pub fn vet(ptxas: &Path, ptx: &str, target: &str, name: &str) -> Result<(), Fail> {
    let arch = module_target(ptx)
        .filter(|a| a.ends_with('a') || a.ends_with('f'))
        .unwrap_or(target);
    let assembly = assemble(ptxas, ptx, Some(arch), None, None)?;
    let Some(status) = assembly.failed else {
        return Ok(());
    };
    // ptxas names the PTX by its temporary path: name the input instead.
    let log = assembly
        .log
        .replace(&assembly.ptx_path.display().to_string(), name);
    let log: String = log
        .lines()
        .filter(|l| !l.contains("Ptx assembly aborted due to errors"))
        .collect::<Vec<_>>()
        .join("\n");
    Err(Fail::Usage(format!(
        "`--ptxas`: ptxas `{}` rejects `{name}` ({status}), so a GPU would not load it:\n{}",
        ptxas.display(),
        log.trim_end()
    )))
}

/// The architecture of a module's `.target` directive (`sm_90a` of
/// `.target sm_90a, debug`).
fn module_target(ptx: &str) -> Option<&str> {
    ptx.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(".target")?;
        let arch = rest.trim().split([',', ' ', '\t', '/']).next()?;
        (!arch.is_empty()).then_some(arch)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn fake(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn search_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fake(&a.join("bin/ptxas"), 0o755);
        fake(&b.join("bin/ptxas"), 0o755);
        let tools = dir.path().join("tools");
        fake(&tools.join("nvidia/cu13/bin/ptxas"), 0o755);
        let home = dir.path().join("home");
        fake(
            &home.join(CUDA_TOOLS_CACHE).join("nvidia/cu13/bin/ptxas"),
            0o755,
        );
        let os = |p: &Path| Some(p.as_os_str().to_os_string());
        let flag = b.join("bin/ptxas");
        let all = Env {
            ptxas: None,
            path: os(&a.join("bin")),
            cuda_home: os(&b),
            cuda_tools: os(&tools),
            home: os(&home),
        };
        assert_eq!(find_in(Some(&flag), &all).unwrap(), flag);
        assert_eq!(find_in(None, &all).unwrap(), a.join("bin/ptxas"));
        let env = Env { path: None, ..all };
        assert_eq!(find_in(None, &env).unwrap(), b.join("bin/ptxas"));
        let env = Env {
            cuda_home: None,
            ..env
        };
        assert_eq!(
            find_in(None, &env).unwrap(),
            tools.join("nvidia/cu13/bin/ptxas")
        );
        // Without $KDSL_CUDA_TOOLS, the install script's default under $HOME.
        let env = Env {
            cuda_tools: None,
            ..env
        };
        assert_eq!(
            find_in(None, &env).unwrap(),
            home.join(CUDA_TOOLS_CACHE).join("nvidia/cu13/bin/ptxas")
        );
        let env = Env {
            ptxas: os(&flag),
            ..env
        };
        assert_eq!(find_in(None, &env).unwrap(), flag);
        assert!(matches!(
            find_in(None, &Env::default()),
            Err(Fail::Usage(m)) if m.contains("cuda-tools.sh")
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_named_ptxas_must_be_an_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let why = |p: &Path| match find_in(Some(p), &Env::default()) {
            Err(Fail::Usage(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(why(&dir.path().join("nope")).contains("does not exist"));
        assert!(why(dir.path()).contains("is a directory"));
        let text = dir.path().join("notes.txt");
        fake(&text, 0o644);
        assert!(why(&text).contains("is not executable"));
        // Not executable on PATH: skipped, not chosen.
        let env = Env {
            path: Some(dir.path().as_os_str().to_os_string()),
            ..Env::default()
        };
        fake(&dir.path().join("ptxas"), 0o644);
        assert!(find_in(None, &env).is_err());
    }
}
