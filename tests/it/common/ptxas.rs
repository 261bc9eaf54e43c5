//! Finding and running NVIDIA's `ptxas` from tests.
//!
//! `ptxas` is looked up in this order; the first executable file wins:
//!
//! 1. `$KDSL_PTXAS`
//! 2. `$PTXAS`
//! 3. `${KDSL_CUDA_TOOLS:-$HOME/.cache/kdsl-cuda-13.5}/nvidia/cu13/bin/ptxas`,
//!    where `scripts/cuda-tools.sh` installs the pinned 13.5.37 release
//! 4. `ptxas` on `$PATH`
//!
//! Tests call [`require_ptxas`]: on a developer machine without ptxas the test
//! prints a loud `SKIPPED` line and returns early; under CI (`$CI` set) a
//! missing ptxas is a failure, so CI can never silently skip.
//!
//! ```ignore
//! let Some(ptxas) = common::ptxas::require_ptxas() else { return };
//! common::ptxas::assemble(&ptxas, &ptx_text, "sm_90").unwrap();
//! ```

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The CUDA tools release that scripts/cuda-tools.sh installs and CI uses.
pub const PINNED_RELEASE: &str = "13.5.37";

/// Default folder of scripts/cuda-tools.sh (when `$KDSL_CUDA_TOOLS` is unset).
const DEFAULT_CACHE: &str = ".cache/kdsl-cuda-13.5";

const INSTALL_HINT: &str = "run `scripts/cuda-tools.sh` (installs NVIDIA ptxas 13.5.37 from PyPI \
     into ~/.cache/kdsl-cuda-13.5) or `scripts/test.sh`, or set KDSL_PTXAS=/path/to/ptxas";

/// True when `path` is a regular file (after following links) that we may execute.
fn is_executable(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Writes to the process's real stderr. `eprintln!` inside a test is captured
/// by the test harness and shown only if the test fails; a skip must be seen.
fn loud(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{msg}");
}

fn env_nonempty(name: &str) -> Option<OsString> {
    env::var_os(name).filter(|v| !v.is_empty())
}

/// The folder holding `bin/` of the tools scripts/cuda-tools.sh installs.
pub fn cuda_tools_root() -> Option<PathBuf> {
    let base = match env_nonempty("KDSL_CUDA_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env_nonempty("HOME")?).join(DEFAULT_CACHE),
    };
    Some(base.join("nvidia").join("cu13"))
}

/// Every place ptxas is looked for, in order, with where each came from.
fn candidates(tool: &str, env_vars: &[&str]) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for var in env_vars {
        if let Some(p) = env_nonempty(var) {
            out.push((format!("${var}"), PathBuf::from(p)));
        }
    }
    if let Some(root) = cuda_tools_root() {
        out.push((
            "the cuda-tools.sh cache".to_string(),
            root.join("bin").join(tool),
        ));
    }
    if let Some(path) = env::var_os("PATH") {
        for dir in env::split_paths(&path) {
            if !dir.as_os_str().is_empty() {
                out.push(("$PATH".to_string(), dir.join(tool)));
            }
        }
    }
    out
}

fn find_tool(tool: &str, env_vars: &[&str]) -> Option<PathBuf> {
    for (origin, path) in candidates(tool, env_vars) {
        if is_executable(&path) {
            return Some(path);
        }
        if origin.starts_with('$') && origin != "$PATH" {
            // An explicit setting that points nowhere is worth a word.
            loud(&format!(
                "warning: {origin}={} is not an executable file; looking further",
                path.display()
            ));
        }
    }
    None
}

/// Finds ptxas: `$KDSL_PTXAS`, `$PTXAS`, the cuda-tools.sh cache, then `$PATH`.
pub fn ptxas_path() -> Option<PathBuf> {
    find_tool("ptxas", &["KDSL_PTXAS", "PTXAS"])
}

/// Finds nvdisasm: `$KDSL_NVDISASM`, next to the ptxas found, the cache, `$PATH`.
pub fn nvdisasm_path() -> Option<PathBuf> {
    beside_ptxas("nvdisasm", "KDSL_NVDISASM")
}

/// Finds the tool `name`: `$VAR`, next to the ptxas found, the cache,
/// `$PATH`.
fn beside_ptxas(name: &str, var: &str) -> Option<PathBuf> {
    if let Some(p) = env_nonempty(var).map(PathBuf::from) {
        if is_executable(&p) {
            return Some(p);
        }
    }
    if let Some(sibling) = ptxas_path().and_then(|p| p.parent().map(|d| d.join(name))) {
        if is_executable(&sibling) {
            return Some(sibling);
        }
    }
    find_tool(name, &[])
}

/// True when running under CI (`$CI` set to anything but "", "0" or "false").
pub fn in_ci() -> bool {
    match env::var("CI") {
        Ok(v) => !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false")),
        Err(env::VarError::NotPresent) => false,
        Err(env::VarError::NotUnicode(_)) => true,
    }
}

