//! The LR driver that runs the parser LALRPOP generates from
//! `grammar/kdsl.lalrpop` (build.rs points the generated `parse` here).
//!
//! It is LALRPOP's own driver (`lalrpop_util::state_machine::Parser`,
//! MIT/Apache-2.0) step for step: the same shifts and reductions, the same
//! error recovery (pop to the nearest state that can shift `!` and then
//! accept the lookahead, else drop the lookahead), the same spans and
//! expected tokens, so the trees and errors are the ones LALRPOP's driver
//! gives. What differs is the cost of recovery. LALRPOP's driver asks
//! "would this stack accept token t?" by copying the whole stack and
//! simulating reductions on the copy, 67 times per error (the expected
//! tokens), and once per stack entry per dropped token while it looks for a
//! recovery state: an error under a deep stack cost the stack's depth each
//! time (10,000 unclosed `{`: quadratic), and `!!!…! ) !!!…! 1` about its
//! cube. Here the question is answered on the real stack with a small
//! overlay for the states the simulation pushes, and remembered: whether
//! the configuration "the first L states of the stack, then state s"
//! accepts t depends only on those L states, so each answer is kept until
//! the parser pops below L, and so is "the highest state below L that
//! recovers to accept t". Each remembered answer is computed once in the
//! life of its stack entry, so recovery costs time in proportion to the
//! parser's own work, whatever the depth.

use lalrpop_util::state_machine::{
    ErrorRecovery, ParseError, ParseResult, ParserAction, ParserDefinition, SimulatedReduce,
    SymbolTriple, TokenTriple,
};
use std::collections::BTreeMap;

/// The deepest the parser's stack may grow: far past what any program
/// within the nesting limit needs (a nesting level takes at most about ten
/// entries: `for i in a..b {`), and a bound on what a chain of prefix
/// operators or `else if`s costs, which grows the stack a few entries a
/// token (16 MiB of `!` would be gigabytes).
pub const MAX_STACK: usize = 40 * super::depth::LIMIT as usize;

/// A terminal for the simulation: an index into the terminals, or
/// [`EOF`].
type Term = usize;
const EOF: Term = usize::MAX;

/// LALRPOP's driver, with the recovery described above; build.rs points
/// the generated parser at [`Driver::drive`].
pub struct Driver<'t, D: ParserDefinition, I> {
    definition: D,
    terminals: &'t [&'t str],
    tokens: I,
    states: Vec<i16>,
    symbols: Vec<SymbolTriple<D>>,
    last_location: D::Location,
    /// `(L, s, t)`: the first `L` states of the stack with `s` on top
    /// accept `t` (shift it, or accept the input at EOF).
    accepts: BTreeMap<(usize, i16, Term), bool>,
    /// `(L, t)`: the highest position below `L` whose state can shift the
    /// error and then accept `t`.
    recovers: BTreeMap<(usize, Term), Option<usize>>,
    /// The stack's first `valid` states are those the remembered answers
    /// were computed on: answers about longer prefixes are stale.
    valid: usize,
    /// Scratch space of [`Driver::accepts`].
    overlay: Vec<i16>,
    path: Vec<(usize, i16, Term)>,
    /// Where the input was cut for a stack past [`MAX_STACK`] (set here,
    /// read by the parser's `Recovery`), and whether it was.
    cut: std::rc::Rc<std::cell::Cell<Option<usize>>>,
    stopped: bool,
}

enum Next<D: ParserDefinition> {
    Token(TokenTriple<D>, usize),
    Eof,
    Done(ParseResult<D>),
}

