//! The PTX of fragments (language.md §16.7): every `wgmma` that reads its
//! A operand from registers (RS) comes after a `wgmma.fence` that follows
//! the last ordinary write of those registers (PTX ISA 9.7.15.4), in each
//! instantiation of `samples/flash_attention_fwd.kdsl` and in
//! `tests/valid/fragments.kdsl`; the check itself fails on the same PTX
//! with the fence taken out (the mistake hand-written kernels make, and
//! kdsl cannot: the compiler places the fence).

use crate::common::{for_target, repo_root};
use kdsl::target::Target;

/// The registers `{%accP_i, ...}` an RS wgmma line reads as A.
fn a_registers(line: &str) -> Option<Vec<String>> {
    if !line.contains("wgmma.mma_async") {
        return None;
    }
    // `wgmma... {d...}, {a0, a1, a2, a3}, descB, ...`: the second brace.
    let rest = &line[line.find('}')? + 1..];
    let open = rest.find('{')?;
    if rest[..open].trim() != "," {
        return None;
    }
    let close = rest.find('}')?;
    Some(
        rest[open + 1..close]
            .split(',')
            .map(|r| r.trim().to_string())
            .collect(),
    )
}

/// The RS wgmmas of `ptx` whose A registers were written after the last
/// `wgmma.fence` before them (by line number).
fn unfenced(ptx: &str) -> (usize, Vec<usize>) {
    let lines: Vec<&str> = ptx.lines().collect();
    let (mut rs, mut bad) = (0, Vec::new());
    for (i, l) in lines.iter().enumerate() {
        let Some(regs) = a_registers(l) else {
            continue;
        };
        rs += 1;
        for prev in lines[..i].iter().rev() {
            let p = prev.trim();
            if p.starts_with("wgmma.fence") {
                break;
            }
            // An ordinary instruction whose destination is an A register.
            let dest = p.split_whitespace().nth(1).map(|d| d.trim_end_matches(','));
            if !p.starts_with("wgmma.") && dest.is_some_and(|d| regs.iter().any(|r| r == d)) {
                bad.push(i + 1);
                break;
            }
        }
    }
    (rs, bad)
}

fn compile(path: &str, consts: &[&str]) -> String {
    let opts = kdsl::Options {
        consts: consts
            .iter()
            .map(|c| c.parse().expect("a --const"))
            .collect(),
        ..for_target(Target::Sm90a)
    };
    let c = kdsl::compile(&repo_root().join(path), &opts).expect("readable");
    assert!(c.diagnostics.is_empty(), "{path}: {:?}", c.diagnostics);
    c.ptx.expect("PTX")
}

#[test]
fn every_rs_wgmma_is_fenced_after_its_registers_are_written() {
    let attention = compile(
        "samples/flash_attention_fwd.kdsl",
        &["HEAD_DIM=64", "HEAD_DIM=128", "CAUSAL=false", "CAUSAL=true"],
    );
    let valid = compile("tests/valid/fragments.kdsl", &[]);
    for (name, ptx, want) in [("attention", &attention, 4 * 8), ("fragments", &valid, 4)] {
        let (rs, bad) = unfenced(ptx);
        assert_eq!(rs, want, "{name}: RS wgmmas in the PTX");
        assert!(
            bad.is_empty(),
            "{name}: RS wgmmas without a fence at lines {bad:?}"
        );
    }
    // The check sees a missing fence: the first one after each
    // conversion taken out.
    let mut broken = String::new();
    let mut after_cvt = false;
    for l in attention.lines() {
        if l.contains("cvt.rn.bf16x2.f32") {
            after_cvt = true;
        } else if after_cvt && l.trim() == "wgmma.fence.sync.aligned;" {
            after_cvt = false;
            continue;
        }
        broken.push_str(l);
        broken.push('\n');
    }
    let (_, bad) = unfenced(&broken);
    // Each of the eight RS wgmmas of a tile reads registers the
    // conversion wrote, in each of the four instantiations.
    assert_eq!(bad.len(), 4 * 8, "every RS wgmma unfenced");
}
