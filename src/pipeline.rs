//! The compiler pipeline as one function: load and parse every file, check,
//! run the barrier pass, write PTX. The checker and the barrier pass run on
//! whatever parsed and checked, so one run reports every independent error;
//! PTX is written only when there are none. Every diagnostic found on the
//! way is returned.

use crate::diagnostics::{self, Diagnostic, Diags, Misread, Severity};
use crate::input::{self, BadUtf8};
use crate::source::{SourceFile, SourceMap};
use crate::span::{FileId, Span};
use crate::syntax::ast;
use crate::target::Target;
use crate::{analysis, barriers, check, ir, opt, ptx, syntax, warpgroup};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What the user asked for, as far as the compiler proper is concerned.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub target: Target,
    /// `-D warnings`: warnings count as errors.
    pub deny_warnings: bool,
    /// `-A CODE`: diagnostics with these codes are dropped (warnings only).
    pub allow: Vec<String>,
    /// Stop after checking: do not write PTX (`kdslc check`, the LSP).
    pub check_only: bool,
    /// `--lineinfo`: `.file`/`.loc` directives in the PTX.
    pub lineinfo: bool,
    /// Nothing reads the syntax trees after compiling (a command-line
    /// build of PTX, a cubin or the IR): [`Compilation::files`] is emptied
    /// once the checker is done, so that a large file's peak memory holds
    /// its AST or its PTX, never both.
    pub drop_syntax: bool,
    /// `--passes`: the optimisation passes to run before writing PTX
    /// (all by default; [`opt`]).
    pub passes: opt::Passes,
    /// `--const`: the values of kernel constants to compile instantiations
    /// for ([`check::instances`]); none: each kernel's defaults.
    pub consts: Vec<check::instances::ConstArg>,
    /// `.entry` names the caller wants (`kdslc sim --kernel NAME`): the
    /// name of an instantiation adds it to those compiled.
    pub entries: Vec<String>,
}

/// The result of compiling one root file.
#[derive(Debug, Default)]
pub struct Compilation {
    /// Every file read: the root first, then imports in load order.
    pub sources: SourceMap,
    /// Every diagnostic: first what reading the files found (the lexer's
    /// and the parser's errors, the imports'), then what the later stages
    /// found, each part sorted by position (file by file in load order) and
    /// capped ([`diagnostics::cap`]).
    pub diagnostics: Vec<Diagnostic>,
    /// The parsed files (with error nodes where recovery happened).
    pub files: Vec<(FileId, ast::File)>,
    /// The IR the checker lowered: complete when there are no errors;
    /// otherwise partial (statements that failed to check are left out or
    /// `Poisoned`), still good for the language server, never for PTX.
    pub module: Option<ir::Module>,
    /// The PTX module, when there were no errors and PTX was asked for.
    pub ptx: Option<String>,
    /// For each line of `ptx`, the span of the IR node it was written for
    /// (`None` for headers, declarations, labels and `.loc` lines).
    pub ptx_line_spans: Vec<Option<Span>>,
    /// Imported files on disk (for depfiles), in load order.
    pub imports: Vec<PathBuf>,
    /// Each `import` (the span of its path) that loaded a file, with that
    /// file: the order of definitions follows it (E0101).
    pub loaded_by: Vec<(Span, FileId)>,
    /// Every resolved use of a name and its definition (for editors).
    pub references: Vec<check::Reference>,
    /// A broken invariant inside the compiler (the PTX writer could not
    /// write the checked module; in debug builds, the IR failed
    /// verification): a bug in kdslc, which the driver reports as an
    /// internal error (exit 3). `ptx` is then `None`.
    pub internal_error: Option<String>,
    /// A `--const` no kernel of the file can take (a usage error, exit
    /// status 2): nothing was checked.
    pub usage_error: Option<String>,
}

impl Compilation {
    /// The errors found, those an "and N more" stands for included.
    pub fn error_count(&self) -> usize {
        self.count(Severity::Error)
    }

    /// The warnings found, those an "and N more" stands for included.
    pub fn warning_count(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .map(Diagnostic::weight)
            .sum()
    }

    /// True when the build must fail (errors, or warnings under `-D warnings`).
    pub fn failed(&self, opts: &Options) -> bool {
        self.error_count() > 0 || (opts.deny_warnings && self.warning_count() > 0)
    }
}

/// Compiles the file at `path`. Only an unreadable root file is an `Err`
/// (a usage/I-O problem, exit status 2: missing, not a regular file, too
/// large); everything else, a file that is not UTF-8 included, is a
/// diagnostic.
pub fn compile(path: &Path, opts: &Options) -> Result<Compilation, input::ReadError> {
    let decoded = input::read_source(path)?;
    let name = path.display().to_string();
    let root = SourceFile::new(name, Some(path.to_path_buf()), decoded.text);
    Ok(compile_file(root, decoded.bad_utf8, opts))
}