impl<'t, D, I> Driver<'t, D, I>
where
    D: ParserDefinition<
        StateIndex = i16,
        Action = i16,
        ReduceIndex = i16,
        TokenIndex = usize,
        NonterminalIndex = usize,
        Location = usize,
    >,
    I: Iterator<Item = Result<TokenTriple<D>, ParseError<D>>>,
{
    /// Runs the parser `definition` over `tokens`; `terminals` are the
    /// grammar's terminal names by index (LALRPOP's `__TERMINAL`), for the
    /// expected tokens of an error. When the stack would grow past
    /// [`MAX_STACK`], the input ends there for the parser (as it does at a
    /// bracket nested too deep) and `cut` is set to where.
    pub fn drive(
        terminals: &'t [&'t str],
        cut: std::rc::Rc<std::cell::Cell<Option<usize>>>,
        definition: D,
        tokens: I,
    ) -> ParseResult<D> {
        let start = definition.start_state();
        let last_location = definition.start_location();
        Driver {
            definition,
            terminals,
            tokens,
            states: vec![start],
            symbols: Vec::new(),
            last_location,
            accepts: BTreeMap::new(),
            recovers: BTreeMap::new(),
            valid: 1,
            overlay: Vec::new(),
            path: Vec::new(),
            cut,
            stopped: false,
        }
        .parse()
    }

    fn shift(action: i16) -> Option<i16> {
        <i16 as ParserAction<D>>::as_shift(action)
    }

    fn reduction(action: i16) -> Option<i16> {
        <i16 as ParserAction<D>>::as_reduce(action)
    }

    fn top_state(&self) -> i16 {
        self.states.last().copied().unwrap_or(0)
    }

    fn parse(&mut self) -> ParseResult<D> {
        'shift: loop {
            let (mut lookahead, mut index) = match self.next_token() {
                Next::Token(l, i) => (l, i),
                Next::Eof => return self.parse_eof(),
                Next::Done(r) => return r,
            };
            loop {
                let action = self.definition.action(self.top_state(), index);
                if let Some(target) = Self::shift(action) {
                    let (start, token, end) = lookahead;
                    let symbol = self.definition.token_to_symbol(index, token);
                    self.states.push(target);
                    self.symbols.push((start, symbol, end));
                    continue 'shift;
                } else if let Some(reduce) = Self::reduction(action) {
                    if let Some(r) = self.reduce(reduce, Some(&lookahead.0)) {
                        return match r {
                            // The start symbol, with input left over.
                            Ok(_) => Err(lalrpop_util::ParseError::ExtraToken { token: lookahead }),
                            Err(e) => Err(e),
                        };
                    }
                } else {
                    match self.error_recovery(Some(lookahead), Some(index)) {
                        Next::Token(l, i) => {
                            lookahead = l;
                            index = i;
                        }
                        Next::Eof => return self.parse_eof(),
                        Next::Done(r) => return r,
                    }
                }
            }
        }
    }

    /// No more tokens: reduce to the start symbol, recovering on the way.
    fn parse_eof(&mut self) -> ParseResult<D> {
        loop {
            let action = self.definition.eof_action(self.top_state());
            if let Some(reduce) = Self::reduction(action) {
                if let Some(r) = self.reduce(reduce, None) {
                    return r;
                }
            } else {
                match self.error_recovery(None, None) {
                    Next::Eof => continue,
                    Next::Done(r) => return r,
                    // Recovery at the end never finds a token.
                    Next::Token(..) => return Err(self.unrecognized(None)),
                }
            }
        }
    }

    /// A reduction (the grammar's action runs); it pops states and pushes
    /// one, so the answers about the stack above that one go stale.
    fn reduce(&mut self, reduce: i16, lookahead: Option<&D::Location>) -> Option<ParseResult<D>> {
        let r = self
            .definition
            .reduce(reduce, lookahead, &mut self.states, &mut self.symbols);
        self.valid = self.valid.min(self.states.len().saturating_sub(1));
        r
    }

    fn next_token(&mut self) -> Next<D> {
        if self.stopped {
            return Next::Eof;
        }
        let token = match self.tokens.next() {
            Some(Ok(t)) => t,
            Some(Err(e)) => return Next::Done(Err(e)),
            None => return Next::Eof,
        };
        if self.states.len() > MAX_STACK {
            self.stopped = true;
            self.cut.set(Some(token.0));
            return Next::Eof;
        }
        self.last_location = token.2;
        match self.definition.token_to_index(&token.1) {
            Some(i) => Next::Token(token, i),
            None => Next::Done(Err(self.unrecognized(Some(token)))),
        }
    }

    /// The error for `token` (or the end) on the present stack, with every
    /// terminal the stack would accept there.
    fn unrecognized(&mut self, token: Option<TokenTriple<D>>) -> ParseError<D> {
        self.settle();
        let len = self.states.len();
        let top = self.top_state();
        let terminals = self.terminals;
        let expected = (0..terminals.len())
            .filter(|&t| self.accepts(len.saturating_sub(1), top, t))
            .filter_map(|t| terminals.get(t).map(|name| name.to_string()))
            .collect();
        match token {
            Some(token) => lalrpop_util::ParseError::UnrecognizedToken { token, expected },
            None => lalrpop_util::ParseError::UnrecognizedEof {
                location: self.last_location,
                expected,
            },
        }
    }

    /// LALRPOP's recovery: report the error, make the reductions the error
    /// token triggers, find the highest state that can shift the error and
    /// then accept the lookahead (dropping lookahead tokens until one
    /// fits), pop to it and shift the error there.
    fn error_recovery(
        &mut self,
        mut lookahead: Option<TokenTriple<D>>,
        mut index: Option<usize>,
    ) -> Next<D> {
        let error = self.unrecognized(lookahead.clone());
        let mut dropped = Vec::new();
        loop {
            let action = self.definition.error_action(self.top_state());
            let Some(reduce) = Self::reduction(action) else {
                break;
            };
            let at = lookahead.as_ref().map(|l| l.0);
            if let Some(r) = self.reduce(reduce, at.as_ref()) {
                return Next::Done(r);
            }
        }
        self.settle();
        let len = self.states.len();
        let top = loop {
            if let Some(top) = self.recovers(len, index.unwrap_or(EOF)) {
                break top;
            }
            match lookahead.take() {
                // Nothing fits before the end: the first error stands.
                None => return Next::Done(Err(error)),
                Some(l) => {
                    dropped.push(l);
                    match self.next_token() {
                        Next::Token(l, i) => {
                            lookahead = Some(l);
                            index = Some(i);
                        }
                        Next::Eof => {
                            lookahead = None;
                            index = None;
                        }
                        Next::Done(r) => return Next::Done(r),
                    }
                }
            }
        };

        // The error's span: from the first symbol popped (or dropped
        // token) to the last dropped token (or popped symbol), as LALRPOP
        // has it.
        let start = if let Some(popped) = self.symbols.get(top) {
            popped.0
        } else if let Some(first) = dropped.first() {
            first.0
        } else if let Some(below) = top.checked_sub(1).and_then(|t| self.symbols.get(t)) {
            below.2
        } else {
            self.definition.start_location()
        };
        let end = if let Some(last) = dropped.last() {
            last.2
        } else if len - 1 > top {
            self.symbols.last().map_or(start, |s| s.2)
        } else if let Some(l) = lookahead.as_ref() {
            l.0
        } else {
            start
        };

        self.states.truncate(top + 1);
        self.symbols.truncate(top);
        self.valid = self.valid.min(top + 1);
        let Some(error_state) = Self::shift(self.definition.error_action(self.top_state())) else {
            return Next::Done(Err(error));
        };
        self.states.push(error_state);
        let recovery = self.definition.error_recovery_symbol(ErrorRecovery::<D> {
            error,
            dropped_tokens: dropped,
        });
        self.symbols.push((start, recovery, end));
        match (lookahead, index) {
            (Some(l), Some(i)) => Next::Token(l, i),
            (None, _) => Next::Eof,
            (Some(l), None) => Next::Done(Err(self.unrecognized(Some(l)))),
        }
    }

    /// Forgets the answers about stack prefixes that changed since they
    /// were computed.
    fn settle(&mut self) {
        let valid = self.valid;
        drop(self.accepts.split_off(&(valid + 1, i16::MIN, 0)));
        drop(self.recovers.split_off(&(valid + 1, 0)));
        self.valid = self.states.len();
    }

    /// The highest position `p < len` whose state can shift the error and
    /// then, on the first `p + 1` states, accept `t`.
    fn recovers(&mut self, len: usize, t: Term) -> Option<usize> {
        let mut walked = 0;
        let mut l = len;
        let found = loop {
            if l == 0 {
                break None;
            }
            if let Some(&known) = self.recovers.get(&(l, t)) {
                break known;
            }
            walked += 1;
            let p = l - 1;
            let state = self.states.get(p).copied().unwrap_or(0);
            if let Some(error_state) = Self::shift(self.definition.error_action(state)) {
                if self.accepts(p + 1, error_state, t) {
                    break Some(p);
                }
            }
            l = p;
        };
        // The prefixes walked have the same answer; a short walk is not
        // worth remembering.
        if walked > SHORT {
            for l in (len + 1 - walked)..=len {
                self.recovers.insert((l, t), found);
            }
        }
        found
    }

    /// Whether the first `len` states of the stack with `state` on top
    /// would accept `t`: simulates the reductions `t` triggers (popping
    /// into the real stack, pushing onto a small overlay) until `t` is
    /// shifted (true), the start symbol accepted (true) or an error met
    /// (false).
    fn accepts(&mut self, len: usize, state: i16, t: Term) -> bool {
        let mut len = len;
        let mut overlay = std::mem::take(&mut self.overlay);
        overlay.clear();
        overlay.push(state);
        // The configurations passed through after popping into the stack:
        // they have the same answer, and other questions about a shorter
        // stack meet them.
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let mut popped = false;
        let answer = loop {
            let top = overlay.last().copied().unwrap_or(0);
            if let ([only], true) = (overlay.as_slice(), popped) {
                let key = (len, *only, t);
                if let Some(&known) = self.accepts.get(&key) {
                    break known;
                }
                path.push(key);
            }
            let action = if t == EOF {
                self.definition.eof_action(top)
            } else {
                self.definition.action(top, t)
            };
            if <i16 as ParserAction<D>>::is_error(action) {
                break false;
            }
            let Some(reduce) = Self::reduction(action) else {
                break true;
            };
            match self.definition.simulate_reduce(reduce) {
                SimulatedReduce::Accept => break true,
                SimulatedReduce::Reduce {
                    states_to_pop,
                    nonterminal_produced,
                } => {
                    if states_to_pop <= overlay.len() {
                        overlay.truncate(overlay.len() - states_to_pop);
                    } else {
                        let from_stack = states_to_pop - overlay.len();
                        overlay.clear();
                        // LR tables never pop the start state; a table that
                        // did would not accept.
                        if from_stack >= len {
                            break false;
                        }
                        len -= from_stack;
                        popped = true;
                    }
                    let below = match overlay.last() {
                        Some(&s) => s,
                        None => self.states.get(len - 1).copied().unwrap_or(0),
                    };
                    overlay.push(self.definition.goto(below, nonterminal_produced));
                }
            }
        };
        // A short simulation is cheaper to run again than to remember; a
        // long one is remembered along its way, so that the next question
        // that meets it stops there.
        if path.len() > SHORT {
            for &key in &path {
                self.accepts.insert(key, answer);
            }
        }
        self.overlay = overlay;
        self.path = path;
        answer
    }
}

/// Walks of at most this many steps are not remembered (see
/// [`Driver::accepts`]): each costs a bounded time however often it runs.
const SHORT: usize = 16;
