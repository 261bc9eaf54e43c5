//! What ptxas says about the PTX kdslc wrote: under `--emit cubin` kdslc
//! runs `ptxas -v`, and the advisories that mean a kernel will not run as
//! written, and the register failure, become diagnostics at the kdsl span
//! of the PTX line they name (the writer records each line's span,
//! [`crate::Compilation::ptx_line_spans`]):
//!
//! | ptxas | code | meaning |
//! | --- | --- | --- |
//! | C7507 | W0426 | `setmaxnreg` ignored: a budget is below what the code needs |
//! | C7508 | W0427 | `setmaxnreg` ignored: no register count at entry |
//! | C7511 | W0428 | wgmma serialised: too few registers for its pipeline |
//! | C7517 | W0429 | a `wgmma.wait_group` inserted before accumulators are read |
//! | C7602 | E0425 | not enough registers at entry to compile an instruction |
//!
//! C7507 and C7508 name no line (nor kernel): they are about every
//! `setmaxnreg` of a kernel, so they label every `set_max_regs` of the
//! module. ptxas 13.5's wording, as `shared/design/hopper/gemm/
//! regs_results.txt` and `ptx-notes.md` §11.3–§11.4 record it, is what is
//! parsed; a message that names no line known to the map is labelled at
//! the nearest mapped line before it.

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// One advisory of ptxas that kdslc turns into a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advisory {
    /// C7507: `'setmaxnreg' ignored to maintain minimum register
    /// requirements`.
    SetmaxnregBelowNeed,
    /// C7508: `'setmaxnreg' ignored; unable to determine register count at
    /// entry`.
    SetmaxnregNoEntry,
    /// C7511: `wgmma.mma_async instructions are serialized due to
    /// insufficient register resources for the wgmma pipeline`.
    WgmmaSerialized,
    /// C7517: `wgmma.wait_group is injected in around line N`.
    WaitInjected,
    /// C7602: `Insufficient registers (R) to compile instruction at line
    /// N ... register target of M or higher` (fatal).
    InsufficientRegisters {
        have: Option<u32>,
        need: Option<u32>,
    },
}

impl Advisory {
    /// The advisory a line of ptxas's output states, if it is one of
    /// these.
    pub fn parse(line: &str) -> Option<Advisory> {
        if line.contains("(C7507)") {
            Some(Advisory::SetmaxnregBelowNeed)
        } else if line.contains("(C7508)") {
            Some(Advisory::SetmaxnregNoEntry)
        } else if line.contains("(C7511)") {
            Some(Advisory::WgmmaSerialized)
        } else if line.contains("(C7517)") {
            Some(Advisory::WaitInjected)
        } else if line.contains("(C7602)") {
            let have = number_after(line, "Insufficient registers (");
            let need = number_after(line, "register target of ");
            Some(Advisory::InsufficientRegisters { have, need })
        } else {
            None
        }
    }

    /// ptxas's code: `C7507`.
    pub fn ptxas_code(self) -> &'static str {
        match self {
            Advisory::SetmaxnregBelowNeed => "C7507",
            Advisory::SetmaxnregNoEntry => "C7508",
            Advisory::WgmmaSerialized => "C7511",
            Advisory::WaitInjected => "C7517",
            Advisory::InsufficientRegisters { .. } => "C7602",
        }
    }

    /// Whether it is about every `setmaxnreg` (it names no line).
    fn about_setmaxnreg(self) -> bool {
        matches!(
            self,
            Advisory::SetmaxnregBelowNeed | Advisory::SetmaxnregNoEntry
        )
    }
}

/// The digits right after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> Option<u32> {
    let (_, rest) = text.split_once(prefix)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The PTX line (1-based) a message names: the number after its last
