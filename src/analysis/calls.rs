//! The call graph's order: the one walk over it after the checker (which
//! walks its own record of calls only to report recursion, E0114).

use super::ModuleInfo;
use crate::ir::FuncId;

/// Functions in an order where each comes after the functions it calls
/// (as far as cycles, which are errors, allow).
pub struct Order {
    /// Every function: the order their summaries are computed in.
    pub all: Vec<FuncId>,
    /// Only those the kernels reach: the order they are written in.
    pub reached: Vec<FuncId>,
}

/// Depth-first, callees in the order the body first calls them, roots in
/// declaration order; a function is placed after its last callee returns.
pub fn order(info: &ModuleInfo) -> Order {
    let n = info.functions.len();
    let callees = |f: usize| {
        info.functions
            .get(f)
            .map_or(&[][..], |fi| fi.body.usage.calls.as_slice())
    };
    let mut placed = vec![false; n];
    let mut all = Vec::with_capacity(n);
    for root in 0..n {
        if placed.get(root) != Some(&false) {
            continue;
        }
        if let Some(p) = placed.get_mut(root) {
            *p = true;
        }
        // An explicit stack (function, next callee to visit): call chains
        // may be as long as the program.
        let mut stack = vec![(root, 0usize)];
        while let Some((f, next)) = stack.last_mut() {
            let f = *f;
            let callee = callees(f).get(*next).map(|c| c.index());
            *next += 1;
            match callee {
                Some(c) if placed.get(c) == Some(&false) => {
                    if let Some(p) = placed.get_mut(c) {
                        *p = true;
                    }
                    stack.push((c, 0));
                }
                Some(_) => {}
                None => {
                    all.push(FuncId(f as u32));
                    stack.pop();
                }
            }
        }
    }
    let mut reached = vec![false; n];
    let mut work: Vec<FuncId> = info
        .kernels
        .iter()
        .flat_map(|k| k.body.usage.calls.iter().copied())
        .collect();
    while let Some(f) = work.pop() {
        match reached.get_mut(f.index()) {
            Some(r) if !*r => *r = true,
            _ => continue,
        }
        work.extend(callees(f.index()).iter().copied());
    }
    let reached = all
        .iter()
        .copied()
        .filter(|f| reached.get(f.index()).copied().unwrap_or(false))
        .collect();
    Order { all, reached }
}
