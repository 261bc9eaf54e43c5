//! The language server in a real editor: headless Neovim with its built-in
//! LSP client attached to `kdslc lsp` through `editors/vim/lua/kdsl.lua`,
//! the snippet users install. The Lua side (tests/nvim/e2e.lua) opens a file
//! with an E0301 error, waits for the diagnostic, checks its line and
//! column, hovers the barrier, applies the quick fix through the client's
//! own workspace-edit code, sees the error go away, and runs `:make` with
//! the Vim compiler file to check the quickfix errorformat.
//!
//! Needs `nvim` (0.7 or newer) on PATH, or its path in `$NVIM_BIN`. Without
//! one the test fails on CI (`$CI` set) and is skipped, loudly, elsewhere.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

/// E0301 on line 9, with multi-byte text before the call so that the
/// client's UTF-16 → byte conversion is exercised.
const PROGRAM: &str = r#"// The flagship error, in a real editor.
kernel k(out: global mut [f32]) block(128) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    let x = thread_idx.x;
    if cluster_rank == 1 {
        ready.arrive_remote(0);
    } else {
        // é😀
        /* é😀 */ ready.wait(0);
        out[x] = 1.0;
    }
}
"#;
const ERROR_LINE: usize = 9;

fn find_nvim() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVIM_BIN") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("nvim"))
        .find(|p| p.is_file())
}

#[test]
fn neovim_shows_e0301_and_applies_the_quick_fix() {
    let Some(nvim) = find_nvim() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "nvim is not installed, and CI must run the editor test (apt-get install neovim)"
        );
        eprintln!("\n\n*** SKIPPED tests/it/lsp/nvim.rs: nvim not found (install Debian's `neovim` to run it) ***\n\n");
        return;
    };
    assert!(
        PROGRAM
            .lines()
            .nth(ERROR_LINE - 1)
            .is_some_and(|l| l.contains("ready.wait(0)")),
        "ERROR_LINE is the line of the wait"
    );
    let root = crate::common::repo_root();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("flagship.kdsl");
    std::fs::write(&file, PROGRAM).expect("write the program");
    let result = dir.path().join("result.txt");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home dir");

    let script = root.join("tests/nvim/e2e.lua");
    let mut child = Command::new(&nvim)
        .args(["--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n"])
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("KDSLC", env!("CARGO_BIN_EXE_kdslc"))
        .env("KDSL_FILE", &file)
        .env("KDSL_LINE", ERROR_LINE.to_string())
        .env("KDSL_EDITORS", root.join("editors/vim"))
        .env("KDSL_RESULT", &result)
        // Keep Neovim's logs and state out of the user's home.
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");

    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for nvim") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let report =
        std::fs::read_to_string(&result).unwrap_or_else(|_| "(no result file)".to_string());
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    eprintln!("{report}");
    let Some(status) = status else {
        panic!("nvim did not finish within {TIMEOUT:?}\n{report}\n{stderr}");
    };
    assert!(
        status.success() && report.starts_with("ok\n"),
        "the editor test failed ({status}):\n{report}\n{stderr}"
    );
    // The quick fix changed the buffer, not the file: nothing was saved.
    assert_eq!(
        std::fs::read_to_string(&file).expect("read the program"),
        PROGRAM
    );
}
