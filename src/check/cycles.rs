//! The order constants are evaluated in, and cyclic constant definitions
//! (E0125): `const A: u32 = B + 1;` with `const B: u32 = A * 2;` has no
//! value, and says so by naming the cycle rather than by a "cannot find" for
//! a name that is right there.
//!
//! Constants may use constants declared after them. [`plan`] reads the names
//! each constant's value uses and orders the constants so that each comes
//! after those it uses (one depth-first walk, linear in the program), and
//! finds the cycles on the way.

use crate::span::Span;
use crate::syntax::ast;
use std::collections::HashMap;

/// How to evaluate a list of constants.
#[derive(Debug, Default)]
pub struct Plan {
    /// Indices into the list, each after the constants it uses.
    pub order: Vec<usize>,
    /// The cycles, each as (constant index, the use of the next constant in
    /// its value); every constant is in at most one cycle.
    pub cycles: Vec<Vec<(usize, Span)>>,
}

/// Plans the evaluation of `consts`. Uses of names that are not in `consts`
/// are left to the checker.
pub fn plan(consts: &[&ast::ConstItem]) -> Plan {
    let index: HashMap<&str, usize> = consts
        .iter()
        .enumerate()
        .map(|(i, c)| (&*c.name.name, i))
        .collect();
    // Each constant's edges: the first use of every other pending constant.
    let edges: Vec<Vec<(usize, Span)>> = consts
        .iter()
        .map(|c| {
            let mut uses = Uses::default();
            uses.expr(&c.value);
            let mut out: Vec<(usize, Span)> = Vec::new();
            for (name, span) in uses.found {
                if let Some(&j) = index.get(name.as_str()) {
                    if !out.iter().any(|(k, _)| *k == j) {
                        out.push((j, span));
                    }
                }
            }
            out
        })
        .collect();

    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; consts.len()];
    let mut in_cycle = vec![false; consts.len()];
    let mut plan = Plan::default();
    for root in 0..consts.len() {
        if marks.get(root) != Some(&Mark::New) {
            continue;
        }
        // An explicit stack (a long chain of constants must not overflow
        // the thread's stack): (constant, next edge to follow, the use that
        // led here).
        let mut path: Vec<(usize, usize, Span)> = vec![(root, 0, Span::default())];
        if let Some(m) = marks.get_mut(root) {
            *m = Mark::OnPath;
        }
        while let Some(&(node, next, _)) = path.last() {
            let edge = edges.get(node).and_then(|e| e.get(next)).copied();
            let Some((to, span)) = edge else {
                if let Some(m) = marks.get_mut(node) {
                    *m = Mark::Done;
                }
                plan.order.push(node);
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match marks.get(to).copied() {
                Some(Mark::New) => {
                    if let Some(m) = marks.get_mut(to) {
                        *m = Mark::OnPath;
                    }
                    path.push((to, 0, span));
                }
                Some(Mark::OnPath) if !in_cycle.get(to).copied().unwrap_or(true) => {
                    // The path from `to` back to itself: each constant with
                    // the use that leads to the next one.
                    let Some(start) = path.iter().position(|(n, _, _)| *n == to) else {
                        continue;
                    };
                    let members: Vec<usize> = path.iter().skip(start).map(|(n, _, _)| *n).collect();
                    if members
                        .iter()
                        .any(|m| in_cycle.get(*m).copied().unwrap_or(true))
                    {
                        continue;
                    }
                    let mut uses: Vec<Span> =
                        path.iter().skip(start + 1).map(|(_, _, s)| *s).collect();
                    uses.push(span);
                    for m in &members {
                        if let Some(c) = in_cycle.get_mut(*m) {
                            *c = true;
                        }
                    }
                    plan.cycles.push(members.into_iter().zip(uses).collect());
                }
                _ => {}
            }
        }
    }
    plan
}

/// The names an expression uses as values, in source order, except those
/// bound by a `let` or `for` inside it.
#[derive(Default)]
struct Uses {
    found: Vec<(String, Span)>,
    bound: Vec<std::sync::Arc<str>>,
}

impl Uses {
    fn name(&mut self, id: &ast::Ident) {
        if !self.bound.contains(&id.name) {
            self.found.push((id.name.to_string(), id.span));
        }
    }

