//! Writing results: atomically to a file (a temporary file in the same
//! folder, then a rename, so a reader never sees half a file and a failed
//! build leaves the old output as it was), or to stdout; and Make depfiles.

use super::Fail;
use crate::input::{self, io_reason};
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
        .map_err(|e| Fail::Usage(format!("cannot write to stdout: {}", io_reason(&e))))
}

/// An output being written: a temporary file that becomes the output on
/// [`Staged::commit`] and is removed if dropped before.
///
/// Usually the temporary sits beside the output (same folder, so the final
/// rename stays on one file system), named `.NAME.XXXXXX.tmp`, and is
/// renamed onto it. Two kinds of output are treated differently:
/// - a symbolic link to a file: the file it points to is replaced and the
///   link kept, as a compiler writing through the link would do;
/// - an existing device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`):
///   renaming would replace the device node with a plain file, so the
///   finished bytes are written into it instead (not atomically: there is
///   nothing to keep intact).
pub struct Staged {
    tmp: NamedTempFile,
    /// The path as the user gave it, for messages.
    shown: PathBuf,
    landing: Landing,
}

enum Landing {
    /// Rename the temporary onto this path.
    Replace(PathBuf),
    /// Copy the finished bytes into this existing special file.
    Stream(PathBuf),
}

impl Staged {
    pub fn new(path: &Path) -> Result<Staged, Fail> {
        let landing = match std::fs::metadata(path) {
            // `metadata` follows links: a link to a file lands on the file.
            Ok(m) if m.is_file() => {
                Landing::Replace(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
            }
            // A folder: the rename fails and says so.
            Ok(m) if m.is_dir() => Landing::Replace(path.to_path_buf()),
            Ok(_) => Landing::Stream(path.to_path_buf()),
            Err(_) => Landing::Replace(path.to_path_buf()),
        };
        let (dir, name) = match &landing {
            Landing::Replace(target) => {
                let dir = match target.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let name = target
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                (dir, name)
            }
            Landing::Stream(_) => (std::env::temp_dir(), "kdslc".to_string()),
        };
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
        let tmp = builder
            .tempfile_in(&dir)
            .map_err(|e| cannot_write(path, &e))?;
        Ok(Staged {
            tmp,
            shown: path.to_path_buf(),
            landing,
        })
    }

    /// Where to write the contents (for a tool such as ptxas to write to).
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), Fail> {
        self.tmp
            .write_all(bytes)
            .and_then(|()| self.tmp.flush())
            .map_err(|e| cannot_write(&self.shown, &e))
    }

    /// Makes the written contents the output.
    pub fn commit(self) -> Result<(), Fail> {
        let shown = self.shown;
        match self.landing {
            Landing::Replace(target) => self
                .tmp
                .persist(&target)
                .map(drop)
                .map_err(|e| cannot_write(&shown, &e.error)),
            Landing::Stream(target) => {
                let bytes = input::read_file(self.tmp.path(), crate::launch::memory::limit())
                    .map_err(|e| Fail::Usage(format!("cannot write `{}`: {e}", shown.display())))?;
                let mut out = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(|e| cannot_write(&shown, &e))?;
                out.write_all(&bytes)
                    .and_then(|()| out.flush())
                    .map_err(|e| cannot_write(&shown, &e))
            }
        }
    }
}