/// Compiles source text. `name` is shown in diagnostics; imports are
/// resolved relative to its directory.
pub fn compile_str(name: &str, text: &str, opts: &Options) -> Compilation {
    let root = SourceFile::new(name, Some(PathBuf::from(name)), text);
    compile_file(root, None, opts)
}

fn compile_file(root: SourceFile, bad_utf8: Option<BadUtf8>, opts: &Options) -> Compilation {
    crate::stack::with_big_stack(|| compile_file_inner(root, bad_utf8, opts))
}

fn compile_file_inner(root: SourceFile, bad_utf8: Option<BadUtf8>, opts: &Options) -> Compilation {
    let mut c = Compilation::default();
    let mut diags = Vec::new();
    // Where the lexer and the parser reported errors: they decide which of
    // the later stages' diagnostics are consequences.
    let mut misread_lines = Vec::new();
    load_all(root, bad_utf8, &mut c, &mut diags, &mut misread_lines);

    // The later stages' diagnostics, capped, without those on the rest of a
    // line a syntax error may have misread (see `Misread`).
    let mut later = Diags::after_syntax(Rc::new(Misread::new(misread_lines)));
    let request = check::instances::Request {
        consts: &opts.consts,
        entries: &opts.entries,
    };
    let mut checked = check::check_instances_into(
        &c.sources,
        &c.files,
        &c.loaded_by,
        opts.target,
        request,
        &mut later,
    );
    if checked.usage.is_some() {
        c.usage_error = checked.usage;
        return c;
    }
    c.references = checked.references;
    // The facts every later stage reads, computed once; then the barrier
    // pass, on what checked, errors elsewhere or not (see
    // `barriers::check`), so that every independent error is reported.
    let mut info = analysis::analyze(&checked.module);
    // The instantiations of kernels with constants are checked one by one
    // (each diagnostic is said once, naming the instantiations it was
    // found in); the rest as one module.
    let mut per_instance = std::mem::take(&mut checked.instance_diags);
    let held = take_instances(&mut checked.module, &mut info);
    later.extend(check::after_analysis(&checked.module, &info));
    later.extend(barriers::check(&checked.module, &info, &c.sources));
    later.extend(warpgroup::check(&checked.module, &info));
    for (i, k, ki) in &held {
        let mut found = check::after_analysis_kernel(k, ki);
        found.extend(barriers::check_kernel(
            &checked.module,
            &info,
            k,
            ki,
            &c.sources,
        ));
        found.extend(warpgroup::check_kernel(k, ki));
        per_instance.push((*i, found));
    }
    let has_errors = diags
        .iter()
        .chain(later.iter())
        .chain(per_instance.iter().flat_map(|(_, l)| l))
        .any(Diagnostic::is_error);
    // Loop hints the optimiser cannot honour (on a complete module only:
    // its facts need every declaration).
    if !has_errors {
        later.extend(
            opt::hints::unhonoured(&checked.module, &info)
                .iter()
                .map(opt::hints::Unhonoured::to_diagnostic),
        );
        for (i, k, ki) in &held {
            let found = opt::hints::unhonoured_kernel(k, ki);
            per_instance.push((
                *i,
                found
                    .iter()
                    .map(opt::hints::Unhonoured::to_diagnostic)
                    .collect(),
            ));
        }
    }
    put_back_instances(&mut checked.module, &mut info, held);
    later.extend(check::instances::merge(&checked.module, per_instance));
    verify_in_debug("the checker", &checked.module, has_errors, &mut c);
    c.module = Some(checked.module);
    if opts.drop_syntax {
        c.files = Vec::new();
    }

    // What reading the files found (syntax errors, imports) comes first,
    // in every file: it can explain what the later stages report, in the
    // same file or in one that imports it (a broken item in an imported
    // file, then the root's uses of its name). Each part is in source
    // order, and capped.
    let mut shown = finish(diags, opts);
    shown.extend(finish(later.into_vec(), opts));
    c.diagnostics = shown;

    // Only a module without errors is complete: nothing else is optimised
    // or written.
    if !opts.check_only && !c.failed(opts) && c.internal_error.is_none() {
        if let Some(mut module) = c.module.take() {
            let optimised = optimise(&mut module, &opts.passes);
            c.module = Some(module);
            let Some(module) = &c.module else {
                return c;
            };
            let info = match optimised {
                // The facts are keyed by ids the passes replaced: again
                // (the old ones freed first: they are as large as the new).
                Ok(true) => {
                    drop(info);
                    analysis::analyze(module)
                }
                Ok(false) => info,
                Err(e) => {
                    c.internal_error = Some(e);
                    return c;
                }
            };
            let lineinfo = opts.lineinfo.then_some(&c.sources);
            match ptx::write_mapped(module, &info, opts.target, lineinfo) {
                Ok(mapped) => {
                    c.ptx = Some(mapped.text);
                    c.ptx_line_spans = mapped.spans;
                }
                // A module without errors that the writer cannot write is
                // kdslc's bug, not the program's.
                Err(e) => c.internal_error = Some(e.describe(&c.sources)),
            }
        }
    }
    c
}

