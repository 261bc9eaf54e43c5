//! Tokens → [`Module`]: a recursive-descent parser for the PTX that
//! `kdslc` and `nvcc -ptx` write. It knows the shape of statements, not
//! the meaning of opcodes: every instruction is an opcode, its modifiers
//! and its operands; the decoder decides which ones it supports.

use super::ast::*;
use super::lexer::{lex, Tok, Token};

/// A syntax error at a position of the PTX text.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub pos: Pos,
    pub message: String,
}

/// Nesting limit for `{ }` blocks and initialisers, so that hostile input
/// cannot overflow the stack.
const MAX_DEPTH: u32 = 64;

pub fn parse(text: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(text);
    p.module()
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    i: usize,
    line_starts: Vec<u32>,
    /// Per `.loc` position of the function being parsed, the outermost
    /// call site it was inlined at (`Loc::outermost`).
    callers: std::collections::HashMap<(u32, u32, u32), (u32, u32, u32)>,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        Parser {
            text,
            toks: lex(text),
            i: 0,
            line_starts,
            callers: Default::default(),
        }
    }

    // ----- token access -------------------------------------------------

    fn peek(&self) -> Option<Token> {
        self.toks.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<Token> {
        self.toks.get(self.i + n).copied()
    }

    fn peek_tok(&self) -> Option<Tok> {
        self.peek().map(|t| t.tok)
    }

    fn is(&self, tok: Tok) -> bool {
        self.peek_tok() == Some(tok)
    }

    fn text_of(&self, t: Token) -> &'a str {
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    fn line_of(&self, byte: u32) -> u32 {
        match self.line_starts.binary_search(&byte) {
            Ok(l) => l as u32 + 1,
            Err(l) => l as u32,
        }
    }

    fn pos_of(&self, t: Token) -> Pos {
        Pos {
            start: t.start,
            end: t.end,
            line: self.line_of(t.start),
        }
    }

    /// The position of the current token (or the end of the text).
    fn here(&self) -> Pos {
        match self.peek() {
            Some(t) => self.pos_of(t),
            None => {
                let end = self.text.len() as u32;
                Pos {
                    start: end,
                    end,
                    line: self.line_of(end),
                }
            }
        }
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            pos: self.here(),
            message: message.into(),
        })
    }

    fn describe_current(&self) -> String {
        match self.peek() {
            None => "end of file".to_string(),
            Some(t) if t.tok == Tok::Error => format!("unexpected character `{}`", self.text_of(t)),
            Some(t) => format!("`{}`", self.text_of(t)),
        }
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.peek();
        if t.is_some() {
            self.i += 1;
        }
        t
    }

    fn eat(&mut self, tok: Tok) -> bool {
        if self.is(tok) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Tok, what: &str) -> PResult<Token> {
        match self.peek() {
            Some(t) if t.tok == tok => {
                self.i += 1;
                Ok(t)
            }
            _ => self.error(format!(
                "expected {what}, found {}",
                self.describe_current()
            )),
        }
    }

    fn ident(&mut self, what: &str) -> PResult<String> {
        let t = self.expect(Tok::Ident, what)?;
        Ok(self.text_of(t).to_string())
    }

    /// The current token's text if it is a dotted word.
    fn peek_dot(&self) -> Option<&'a str> {
        match self.peek() {
            Some(t) if t.tok == Tok::Dot => Some(self.text_of(t)),
            _ => None,
        }
    }

    fn unsigned(&mut self, what: &str) -> PResult<u64> {
        match self.peek() {
            Some(t) if matches!(t.tok, Tok::Dec | Tok::Hex) => {
                self.i += 1;
                match parse_int(self.text_of(t)) {
                    Some(v) => Ok(v),
                    None => Err(ParseError {
                        pos: self.pos_of(t),
                        message: format!("integer `{}` out of range", self.text_of(t)),
                    }),
                }
            }
            _ => self.error(format!(
                "expected {what}, found {}",
                self.describe_current()
            )),
        }
    }

    fn u32_value(&mut self, what: &str) -> PResult<u32> {
        let at = self.here();
        let v = self.unsigned(what)?;
        u32::try_from(v).map_err(|_| ParseError {
            pos: at,
            message: format!("{what} {v} out of range"),
        })
    }

    // ----- module level -------------------------------------------------

    fn module(&mut self) -> PResult<Module> {
        let mut m = Module::default();
        while let Some(t) = self.peek() {
            if t.tok != Tok::Dot {
                return self.error(format!(
                    "expected a directive, found {}",
                    self.describe_current()
                ));
            }
            let word = self.text_of(t);
            match word {
                ".version" => {
                    self.i += 1;
                    let v = self.expect(Tok::Decimal, "a version such as 8.0")?;
                    let text = self.text_of(v);
                    let (major, minor) = text.split_once('.').unwrap_or((text, "0"));
                    m.version = Some((major.parse().unwrap_or(0), minor.parse().unwrap_or(0)));
                }
                ".target" => {
                    self.i += 1;
                    m.target = Some(self.ident("a target name")?);
                    while self.eat(Tok::Comma) {
                        self.ident("a target option")?;
                    }
                }
                ".address_size" => {
                    self.i += 1;
                    m.address_size = Some(self.u32_value("an address size")?);
                }
                ".file" => {
                    self.i += 1;
                    let n = self.u32_value("a file number")?;
                    let s = self.expect(Tok::Str, "a file name")?;
                    let name = self.text_of(s).trim_matches('"').to_string();
                    while self.eat(Tok::Comma) {
                        self.unsigned("a timestamp or size")?;
                    }
                    m.files.push((n, name));
                }
                ".section" => {
                    self.i += 1;
                    self.skip_section()?;
                }
                ".pragma" => {
                    self.skip_to_semi()?;
                }
                ".loc" => {
                    self.loc()?;
                }
                _ => self.module_item(&mut m)?,
            }
        }
        Ok(m)
    }

    /// `.section NAME { ... }`: debug sections, skipped whole.
    fn skip_section(&mut self) -> PResult<()> {
        while !self.is(Tok::LBrace) {
            if self.next().is_none() {
                return self.error("expected `{` after `.section`");
            }
        }
        let mut depth = 0u32;
        while let Some(t) = self.next() {
            match t.tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        self.error("unterminated `.section`")
    }

    fn skip_to_semi(&mut self) -> PResult<()> {
        while let Some(t) = self.next() {
            if t.tok == Tok::Semi {
                return Ok(());
            }
        }
        self.error("expected `;`")
    }

    /// Linkage words, then a function or a variable.
    fn module_item(&mut self, m: &mut Module) -> PResult<()> {
        let mut is_extern = false;
        loop {
            match self.peek_dot() {
                Some(".visible") | Some(".weak") | Some(".common") => self.i += 1,
                Some(".extern") => {
                    is_extern = true;
                    self.i += 1;
                }
                _ => break,
            }
        }
        match self.peek_dot() {
            Some(".entry") => {
                let f = self.function(FuncKind::Entry)?;
                m.functions.push(f);
            }
            Some(".func") => {
                let f = self.function(FuncKind::Func)?;
                m.functions.push(f);
            }
            Some(".global") | Some(".const") | Some(".shared") | Some(".local") => {
                let mut vars = self.var_decl(is_extern)?;
                self.expect(Tok::Semi, "`;`")?;
                m.vars.append(&mut vars);
            }
            _ => {
                return self.error(format!(
                    "expected `.entry`, `.func` or a variable, found {}",
                    self.describe_current()
                ))
            }
        }
        Ok(())
    }

    fn function(&mut self, kind: FuncKind) -> PResult<Function> {
        let start = self.here();
        self.callers.clear();
        self.i += 1; // .entry / .func
        let mut rets = Vec::new();
        if kind == FuncKind::Func && self.is(Tok::LParen) {
            rets = self.param_list()?;
        }
        let name = self.ident("a function name")?;
        let mut params = Vec::new();
        if self.is(Tok::LParen) {
            params = self.param_list()?;
        }
        let attrs = self.func_attrs()?;
        let body = if self.eat(Tok::Semi) {
            None
        } else if self.is(Tok::LBrace) {
            self.i += 1;
            Some(self.block(1)?)
        } else {
            return self.error(format!(
                "expected `{{` or `;` after the signature of `{name}`, found {}",
                self.describe_current()
            ));
        };
        Ok(Function {
            name,
            kind,
            params,
            rets,
            attrs,
            body,
            pos: start,
        })
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut out = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(out);
        }
        loop {
            match self.peek_dot() {
                Some(".param") | Some(".reg") => {}
                _ => {
                    return self.error(format!(
                        "expected `.param`, found {}",
                        self.describe_current()
                    ))
                }
            }
            let mut v = self.var_decl(false)?;
            out.append(&mut v);
            if self.eat(Tok::RParen) {
                return Ok(out);
            }
            self.expect(Tok::Comma, "`,` or `)`")?;
        }
    }

    fn dims3(&mut self, what: &str) -> PResult<[u32; 3]> {
        let mut d = [1u32; 3];
        for (k, slot) in d.iter_mut().enumerate() {
            if k > 0 && !self.eat(Tok::Comma) {
                break;
            }
            *slot = self.u32_value(what)?;
        }
        Ok(d)
    }

    fn func_attrs(&mut self) -> PResult<FuncAttrs> {
        let mut a = FuncAttrs::default();
        loop {
            match self.peek_dot() {
                Some(".reqntid") => {
                    self.i += 1;
                    a.reqntid = Some(self.dims3(".reqntid")?);
                }
                Some(".maxntid") => {
                    self.i += 1;
                    a.maxntid = Some(self.dims3(".maxntid")?);
                }
                Some(".reqnctapercluster") => {
                    self.i += 1;
                    a.reqnctapercluster = Some(self.dims3(".reqnctapercluster")?);
                }
                Some(".explicitcluster") => {
                    self.i += 1;
                    a.explicitcluster = true;
                }
                Some(".maxclusterrank") => {
                    self.i += 1;
                    a.maxclusterrank = Some(self.u32_value(".maxclusterrank")?);
                }
                Some(".minnctapersm") => {
                    self.i += 1;
                    a.minnctapersm = Some(self.u32_value(".minnctapersm")?);
                }
                Some(".maxnreg") => {
                    self.i += 1;
                    a.maxnreg = Some(self.u32_value(".maxnreg")?);
                }
                Some(".noreturn") => self.i += 1,
                Some(".pragma") => self.skip_to_semi()?,
                _ => return Ok(a),
            }
        }
    }

    // ----- declarations -------------------------------------------------

    /// `.space [.align N] [.vN] .type [.ptr ...] name[<N>][dims] [= init]`
    /// with further `, name...` for lists. Stops before the `;`.
    fn var_decl(&mut self, is_extern: bool) -> PResult<Vec<VarDecl>> {
        let start = self.here();
        let space = match self.peek_dot() {
            Some(".reg") => Space::Reg,
            Some(".param") => Space::Param,
            Some(".global") => Space::Global,
            Some(".const") => Space::Const,
            Some(".shared") => Space::Shared,
            Some(".local") => Space::Local,
            _ => {
                return self.error(format!(
                    "expected a state space, found {}",
                    self.describe_current()
                ))
            }
        };
        self.i += 1;
        let mut align = None;
        let mut vector = 1;
        let mut ty = None;
        loop {
            match self.peek_dot() {
                Some(".align") => {
                    self.i += 1;
                    align = Some(self.u32_value("an alignment")?);
                }
                Some(".v2") => {
                    self.i += 1;
                    vector = 2;
                }
                Some(".v4") => {
                    self.i += 1;
                    vector = 4;
                }
                Some(".v8") => {
                    self.i += 1;
                    vector = 8;
                }
                Some(".ptr") | Some(".global") | Some(".const") | Some(".shared")
                | Some(".local") => self.i += 1,
                Some(".attribute") => {
                    self.i += 1;
                    self.expect(Tok::LParen, "`(`")?;
                    while !self.eat(Tok::RParen) {
                        if self.next().is_none() {
                            return self.error("unterminated `.attribute(`");
                        }
                    }
                }
                Some(d) if ty.is_none() => {
                    self.i += 1;
                    ty = Some(d.trim_start_matches('.').to_string());
                }
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return self.error(format!(
                "expected a type, found {}",
                self.describe_current()
            ));
        };
        let mut out = Vec::new();
        loop {
            let name_tok = self.peek();
            let name = self.ident("a variable name")?;
            let pos = name_tok.map(|t| self.pos_of(t)).unwrap_or(start);
            let mut range = None;
            if self.eat(Tok::Lt) {
                range = Some(self.u32_value("a register count")?);
                self.expect(Tok::Gt, "`>`")?;
            }
            let mut dims = Vec::new();
            while self.eat(Tok::LBracket) {
                if self.eat(Tok::RBracket) {
                    dims.push(None);
                } else {
                    dims.push(Some(self.unsigned("an array size")?));
                    self.expect(Tok::RBracket, "`]`")?;
                }
            }
            let mut init = Vec::new();
            if self.eat(Tok::Eq) {
                self.initializer(&mut init, 0)?;
            }
            out.push(VarDecl {
                space,
                name,
                ty: ty.clone(),
                vector,
                align,
                dims,
                range,
                init,
                is_extern,
                pos: Pos {
                    start: start.start,
                    end: pos.end,
                    line: pos.line,
                },
            });
            if !(space == Space::Reg && self.eat(Tok::Comma)) {
                return Ok(out);
            }
        }
    }

    fn initializer(&mut self, out: &mut Vec<Imm>, depth: u32) -> PResult<()> {
        if depth > MAX_DEPTH {
            return self.error("initialiser nested too deeply");
        }
        if self.eat(Tok::LBrace) {
            if self.eat(Tok::RBrace) {
                return Ok(());
            }
            loop {
                self.initializer(out, depth + 1)?;
                if self.eat(Tok::RBrace) {
                    return Ok(());
                }
                self.expect(Tok::Comma, "`,` or `}`")?;
            }
        }
        match self.immediate()? {
            Some(imm) => {
                out.push(imm);
                Ok(())
            }
            None => self.error(format!(
                "unsupported initialiser {} (only constants are supported)",
                self.describe_current()
            )),
        }
    }

    /// An immediate (with an optional leading `-`), or `None` (nothing consumed).
    fn immediate(&mut self) -> PResult<Option<Imm>> {
        let neg = self.is(Tok::Minus)
            && matches!(
                self.peek_at(1).map(|t| t.tok),
                Some(Tok::Dec | Tok::Hex | Tok::Decimal | Tok::F32 | Tok::F64)
            );
        let at = if neg { 1 } else { 0 };
        let Some(t) = self.peek_at(at) else {
            return Ok(None);
        };
        let text = self.text_of(t);
        let imm = match t.tok {
            Tok::Dec | Tok::Hex => match parse_int(text) {
                Some(v) => Imm::Int(if neg { v.wrapping_neg() } else { v }),
                None => {
                    return Err(ParseError {
                        pos: self.pos_of(t),
                        message: format!("integer `{text}` out of range"),
                    })
                }
            },
            Tok::F32 => {
                let bits = u32::from_str_radix(text.get(2..).unwrap_or(""), 16).unwrap_or(0);
                Imm::F32(if neg { bits ^ 0x8000_0000 } else { bits })
            }
            Tok::F64 => {
                let bits = u64::from_str_radix(text.get(2..).unwrap_or(""), 16).unwrap_or(0);
                Imm::F64(if neg { bits ^ (1 << 63) } else { bits })
            }
            Tok::Decimal => {
                let v: f64 = text.parse().unwrap_or(0.0);
                Imm::F64(if neg { -v } else { v }.to_bits())
            }
            _ => return Ok(None),
        };
        self.i += at + 1;
        Ok(Some(imm))
    }

    // ----- bodies -------------------------------------------------------

    /// The items up to the matching `}` (the `{` is already consumed).
    fn block(&mut self, depth: u32) -> PResult<Block> {
        if depth > MAX_DEPTH {
            return self.error("blocks nested too deeply");
        }
        let mut block = Block::default();
        loop {
            let Some(t) = self.peek() else {
                return self.error("expected `}`, found end of file");
            };
            match t.tok {
                Tok::RBrace => {
                    self.i += 1;
                    return Ok(block);
                }
                Tok::LBrace => {
                    self.i += 1;
                    let inner = self.block(depth + 1)?;
                    block.items.push(Item::Block(inner));
                }
                Tok::Dot => match self.text_of(t) {
                    ".loc" => {
                        let loc = self.loc()?;
                        block.items.push(Item::Loc(loc));
                    }
                    ".pragma" => self.skip_to_semi()?,
                    ".reg" | ".local" | ".shared" | ".param" | ".const" | ".global" => {
                        let vars = self.var_decl(false)?;
                        self.expect(Tok::Semi, "`;`")?;
                        block.items.extend(vars.into_iter().map(Item::Var));
                    }
                    ".extern" => {
                        self.i += 1;
                        let vars = self.var_decl(true)?;
                        self.expect(Tok::Semi, "`;`")?;
                        block.items.extend(vars.into_iter().map(Item::Var));
                    }
                    other => {
                        return self.error(format!(
                            "unsupported directive `{other}` in a function body"
                        ))
                    }
                },
                Tok::Ident if self.peek_at(1).map(|t| t.tok) == Some(Tok::Colon) => {
                    let name = self.text_of(t).to_string();
                    self.i += 2;
                    block.items.push(Item::Label(name, self.pos_of(t)));
                }
                Tok::Ident | Tok::At => {
                    let inst = self.instruction()?;
                    block.items.push(Item::Inst(inst));
                }
                _ => {
                    return self.error(format!(
                        "expected an instruction, found {}",
                        self.describe_current()
                    ))
                }
            }
        }
    }

    /// `.loc FILE LINE COL [, function_name NAME] [, inlined_at F L C]`.
    fn loc(&mut self) -> PResult<Loc> {
        self.i += 1;
        let file = self.u32_value("a file number")?;
        let line = self.u32_value("a line number")?;
        let col = self.u32_value("a column number")?;
        let mut inlined_at = None;
        while self.eat(Tok::Comma) {
            let key = self.ident("`function_name` or `inlined_at`")?;
            match key.as_str() {
                "function_name" => {
                    self.ident("a function name label")?;
                }
                "inlined_at" => {
                    let f = self.u32_value("a file number")?;
                    let l = self.u32_value("a line number")?;
                    let c = self.u32_value("a column number")?;
                    inlined_at = Some((f, l, c));
                }
                other => return self.error(format!("unexpected `{other}` in `.loc`")),
            }
        }
        // nvcc writes the `.loc` of each call site of an inlining chain
        // (with its own `inlined_at`) before the callee's: the latest one
        // at a position says where that position was inlined.
        let here = (file, line, col);
        let outermost = inlined_at.map(|at| self.callers.get(&at).copied().unwrap_or(at));
        match outermost {
            Some(o) => {
                self.callers.insert(here, o);
            }
            None => {
                self.callers.remove(&here);
            }
        }
        Ok(Loc {
            file,
            line,
            col,
            inlined_at,
            outermost,
        })
    }

    fn instruction(&mut self) -> PResult<Instruction> {
        let first = self.here();
        let mut guard = None;
        if self.eat(Tok::At) {
            let neg = self.eat(Tok::Bang);
            guard = Some((self.ident("a predicate register")?, neg));
        }
        let op_tok = self.expect(Tok::Ident, "an opcode")?;
        let opcode = self.text_of(op_tok).to_string();
        let mut mods = Vec::new();
        let mut end = op_tok.end;
        while let Some(t) = self.peek() {
            if t.tok != Tok::Dot || t.start != end {
                break;
            }
            mods.push(self.text_of(t).trim_start_matches('.').to_string());
            end = t.end;
            self.i += 1;
        }
        let mut operands = Vec::new();
        if !self.is(Tok::Semi) {
            loop {
                operands.push(self.operand(0)?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        let semi = self.expect(Tok::Semi, "`,` or `;`")?;
        Ok(Instruction {
            guard,
            opcode,
            mods,
            operands,
            pos: Pos {
                start: first.start,
                end: semi.end,
                line: first.line,
            },
        })
    }

    fn operand(&mut self, depth: u32) -> PResult<Operand> {
        if depth > MAX_DEPTH {
            return self.error("operand nested too deeply");
        }
        if let Some(imm) = self.immediate()? {
            return Ok(Operand::Imm(imm));
        }
        let Some(t) = self.peek() else {
            return self.error("expected an operand, found end of file");
        };
        match t.tok {
            Tok::Sink => {
                self.i += 1;
                if self.eat(Tok::Pipe) {
                    let second = self.ident("a predicate register")?;
                    return Ok(Operand::Pair("_".to_string(), second));
                }
                Ok(Operand::Sink)
            }
            Tok::Bang => {
                self.i += 1;
                Ok(Operand::Not(self.ident("a predicate register")?))
            }
            Tok::LBracket => {
                self.i += 1;
                if self.is_list_address() {
                    // `[tex, {x, y}]`, `[map, {c0, c1}]`: texture and tensor
                    // operands, parsed only so that the decoder can name the
                    // unsupported instruction.
                    let items = self.operand_list(Tok::RBracket, depth)?;
                    return Ok(Operand::List(items));
                }
                let addr = self.address()?;
                Ok(Operand::Addr(addr))
            }
            Tok::LBrace => {
                self.i += 1;
                let items = self.operand_list(Tok::RBrace, depth)?;
                Ok(Operand::Vector(items))
            }
            Tok::LParen => {
                self.i += 1;
                let items = self.operand_list(Tok::RParen, depth)?;
                Ok(Operand::List(items))
            }
            Tok::Ident => {
                let name = self.register_name()?;
                if self.eat(Tok::Pipe) {
                    let second = self.ident("a predicate register")?;
                    return Ok(Operand::Pair(name, second));
                }
                if self.is(Tok::Plus) {
                    self.i += 1;
                    let off = self.signed_offset()?;
                    return Ok(Operand::SymOffset(name, off));
                }
                Ok(Operand::Name(name))
            }
            _ => self.error(format!(
                "expected an operand, found {}",
                self.describe_current()
            )),
        }
    }

    fn operand_list(&mut self, close: Tok, depth: u32) -> PResult<Vec<Operand>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(self.operand(depth + 1)?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(Tok::Comma, "`,`")?;
        }
    }

    /// After `[`: a name followed by `,` (a list, not an address).
    fn is_list_address(&self) -> bool {
        self.is(Tok::Ident) && self.peek_at(1).map(|t| t.tok) == Some(Tok::Comma)
    }

    /// A name, with a vector component for special registers (`%tid.x`).
    fn register_name(&mut self) -> PResult<String> {
        let t = self.expect(Tok::Ident, "a name")?;
        let mut name = self.text_of(t).to_string();
        if let Some(d) = self.peek() {
            let comp = self.text_of(d);
            if d.tok == Tok::Dot && d.start == t.end && matches!(comp, ".x" | ".y" | ".z" | ".w") {
                name.push_str(comp);
                self.i += 1;
            }
        }
        Ok(name)
    }

    /// After a `+`: `8`, `-8` (written `+-8`).
    fn signed_offset(&mut self) -> PResult<i64> {
        let neg = self.eat(Tok::Minus);
        let at = self.here();
        let v = self.unsigned("an offset")?;
        let v = i64::try_from(v).map_err(|_| ParseError {
            pos: at,
            message: format!("offset {v} out of range"),
        })?;
        Ok(if neg { -v } else { v })
    }

    /// `[reg]`, `[reg+off]`, `[sym+off]`, `[imm]` (the `[` consumed).
    fn address(&mut self) -> PResult<Address> {
        let mut addr = Address {
            base: None,
            offset: 0,
        };
        if self.is(Tok::Ident) {
            addr.base = Some(self.register_name()?);
            if self.eat(Tok::Plus) {
                addr.offset = self.signed_offset()?;
            } else if self.eat(Tok::Minus) {
                let v = self.signed_offset()?;
                addr.offset = -v;
            }
        } else {
            let neg = self.eat(Tok::Minus);
            let v = self.signed_offset()?;
            addr.offset = if neg { -v } else { v };
        }
        if !self.eat(Tok::RBracket) {
            return self.error(format!(
                "expected `]`, found {} (only `[reg+imm]`, `[symbol+imm]` and `[imm]` addresses are supported)",
                self.describe_current()
            ));
        }
        Ok(addr)
    }
}

/// A decimal or hex integer, with PTX's optional `U` suffix.
fn parse_int(text: &str) -> Option<u64> {
    let t = text.trim_end_matches('U');
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else {
        t.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_kernel_with_nested_scopes() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
            .visible .entry k(\n .param .u64 p_x,\n .param .u32 n\n)\n.reqntid 128, 1, 1\n{\n\
            .reg .pred %p<3>;\n .reg .b32 %r<5>;\n .shared .align 8 .b64 bar[2];\n\
            mov.u32 %r1, %tid.x;\n { .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [bar+8], %r1;\n @!p bra W;\n }\n\
            shfl.sync.down.b32 %r2|%p1, %r1, 1, 0x1f, -1;\n ret;\n}\n";
        let m = parse(text).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(m.version, Some((8, 0)));
        let f = &m.functions[0];
        assert_eq!(f.attrs.reqntid, Some([128, 1, 1]));
        assert_eq!(f.params.len(), 2);
        let body = f.body.as_ref().unwrap();
        assert!(body.items.iter().any(|i| matches!(i, Item::Block(_))));
        let shfl = body.items.iter().find_map(|i| match i {
            Item::Inst(x) if x.opcode == "shfl" => Some(x),
            _ => None,
        });
        let shfl = shfl.unwrap();
        assert_eq!(shfl.mods, vec!["sync", "down", "b32"]);
        assert_eq!(shfl.operands[0], Operand::Pair("%r2".into(), "%p1".into()));
        assert_eq!(shfl.operands[4], Operand::Imm(Imm::Int(u64::MAX)));
        assert_eq!(shfl.pos.line, 18);
    }

    #[test]
    fn syntax_errors_have_lines() {
        let e = parse(".version 8.0\n.entry k()\n{\n add.s32 %r1, [%r2+%r3];\n}\n").unwrap_err();
        assert_eq!(e.pos.line, 4);
    }
}
