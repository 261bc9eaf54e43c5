//! Every combination of atomic operation, element type, memory order,
//! scope and state space the checker accepts assembles with ptxas (sm_90,
//! and sm_80 without the cluster scope and remote places), and every
//! combination it rejects is the one diagnostic it should be.

use crate::common::{for_target, kernel_head, ptxas};
use kdsl::ir::{AtomicOp, MemOrder, MemScope};
use kdsl::target::Target;
use kdsl::types::Scalar;

const TYPES: [Scalar; 9] = [
    Scalar::U32,
    Scalar::I32,
    Scalar::U64,
    Scalar::I64,
    Scalar::F32,
    Scalar::F64,
    Scalar::F16,
    Scalar::BF16,
    Scalar::Bool,
];

const ORDERS: [MemOrder; 4] = [
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Release,
    MemOrder::AcqRel,
];

/// `atomic_xxx(place, args..., order = o, scope = s)` for `t`.
fn call(op: AtomicOp, place: &str, t: Scalar, sem: &str) -> String {
    let v = if t.is_float() { "1.0" } else { "1" };
    let args = match op {
        AtomicOp::Cas => format!("{v}, {v}"),
        _ => v.to_string(),
    };
    format!("    {}({place}, {args}{sem});\n", op.name())
}

/// A kernel with every accepted atomic on `places` (one per type: the
/// place's text with `{t}` for the type's name), every order at every
/// scope in `scopes`, plus the default.
fn program(cluster: bool, scopes: &[MemScope]) -> String {
    let params: Vec<String> = TYPES
        .iter()
        .map(|t| format!("g_{t}: global mut [{t}]", t = t.name()))
        .collect();
    let mut text = kernel_head("every_atomic", &params, cluster, &TYPES, 4);
    let mut places = vec!["g_{t}[0]", "s_{t}[1]"];
    if cluster {
        places.push("remote(s_{t}, 1)[2]");
    }
    let mut sems = vec![String::new()];
    for o in ORDERS {
        for s in scopes {
            sems.push(format!(", order = {}, scope = {}", o.name(), s.name()));
        }
    }
    for op in AtomicOp::ALL {
        for t in TYPES.into_iter().filter(|t| op.accepts(*t)) {
            for p in &places {
                let place = p.replace("{t}", t.name());
                for sem in &sems {
                    // A peer's memory at CTA scope is E0143 (tested below).
                    if place.starts_with("remote") && sem.ends_with("scope = cta") {
                        continue;
                    }
                    text.push_str(&call(op, &place, t, sem));
                }
            }
        }
    }
    text.push_str("}\n");
    text
}

fn compile(text: &str, target: Target) -> kdsl::Compilation {
    kdsl::compile_str("every_atomic.kdsl", text, &for_target(target))
}

#[test]
fn every_accepted_combination_assembles() {
    let all = [
        MemScope::Cta,
        MemScope::Cluster,
        MemScope::Gpu,
        MemScope::Sys,
    ];
    let older = [MemScope::Cta, MemScope::Gpu, MemScope::Sys];
    let cases = [
        (program(true, &all), Target::Sm90, "sm_90"),
        (program(false, &older), Target::Sm80, "sm_80"),
    ];
    let ptxas = ptxas::require_ptxas();
    for (text, target, arch) in cases {
        let c = compile(&text, target);
        let errors: Vec<_> = c.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{arch}: {errors:#?}");
        let ptx = c.ptx.expect("PTX");
        assert!(ptx.matches("atom.").count() > 1000, "{arch}");
        if let Some(p) = &ptxas {
            ptxas::assemble(p, &ptx, arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        }
    }
}

#[test]
fn every_rejected_element_type_is_e0118() {
    for op in AtomicOp::ALL {
        for t in TYPES.into_iter().filter(|t| !op.accepts(*t)) {
            let v = match t {
                Scalar::Bool => "true",
                t if t.is_float() => "1.0",
                _ => "1",
            };
            let args = if op == AtomicOp::Cas {
                format!("{v}, {v}")
            } else {
                v.to_string()
            };
            let text = format!(
                "kernel k(g: global mut [{t}]) block(32) {{\n    {}(g[0], {args});\n}}\n",
                op.name(),
                t = t.name()
            );
            let c = compile(&text, Target::Sm90);
            let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(codes, ["E0118"], "{} on {}", op.name(), t.name());
        }
    }
}

#[test]
fn cta_scope_on_a_peer_ctas_memory_is_e0143() {
    for op in AtomicOp::ALL {
        let args = if op == AtomicOp::Cas { "1, 1" } else { "1" };
        for (scope, codes) in [
            ("scope = cta", vec!["E0143"]),
            ("order = acquire, scope = cta", vec!["E0143"]),
            ("scope = cluster", vec![]),
            ("order = release", vec![]),
        ] {
            let text = format!(
                "kernel k(g: global mut [u32]) block(32) cluster(2) {{\n    \
                 shared s: [u32; 1];\n    {}(remote(s, 1)[0], {args}, {scope});\n    \
                 cluster_sync();\n    g[0] = s[0];\n}}\n",
                op.name()
            );
            let c = compile(&text, Target::Sm90);
            let got: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(got, codes, "{} with {scope}", op.name());
        }
    }
}

#[test]
fn cluster_scope_is_e0200_before_sm_90_and_sc_is_e0142_everywhere() {
    for op in AtomicOp::ALL {
        let args = if op == AtomicOp::Cas { "1, 1" } else { "1" };
        for (sem, target, code) in [
            ("scope = cluster", Target::Sm80, "E0200"),
            ("scope = cluster", Target::Sm86, "E0200"),
            ("order = sc", Target::Sm90, "E0142"),
            ("order = sc, scope = cta", Target::Sm80, "E0142"),
        ] {
            let text = format!(
                "kernel k(g: global mut [u32]) block(32) {{\n    {}(g[0], {args}, {sem});\n}}\n",
                op.name()
            );
            let c = compile(&text, target);
            let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(codes, [code], "{} with {sem} on {target:?}", op.name());
        }
    }
}
