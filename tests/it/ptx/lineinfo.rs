//! The PTX line → `.kdsl` span map (`Compilation::ptx_line_spans`) and
//! `kdslc --lineinfo`: the map covers exactly the instructions, points at
//! the right source, and the `.file`/`.loc` directives it produces are
//! accepted by ptxas (with and without `-lineinfo`) and mapped back to the
//! right `.kdsl` lines by `nvdisasm --print-line-info`.

use crate::common::ptxas::{self, require_ptxas};
use crate::common::{kdsl_files, kdsl_suite, output_ok, repo_root, source_target};
use kdsl::span::Span;
use kdsl::target::Target;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn samples() -> Vec<PathBuf> {
    kdsl_suite("samples", 8)
}

fn compile(path: &Path, target: Target, lineinfo: bool) -> kdsl::Compilation {
    let opts = kdsl::Options {
        target,
        lineinfo,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        c.ptx.is_some(),
        "{}: no PTX: {:#?}",
        path.display(),
        c.diagnostics
    );
    c
}

/// An instruction line: inside a body, not a declaration, label, comment or
/// directive.
fn is_instruction(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('\t') else {
        return false;
    };
    !(rest.starts_with('.') || rest.starts_with("//") || rest.is_empty())
}

/// The spans of the instruction lines of `ptx`, in order.
fn instruction_spans(ptx: &str, spans: &[Option<Span>]) -> Vec<Option<Span>> {
    ptx.lines()
        .zip(spans)
        .filter(|(l, _)| is_instruction(l))
        .map(|(_, s)| *s)
        .collect()
}

fn source_text(c: &kdsl::Compilation, s: Span) -> &str {
    c.sources.get(s.file).map_or("", |f| f.slice(s))
}

#[test]
fn every_instruction_and_nothing_else_has_a_span() {
    let mut files = samples();
    files.extend(kdsl_files(&repo_root().join("tests/valid")));
    for path in &files {
        for lineinfo in [false, true] {
            let opts = kdsl::Options {
                lineinfo,
                target: source_target(path),
                ..kdsl::Options::default()
            };
            let c = kdsl::compile(path, &opts).expect("readable");
            let Some(ptx) = &c.ptx else { continue };
            let lines: Vec<&str> = ptx.lines().collect();
            assert_eq!(
                lines.len(),
                c.ptx_line_spans.len(),
                "{}: one span entry per PTX line",
                path.display()
            );
            for (i, (line, span)) in lines.iter().zip(&c.ptx_line_spans).enumerate() {
                // Instructions have a span; headers, declarations, labels,
                // comments and `.loc` lines have none. (The `.param`
                // declarations and braces of a call sequence are part of
                // the call and may carry its span.) A `.shared`
                // declaration has the span of its kdsl declaration.
                let declaration = !line.starts_with('\t')
                    || [".reg", ".loc", "//"]
                        .iter()
                        .any(|p| line.trim_start().starts_with(p));
                if line.trim_start().starts_with(".shared") {
                    let text = span.map_or("", |s| source_text(&c, s));
                    assert!(
                        text.starts_with("shared ") || text.starts_with("barrier "),
                        "{}:{}: `{line}` maps to `{text}`",
                        path.display(),
                        i + 1
                    );
                }
                assert!(
                    (is_instruction(line) && span.is_some())
                        || (declaration && span.is_none())
                        || !(is_instruction(line) || declaration),
                    "{}:{}: `{line}` has span {span:?}",
                    path.display(),
                    i + 1
                );
                if let Some(s) = span {
                    let file = c.sources.get(s.file).expect("span in a known file");
                    assert!(s.start <= s.end && (s.end as usize) <= file.text.len());
                }
            }
        }
    }
}

