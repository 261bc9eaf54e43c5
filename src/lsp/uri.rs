//! `file://` URIs ↔ paths.
//!
//! The compiler resolves imports from disk relative to the root file's path,
//! so a document is compiled under the path its URI names; definitions and
//! related information in imported files go back to the client as URIs
//! built from those files' paths.

use lsp_types::Uri;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

/// The local path a `file:` URI names (`None` for other schemes, such as an
/// editor's `untitled:` buffers).
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///home/x` has an empty authority; `file://localhost/home/x` too.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path)?;
    // `file:///C:/dir/x.kdsl` on Windows.
    if cfg!(windows) {
        if let Some(drive) = decoded
            .strip_prefix('/')
            .filter(|d| d.get(1..2) == Some(":"))
        {
            return Some(PathBuf::from(drive));
        }
    }
    Some(PathBuf::from(decoded))
}

/// The `file:` URI of an absolute path (lexically normalised: imports may
/// name `../lib/x.kdsl`, and the editor should see the file it has open).
pub fn from_path(path: &Path) -> Option<Uri> {
    let path = normalise(path);
    let text = path.to_str()?;
    let text = text.replace('\\', "/");
    let mut uri = String::from("file://");
    if !text.starts_with('/') {
        uri.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

/// Removes `.` and resolves `..` without touching the disk (symlinks stay as
/// the user wrote them).
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        Uri::from_str(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            to_path(&uri("file:///tmp/a.kdsl")),
            Some(PathBuf::from("/tmp/a.kdsl"))
        );
        assert_eq!(
            to_path(&uri("file://localhost/tmp/a.kdsl")),
            Some(PathBuf::from("/tmp/a.kdsl"))
        );
        assert_eq!(
            to_path(&uri("file:///tmp/my%20dir/%C3%A9.kdsl")),
            Some(PathBuf::from("/tmp/my dir/é.kdsl"))
        );
        assert_eq!(to_path(&uri("untitled:Untitled-1")), None);
    }

    #[cfg(unix)]
    #[test]
    fn paths_round_trip() {
        for p in ["/tmp/a.kdsl", "/tmp/my dir/é#1.kdsl", "/a/b%c.kdsl"] {
            let u = from_path(Path::new(p));
            assert_eq!(
                u.as_ref().and_then(to_path),
                Some(PathBuf::from(p)),
                "{u:?}"
            );
        }
        assert_eq!(
            from_path(Path::new("/tmp/x/../lib/./y.kdsl")).map(|u| u.as_str().to_string()),
            Some("file:///tmp/lib/y.kdsl".to_string())
        );
    }
}