/// Takes the instantiations of kernels with constants (and their facts)
/// out of the module, with their indices: the stages that check a whole
/// module then see the other kernels, and each instantiation is checked on
/// its own ([`put_back_instances`] restores the order). Nothing moves in a
/// module without them.
fn take_instances(
    module: &mut ir::Module,
    info: &mut analysis::ModuleInfo,
) -> Vec<(usize, ir::Kernel, analysis::KernelInfo)> {
    if module.kernels.iter().all(|k| k.instance.is_none()) {
        return Vec::new();
    }
    let kernels = std::mem::take(&mut module.kernels);
    let facts = std::mem::take(&mut info.kernels);
    let mut held = Vec::new();
    for (i, (k, ki)) in kernels.into_iter().zip(facts).enumerate() {
        if k.instance.is_some() {
            held.push((i, k, ki));
        } else {
            module.kernels.push(k);
            info.kernels.push(ki);
        }
    }
    held
}

/// Undoes [`take_instances`].
fn put_back_instances(
    module: &mut ir::Module,
    info: &mut analysis::ModuleInfo,
    held: Vec<(usize, ir::Kernel, analysis::KernelInfo)>,
) {
    if held.is_empty() {
        return;
    }
    let plain = std::mem::take(&mut module.kernels)
        .into_iter()
        .zip(std::mem::take(&mut info.kernels));
    let mut held = held.into_iter().peekable();
    let mut plain = plain.peekable();
    let mut i = 0;
    loop {
        let next = match held.peek() {
            Some((at, _, _)) if *at == i => held.next().map(|(_, k, ki)| (k, ki)),
            _ => plain
                .next()
                .or_else(|| held.next().map(|(_, k, ki)| (k, ki))),
        };
        let Some((k, ki)) = next else { break };
        module.kernels.push(k);
        info.kernels.push(ki);
        i += 1;
    }
}

/// One part of the diagnostics as shown: `-A` and `-D warnings` applied,
/// sorted, each reported once, capped.
pub(crate) fn finish(mut diags: Vec<Diagnostic>, opts: &Options) -> Vec<Diagnostic> {
    diags.retain(|d| !(d.severity == Severity::Warning && opts.allow.iter().any(|a| a == d.code)));
    if opts.deny_warnings {
        for d in &mut diags {
            d.severity = Severity::Error;
        }
    }
    diagnostics::sort(&mut diags);
    diagnostics::cap::limit(diags)
}

/// Runs the optimisation passes on a module without errors, verifying the
/// IR after each in debug builds; `Ok(true)` when some pass changed it, an
/// `Err` naming the pass whose IR failed verification.
fn optimise(module: &mut ir::Module, passes: &opt::Passes) -> Result<bool, String> {
    opt::run(module, passes, |step, m| {
        if !cfg!(debug_assertions) {
            return Ok(());
        }
        ir::verify::module(m, ir::verify::Mode::Complete).map_err(|errors| {
            let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            format!(
                "the pass `{}` left IR that fails verification: {}",
                step,
                list.join("; ")
            )
        })
    })
}

/// In debug builds (the tests), the IR a stage built or changed must hold
/// every invariant of `ir` ([`ir::verify`]): completely when nothing failed,
/// partially otherwise. A failure is a compiler bug. It runs after the
/// checker, and each pass that rewrites the IR is to be followed by it.
fn verify_in_debug(stage: &str, module: &ir::Module, has_errors: bool, c: &mut Compilation) {
    if !cfg!(debug_assertions) {
        return;
    }
    let mode = if has_errors {
        ir::verify::Mode::Partial
    } else {
        ir::verify::Mode::Complete
    };
    if let Err(errors) = ir::verify::module(module, mode) {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        c.internal_error = Some(format!(
            "{stage} left IR that fails verification: {}",
            list.join("; ")
        ));
    }
}

