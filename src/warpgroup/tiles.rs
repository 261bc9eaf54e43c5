//! What the values of indices say, in each run of the loops over constant
//! lists around them (`analysis::values`): an accumulator's element index
//! must be a constant below its elements (E0418), and a `wgmma` operand's
//! tile must lie in its array on whole 8-row blocks and K slices (E0410).
//! Each problem is reported once, at its place in the source.

use super::error::WarpgroupError;
use crate::analysis::values::{walk_runs, At, RunVisit, Values};
use crate::ir::{self, Expr, ExprKind, Kernel, Place, PlaceKind, Stmt, StmtKind};
use crate::span::Span;
use std::collections::HashSet;

pub fn check(k: &Kernel, values: &Values, found: &mut Vec<WarpgroupError>) {
    if k.accums.is_empty() {
        return;
    }
    let mut f = Find {
        k,
        values,
        seen: HashSet::new(),
        found,
    };
    walk_runs(&k.body, values, &mut f);
}

struct Find<'a> {
    k: &'a Kernel,
    values: &'a Values,
    /// The places already reported.
    seen: HashSet<(u32, u32)>,
    found: &'a mut Vec<WarpgroupError>,
}

impl Find<'_> {
    fn report(&mut self, span: Span, e: WarpgroupError) {
        if self.seen.insert((span.start, span.end)) {
            self.found.push(e);
        }
    }

    /// `acc[i]`: `i` a constant below the elements.
    fn element(&mut self, p: &Place, at: At) {
        let PlaceKind::Accum { acc, index } = &p.kind else {
            return;
        };
        let Some(a) = self.k.accums.get(acc.index()) else {
            return;
        };
        let (name, elements) = (a.name.clone(), a.elements());
        match self.values.int(index, at) {
            Some(i) if (0..i128::from(elements)).contains(&i) => {}
            i => self.report(
                index.span,
                WarpgroupError::AccumIndex {
                    name,
                    index: i,
                    elements,
                    span: index.span,
                },
            ),
        }
    }

    /// A `wgmma`'s tiles: rows from an 8-row boundary within the array's
    /// rows, K from a 32-byte boundary within a row.
    fn tiles(&mut self, w: &ir::Wgmma, at: At) {
        let Some(acc) = self.k.accums.get(w.acc.index()) else {
            return;
        };
        if let Some((frag, index)) = w.a_fragment() {
            self.slice(frag, index, w.a.span, at);
        }
        for (p, rows, trans, which) in [
            (&w.a, ir::Accum::M, w.trans_a, "A"),
            (&w.b, acc.n, w.trans_b, "B"),
        ] {
            if matches!(p.kind, PlaceKind::Accum { .. }) {
                continue;
            }
            if trans {
                self.mn_tile(p, rows, which, at);
            } else {
                self.tile(p, rows, which, at);
            }
        }
    }

    /// An RS `wgmma`'s A slice: from a constant multiple of 8 elements
    /// (16 columns) within the fragment.
    fn slice(&mut self, frag: ir::AccumId, index: &Expr, span: Span, at: At) {
        let Some(a) = self.k.accums.get(frag.index()) else {
            return;
        };
        let n = ir::Accum::SLICE_ELEMENTS;
        let elements = a.elements();
        let why = match self.values.int(index, at) {
            None => format!(
                "the slice of `{}` must start at a constant element (a multiple of {n}: element 8 kk is column 16 kk)",
                a.name
            ),
            Some(i) if i % i128::from(n) != 0 => format!(
                "the slice starts at element {i} of `{}`, not a multiple of {n} (element 8 kk is the first of columns 16 kk ..)",
                a.name
            ),
            Some(i) if i < 0 || i + i128::from(n) > i128::from(elements) => format!(
                "the slice's {n} elements from element {i} reach past the {elements} each thread holds of `{}`",
                a.name
            ),
            Some(_) => return,
        };
        let decl = a.span;
        self.report(
            span,
            WarpgroupError::TileOutside {
                why,
                span,
                decl,
                transposed: false,
                fragment: true,
            },
        );
    }

    /// A transposed (MN-major) tile: its rows from the start of a span
    /// (the last index 0), spread over the blocks of the third-to-last
    /// dimension from the one named when wider than a span; K from an
    /// 8-row boundary (the pattern's repeat) within the second-to-last.
    fn mn_tile(&mut self, p: &Place, rows: u32, which: &str, at: At) {
        let PlaceKind::Shared { array, indices } = &p.kind else {
            return;
        };
        let Some(arr) = self.k.shared.get(array.index()) else {
            return;
        };
        let n = indices.len();
        let (Some(k0), Some(r0)) = (indices.get(n.wrapping_sub(2)), indices.last()) else {
            return;
        };
        let (Some(&k_dim), Some(&span)) = (arr.dims.get(n.wrapping_sub(2)), arr.dims.last()) else {
            return;
        };
        let k = 32 / u64::from(arr.elem.size());
        let blocks = u64::from(rows).div_ceil(span.max(1));
        let which = format!("transposed {which}");
        let which = which.as_str();
        let why = match self.values.int(r0, at) {
            Some(0) => None,
            Some(c) => Some(format!(
                "the {which} tile starts at element {c} of a span, not at its first"
            )),
            None => Some(format!(
                "the {which} tile must start at the first element of a span: the last index is 0"
            )),
        }
        .or_else(|| {
            self.position(k0, 8, k, k_dim, at)
                .map(|p| p.say(which, "K", k, "rows", &arr.name, k_dim))
        })
        .or_else(|| {
            let b0 = indices.get(n.wrapping_sub(3)).filter(|_| blocks > 1)?;
            let &b_dim = arr.dims.get(n.wrapping_sub(3))?;
            self.position(b0, 1, blocks, b_dim, at)
                .map(|p| p.say(which, "span", blocks, "spans", &arr.name, b_dim))
        });
        if let Some(why) = why {
            let decl = arr.span;
            self.report(
                p.span,
                WarpgroupError::TileOutside {
                    why,
                    span: p.span,
                    decl,
                    transposed: true,
                    fragment: false,
                },
            );
        }
    }

    fn tile(&mut self, p: &Place, rows: u32, which: &str, at: At) {
        let PlaceKind::Shared { array, indices } = &p.kind else {
            return;
        };
        let Some(arr) = self.k.shared.get(array.index()) else {
            return;
        };
        let n = indices.len();
        let (Some(r0), Some(k0)) = (indices.get(n.wrapping_sub(2)), indices.last()) else {
            return;
        };
        let (Some(&r_dim), Some(&c_dim)) = (arr.dims.get(n.wrapping_sub(2)), arr.dims.last())
        else {
            return;
        };
        let es = u64::from(arr.elem.size());
        let k = 32 / es;
        // A tile taller than the row dimension (whole slices of it, the
        // checker's E0410) starts at the first row of a slice and takes
        // its slices from the dimension before.
        let rows = u64::from(rows);
        let blocks = rows.div_ceil(r_dim.max(1));
        // Slices along the first dimension of a guarded array are stages,
        // each filled and released on its own barrier: a tile over several
        // would read a stage no wait covers.
        let stages = n == 3 && self.k.barriers.iter().any(|g| g.guards.contains(array));
        let why = if blocks > 1 && stages {
            Some(format!(
                "the {which} tile spans {blocks} slices of `{}` along its first dimension, stages that different barriers guard",
                arr.name
            ))
        } else if blocks > 1 {
            match self.values.int(r0, at) {
                Some(0) => None,
                Some(c) => Some(format!(
                    "the {which} tile spans {blocks} slices of `{}` and starts at row {c} of one, not at its first",
                    arr.name
                )),
                None => Some(format!(
                    "the {which} tile spans {blocks} slices of `{}` and must start at the first row of one: the row index is 0",
                    arr.name
                )),
            }
            .or_else(|| {
                let b0 = indices.get(n.wrapping_sub(3))?;
                let &b_dim = arr.dims.get(n.wrapping_sub(3))?;
                self.position(b0, 1, blocks, b_dim, at)
                    .map(|p| p.say(which, "slice", blocks, "slices", &arr.name, b_dim))
            })
        } else {
            self.position(r0, 8, rows, r_dim, at)
                .map(|p| p.say(which, "row", rows, "rows", &arr.name, r_dim))
        };
        let why = why.or_else(|| {
            self.position(k0, k, k, c_dim, at)
                .map(|p| p.say(which, "K", k, arr.elem.name(), &arr.name, c_dim))
        });
        if let Some(why) = why {
            let decl = arr.span;
            self.report(
                p.span,
                WarpgroupError::TileOutside {
                    why,
                    span: p.span,
                    decl,
                    transposed: false,
                    fragment: false,
                },
            );
        }
    }

    /// What is wrong with a tile of `len` starting at `start`, which must
    /// be a multiple of `step` with `start + len <= dim`, when the values
    /// show it.
    fn position(&self, start: &Expr, step: u64, len: u64, dim: u64, at: At) -> Option<Wrong> {
        if let Some(c) = self.values.int(start, at) {
            let c = u64::try_from(c).unwrap_or(u64::MAX);
            if c % step != 0 {
                return Some(Wrong::Step {
                    at: c.to_string(),
                    step,
                });
            }
            if c.saturating_add(len) > dim {
                return Some(Wrong::Past {
                    from: c.to_string(),
                });
            }
            return None;
        }
        let (z, r) = self.values.low_bits(start, at);
        if step.is_power_of_two()
            && z >= step.trailing_zeros()
            && r.rem_euclid(i128::from(step)) != 0
        {
            return Some(Wrong::Step {
                at: format!("{} modulo {step}", r.rem_euclid(i128::from(step))),
                step,
            });
        }
        if let Some((lo, _)) = self.values.range(start, at) {
            if u64::try_from(lo).unwrap_or(u64::MAX).saturating_add(len) > dim {
                return Some(Wrong::Past {
                    from: format!("{lo} or more"),
                });
            }
        }
        None
    }
}

/// What is wrong with where a tile starts along one axis.
enum Wrong {
    /// Not on a multiple of `step`.
    Step { at: String, step: u64 },
    /// Reaching past the array.
    Past { from: String },
}

impl Wrong {
    /// The label: `the A tile starts at row 4, not a multiple of 8`.
    fn say(&self, which: &str, axis: &str, len: u64, unit: &str, array: &str, dim: u64) -> String {
        match self {
            Wrong::Step { at, step } => {
                format!("the {which} tile starts at {axis} {at}, not a multiple of {step}")
            }
            Wrong::Past { from } => format!(
                "the {which} tile's {len} {unit} from {axis} {from} reach past the {dim} of `{array}`"
            ),
        }
    }
}

impl<'ir> RunVisit<'ir> for Find<'_> {
    fn stmt(&mut self, s: &'ir Stmt, at: At) {
        match &s.kind {
            StmtKind::Store { place, .. } => self.element(place, at),
            StmtKind::Wgmma(w) => self.tiles(w, at),
            _ => {}
        }
    }

    fn expr(&mut self, e: &'ir Expr, at: At) {
        if let ExprKind::Load(p) = &e.kind {
            self.element(p, at);
        }
    }
}