    fn expr(&mut self, e: &ast::Expr) {
        // Deep left-leaning chains (`a + b + c + ...`) are walked in a loop.
        let mut e = e;
        loop {
            match &e.kind {
                ast::ExprKind::Name(n) => self.name(n),
                ast::ExprKind::Field { base, .. }
                | ast::ExprKind::Unary { operand: base, .. }
                | ast::ExprKind::Cast { expr: base, .. }
                | ast::ExprKind::Paren(base) => {
                    e = base;
                    continue;
                }
                ast::ExprKind::Index { base, indices, .. } => {
                    for i in indices {
                        match i {
                            ast::IndexArg::Expr(x) => self.expr(x),
                            ast::IndexArg::Range { lo, hi, .. } => {
                                for x in lo.iter().chain(hi) {
                                    self.expr(x);
                                }
                            }
                        }
                    }
                    e = base;
                    continue;
                }
                ast::ExprKind::Call { args, named, .. } => {
                    args.iter().for_each(|a| self.expr(a));
                    ast::named_args(named)
                        .iter()
                        .for_each(|n| self.expr(&n.value));
                }
                ast::ExprKind::MethodCall { receiver, args, .. } => {
                    args.iter().for_each(|a| self.expr(a));
                    e = receiver;
                    continue;
                }
                ast::ExprKind::Binary { lhs, rhs, .. } => {
                    self.expr(rhs);
                    e = lhs;
                    continue;
                }
                ast::ExprKind::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    self.expr(cond);
                    self.block(then_block);
                    self.block(else_block);
                }
                ast::ExprKind::Int { .. }
                | ast::ExprKind::WideInt(_)
                | ast::ExprKind::Float { .. }
                | ast::ExprKind::Bool(_)
                | ast::ExprKind::Error => {}
            }
            return;
        }
    }

    fn block(&mut self, b: &ast::Block) {
        let depth = self.bound.len();
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &b.tail {
            self.expr(t);
        }
        self.bound.truncate(depth);
    }

    fn stmt(&mut self, s: &ast::Stmt) {
        match &s.kind {
            ast::StmtKind::Let { name, init, .. } => {
                self.expr(init);
                self.bound.push(name.name.clone());
            }
            ast::StmtKind::LetArray { name, ty, init, .. } => {
                if let Some(ast::TypeExprKind::Array { dims, .. }) = ty.as_ref().map(|t| &t.kind) {
                    dims.iter().for_each(|d| self.expr(d));
                }
                match init.as_ref().map(|v| &v.kind) {
                    Some(ast::ArrayValueKind::List(items)) => {
                        items.iter().for_each(|x| self.expr(x))
                    }
                    Some(ast::ArrayValueKind::Repeat { value, dims }) => {
                        self.expr(value);
                        dims.iter().for_each(|d| self.expr(d));
                    }
                    None => {}
                }
                self.bound.push(name.name.clone());
            }
            ast::StmtKind::LetTuple { names, init, .. } => {
                self.expr(init);
                self.bound.extend(names.iter().map(|n| n.name.name.clone()));
            }
            ast::StmtKind::Assign { place, value, .. } => {
                self.expr(place);
                self.expr(value);
            }
            ast::StmtKind::If {
                cond,
                then_block,
                else_branch,
            } => {
                self.expr(cond);
                self.block(then_block);
                match else_branch {
                    Some(ast::ElseBranch::Block(b)) => self.block(b),
                    Some(ast::ElseBranch::If(s)) => self.stmt(s),
                    None => {}
                }
            }
            ast::StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            ast::StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                hint,
            } => {
                if let Some(a) = hint.as_ref().and_then(|h| h.arg.as_ref()) {
                    self.expr(a);
                }
                for x in [Some(start), Some(end), step.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    self.expr(x);
                }
                self.bound.push(var.name.clone());
                self.block(body);
                self.bound.pop();
            }
            ast::StmtKind::ForList {
                var, items, body, ..
            } => {
                items.iter().for_each(|x| self.expr(x));
                self.bound.push(var.name.clone());
                self.block(body);
                self.bound.pop();
            }
            ast::StmtKind::Return(Some(x)) | ast::StmtKind::Expr(x) => self.expr(x),
            ast::StmtKind::Shared { dims, .. } | ast::StmtKind::Accum { dims, .. } => {
                dims.iter().for_each(|d| self.expr(d))
            }
            ast::StmtKind::Barrier(d) => {
                for x in d.count.iter().chain([&d.arrivals]) {
                    self.expr(x);
                }
            }
            ast::StmtKind::Return(None)
            | ast::StmtKind::Break
            | ast::StmtKind::Continue
            | ast::StmtKind::Error => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consts(src: &str) -> Vec<ast::ConstItem> {
        let (file, diags) = crate::syntax::parse(crate::span::FileId(0), src);
        assert!(diags.is_empty(), "{diags:?}");
        file.items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Const(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    fn names(src: &str) -> Vec<Vec<String>> {
        let cs = consts(src);
        let refs: Vec<&ast::ConstItem> = cs.iter().collect();
        plan(&refs)
            .cycles
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .map(|(i, _)| cs[i].name.name.to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn each_constant_comes_after_those_it_uses() {
        let src = "const A: u32 = B + C;
const B: u32 = C * 2;
const C: u32 = 1;
const D: u32 = 2;";
        let cs = consts(src);
        let refs: Vec<&ast::ConstItem> = cs.iter().collect();
        let order: Vec<&str> = plan(&refs)
            .order
            .into_iter()
            .map(|i| &*cs[i].name.name)
            .collect();
        assert_eq!(order, ["C", "B", "A", "D"]);
    }

    #[test]
    fn cycles_are_found_once_each_in_order() {
        let src = "const A: u32 = B + 1;
const B: u32 = C * 2;
const C: u32 = A;
const D: u32 = D;
const E: u32 = A + 1;";
        assert_eq!(names(src), [vec!["A", "B", "C"], vec!["D"]]);
    }

    #[test]
    fn let_bound_names_are_not_uses() {
        let src = "const A: u32 = if true { let B = 1; B } else { 0 };
const B: u32 = A;";
        assert!(names(src).is_empty());
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let n = 50_000;
        let mut src = String::new();
        for i in 0..n {
            src.push_str(&format!("const C{i}: u32 = C{};\n", (i + 1) % n));
        }
        let found = names(&src);
        assert_eq!(found.len(), 1);
        assert_eq!(found.first().map(Vec::len), Some(n));
    }
}