/// Makes several staged outputs the outputs together: all of them, or
/// none. Every destination is checked first (a folder in the way is an
/// error before anything is replaced); each file it replaces is kept as a
/// hard-linked backup until the last rename succeeded, and restored if a
/// later one fails, so that a failure leaves every output as it was.
/// (Outputs streamed into special files, which cannot be taken back, are
/// written last.)
pub fn commit_all(staged: Vec<Staged>) -> Result<(), Fail> {
    for s in &staged {
        if let Landing::Replace(target) = &s.landing {
            if std::fs::symlink_metadata(target).is_ok_and(|m| m.is_dir()) {
                return Err(Fail::Usage(format!(
                    "cannot write `{}`: it is a folder",
                    s.shown.display()
                )));
            }
        }
    }
    let (replace, stream): (Vec<Staged>, Vec<Staged>) = staged
        .into_iter()
        .partition(|s| matches!(s.landing, Landing::Replace(_)));
    // (the output, its target, the backup of what it replaces)
    let mut done: Vec<(PathBuf, Option<tempfile::NamedTempFile<()>>)> = Vec::new();
    for s in replace {
        let Landing::Replace(target) = &s.landing else {
            continue;
        };
        let target = target.clone();
        let backup = match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_file() => Some(backup_of(&target).map_err(|e| {
                roll_back(std::mem::take(&mut done));
                cannot_write(&s.shown, &e)
            })?),
            _ => None,
        };
        if let Err(e) = s.commit() {
            roll_back(std::mem::take(&mut done));
            return Err(e);
        }
        done.push((target, backup));
    }
    for s in stream {
        s.commit()?;
    }
    Ok(())
}

/// A hard link to `target` under a fresh name beside it, removed when
/// dropped.
fn backup_of(target: &Path) -> std::io::Result<tempfile::NamedTempFile<()>> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".bak")
        .make_in(&dir, |p| std::fs::hard_link(target, p))
}

/// Puts back what the renames in `done` replaced, newest first: the backup
/// over the new file, or no file where there was none.
fn roll_back(done: Vec<(PathBuf, Option<tempfile::NamedTempFile<()>>)>) {
    for (target, backup) in done.into_iter().rev() {
        match backup {
            Some(b) => {
                let _ = b.persist(&target);
            }
            None => {
                let _ = std::fs::remove_file(&target);
            }
        }
    }
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Fail> {
    let mut staged = Staged::new(path)?;
    staged.write_all(bytes)?;
    staged.commit()
}

/// "cannot write `PATH`: ...": for a path whose folder is missing, that
/// folder (the system's "no such file" would be about the output itself).
fn cannot_write(path: &Path, e: &std::io::Error) -> Fail {
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty());
    let why = match folder {
        Some(d) if e.kind() == std::io::ErrorKind::NotFound && !d.is_dir() => {
            format!("the folder `{}` does not exist", d.display())
        }
        _ => io_reason(e),
    };
    Fail::Usage(format!("cannot write `{}`: {why}", path.display()))
}

/// The text of a Make depfile: the output depends on the input and each
/// import, and each import is also a target with no recipe (gcc's `-MP`),
/// so deleting an import makes `make` rebuild instead of failing. A file
/// name Make cannot read is refused (see [`make_name`]).
pub fn depfile(targets: &[&Path], input: &Path, imports: &[PathBuf]) -> Result<String, Fail> {
    let mut names = Vec::with_capacity(targets.len());
    for t in targets {
        names.push(make_name(t, true)?);
    }
    let mut text = format!("{}: {}", names.join(" "), make_name(input, false)?);
    for i in imports {
        text.push(' ');
        text.push_str(&make_name(i, false)?);
    }
    text.push('\n');
    for i in imports {
        text.push('\n');
        text.push_str(&make_name(i, true)?);
        text.push_str(":\n");
    }
    Ok(text)
}

