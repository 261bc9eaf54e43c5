//! Writing results: atomically to a file (a temporary file in the same
//! folder, then a rename, so a reader never sees half a file and a failed
//! build leaves the old output as it was), or to stdout; and Make depfiles.

use super::Fail;
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Where a result goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    Stdout,
    File(PathBuf),
}

impl Dest {
    /// `-` is stdout, anything else a path.
    pub fn from_arg(p: &Path) -> Dest {
        if p.as_os_str() == "-" {
            Dest::Stdout
        } else {
            Dest::File(p.to_path_buf())
        }
    }
}

/// Writes `bytes` to `dest`; for a file, atomically.
pub fn write(dest: &Dest, bytes: &[u8]) -> Result<(), Fail> {
    match dest {
        Dest::Stdout => write_stdout(bytes),
        Dest::File(path) => write_atomic(path, bytes),
    }
}

pub fn write_stdout(bytes: &[u8]) -> Result<(), Fail> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Fail::Usage(format!("cannot write to stdout: {}", reason(&e))))
}

/// A temporary file next to `path` (same folder, so the final rename stays
/// on one file system), named `.NAME.XXXXXX.tmp`; it is removed if dropped
/// before [`commit`].
pub fn temp_beside(path: &Path) -> Result<NamedTempFile, Fail> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // tempfile creates 0600 files; an output should get the usual 0666
    // less the umask, like any file the user's tools create.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir).map_err(|e| cannot_write(path, &e))
}

/// Moves a finished temporary file onto `path`.
pub fn commit(tmp: NamedTempFile, path: &Path) -> Result<(), Fail> {
    tmp.persist(path)
        .map(drop)
        .map_err(|e| cannot_write(path, &e.error))
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Fail> {
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.flush())
        .map_err(|e| cannot_write(path, &e))?;
    commit(tmp, path)
}

fn cannot_write(path: &Path, e: &std::io::Error) -> Fail {
    Fail::Usage(format!("cannot write `{}`: {}", path.display(), reason(e)))
}

/// An I/O error in the words of the rest of the compiler's messages.
pub fn reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => "no such file or directory".to_string(),
        PermissionDenied => "permission denied".to_string(),
        // `std` spells the rest well enough, minus the "(os error N)".
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s.get(..i).unwrap_or(&s).to_string(),
                None => s,
            }
        }
    }
}

/// The text of a Make depfile: the output depends on the input and each
/// import, and each import is also a target with no recipe (gcc's `-MP`),
/// so deleting an import makes `make` rebuild instead of failing.
pub fn depfile(target: &Path, input: &Path, imports: &[PathBuf]) -> String {
    let mut text = format!("{}: {}", escape(target), escape(input));
    for i in imports {
        text.push(' ');
        text.push_str(&escape(i));
    }
    text.push('\n');
    for i in imports {
        text.push('\n');
        text.push_str(&escape(i));
        text.push_str(":\n");
    }
    text
}

/// Make's quoting for a file name in a rule, as gcc writes it: `$` doubles,
/// a space or `#` gets a backslash. (Ninja reads the same escapes.)
fn escape(p: &Path) -> String {
    let s = p.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '$' => out.push_str("$$"),
            ' ' | '#' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests {
    use super::*;

    #[test]
    fn depfile_escapes_and_adds_phony_targets() {
        let d = depfile(
            Path::new("out dir/k.ptx"),
            Path::new("k.kdsl"),
            &[PathBuf::from("lib/a b.kdsl"), PathBuf::from("lib/$x#.kdsl")],
        );
        assert_eq!(
            d,
            "out\\ dir/k.ptx: k.kdsl lib/a\\ b.kdsl lib/$$x\\#.kdsl\n\nlib/a\\ b.kdsl:\n\nlib/$$x\\#.kdsl:\n"
        );
    }

    #[test]
    fn depfile_without_imports() {
        assert_eq!(
            depfile(Path::new("k.ptx"), Path::new("k.kdsl"), &[]),
            "k.ptx: k.kdsl\n"
        );
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.ptx");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.ptx"]);
    }

    #[test]
    fn unwritable_destination_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/out.ptx");
        let Err(Fail::Usage(msg)) = write_atomic(&path, b"x") else {
            panic!("expected a usage error");
        };
        assert!(msg.starts_with("cannot write `"), "{msg}");
    }
}