#[test]
fn lineinfo_only_adds_file_and_loc_lines() {
    for path in samples() {
        let target = source_target(&path);
        let plain = compile(&path, target, false);
        let with = compile(&path, target, true);
        let (plain_ptx, with_ptx) = (plain.ptx.unwrap(), with.ptx.unwrap());
        assert!(!plain_ptx.contains(".loc") && !plain_ptx.contains(".file"));
        assert!(with_ptx.contains("\t.loc\t1 ") && with_ptx.contains("\n.file 1 \""));
        let stripped: String = with_ptx
            .split_inclusive('\n')
            .filter(|l| !l.starts_with("\t.loc\t") && !l.starts_with(".file "))
            .collect::<String>()
            .replacen("\n\n\n", "\n\n", 1);
        assert_eq!(stripped, plain_ptx, "{}", path.display());
        // The map of the plain text is the lineinfo map less the added lines.
        assert_eq!(
            instruction_spans(&with_ptx, &with.ptx_line_spans),
            instruction_spans(&plain_ptx, &plain.ptx_line_spans),
            "{}",
            path.display()
        );
    }
}

#[test]
fn lineinfo_is_deterministic() {
    for path in samples() {
        let target = source_target(&path);
        let a = compile(&path, target, true).ptx;
        let b = compile(&path, target, true).ptx;
        assert_eq!(a, b, "{}", path.display());
    }
}

/// The span of the first instruction line that starts with `prefix`.
fn span_of<'c>(c: &'c kdsl::Compilation, prefix: &str) -> &'c str {
    let ptx = c.ptx.as_deref().unwrap();
    let (_, span) = ptx
        .lines()
        .zip(&c.ptx_line_spans)
        .find(|(l, _)| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` in\n{ptx}"));
    source_text(c, span.expect("an instruction has a span"))
}

#[test]
fn spans_point_at_the_source_of_each_instruction() {
    let saxpy = compile(&repo_root().join("samples/saxpy.kdsl"), Target::Sm90, false);
    assert_eq!(span_of(&saxpy, "st.global.f32"), "y[i]");
    assert_eq!(span_of(&saxpy, "ld.global.nc.f32"), "x[i]");
    assert_eq!(span_of(&saxpy, "ld.global.f32"), "y[i]");
    assert_eq!(span_of(&saxpy, "setp.lt.u32"), "i < n");
    assert_eq!(span_of(&saxpy, "ld.param.f32"), "a");
    assert_eq!(span_of(&saxpy, "ret;"), "}");

    let pipe = compile(
        &repo_root().join("samples/pipeline_sum.kdsl"),
        Target::Sm90,
        false,
    );
    assert!(
        span_of(&pipe, "mbarrier.init").starts_with("barrier "),
        "{}",
        span_of(&pipe, "mbarrier.init")
    );
    assert!(span_of(&pipe, "mbarrier.try_wait").contains("wait"));
    assert!(span_of(&pipe, "cp.async.bulk").contains("copy_async"));

    // An imported device function maps into the imported file.
    let blend = compile(
        &repo_root().join("samples/blend_rows.kdsl"),
        Target::Sm90,
        false,
    );
    let ptx = blend.ptx.as_deref().unwrap();
    let files: BTreeSet<u32> = blend
        .ptx_line_spans
        .iter()
        .flatten()
        .map(|s| s.file.0)
        .collect();
    assert_eq!(files, BTreeSet::from([0, 1]), "{ptx}");
}

/// `nvdisasm --print-line-info` of a cubin: for each SASS instruction, the
/// (file, line) its `//## File` comment gives.
fn sass_lines(nvdisasm: &Path, cubin: &[u8]) -> Vec<(String, u32, String)> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.cubin");
    std::fs::write(&file, cubin).unwrap();
    let out = output_ok(
        Command::new(nvdisasm).arg("--print-line-info").arg(&file),
        "nvdisasm",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut current: Option<(String, u32)> = None;
    let mut result = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("//## File \"") {
            let (path, rest) = rest.split_once('"').expect("quoted path");
            let n = rest
                .trim_start_matches(", line ")
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no line number in `{t}`"));
            current = Some((path.to_string(), n));
        } else if let Some(rest) = t.strip_prefix("/*") {
            // `/*0050*/   LDG.E R2, ...` (not the hex dump of other sections).
            let Some((_, insn)) = rest.split_once("*/") else {
                continue;
            };
            let insn = insn.trim();
            if insn.starts_with('.') || insn.is_empty() {
                continue;
            }
            if let Some((p, n)) = &current {
                result.push((p.clone(), *n, insn.to_string()));
            }
        }
    }
    result
}

