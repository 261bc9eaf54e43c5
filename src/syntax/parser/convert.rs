//! The one conversion from LALRPOP's errors to [`ParseError`]: readable
//! expectations, a missing token's fix, and the hints a token suggests.

use super::context::Context;
use super::{LalrpopError, ParseError};
use crate::span::Span;
use crate::syntax::lexer::Token;
use std::collections::BTreeSet;

/// The one conversion from LALRPOP's error type. `None` for errors that
/// cannot happen with our token source (our lexer never fails).
pub(super) fn from_lalrpop(e: LalrpopError, cx: &Context<'_>) -> Option<ParseError> {
    match e {
        LalrpopError::UnrecognizedToken {
            token: (start, tok, end),
            expected,
        } => Some(unexpected(cx, start, &tok, end, &expected)),
        LalrpopError::ExtraToken {
            token: (start, tok, end),
        } => Some(unexpected(cx, start, &tok, end, &["EOF".to_string()])),
        LalrpopError::UnrecognizedEof { expected, .. } => Some(ParseError::UnexpectedEof {
            at: Span::new(cx.file, cx.text.len(), cx.text.len()),
            expected: readable(&expected),
            unclosed: cx.unclosed_bracket(cx.text.len()),
        }),
        LalrpopError::InvalidToken { .. } => None,
        LalrpopError::User { error } => match error {},
    }
}

fn unexpected(
    cx: &Context<'_>,
    start: usize,
    tok: &Token,
    end: usize,
    raw: &[String],
) -> ParseError {
    let span = Span::new(cx.file, start, end);
    let written = cx.text.get(start..end).unwrap_or("");
    let found = match tok.spelling() {
        Some(s) => format!("`{s}`"),
        None => format!("{} `{}`", tok.kind_name(), shorten(written)),
    };
    let expected = readable(raw);
    let raw_has = |name: &str| raw.iter().any(|r| unquote(r) == name);

    // A missing `;` (or closing bracket): when it is the only thing that
    // fits, or when `;` fits and the next token is on a new line.
    let prev = cx.token_before(start);
    let insert = prev.and_then(|(prev_start, prev_tok, prev_end)| {
        let only = match expected.as_slice() {
            [one] => [";", ")", "]"]
                .into_iter()
                .find(|t| *one == format!("`{t}`")),
            _ => None,
        };
        // Not after `}`, `{` or `;`, where a `;` would be an empty statement.
        let after_statement = matches!(prev_tok, Token::RBrace | Token::LBrace | Token::Semi);
        let newline = cx
            .text
            .get(*prev_end..start)
            .is_some_and(|gap| gap.contains(['\n', '\r']));
        let tok = only.or((newline && !after_statement && raw_has(";")).then_some(";"))?;
        let after = shorten(cx.text.get(*prev_start..*prev_end).unwrap_or(""));
        Some((tok, Span::new(cx.file, *prev_end, *prev_end), after))
    });

    let item_keyword = matches!(
        tok,
        Token::Kernel | Token::Fn | Token::Const | Token::Import
    );
    let unclosed = if item_keyword && raw_has("}") {
        cx.unclosed_bracket(start)
            .filter(|b| b.1 == "{")
            .map(|b| b.0)
    } else {
        None
    };
    let comparison = matches!(
        tok,
        Token::EqEq | Token::Ne | Token::Lt | Token::Le | Token::Gt | Token::Ge
    );
    let chained_comparison = comparison && raw_has("&&") && !tok.spelling().is_some_and(raw_has);
    ParseError::Unexpected {
        found,
        span,
        expected,
        // The comparison is the mistake, not a missing `;` before it.
        insert: insert.filter(|_| !chained_comparison),
        chained_comparison,
        unclosed,
        c_style_for: false,
        question: prev
            .filter(|t| matches!(t.1, Token::Question))
            .map(|t| Span::new(cx.file, t.0, t.2)),
    }
}

/// At most 24 characters of a token's text, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(24) {
        Some((i, _)) => format!("{}…", text.get(..i).unwrap_or("")),
        None => text.to_string(),
    }
}

fn unquote(raw: &str) -> &str {
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw)
}

