//! `--emit ast`: the syntax tree as text, laid out like Rust's `{:#?}`.
//!
//! `{:#?}` itself indents through one adapter per level of nesting, each of
//! which inspects every byte written below it, so its cost grows with the
//! cube of the nesting depth. Instead the tree is written compactly (`{:?}`,
//! one pass) and then laid out here in one more pass, with the indentation
//! capped at [`MAX_INDENT`] levels so that the text stays proportional to
//! the tree however deeply it nests. Up to that depth the result is exactly
//! what `{:#?}` writes.

use super::ast;

/// Levels of indentation after which deeper lines are indented no further.
pub const MAX_INDENT: usize = 100;

/// The tree of one file. Writing it recurses as deep as the tree nests, so
/// it is done on the big stack ([`crate::stack`]).
pub fn dump(file: &ast::File) -> String {
    crate::stack::with_big_stack(|| layout(&format!("{file:?}")))
}

/// Lays out the compact `Debug` text `compact` as `{:#?}` would: a line per
/// field, element and closing bracket, four spaces per level.
pub fn layout(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut chars = compact.chars().peekable();
    // Inside a string or character literal (Debug escapes its quotes).
    let mut quote: Option<char> = None;
    let mut escaped = false;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                out.push(c);
            }
            '{' | '[' | '(' => {
                let close = match c {
                    '{' => '}',
                    '[' => ']',
                    _ => ')',
                };
                if chars.peek() == Some(&close) {
                    // An empty list: `[]`.
                    out.push(c);
                    out.push(close);
                    chars.next();
                    continue;
                }
                out.push(c);
                depth += 1;
                // `Name { field: ..` has a space after the brace.
                if c == '{' && chars.peek() == Some(&' ') {
                    chars.next();
                }
                newline(&mut out, depth);
            }
            '}' | ']' | ')' => {
                depth = depth.saturating_sub(1);
                out.push(',');
                newline(&mut out, depth);
                out.push(c);
            }
            ',' if chars.peek() == Some(&' ') => {
                chars.next();
                out.push(',');
                newline(&mut out, depth);
            }
            // The space before a struct's closing brace.
            ' ' if chars.peek() == Some(&'}') => {}
            _ => out.push(c),
        }
    }
    out
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth.min(MAX_INDENT) {
        out.push_str("    ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;

    /// Up to the cap, the layout is exactly `{:#?}`'s.
    #[test]
    fn same_as_pretty_debug() {
        let src = r#"import "other.kdsl";
const N: u32 = 4;
fn f(a: u32) -> u32 { if a > 1 { a } else { 2 } }
kernel k(out: global mut [u32], x: f32) block(32) {
    shared t: [f32; 2, 32];
    barrier full[2]: cta(arrivals = 1);
    let v = if x > 0.5 { (x * -2.0) as u32 } else { f(N) };
    for i in 0..N step 2 { out[i] = v; }
    out[thread_idx.x] = v; full[0].arrive();
    while true { break; }
}
"#;
        let (file, _) = crate::syntax::parse(FileId(0), src);
        assert_eq!(dump(&file), format!("{file:#?}"));
    }

    #[test]
    fn strings_keep_their_brackets_and_escapes() {
        let compact = format!("{:?}", vec!["a, {b}", "c\"(d)\\"]);
        assert_eq!(
            layout(&compact),
            format!("{:#?}", vec!["a, {b}", "c\"(d)\\"])
        );
    }

    #[test]
    fn indentation_stops_at_the_cap() {
        let deep = "[".repeat(MAX_INDENT + 5) + &"]".repeat(MAX_INDENT + 5);
        let out = layout(&deep.replace("[]", "[1]"));
        let widest = out.lines().map(|l| l.len() - l.trim_start().len()).max();
        assert_eq!(widest, Some(4 * MAX_INDENT));
    }
}