/// Parses the root file and, transitively, every file it imports (each
/// loaded once; a cycle is E0131). A file that is not UTF-8 gets E0004 and
/// is not parsed.
fn load_all(
    root: SourceFile,
    bad_utf8: Option<BadUtf8>,
    c: &mut Compilation,
    diags: &mut Vec<Diagnostic>,
    syntax_errors: &mut Vec<Span>,
) {
    let mut loaded: HashMap<PathBuf, FileId> = HashMap::new();
    let root_key = root.path.as_deref().map(canonical);
    let root_id = c.sources.add(root);
    if let Some(bad) = bad_utf8 {
        diags.push(bad.into_diagnostic(root_id));
        return;
    }
    if let Some(key) = root_key {
        loaded.insert(key, root_id);
    }
    let mut stack = Vec::new();
    load_rec(root_id, c, diags, syntax_errors, &mut loaded, &mut stack);
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

fn load_rec(
    id: FileId,
    c: &mut Compilation,
    diags: &mut Vec<Diagnostic>,
    syntax_errors: &mut Vec<Span>,
    loaded: &mut HashMap<PathBuf, FileId>,
    stack: &mut Vec<(FileId, Span)>,
) {
    let Some(file) = c.sources.get(id) else {
        return;
    };
    let parsed = syntax::parse_parts(id, &file.text);
    let ast = parsed.tree;
    let base = file
        .path
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    syntax_errors.extend(parsed.misread_lines);
    diags.extend(parsed.misread);
    diags.extend(parsed.too_deep);
    let imports: Vec<ast::Import> = ast
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Import(imp) => Some(imp.clone()),
            _ => None,
        })
        .collect();
    c.files.push((id, ast));

    for imp in imports {
        let path = base.join(&imp.path);
        let key = canonical(&path);
        if let Some(&existing) = loaded.get(&key) {
            if let Some(pos) = stack
                .iter()
                .position(|(f, _)| *f == existing)
                .or((existing == id).then_some(usize::MAX))
            {
                diags.push(cycle_diagnostic(c, stack, pos, existing, id, imp.path_span));
            }
            continue;
        }
        let decoded = match input::read_source(&path) {
            Ok(d) => d,
            Err(e) => {
                let d = Diagnostic::error(
                    "E0130",
                    format!("cannot read imported file `{}`: {e}", imp.path),
                )
                .primary(imp.path_span, "imported here")
                .note(format!(
                    "imports are resolved relative to the importing file: `{}`",
                    path.display()
                ));
                diags.push(import_chain(d, stack));
                continue;
            }
        };
        let name = path.display().to_string();
        let new_id = c
            .sources
            .add(SourceFile::new(name, Some(path.clone()), decoded.text));
        loaded.insert(key, new_id);
        c.imports.push(path);
        c.loaded_by.push((imp.path_span, new_id));
        if let Some(bad) = decoded.bad_utf8 {
            let d = bad
                .into_diagnostic(new_id)
                .secondary(imp.path_span, "imported here");
            diags.push(import_chain(d, stack));
            continue;
        }
        stack.push((id, imp.path_span));
        load_rec(new_id, c, diags, syntax_errors, loaded, stack);
        stack.pop();
    }
}

/// Labels the imports that lead from the root file to the file a
/// diagnostic is about (`stack`: each importing file and its import, the
/// root's first): a file that could not be loaded has errors only there, and
/// every file up the chain, the one being edited included, shows the
/// diagnostic at its own import (the language server places it on the
/// first label in its document).
fn import_chain(mut d: Diagnostic, stack: &[(FileId, Span)]) -> Diagnostic {
    for (_, span) in stack.iter().rev() {
        d = d.secondary(*span, "which is imported here");
    }
    d
}

/// E0131: `importer` imports `target`, which is still being loaded further up
/// the stack (or is `importer` itself). The primary label is the import that
/// starts the cycle; the others are secondary.
fn cycle_diagnostic(
    c: &Compilation,
    stack: &[(FileId, Span)],
    pos: usize,
    target: FileId,
    importer: FileId,
    span: Span,
) -> Diagnostic {
    let name = |f: FileId| c.sources.get(f).map_or(String::new(), |s| s.name.clone());
    let cycle = stack.get(pos..).unwrap_or(&[]);
    let mut files: Vec<String> = cycle.iter().map(|(f, _)| name(*f)).collect();
    files.push(name(importer));
    files.push(name(target));
    let mut spans: Vec<Span> = cycle.iter().map(|(_, s)| *s).collect();
    spans.push(span);
    let mut d = Diagnostic::error("E0131", format!("import cycle: {}", files.join(" -> ")));
    for (i, s) in spans.iter().enumerate() {
        d = if i == 0 {
            d.primary(*s, "the cycle starts with this import")
        } else if i + 1 == spans.len() {
            d.secondary(*s, "and closes with this one")
        } else {
            d.secondary(*s, "which imports")
        };
    }
    d.help("move what the files share into a file that imports neither of them")
}
