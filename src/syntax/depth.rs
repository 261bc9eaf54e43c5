//! The nesting limit (E0124).
//!
//! Every stage after the parser walks the tree recursively: the checker, the
//! barrier pass, the PTX writer, the printers, the language server, and the
//! tree's own `drop`. So that no input can exhaust the stack, the parser
//! refuses a construct that nests more than [`LIMIT`] levels: each
//! expression, statement and type counts one level (a block none, since it
//! always stands in a statement or an expression). The nodes compute their
//! depth from their children as they are built (`ast::Expr::new` and
//! friends); the grammar passes every expression, statement and type it
//! builds through a [`Guard`], which replaces one that is too deep by an
//! `Error` node and records the error. No tree deeper than the limit is ever
//! built, whatever the input.
//!
//! Brackets are counted before parsing ([`brackets`]): the parser's own
//! stack grows with every bracket still open, and its error recovery takes
//! time in proportion to that stack, so the tokens from a bracket nested
//! inside [`LIMIT`] others on are not parsed at all.

use super::ast::{Expr, Stmt, TypeExpr, TypeExprKind};
use super::lexer::Token;
use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// The deepest nesting kdslc accepts. An `else if` chain of n links, a
/// chain of n binary operators and n nested `if`s each nest about n levels.
pub const LIMIT: u32 = 25_000;

/// What kind of construct went too deep, for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construct {
    Expression,
    Statement,
    Type,
    /// An opening bracket (`(`, `[`, `{`) inside [`LIMIT`] others.
    Bracket,
    /// A token that would take the parser's stack past its bound
    /// ([`super::lr::MAX_STACK`]): the end of a chain of prefix operators,
    /// `else if`s or `?:` longer than any the limit allows.
    Chain,
}

impl Construct {
    fn name(self) -> &'static str {
        match self {
            Construct::Expression => "expression",
            Construct::Statement => "statement",
            Construct::Type => "type",
            Construct::Bracket => "bracket",
            Construct::Chain => "chain",
        }
    }
}

/// E0124: a construct that nests more than [`LIMIT`] levels.
#[derive(Clone, Debug, PartialEq)]
pub struct TooDeep {
    pub construct: Construct,
    pub span: Span,
}

impl TooDeep {
    pub fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::error(
            "E0124",
            format!("nesting too deep: more than {LIMIT} levels"),
        )
        .primary(
            self.span,
            match self.construct {
                Construct::Bracket => format!("this bracket is inside {LIMIT} others"),
                Construct::Chain => format!("this is past {LIMIT} levels of nesting"),
                c => format!("this {} nests more than {LIMIT} levels deep", c.name()),
            },
        )
        .note(
            "each expression, statement and type counts one level: an operand of \
                 an operator, a link of an `else if` chain, a statement in an `if`'s block",
        )
        .help(
            "split it: compute parts of it in `let` bindings or in functions, or \
                 replace a long `else if` chain by arithmetic or a table in memory",
        )
    }
}

/// Checks each node the grammar builds against [`LIMIT`].
#[derive(Debug, Default)]
pub struct Guard {
    pub found: Vec<TooDeep>,
}

impl Guard {
    pub fn expr(&mut self, e: Expr) -> Expr {
        if e.depth <= LIMIT {
            return e;
        }
        let span = e.span;
        self.report(Construct::Expression, span);
        discard(e);
        Expr::error(span)
    }

    pub fn stmt(&mut self, s: Stmt) -> Stmt {
        if s.depth <= LIMIT {
            return s;
        }
        let (span, value) = (s.span, s.value);
        self.report(Construct::Statement, span);
        discard(s);
        // An `if` that was its block's value stays one (the checker is then
        // silent about it), so that blocks around it do not lose theirs.
        let mut stand_in = Stmt::error(span);
        stand_in.value = value;
        stand_in
    }

    pub fn ty(&mut self, t: TypeExpr) -> TypeExpr {
        if t.depth <= LIMIT {
            return t;
        }
        let span = t.span;
        self.report(Construct::Type, span);
        discard(t);
        TypeExpr::new(TypeExprKind::Error, span)
    }

    /// Records the error, once per deep construct: the node that replaced a
    /// too-deep one has depth 1, so its ancestors reach the limit again only
    /// after as many more levels, and then they hold the one reported.
    fn report(&mut self, construct: Construct, span: Span) {
        let inside = |last: &TooDeep| {
            last.span.file == span.file
                && span.start <= last.span.start
                && last.span.end <= span.end
        };
        if self.found.last().is_some_and(inside) {
            return;
        }
        self.found.push(TooDeep { construct, span });
    }
}

/// Drops a tree [`LIMIT`] levels deep on a stack that takes it (the parser
/// may run on any thread).
fn discard<T: Send>(tree: T) {
    crate::stack::with_big_stack(move || drop(tree));
}

/// The first opening bracket nested inside [`LIMIT`] others, if any: its
/// position in `tokens`, and the error. A closing bracket closes the
/// innermost open one whatever its kind (a mismatch is the parser's to
/// report); a stray one is ignored.
pub fn brackets(
    file: crate::span::FileId,
    tokens: &[(usize, Token, usize)],
) -> Option<(usize, TooDeep)> {
    let mut open: u32 = 0;
    for (i, (start, tok, end)) in tokens.iter().enumerate() {
        match tok {
            Token::LParen | Token::LBracket | Token::LBrace => {
                if open == LIMIT {
                    let error = TooDeep {
                        construct: Construct::Bracket,
                        span: Span::new(file, *start, *end),
                    };
                    return Some((i, error));
                }
                open += 1;
            }
            Token::RParen | Token::RBracket | Token::RBrace => open = open.saturating_sub(1),
            _ => {}
        }
    }
    None
}
