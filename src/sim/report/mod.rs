//! The simulator's reports: what the machine observed, turned into
//! diagnostics (codes `S0001`…, in the catalogue) with source spans.
//!
//! Every report names threads as `cta (x,y,z) threads a..b` (linear thread
//! ids in the CTA, ranges inclusive), variables and barriers by their
//! source name (kdslc names an mbarrier group `NAME` as the PTX symbol
//! `$b_NAME`: `ptx::names::source_name` undoes it) and index,
//! and points at the instruction's span. Where an instruction has no span
//! (kdslc PTX whose line the writer did not attribute) the PTX line and
//! text are given in a note instead.

mod checks;
mod issues;
mod runtime;
mod stuck;

pub(crate) use issues::from_events;
pub(crate) use runtime::printf_dropped;
pub(crate) use stuck::from_stop;

use super::decode::{LoadErrorKind, MemVar};
use super::machine::events::{BarrierRef, ThreadRef};
use super::ptx::ast::Pos;
use super::shared::SharedMap;
use super::spans::SpanResolver;
use super::Program;
use crate::diagnostics::{plural, Diagnostic};
use crate::span::Span;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What a report is about: the program, and the shared memory of the
/// launch that ran (its variables name shared offsets). Reports read the
/// program through it as through a `&Program`.
pub(crate) struct Run<'a> {
    pub program: &'a Program,
    pub shared: &'a SharedMap,
    /// The launch's tensor maps.
    pub maps: &'a [crate::sim::tmap::MapRecord],
}

impl std::ops::Deref for Run<'_> {
    type Target = Program;

    fn deref(&self) -> &Program {
        self.program
    }
}

/// A load-time error: an instruction outside the subset, or text that is
/// not PTX.
pub(crate) fn load_error(
    r: &mut SpanResolver,
    ptx: &str,
    pos: Pos,
    kind: LoadErrorKind,
    message: &str,
) -> Diagnostic {
    let line_text = ptx
        .lines()
        .nth((pos.line as usize).saturating_sub(1))
        .unwrap_or("")
        .trim();
    let mut d = match kind {
        LoadErrorKind::Unsupported => {
            let name = message
                .strip_prefix('`')
                .and_then(|m| m.split('`').next())
                .unwrap_or(message);
            Diagnostic::error(
                "S0013",
                format!("PTX instruction `{name}` is outside the simulator's subset"),
            )
            .note(format!("{message} (PTX line {})", pos.line))
            .help("docs/simulator.md lists the supported PTX subset")
        }
        _ => Diagnostic::error("S0014", format!("cannot load the PTX module: {message}"))
            .note(format!("at PTX line {}", pos.line)),
    };
    match r.ptx_span(pos) {
        Some(span) => d = d.primary(span, "here"),
        None => d = d.note(format!("PTX line {}: `{line_text}`", pos.line)),
    }
    d
}

pub(crate) fn bad_launch(kernel: &str, why: &str) -> Diagnostic {
    Diagnostic::error(
        "S0015",
        format!("launch does not fit kernel `{kernel}`: {why}"),
    )
}

/// `(x,y,z)`.
fn cta(c: [u32; 3]) -> String {
    format!("({},{},{})", c[0], c[1], c[2])
}

/// `thread 5` / `threads 0..31, 64..95` (inclusive ranges).
fn ranges(tids: &[u32]) -> String {
    let mut tids = tids.to_vec();
    tids.sort_unstable();
    tids.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(&start) = tids.get(i) {
        let mut end = start;
        while tids.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}..{end}")
        });
        i += 1;
    }
    format!(
        "{} {}",
        crate::diagnostics::noun_for(tids.len(), "thread"),
        parts.join(", ")
    )
}

/// `cta (0,0,0) threads 32..127; cta (1,0,0) thread 0`.
pub fn threads(list: &[ThreadRef], total: u64) -> String {
    let mut by: BTreeMap<[u32; 3], Vec<u32>> = BTreeMap::new();
    for t in list {
        by.entry(t.ctaid).or_default().push(t.tid);
    }
    let shown = 4;
    let mut parts: Vec<String> = by
        .iter()
        .take(shown)
        .map(|(c, tids)| format!("cta {} {}", cta(*c), ranges(tids)))
        .collect();
    if by.len() > shown {
        parts.push(format!("{} more", plural(by.len() - shown, "CTA")));
    }
    let mut s = parts.join("; ");
    if total > list.len() as u64 {
        let _ = write!(s, " ({} in all)", plural(total, "thread"));
    }
    s
}

/// How many threads made a report's events, for "here by ...": the
/// distinct threads, and how many times in all when some thread did it
/// more than once ("1 thread (300000 times)").
pub fn by_threads(r: &crate::sim::machine::events::Recorded) -> String {
    let n = plural(r.nthreads, "thread");
    if r.count > r.nthreads {
        format!("{n} ({} times)", r.count)
    } else {
        n
    }
}

/// Where an instruction is, for labels and notes.
struct Here<'a> {
    span: Option<Span>,
    line: u32,
    text: &'a str,
}

fn here(p: &Program, pc: u32) -> Here<'_> {
    let site = p.code.sites.get(pc as usize);
    Here {
        span: site.and_then(|s| s.span),
        line: site.map_or(0, |s| s.pos.line),
        text: p.code.inst_text(pc as usize),
    }
}

