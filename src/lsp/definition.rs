//! Go-to-definition, from the checker's table of resolved names.

use super::analysis::{covers, Analysis};
use lsp_types::{GotoDefinitionResponse, Position};

pub fn definition(a: &Analysis, pos: Position) -> Option<GotoDefinitionResponse> {
    let offset = a.offset(pos)?;
    // The innermost use under the cursor; one that strictly contains it
    // beats one that ends right at it (`a+b` with the cursor on `+`).
    let r = a
        .compilation
        .references
        .iter()
        .filter(|r| covers(r.span, offset))
        .min_by_key(|r| (offset >= r.span.end as usize, r.span.len()))?;
    Some(GotoDefinitionResponse::Scalar(a.location(r.definition)?))
}
