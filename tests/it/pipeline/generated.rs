//! Generated valid programs (`common::gen_program`) that, over a run,
//! exercise every construct of docs/language.md and every operand
//! boundary: each compiles without diagnostics, ptxas accepts its PTX for
//! sm_90 and, when it needs nothing newer, for sm_80; each boundary stepped
//! over by one is exactly the expected error and writes no PTX (so it never
//! reaches ptxas). A coverage check fails when the generator stops
//! producing a construct or a boundary.
//!
//! `generated_programs_cover_the_language` runs a fixed set in every test
//! run; `generated_programs_long` (ignored) runs for `KDSL_FUZZ_SECONDS`
//! (default 60) from `KDSL_FUZZ_SEED` (default: the clock), and is what
//! `scripts/fuzz-long.sh` runs (CI: 60 s).

use crate::common::gen_program::{program, required_features, Program};
use crate::common::{for_target, ptxas};
use kdsl::target::Target;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Programs in the fixed run: enough for every sweep to go round.
const FIXED: u64 = 64;

fn compile(dir: &Path, p: &Program, source: &str, target: Target) -> kdsl::Compilation {
    let main = dir.join("main.kdsl");
    std::fs::write(&main, source).expect("write main.kdsl");
    if let Some(lib) = &p.lib {
        std::fs::write(dir.join("lib.kdsl"), lib).expect("write lib.kdsl");
    }
    let opts = kdsl::Options {
        target,
        allow: p.allow.iter().map(|s| s.to_string()).collect(),
        consts: p
            .consts
            .iter()
            .map(|c| c.parse().expect("a --const"))
            .collect(),
        ..kdsl::Options::default()
    };
    kdsl::compile(&main, &opts).expect("readable root")
}

fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:>4} | {l}\n", i + 1))
        .collect()
}

/// Everything one program must satisfy; `Err` says what failed.
fn check(p: &Program, ptxas: Option<&Path>) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut targets = vec![(Target::Sm90, "sm_90")];
    if !p.sm90 {
        targets.push((Target::Sm80, "sm_80"));
    }
    if p.sm90a {
        targets = vec![(Target::Sm90a, "sm_90a")];
    }
    let variant_target = if p.sm90a { Target::Sm90a } else { Target::Sm90 };
    for (target, arch) in targets {
        let c = compile(dir.path(), p, &p.source, target);
        if !c.diagnostics.is_empty() {
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            return Err(format!("{arch}: diagnostics:\n{shown}"));
        }
        let ptx = c.ptx.ok_or(format!("{arch}: no PTX"))?;
        if let Some(ptxas) = ptxas {
            ptxas::assemble(ptxas, &ptx, arch).map_err(|e| format!("{arch}: ptxas: {e}"))?;
        }
    }
    for v in &p.variants {
        let source = p.variant_source(v);
        if source == p.source {
            return Err(format!(
                "{}: the marker `{}` is not in the program",
                v.what, v.marker
            ));
        }
        let c = compile(dir.path(), p, &source, variant_target);
        let errors: Vec<&str> = c
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.code)
            .collect();
        if errors != [v.code] || c.ptx.is_some() {
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            return Err(format!(
                "variant {}: want exactly {}, got {errors:?} (PTX written: {}):\n{shown}",
                v.what,
                v.code,
                c.ptx.is_some()
            ));
        }
    }
    Ok(())
}

struct Run {
    programs: u64,
    variants: usize,
    covered: BTreeSet<String>,
}