/// A label at the instruction, or a note with its PTX line when it has no span.
fn at(d: Diagnostic, p: &Program, pc: u32, message: &str, primary: bool) -> Diagnostic {
    let h = here(p, pc);
    match h.span {
        Some(span) if primary => d.primary(span, message),
        Some(span) => d.secondary(span, message),
        None => d.note(format!("{message}: PTX line {}: `{}`", h.line, h.text)),
    }
}

/// A mangled C++ name (nvcc's symbols), demangled by `cpp_demangle`: a
/// local static (`_ZZ7ws_tid0PKfPfjE4full`, `full` in `ws_tid0(const
/// float*, float*, unsigned)`) by its own name, `full`; another
/// (`_ZN2ns5stageE`) qualified, `ns::stage`. `None` for a name that is
/// not a mangled one.
fn demangle(sym: &str) -> Option<String> {
    if !sym.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(sym).ok()?;
    let options = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    let text = symbol.demangle_with_options(&options).ok()?;
    if !sym.starts_with("_ZZ") {
        return Some(text);
    }
    // The last `::` outside `<>` and `()`: what follows is the static.
    let mut depth = 0i32;
    let mut last = None;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => last = Some(i + 2),
            _ => {}
        }
    }
    Some(
        last.and_then(|i| text.get(i..))
            .unwrap_or(&text)
            .to_string(),
    )
}

/// The source name of a PTX variable: kdslc's symbols undone
/// (`crate::ptx::names`), an nvcc local static demangled, else as it is.
fn source_name(v: &MemVar) -> String {
    crate::ptx::names::source_name(&v.name)
        .map(str::to_string)
        .or_else(|| demangle(&v.name))
        .unwrap_or_else(|| v.name.clone())
}

/// The source name of the shared variable holding `offset`: with an index
/// when it is an array of `elem`-byte objects (barriers), else with the
/// byte offset into it.
fn shared_name(shared: &SharedMap, offset: u32, elem: u32) -> (String, Option<Span>) {
    let Some(v) = shared.var_at(offset) else {
        return (format!("<shared+{offset}>"), None);
    };
    let base = source_name(v);
    let index = (offset - v.offset) / elem.max(1);
    let name = if elem > 1 && v.size > elem {
        format!("{base}[{index}]")
    } else if offset != v.offset {
        format!("{base}` at byte offset `{}", offset - v.offset)
    } else {
        base
    };
    (name, v.decl.span)
}

fn barrier_name(shared: &SharedMap, b: &BarrierRef) -> (String, Option<Span>) {
    shared_name(shared, b.offset, 8)
}

/// Adds the barrier's declaration as a secondary label.
fn with_decl(d: Diagnostic, decl: Option<Span>, name: &str) -> Diagnostic {
    let base = name.split('[').next().unwrap_or(name);
    match decl {
        Some(span) => d.secondary(span, format!("`{base}` declared here")),
        None => d,
    }
}

/// Where a shared or local offset is relative to the variables.
fn near_var(vars: &[MemVar], off: u64) -> String {
    let below = vars
        .iter()
        .filter(|v| u64::from(v.offset) <= off)
        .max_by_key(|v| v.offset);
    match below {
        Some(v) if off < u64::from(v.offset) + u64::from(v.size) => format!(
            "the access runs past the end of `{}` ({} at offset {})",
            source_name(v),
            plural(v.size, "byte"),
            v.offset
        ),
        Some(v) => {
            let gap = off - u64::from(v.offset) - u64::from(v.size);
            let elem = u64::from(v.elem.max(1));
            let what = if elem == 1 {
                format!(
                    "`{}` ({} at offset {})",
                    source_name(v),
                    plural(v.size, "byte"),
                    v.offset
                )
            } else {
                format!(
                    "`{}` ({} of {} at offset {}; this is element {})",
                    source_name(v),
                    plural(u64::from(v.size) / elem, "element"),
                    plural(elem, "byte"),
                    v.offset,
                    (off - u64::from(v.offset)) / elem
                )
            };
            if gap == 0 {
                format!("just past the end of {what}")
            } else {
                format!("{} past the end of {what}", plural(gap, "byte"))
            }
        }
        None => "before the first variable".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ranges_compress() {
        let refs: Vec<ThreadRef> = (32..128)
            .chain([3])
            .map(|tid| ThreadRef {
                ctaid: [0, 0, 0],
                tid,
            })
            .chain([ThreadRef {
                ctaid: [1, 0, 0],
                tid: 0,
            }])
            .collect();
        assert_eq!(
            threads(&refs, refs.len() as u64),
            "cta (0,0,0) threads 3, 32..127; cta (1,0,0) thread 0"
        );
        assert_eq!(demangle("_ZZ12pipeline_sumE4full").as_deref(), Some("full"));
        // A kernel with parameters (the hand-rolled demangler stopped at
        // its parameter types and left the symbol as it was).
        assert_eq!(demangle("_ZZ7ws_tid0PKfPfjE4full").as_deref(), Some("full"));
        // Inside a template instance and a namespace.
        assert_eq!(
            demangle("_ZZN2ns4loadIfEEvPT_E5stage").as_deref(),
            Some("stage")
        );
        assert_eq!(demangle("_ZN2ns5stageE").as_deref(), Some("ns::stage"));
        assert_eq!(demangle("$b_full"), None);
        assert_eq!(demangle("_Zgarbage"), None);
    }
}