#[test]
fn ptxas_and_nvdisasm_map_sass_back_to_kdsl_lines() {
    let Some(ptxas) = require_ptxas() else { return };
    let Some(nvdisasm) = ptxas::nvdisasm_path() else {
        assert!(!ptxas::in_ci(), "nvdisasm not found under CI");
        return;
    };
    let mut memory = 0;
    for path in samples() {
        let target = source_target(&path);
        let c = compile(&path, target, true);
        let ptx = c.ptx.as_deref().unwrap();
        // ptxas takes the module with and without -lineinfo.
        ptxas::assemble(&ptxas, ptx, target.name()).unwrap_or_else(|e| panic!("{e}"));
        let cubin = ptxas::assemble_with(&ptxas, ptx, target.name(), &["-lineinfo"])
            .unwrap_or_else(|e| panic!("{e}"))
            .cubin;

        // The (file, line) of every `.loc`, by absolute path.
        let mut file_paths: BTreeMap<u32, String> = BTreeMap::new();
        for l in ptx.lines() {
            if let Some(rest) = l.strip_prefix(".file ") {
                let (n, p) = rest.split_once(' ').unwrap();
                file_paths.insert(n.parse().unwrap(), p.trim_matches('"').to_string());
            }
        }
        let mut locs: BTreeSet<(String, u32)> = BTreeSet::new();
        for l in ptx.lines() {
            if let Some(rest) = l.strip_prefix("\t.loc\t") {
                let mut it = rest.split(' ');
                let f: u32 = it.next().unwrap().parse().unwrap();
                let line: u32 = it.next().unwrap().parse().unwrap();
                locs.insert((file_paths[&f].clone(), line));
            }
        }
        let texts: BTreeMap<String, String> = c
            .sources
            .iter()
            .map(|(id, f)| (file_paths[&(id.0 + 1)].clone(), f.text.clone()))
            .collect();

        let sass = sass_lines(&nvdisasm, &cubin);
        assert!(
            !sass.is_empty(),
            "{}: no line info in the SASS",
            path.display()
        );
        for (file, line, insn) in &sass {
            assert!(
                locs.contains(&(file.clone(), *line)),
                "{}: SASS `{insn}` maps to {file}:{line}, which no .loc names",
                path.display()
            );
            let src_line = texts[file]
                .lines()
                .nth(*line as usize - 1)
                .unwrap_or_else(|| panic!("{file} has no line {line}"));
            // A global load or store comes from a line that indexes memory.
            if ["LDG", "STG", "RED", "ATOMG"]
                .iter()
                .any(|m| insn.starts_with(m))
            {
                memory += 1;
                assert!(
                    src_line.contains('['),
                    "{}: `{insn}` maps to {file}:{line} `{src_line}`",
                    path.display()
                );
            }
        }
    }
    assert!(
        memory >= 10,
        "only {memory} global memory SASS instructions"
    );
}

#[test]
fn cli_lineinfo_flag_in_both_spellings() {
    let dir = tempfile::tempdir().unwrap();
    let kdslc = env!("CARGO_BIN_EXE_kdslc");
    let sample = repo_root().join("samples/saxpy.kdsl");
    let mut outs = Vec::new();
    for flag in ["--lineinfo", "-lineinfo"] {
        let out = dir.path().join(format!("o{flag}.ptx"));
        let st = Command::new(kdslc)
            .arg(&sample)
            .arg(flag)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        outs.push(std::fs::read_to_string(&out).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    assert!(outs[0].contains("\t.loc\t1 5 "), "{}", outs[0]);
}

#[test]
fn lineinfo_assembles_for_every_valid_program_and_target() {
    let Some(ptxas) = require_ptxas() else { return };
    let mut files = samples();
    files.extend(kdsl_files(&repo_root().join("tests/valid")));
    for path in &files {
        let mut targets = vec![Target::Sm80, Target::Sm90, Target::Sm100];
        if !targets.contains(&source_target(path)) {
            targets.push(source_target(path));
        }
        for target in targets {
            let opts = kdsl::Options {
                target,
                lineinfo: true,
                ..kdsl::Options::default()
            };
            let c = kdsl::compile(path, &opts).expect("readable");
            // Programs that need a newer target are E0200, not PTX.
            let Some(ptx) = &c.ptx else { continue };
            ptxas::assemble_with(&ptxas, ptx, target.name(), &["-lineinfo"])
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", path.display()));
        }
    }
}