/// ptxas for a test that needs it.
///
/// * found: `Some(path)`;
/// * not found under CI: panics (CI must never skip the assembler checks);
/// * not found locally: prints `SKIPPED: ptxas not found ...` to stderr and
///   returns `None`; the caller returns early.
pub fn require_ptxas() -> Option<PathBuf> {
    required(
        "ptxas",
        ptxas_path(),
        &format!(
            "Looked in $KDSL_PTXAS, $PTXAS, the cuda-tools.sh cache and $PATH.\n\
             Fix: {INSTALL_HINT}."
        ),
        &format!("did not check its PTX with the assembler.\n  {INSTALL_HINT}."),
    )
}

/// The folder holding `cuda.h` of the pinned CUDA tools
/// (`scripts/cuda-tools.sh`: `$KDSL_CUDA_TOOLS_ROOT/include`, else its
/// cache): a failure under CI when it is missing, a loud skip elsewhere.
pub fn require_cuda_include() -> Option<PathBuf> {
    let found = env_nonempty("KDSL_CUDA_TOOLS_ROOT")
        .map(PathBuf::from)
        .or_else(cuda_tools_root)
        .map(|root| root.join("include"))
        .filter(|inc| inc.join("cuda.h").is_file());
    required(
        "cuda.h",
        found,
        &format!("Looked in $KDSL_CUDA_TOOLS_ROOT/include and the cuda-tools.sh cache.\nFix: {INSTALL_HINT}."),
        &format!("did not compile the generated headers.\n  {INSTALL_HINT}."),
    )
}

/// `found`, or for a `tool` not found: a failure under CI (saying
/// `ci_detail`), a loud skip elsewhere (the test `skipped` what).
fn required(tool: &str, found: Option<PathBuf>, ci_detail: &str, skipped: &str) -> Option<PathBuf> {
    if found.is_some() {
        return found;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_string();
    if in_ci() {
        panic!(
            "{tool} not found, and CI is set, so test `{test}` may not be skipped.\n{ci_detail}"
        );
    }
    loud(&format!(
        "\n==================================================================\n\
         SKIPPED: {tool} not found, run scripts/cuda-tools.sh\n  \
         test `{test}` {skipped}\n\
         ==================================================================\n"
    ));
    None
}

/// What a successful ptxas run produced.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// The cubin bytes.
    pub cubin: Vec<u8>,
    /// ptxas's stdout followed by its stderr (warnings, or `-v` statistics).
    pub log: String,
}

fn describe_failure(
    ptxas: &Path,
    args: &[String],
    status: std::process::ExitStatus,
    log: &str,
    ptx: &str,
) -> String {
    let mut msg = format!(
        "ptxas failed ({status}): {} {}\n{}",
        ptxas.display(),
        args.join(" "),
        log.trim_end()
    );
    // Show the PTX with line numbers, since ptxas errors name `file.ptx, line N`.
    msg.push_str("\n--- PTX given to ptxas ---\n");
    for (i, line) in ptx.lines().enumerate() {
        msg.push_str(&format!("{:>5} | {line}\n", i + 1));
    }
    msg
}

/// Runs `ptxas -arch=<arch> <extra...> kernel.ptx -o kernel.cubin` in a fresh
/// temporary folder. `Err` holds the command, ptxas's output and the numbered
/// PTX text, ready to print in a test failure.
pub fn assemble_with(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    extra: &[&str],
) -> Result<Assembled, String> {
    let dir = tempfile::Builder::new()
        .prefix("kdsl-ptxas-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
    let ptx_file = dir.path().join("kernel.ptx");
    let cubin_file = dir.path().join("kernel.cubin");
    fs::write(&ptx_file, ptx).map_err(|e| format!("cannot write {}: {e}", ptx_file.display()))?;

    let mut args = vec![format!("-arch={arch}")];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(ptx_file.display().to_string());
    args.push("-o".to_string());
    args.push(cubin_file.display().to_string());

    let out = Command::new(ptxas)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(describe_failure(ptxas, &args, out.status, &log, ptx));
    }
    let cubin = fs::read(&cubin_file).map_err(|e| {
        format!(
            "ptxas exited 0 but {} is unreadable: {e}\n{log}",
            cubin_file.display()
        )
    })?;
    Ok(Assembled { cubin, log })
}

/// Assembles `ptx` for `arch` (e.g. "sm_80", "sm_90a"). `Err` holds ptxas's
/// stderr/stdout (plus the command and the numbered PTX) on failure.
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<(), String> {
    assemble_with(ptxas, ptx, arch, &[]).map(|_| ())
}

/// `ptxas --version`'s last line, e.g. "Cuda compilation tools, release 13.5, V13.5.37".
pub fn version(ptxas: &Path) -> Option<String> {
    let out = Command::new(ptxas).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .rev()
        .find(|l| l.contains("release"))
        .map(|l| l.trim().to_string())
}

/// Finds nvcc: `$KDSL_NVCC`, next to the ptxas found, the cuda-tools.sh
/// cache, `$PATH`.
pub fn nvcc_path() -> Option<PathBuf> {
    beside_ptxas("nvcc", "KDSL_NVCC")
}

/// nvcc for a test that needs it: like [`require_ptxas`], a loud skip on a
/// developer machine without it and a failure under CI.
pub fn require_nvcc() -> Option<PathBuf> {
    required(
        "nvcc",
        nvcc_path(),
        &format!("Fix: {INSTALL_HINT} (it installs nvcc next to ptxas)."),
        "did not run the nvcc twins in the simulator.",
    )
}