/// `line `.
fn named_line(message: &str) -> Option<usize> {
    let (_, rest) = message.rsplit_once("line ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The diagnostics of ptxas's output `log` for the PTX text `ptx`, whose
/// line `i` (0-based) was written for `spans[i]`.
pub fn diagnostics(log: &str, ptx: &str, spans: &[Option<Span>]) -> Vec<Diagnostic> {
    diagnostics_in(log, ptx, spans, &|_| None)
}

/// [`diagnostics`], where `note` gives the note for a line of the `.entry`
/// it names (an instantiation of a kernel with constants names itself and
/// its values); an advisory about a line of it carries that note.
pub fn diagnostics_in(
    log: &str,
    ptx: &str,
    spans: &[Option<Span>],
    note: &dyn Fn(&str) -> Option<String>,
) -> Vec<Diagnostic> {
    let setmaxnreg: Vec<Span> = ptx
        .lines()
        .zip(spans)
        .filter(|(l, _)| l.trim_start().starts_with("setmaxnreg."))
        .filter_map(|(_, s)| *s)
        .collect();
    let mut out = Vec::new();
    for line in log.lines() {
        let Some(a) = Advisory::parse(line) else {
            continue;
        };
        let said = line
            .split_once(&format!("({}) ", a.ptxas_code()))
            .map_or(line, |(_, m)| m)
            .trim();
        let d = if a.about_setmaxnreg() {
            match setmaxnreg.split_first() {
                Some((first, rest)) => {
                    let mut d = diagnostic(a, *first, said);
                    for s in rest {
                        d = d.secondary(*s, "ignored too");
                    }
                    d
                }
                None => continue,
            }
        } else {
            let line = named_line(said);
            let span = line.and_then(|n| nearest(spans, n));
            let d = match span {
                Some(s) => diagnostic(a, s, said),
                None => continue,
            };
            match line.and_then(|n| entry_of(ptx, n)).and_then(note) {
                Some(n) => d.note(n),
                None => d,
            }
        };
        out.push(d);
    }
    out
}

/// The name of the `.entry` that PTX line `n` (1-based) is in.
fn entry_of(ptx: &str, n: usize) -> Option<&str> {
    ptx.lines()
        .take(n)
        .filter_map(|l| l.strip_prefix(".visible .entry "))
        .last()
        .map(|l| l.trim_end_matches('('))
}

/// The span of PTX line `n` (1-based), or of the nearest mapped line
/// before it.
fn nearest(spans: &[Option<Span>], n: usize) -> Option<Span> {
    let end = n.min(spans.len());
    spans.get(..end)?.iter().rev().find_map(|s| *s)
}

fn diagnostic(a: Advisory, span: Span, said: &str) -> Diagnostic {
    let ptxas = format!("ptxas: {said}");
    match a {
        Advisory::SetmaxnregBelowNeed => Diagnostic::warning(
            "W0426",
            "ptxas ignores every `set_max_regs`: a budget is below what the code needs (C7507)",
        )
        .primary(span, "ignored")
        .note(ptxas)
        .note("every warpgroup then keeps the count at entry: the roles run without their budgets")
        .help("raise the budget of the role whose code needs more (`ptxas -v` prints the registers a kernel uses)"),
        Advisory::SetmaxnregNoEntry => Diagnostic::warning(
            "W0427",
            "ptxas ignores every `set_max_regs`: it cannot tell the register count at entry (C7508)",
        )
        .primary(span, "ignored")
        .note(ptxas)
        .note("kdslc pins the count with `.reqntid` and `.minnctapersm 1`; if ptxas still cannot tell it, that is a bug in kdslc: please report it"),
        Advisory::WgmmaSerialized => Diagnostic::warning(
            "W0428",
            "ptxas serialises the wgmma instructions: too few registers for the wgmma pipeline (C7511)",
        )
        .primary(span, "serialised from here")
        .note(ptxas)
        .note("the accumulators live at once do not fit the role's registers: ptxas spills them to local memory and waits for each wgmma before the next")
        .help("hold fewer accumulators at once in the role, or give it a larger budget"),
        Advisory::WaitInjected => Diagnostic::warning(
            "W0429",
            "ptxas inserted a wait for a wgmma group before its accumulators are used (C7517)",
        )
        .primary(span, "ptxas waits here")
        .note(ptxas)
        .help("wait for the group with `wgmma_wait(n)` before reading its accumulator"),
        Advisory::InsufficientRegisters { have, need } => {
            let (h, n) = (
                have.map_or("too few".into(), |h| h.to_string()),
                need.map_or("more".into(), |n| n.to_string()),
            );
            Diagnostic::error(
                "E0425",
                format!("ptxas cannot compile this with {h} registers per thread; it needs {n} (C7602)"),
            )
            .primary(span, format!("needs {n} registers per thread"))
            .note(ptxas)
            .note("every instruction must compile with the count every warp starts the kernel with, whatever `set_max_regs` sets later: min(255, 8 * floor(65536 / (8 * threads))) for one CTA per SM")
            .help("launch fewer threads per block (fewer warpgroups), or make the instruction need fewer registers (a narrower accumulator)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;

    fn span(i: u32) -> Span {
        Span::new(FileId(0), i as usize, i as usize + 1)
    }

    #[test]
    fn each_advisory_is_recognised_with_its_numbers() {
        let c7602 = "ptxas fatal   : (C7602) Insufficient registers (152) to compile instruction at line 119 in function gemm. Try to compile with register target of 154 or higher.";
        assert_eq!(
            Advisory::parse(c7602),
            Some(Advisory::InsufficientRegisters {
                have: Some(152),
                need: Some(154)
            })
        );
        assert_eq!(named_line(c7602), Some(119));
        let c7517 = "ptxas info    : (C7517) wgmma.wait_group is injected in around line 39 by compiler to allow use of registers defined by GMMA in function 'k'";
        assert_eq!(Advisory::parse(c7517), Some(Advisory::WaitInjected));
        assert_eq!(named_line(c7517), Some(39));
        assert_eq!(
            Advisory::parse("ptxas info    : Used 168 registers, used 1 barriers"),
            None
        );
    }

    #[test]
    fn an_advisory_in_an_instantiation_names_it() {
        let ptx = ".visible .entry k(\n{\n}\n.visible .entry k__N_2(\n{\nwgmma\n}\n";
        let spans = [None, None, None, None, None, Some(span(9)), None];
        let log =
            "ptxas info    : (C7517) wgmma.wait_group is injected in around line 6 by compiler\n";
        let note = |e: &str| (e == "k__N_2").then(|| format!("in instantiation `{e}`"));
        let d = diagnostics_in(log, ptx, &spans, &note);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].notes.last().map(String::as_str),
            Some("in instantiation `k__N_2`")
        );
        assert_eq!(entry_of(ptx, 2), Some("k"));
    }

    #[test]
    fn a_line_maps_to_its_span_or_the_nearest_before() {
        let spans = [None, Some(span(3)), None, None];
        assert_eq!(nearest(&spans, 4), Some(span(3)));
        assert_eq!(nearest(&spans, 1), None);
        let ptx =
            "a\nsetmaxnreg.dec.sync.aligned.u32 40;\nb\n\tsetmaxnreg.inc.sync.aligned.u32 232;\n";
        let spans = [None, Some(span(1)), None, Some(span(7))];
        let log = "ptxas info    : (C7507) Potential Performance Loss: 'setmaxnreg' ignored to maintain minimum register requirements.\n";
        let d = diagnostics(log, ptx, &spans);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, "W0426");
        assert_eq!(d[0].labels.len(), 2);
    }
}