/// A file name as Make reads it in a rule: gcc's quoting, plus `:` and, in
/// a target, `%`. `$` doubles; a space, `#` or `:` (and `%` in a target,
/// which would otherwise make a pattern rule) gets a backslash, and the
/// backslashes right before it double so that they stay backslashes.
/// (Ninja reads these escapes too.) A name Make cannot read at all is
/// refused, since a depfile that breaks the build is worse than none: one
/// with a control character (a newline ends the rule), `;` (starts a
/// recipe), `|` (order-only prerequisites), `=` (a variable), a trailing
/// backslash (continues the line), or bytes that are not UTF-8.
fn make_name(p: &Path, target: bool) -> Result<String, Fail> {
    let refuse = |why: &str| {
        Fail::Usage(format!(
            "cannot write the depfile: make cannot read the file name `{}` ({why}); \
             rename the file, or build without -MD/-MF",
            p.display()
        ))
    };
    let s = p.to_str().ok_or_else(|| refuse("it is not UTF-8"))?;
    if s.ends_with('\\') {
        return Err(refuse("it ends in a backslash"));
    }
    let mut out = String::with_capacity(s.len());
    let mut backslashes = 0;
    for c in s.chars() {
        match c {
            c if c.is_control() => return Err(refuse("it holds a control character")),
            ';' | '|' | '=' => return Err(refuse(&format!("it holds `{c}`"))),
            '$' => out.push_str("$$"),
            ' ' | '#' | ':' => {
                out.extend(std::iter::repeat_n('\\', backslashes + 1));
                out.push(c);
            }
            '%' if target => {
                out.extend(std::iter::repeat_n('\\', backslashes + 1));
                out.push(c);
            }
            _ => out.push(c),
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfile_escapes_and_adds_phony_targets() {
        let d = depfile(
            &[Path::new("out dir/k%.ptx")],
            Path::new("k.kdsl"),
            &[
                PathBuf::from("lib/a b.kdsl"),
                PathBuf::from("lib/$x#.kdsl"),
                PathBuf::from("c:/d%.kdsl"),
                PathBuf::from("e\\ f\\g.kdsl"),
            ],
        )
        .unwrap();
        assert_eq!(
            d,
            "out\\ dir/k\\%.ptx: k.kdsl lib/a\\ b.kdsl lib/$$x\\#.kdsl c\\:/d%.kdsl e\\\\\\ f\\g.kdsl\n\n\
             lib/a\\ b.kdsl:\n\nlib/$$x\\#.kdsl:\n\nc\\:/d\\%.kdsl:\n\ne\\\\\\ f\\g.kdsl:\n"
        );
    }

    #[test]
    fn depfile_without_imports() {
        assert_eq!(
            depfile(&[Path::new("k.ptx")], Path::new("k.kdsl"), &[]).unwrap(),
            "k.ptx: k.kdsl\n"
        );
    }

    #[test]
    fn names_make_cannot_read_are_refused() {
        for bad in [
            "a\nb.kdsl",
            "a;b.kdsl",
            "a|b.kdsl",
            "a=b.kdsl",
            "a\tb.kdsl",
            "a\\",
        ] {
            let Err(Fail::Usage(m)) = depfile(&[Path::new("k.ptx")], Path::new(bad), &[]) else {
                panic!("{bad:?} accepted");
            };
            assert!(
                m.starts_with("cannot write the depfile: make cannot read"),
                "{m}"
            );
        }
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

    #[cfg(unix)]
    #[test]
    fn a_link_keeps_pointing_at_the_new_output() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.ptx");
        let link = dir.path().join("link.ptx");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn commit_all_is_all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.npy"),
            dir.path().join("b.npy"),
            dir.path().join("c.npy"),
        );
        std::fs::write(&a, "old a").unwrap();
        let stage = |p: &Path, text: &str| {
            let mut s = Staged::new(p).unwrap();
            s.write_all(text.as_bytes()).unwrap();
            s
        };
        // A folder in the way: refused before anything is replaced.
        std::fs::create_dir(&c).unwrap();
        let Err(Fail::Usage(m)) = commit_all(vec![stage(&a, "new a"), stage(&c, "new c")]) else {
            panic!("expected a usage error");
        };
        assert!(m.ends_with("c.npy`: it is a folder"), "{m}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        std::fs::remove_dir(&c).unwrap();
        // A rename that fails after others succeeded (its temporary gone):
        // the ones before are taken back, a replaced file restored and a
        // new one removed.
        let third = stage(&c, "new c");
        std::fs::remove_file(third.path()).unwrap();
        assert!(commit_all(vec![stage(&a, "new a"), stage(&b, "new b"), third]).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert!(!b.exists() && !c.exists());
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.npy"]);
        // And all of them when nothing fails.
        commit_all(vec![stage(&a, "new a"), stage(&b, "new b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn unwritable_destination_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/out.ptx");
        let Err(Fail::Usage(msg)) = write_atomic(&path, b"x") else {
            panic!("expected a usage error");
        };
        assert_eq!(
            msg,
            format!(
                "cannot write `{}`: the folder `{}` does not exist",
                path.display(),
                dir.path().join("missing").display()
            )
        );
    }
}
