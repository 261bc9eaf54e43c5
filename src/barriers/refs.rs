//! Barrier references: an unindexed reference to a group of several barriers
//! (E0303), a constant index outside the group (E0305; an immutable local
//! bound to a constant counts as a constant).

use super::consts::Consts;
use super::error::BarrierError;
use super::walk::{self, Cx, Visitor};
use crate::ir::{BarrierRef, Kernel};

pub fn check(kernel: &Kernel, consts: &Consts, out: &mut Vec<BarrierError>) {
    let mut v = Refs {
        kernel,
        consts,
        out,
    };
    walk::body(&kernel.body, &mut v);
}

struct Refs<'k, 'o> {
    kernel: &'k Kernel,
    consts: &'k Consts,
    out: &'o mut Vec<BarrierError>,
}

impl<'a> Visitor<'a> for Refs<'_, '_> {
    fn barrier_ref(&mut self, r: &'a BarrierRef, _cx: Cx<'a>) {
        let Some(g) = self.kernel.barriers.get(r.group.index()) else {
            return;
        };
        // The count's own span says "2 barriers" best; a group of one has none.
        let decl = g.spans.count.unwrap_or(g.spans.decl);
        match &r.index {
            None if g.count > 1 => {
                self.out.push(BarrierError::Unindexed {
                    name: g.name.clone(),
                    count: g.count,
                    span: r.span,
                    decl,
                });
            }
            None => {}
            Some(i) => {
                let Some(index) = self.consts.int(i) else {
                    return;
                };
                if index < 0 || index >= i128::from(g.count) {
                    self.out.push(BarrierError::IndexOutOfBounds {
                        index,
                        name: g.name.clone(),
                        count: g.count,
                        span: i.span,
                        decl,
                    });
                }
            }
        }
    }
}