/// `?` among them: it starts only C's conditional operator, which the
/// grammar reads to report it (so it is never worth listing alone).
pub(super) const OPERATORS: [&str; 20] = [
    "||", "&&", "==", "!=", "<", "<=", ">", ">=", "|", "^", "&", "<<", ">>", "+", "-", "*", "/",
    "%", "as", "?",
];
const ASSIGN_OPERATORS: [&str; 11] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];
pub(super) const EXPRESSION_STARTS: [&str; 7] = ["Ident", "NumLit", "(", "-", "!", "true", "false"];
/// The tokens that start a statement (`#` an attribute of a `for` loop).
const STATEMENT_KEYWORDS: [&str; 11] = [
    "let", "if", "while", "for", "return", "break", "continue", "shared", "barrier", "accum", "#",
];
pub(super) const ITEM_KEYWORDS: [&str; 4] = ["import", "const", "fn", "kernel"];
/// Shown before single tokens, in this order.
const WORDS: [&str; 7] = [
    "item",
    "statement",
    "expression",
    "identifier",
    "number literal",
    "string literal",
    "end of file",
];
/// Longer lists end in `…`.
pub(super) const MAX_EXPECTED: usize = 6;

/// LALRPOP's terminal names (`"\";\""`, `"Ident"`) as a short readable
/// list: whole groups collapse into one word.
pub(super) fn readable(raw: &[String]) -> Vec<String> {
    let mut set: BTreeSet<&str> = raw.iter().map(|r| unquote(r)).collect();
    let mut words: BTreeSet<&'static str> = BTreeSet::new();
    // After an operand every binary operator fits: "an operator". A few
    // operators alone are an artefact of the LR automaton having already
    // reduced part of the expression; listing them would only confuse.
    let mut operator = OPERATORS.iter().filter(|o| set.contains(*o)).count() >= 5;
    // After the place of an assignment, likewise.
    if ASSIGN_OPERATORS.iter().filter(|o| set.contains(*o)).count() >= 5 {
        set.retain(|t| !ASSIGN_OPERATORS.contains(t));
        operator = true;
    }
    // After an identifier in a call's arguments `=` (a named argument,
    // `order = acquire`) fits too; "an operator" stands for it.
    if operator {
        set.remove("=");
    }
    // In a type's place `[` starts only a register array's type, which
    // few places take (a `let`'s; E0444 elsewhere): not worth listing.
    if set.contains("global") && set.contains("Ident") {
        set.remove("[");
    }
    // After a type's name `mut` and `[` would go on to a tensor type
    // (`tensor mut [bf16; 64]`): a continuation of a rare form, where the
    // type usually ended.
    if set.contains("mut") && set.contains("[") && !set.contains("global") {
        set.remove("mut");
        set.remove("[");
    }
    let starts_expression = EXPRESSION_STARTS.iter().all(|t| set.contains(t));
    set.retain(|t| !OPERATORS.contains(t) || (*t == "-" && starts_expression));
    if starts_expression {
        set.retain(|t| !EXPRESSION_STARTS.contains(t) && *t != "if");
        words.insert("expression");
    }
    if ["let", "while", "for"].iter().all(|t| set.contains(t)) {
        set.retain(|t| !STATEMENT_KEYWORDS.contains(t) && *t != ";");
        words.remove("expression");
        words.insert("statement");
    }
    if ITEM_KEYWORDS.iter().all(|t| set.contains(t)) {
        set.retain(|t| !ITEM_KEYWORDS.contains(t));
        words.insert("item");
    }
    for (name, word) in [
        ("Ident", "identifier"),
        ("NumLit", "number literal"),
        ("StrLit", "string literal"),
        ("EOF", "end of file"),
    ] {
        if set.remove(name) {
            words.insert(word);
        }
    }
    let mut out: Vec<String> = WORDS
        .iter()
        .filter(|w| words.contains(*w))
        .map(|w| w.to_string())
        .collect();
    out.extend(set.iter().map(|t| format!("`{t}`")));
    if operator {
        out.push("an operator".to_string());
    }
    if out.len() > MAX_EXPECTED {
        out.truncate(MAX_EXPECTED);
        out.push("…".to_string());
    }
    out
}