/// Checks programs `0..end` (or until `until`) on two threads (ptxas runs
/// as a process of its own, so the two cores both work).
fn run(seed: u64, end: u64, until: Option<Instant>) -> Run {
    let ptxas = ptxas::require_ptxas();
    let next = std::sync::atomic::AtomicU64::new(0);
    let total = std::sync::Mutex::new(Run {
        programs: 0,
        variants: 0,
        covered: BTreeSet::new(),
    });
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if index >= end || until.is_some_and(|t| Instant::now() >= t) {
                    return;
                }
                let p = program(index, seed);
                if let Err(e) = check(&p, ptxas.as_deref()) {
                    panic!(
                        "generated program {index} (seed {seed}) fails: {e}\n{}{}",
                        numbered(&p.source),
                        p.lib
                            .as_deref()
                            .map(|l| format!("--- lib.kdsl ---\n{l}"))
                            .unwrap_or_default()
                    );
                }
                let mut r = total.lock().unwrap_or_else(|e| e.into_inner());
                r.programs += 1;
                r.variants += p.variants.len();
                r.covered.extend(p.features);
            });
        }
    });
    total.into_inner().unwrap_or_else(|e| e.into_inner())
}

fn assert_covered(r: &Run) {
    let missing: Vec<String> = required_features()
        .into_iter()
        .filter(|f| !r.covered.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "after {} programs the generator has not produced: {missing:#?}",
        r.programs
    );
}

#[test]
fn generated_programs_cover_the_language() {
    let r = run(1, FIXED, None);
    assert_covered(&r);
    assert!(r.variants > 200, "{} variants", r.variants);
}

/// Every covered feature is one the coverage check knows: a typo in a
/// feature's name would otherwise be covered by nothing and required by
/// nothing.
#[test]
fn generated_features_are_all_required() {
    let required: BTreeSet<String> = required_features().into_iter().collect();
    let mut unknown = BTreeSet::new();
    for index in 0..FIXED {
        for f in program(index, 1).features {
            if !required.contains(&f) {
                unknown.insert(f);
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "features no check requires: {unknown:#?}"
    );
}

/// The long run: `scripts/fuzz-long.sh SECONDS` (CI: 60 s).
#[test]
#[ignore = "long: run by scripts/fuzz-long.sh"]
fn generated_programs_long() {
    let seconds: u64 = std::env::var("KDSL_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("KDSL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        });
    eprintln!(
        "generated_programs_long: seed {seed} (KDSL_FUZZ_SEED={seed} repeats it), {seconds} s"
    );
    let start = Instant::now();
    let r = run(seed, u64::MAX, Some(start + Duration::from_secs(seconds)));
    eprintln!(
        "generated_programs_long: {} programs, {} invalid-by-one variants, {} features in {:.0} s",
        r.programs,
        r.variants,
        r.covered.len(),
        start.elapsed().as_secs_f64()
    );
    if r.programs >= FIXED {
        assert_covered(&r);
    }
}

/// Found by the generator: a group of 64 barriers whose tracked parity a
/// `wait()` and then a `test()` read made ptxas 13.5 crash (SIGSEGV) for
/// sm_80, sm_86 and sm_89 while the parities lived in one 64-bit word; the
/// writer now keeps them in 32-bit words.
#[test]
fn many_barriers_with_tracked_parity_assemble_on_every_target() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let src = "kernel main(out: global mut [f32]) block(64) {
    barrier bar[64]: cta(arrivals = 1);
    if warp_id == 0 {
        bar[63].arrive();
    }
    bar[63].wait();
    bar[3].wait(1);
    let t = bar[3].test();
    let u = bar[thread_idx.x % 64].test();
    bar[thread_idx.x % 64].wait();
    out[thread_idx.x] = select(t, 1.0, 0.0) + select(u, 1.0, 0.0);
}
";
    for (target, arch) in [
        (Target::Sm80, "sm_80"),
        (Target::Sm86, "sm_86"),
        (Target::Sm89, "sm_89"),
        (Target::Sm90, "sm_90"),
    ] {
        let c = kdsl::compile_str("bars.kdsl", src, &for_target(target));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let ptx = c.ptx.expect("ptx");
        if let Err(e) = ptxas::assemble(&ptxas, &ptx, arch) {
            panic!("{arch}: {e}");
        }
    }
}
