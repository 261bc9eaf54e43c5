//! The front end: source text → tokens → AST, and its syntax errors.
//!
//! Trees are compared as S-expressions (`(+ a (* b c))`) so that precedence
//! and statement structure read at a glance.

use crate::common::nested;
use kdsl::diagnostics::Diagnostic;
use kdsl::span::FileId;
use kdsl::syntax::ast::*;
use kdsl::syntax::{self, Token};
use std::path::PathBuf;

const FILE: FileId = FileId(0);

fn parse(text: &str) -> (File, Vec<Diagnostic>) {
    syntax::parse(FILE, text)
}

fn parse_ok(text: &str) -> File {
    let (file, diags) = parse(text);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics for {text:?}: {diags:#?}"
    );
    file
}

// ------------------------------------------------------------ S-expressions

fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value, suffix } => format!("{value}{}", suffix.map_or("", |s| s.name())),
        ExprKind::Float { value, suffix } => {
            format!("{:?}{}", value.nearest, suffix.map_or("", |s| s.name()))
        }
        ExprKind::WideInt(value) => format!("(wide {:?})", value.nearest),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name(n) => n.name.to_string(),
        ExprKind::Field { base, field } => format!("(. {} {})", sexpr(base), field.name),
        ExprKind::Index { base, indices, .. } => {
            let idx: Vec<String> = indices.iter().map(index_arg).collect();
            format!("(index {} {})", sexpr(base), idx.join(" "))
        }
        ExprKind::Call {
            callee,
            args,
            named,
        } => {
            let mut s = call("call", &callee.name, args);
            for n in kdsl::syntax::ast::named_args(named) {
                s.pop();
                s = format!("{s} (= {} {}))", n.name.name, sexpr(&n.value));
            }
            s
        }
        ExprKind::MethodCall {
            receiver,
            method,
            args,
        } => {
            let mut parts = vec![sexpr(receiver), method.name.to_string()];
            parts.extend(args.iter().map(sexpr));
            format!("(method {})", parts.join(" "))
        }
        ExprKind::Unary { op, operand } => {
            let op = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            };
            format!("({op} {})", sexpr(operand))
        }
        ExprKind::Binary { op, lhs, rhs, .. } => {
            format!("({} {} {})", op.symbol(), sexpr(lhs), sexpr(rhs))
        }
        ExprKind::Cast { expr, ty } => format!("(as {} {})", sexpr(expr), type_sexpr(ty)),
        ExprKind::If {
            cond,
            then_block,
            else_block,
        } => {
            format!(
                "(if {} {} {})",
                sexpr(cond),
                block(then_block),
                block(else_block)
            )
        }
        ExprKind::Paren(inner) => format!("(paren {})", sexpr(inner)),
        ExprKind::Error => "<error>".to_string(),
    }
}

fn call(head: &str, name: &str, args: &[Expr]) -> String {
    let mut parts = vec![head.to_string(), name.to_string()];
    parts.extend(args.iter().map(sexpr));
    format!("({})", parts.join(" "))
}

fn index_arg(a: &IndexArg) -> String {
    match a {
        IndexArg::Expr(e) => sexpr(e),
        IndexArg::Range { lo, hi, .. } => format!(
            "(.. {} {})",
            lo.as_ref().map_or("_".to_string(), sexpr),
            hi.as_ref().map_or("_".to_string(), sexpr)
        ),
    }
}

fn type_sexpr(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named(n) => n.name.to_string(),
        TypeExprKind::Global { mutable, elem } => {
            format!(
                "(global{} {})",
                if *mutable { " mut" } else { "" },
                type_sexpr(elem)
            )
        }
        TypeExprKind::Tensor {
            word,
            mutable,
            elem,
            dims,
            clauses,
        } => format!(
            "({}{} {} [{}]{})",
            word.name,
            if *mutable { " mut" } else { "" },
            type_sexpr(elem),
            dims.iter().map(sexpr).collect::<Vec<_>>().join(" "),
            clauses_sexpr(clauses)
        ),
        TypeExprKind::Array { elem, dims } => format!(
            "(array {} [{}])",
            type_sexpr(elem),
            dims.iter().map(sexpr).collect::<Vec<_>>().join(" ")
        ),
        TypeExprKind::Error => "!".to_string(),
    }
}

fn clauses_sexpr(clauses: &[Clause]) -> String {
    clauses
        .iter()
        .map(|c| {
            format!(
                " ({} {})",
                c.name.name,
                c.args.iter().map(sexpr).collect::<Vec<_>>().join(" ")
            )
        })
        .collect()
}

fn block(b: &Block) -> String {
    let mut parts: Vec<String> = b.stmts.iter().map(stmt).collect();
    if let Some(t) = &b.tail {
        parts.push(format!("(tail {})", sexpr(t)));
    }
    format!("{{{}}}", parts.join(" "))
}

fn stmt(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Let {
            mutable,
            name,
            ty,
            init,
        } => format!(
            "(let{} {}{} {})",
            if *mutable { " mut" } else { "" },
            name.name,
            ty.as_ref()
                .map_or(String::new(), |t| format!(": {}", type_sexpr(t))),
            sexpr(init)
        ),
        StmtKind::LetArray {
            mutable,
            name,
            ty,
            init,
        } => {
            let value = match init.as_ref().map(|v| &v.kind) {
                None => String::new(),
                Some(ArrayValueKind::List(items)) => format!(
                    " [{}]",
                    items.iter().map(sexpr).collect::<Vec<_>>().join(" ")
                ),
                Some(ArrayValueKind::Repeat { value, dims }) => format!(
                    " [{}; {}]",
                    sexpr(value),
                    dims.iter().map(sexpr).collect::<Vec<_>>().join(" ")
                ),
            };
            format!(
                "(let{} {}{}{value})",
                if *mutable { " mut" } else { "" },
                name.name,
                ty.as_ref()
                    .map_or(String::new(), |t| format!(": {}", type_sexpr(t))),
            )
        }
        StmtKind::LetTuple { names, init, .. } => {
            let names: Vec<String> = names
                .iter()
                .map(|n| format!("{}{}", if n.mutable { "mut " } else { "" }, n.name.name))
                .collect();
            format!("(let ({}) {})", names.join(" "), sexpr(init))
        }
        StmtKind::Assign {
            place, op, value, ..
        } => {
            format!(
                "({}= {} {})",
                op.map_or("", BinOp::symbol),
                sexpr(place),
                sexpr(value)
            )
        }
        StmtKind::If {
            cond,
            then_block,
            else_branch,
        } => {
            let els = match else_branch {
                None => String::new(),
                Some(ElseBranch::Block(b)) => format!(" {}", block(b)),
                Some(ElseBranch::If(s)) => format!(" {}", stmt(s)),
            };
            format!("(if {} {}{els})", sexpr(cond), block(then_block))
        }
        StmtKind::While { cond, body } => format!("(while {} {})", sexpr(cond), block(body)),
        StmtKind::For {
            var,
            start,
            end,
            step,
            body,
            ..
        } => format!(
            "(for {} {} {}{} {})",
            var.name,
            sexpr(start),
            sexpr(end),
            step.as_ref()
                .map_or(String::new(), |s| format!(" step {}", sexpr(s))),
            block(body)
        ),
        StmtKind::ForList {
            var, items, body, ..
        } => format!(
            "(for {} [{}] {})",
            var.name,
            items.iter().map(sexpr).collect::<Vec<_>>().join(" "),
            block(body)
        ),
        StmtKind::Break => "break".to_string(),
        StmtKind::Continue => "continue".to_string(),
        StmtKind::Return(e) => match e {
            Some(e) => format!("(return {})", sexpr(e)),
            None => "(return)".to_string(),
        },
        StmtKind::Expr(e) => sexpr(e),
        StmtKind::Shared {
            name,
            elem,
            dims,
            clauses,
        } => {
            let dims: Vec<String> = dims.iter().map(sexpr).collect();
            format!(
                "(shared {} {} {}{})",
                name.name,
                type_sexpr(elem),
                dims.join(" "),
                clauses_sexpr(clauses)
            )
        }
        StmtKind::Barrier(b) => format!(
            "(barrier {}{} {} {}={}{})",
            b.name.name,
            b.count
                .as_ref()
                .map_or(String::new(), |c| format!("[{}]", sexpr(c))),
            b.scope.name,
            b.arg_name.name,
            sexpr(&b.arrivals),
            clauses_sexpr(&b.clauses)
        ),
        StmtKind::Accum { name, elem, dims } => {
            let dims: Vec<String> = dims.iter().map(sexpr).collect();
            format!(
                "(accum {} {} {})",
                name.name,
                type_sexpr(elem),
                dims.join(" ")
            )
        }
        StmtKind::Error => "<error>".to_string(),
    }
}

/// The value of `const X: u32 = {text};`.
fn expr(text: &str) -> String {
    let file = parse_ok(&format!("const X: u32 = {text};"));
    match file.items.as_slice() {
        [Item::Const(c)] => sexpr(&c.value),
        other => panic!("expected one const item, got {other:?}"),
    }
}

/// The body of `fn f() { {text} }`.
fn body(text: &str) -> String {
    body_of(&parse_ok(&format!("fn f() {{ {text} }}")))
}

fn body_of(file: &File) -> String {
    match file.items.as_slice() {
        [Item::Fn(f)] => block(&f.body),
        [Item::Kernel(k)] => block(&k.body),
        other => panic!("expected one function, got {other:?}"),
    }
}

fn codes(diags: &[Diagnostic]) -> Vec<&str> {
    diags.iter().map(|d| d.code).collect()
}

fn primary(text: &str, d: &Diagnostic) -> String {
    d.primary_span().map_or(String::new(), |s| {
        text.get(s.range()).unwrap_or("<bad span>").to_string()
    })
}

// ------------------------------------------------------------ samples

fn fixtures() -> Vec<(PathBuf, String)> {
    let dir = crate::common::repo_root().join("tests/fixtures/parse");
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kdsl"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable fixture");
            (p, text)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn bench_kernels_parse_without_diagnostics() {
    let files = fixtures();
    assert_eq!(
        files.len(),
        6,
        "the six bench kernels are in tests/fixtures/parse"
    );
    for (path, text) in files {
        let (file, diags) = parse(&text);
        assert!(diags.is_empty(), "{}: {diags:#?}", path.display());
        assert!(
            file.items.iter().any(|i| matches!(i, Item::Kernel(_))),
            "{}: no kernel parsed",
            path.display()
        );
    }
}

#[test]
fn saxpy_tree() {
    let text = "kernel saxpy(a: f32, x: global [f32], y: global mut [f32], n: u32) block(256) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}";
    let file = parse_ok(text);
    let [Item::Kernel(k)] = file.items.as_slice() else {
        panic!("one kernel: {file:?}")
    };
    assert_eq!(&*k.name.name, "saxpy");
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name.name, type_sexpr(&p.ty)))
        .collect();
    assert_eq!(
        params,
        ["a: f32", "x: (global f32)", "y: (global mut f32)", "n: u32"]
    );
    assert_eq!(k.launch.len(), 1);
    assert_eq!(k.launch.first().map(|l| &*l.name.name), Some("block"));
    assert_eq!(
        body_of(&file),
        "{(let i (+ (* (. block_idx x) (. block_dim x)) (. thread_idx x))) \
         (if (< i n) {(= (index y i) (+ (* a (index x i)) (index y i)))})}"
    );
    // Spans: the whole kernel, and a name.
    assert_eq!((k.span.start, k.span.end as usize), (0, text.len()));
    assert_eq!(text.get(k.name.span.range()), Some("saxpy"));
}

// ------------------------------------------------------------ expressions

#[test]
fn precedence() {
    let cases = [
        ("a + b * c", "(+ a (* b c))"),
        ("a * b + c", "(+ (* a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a / b % c", "(% (/ a b) c)"),
        ("-x as f32", "(as (- x) f32)"),
        ("a * b as f32", "(* a (as b f32))"),
        ("x as u32 as f32", "(as (as x u32) f32)"),
        ("!a && b || c", "(|| (&& (! a) b) c)"),
        ("a || b && c", "(|| a (&& b c))"),
        ("a & b == c", "(== (& a b) c)"),
        ("a | b ^ c & d", "(| a (^ b (& c d)))"),
        ("a << 1 + 2", "(<< a (+ 1 2))"),
        ("a & b << c", "(& a (<< b c))"),
        ("a == b && c < d", "(&& (== a b) (< c d))"),
        ("a - -b", "(- a (- b))"),
        ("!!a", "(! (! a))"),
        ("-a[i]", "(- (index a i))"),
        ("(a + b) * c", "(* (paren (+ a b)) c)"),
        ("f(x)[i].y", "(. (index (call f x) i) y)"),
        ("full[s].wait()", "(method (index full s) wait)"),
        (
            "b.arrive_expect_tx(4 * n)",
            "(method b arrive_expect_tx (* 4 n))",
        ),
        ("thread_idx.x * 2", "(* (. thread_idx x) 2)"),
        ("remote(peer, 0)[0]", "(index (call remote peer 0) 0)"),
        ("select(c, a, b,)", "(call select c a b)"),
        ("sync_threads()", "(call sync_threads)"),
        // Named arguments (the atomics' and fence's `order`/`scope`).
        (
            "atomic_add(out[0], v, order = acquire, scope = gpu)",
            "(call atomic_add (index out 0) v (= order acquire) (= scope gpu))",
        ),
        ("fence(scope = cta,)", "(call fence (= scope cta))"),
        ("f(a = b + 1, c)", "(call f c (= a (+ b 1)))"),
        ("a[i, j]", "(index a i j)"),
        ("full[0..2]", "(index full (.. 0 2))"),
        ("f[..2]", "(index f (.. _ 2))"),
        ("f[1..]", "(index f (.. 1 _))"),
        ("f[..]", "(index f (.. _ _))"),
        ("if c { a } else { b }", "(if c {(tail a)} {(tail b)})"),
        (
            "if c { a } else if d { b } else { e }",
            "(if c {(tail a)} {(tail (if d {(tail b)} {(tail e)}))})",
        ),
        (
            "1 + if c { 1 } else { 2 } * 3",
            "(+ 1 (* (if c {(tail 1)} {(tail 2)}) 3))",
        ),
        ("true != false", "(!= true false)"),
    ];
    for (text, want) in cases {
        assert_eq!(expr(text), want, "{text}");
    }
}

#[test]
fn literals() {
    let cases = [
        ("42", "42"),
        ("0x2A", "42"),
        ("0b101", "5"),
        ("1_000", "1000"),
        ("16u64", "16u64"),
        ("7i32", "7i32"),
        ("1.0", "1.0"),
        ("1e-3", "0.001"),
        ("2.5e+4", "25000.0"),
        ("0.5bf16", "0.5bf16"),
        ("3E8", "300000000.0"),
        ("2f32", "2.0f32"),
        ("0xFFFF_FFFF", "4294967295"),
        ("-3.4028235e38", "(- 3.4028235e38)"),
    ];
    for (text, want) in cases {
        assert_eq!(expr(text), want, "{text}");
    }
}

#[test]
fn comparisons_do_not_associate() {
    for text in ["a < b < c", "a == b == c", "a < b >= c"] {
        let (_, diags) = parse(&format!("const X: bool = {text};"));
        assert_eq!(codes(&diags), ["E0010"], "{text}");
        let d = &diags[0];
        assert!(d.message.starts_with("expected "), "{}", d.message);
        assert!(
            d.help.iter().any(|h| h.contains("cannot be chained")),
            "{d:#?}"
        );
        assert!(
            d.fixes.is_empty(),
            "no `;` fix for a chained comparison: {d:#?}"
        );
    }
}

#[test]
fn spans_cover_their_source() {
    let text = "const X: u32 = -a[i + 1] as u32 * f(b, c).y;";
    let file = parse_ok(text);
    let [Item::Const(c)] = file.items.as_slice() else {
        panic!("{file:?}")
    };
    assert_eq!(
        text.get(c.value.span.range()),
        Some("-a[i + 1] as u32 * f(b, c).y")
    );
    let ExprKind::Binary {
        lhs, rhs, op_span, ..
    } = &c.value.kind
    else {
        panic!("{:?}", c.value)
    };
    assert_eq!(text.get(op_span.range()), Some("*"));
    assert_eq!(text.get(lhs.span.range()), Some("-a[i + 1] as u32"));
    assert_eq!(text.get(rhs.span.range()), Some("f(b, c).y"));
    let ExprKind::Cast { expr, ty } = &lhs.kind else {
        panic!("{lhs:?}")
    };
    assert_eq!(text.get(ty.span.range()), Some("u32"));
    let ExprKind::Unary { operand, .. } = &expr.kind else {
        panic!("{expr:?}")
    };
    let ExprKind::Index { index_span, .. } = &operand.kind else {
        panic!("{operand:?}")
    };
    assert_eq!(text.get(index_span.range()), Some("[i + 1]"));
    assert_eq!(text.get(c.span.range()), Some(text));
    assert!(file
        .items
        .iter()
        .all(|i| matches!(i, Item::Const(c) if c.span.file == FILE)));
}

// ------------------------------------------------------------ statements

#[test]
fn statements() {
    let cases = [
        ("let x = 1;", "{(let x 1)}"),
        ("let mut x: u32 = 1;", "{(let mut x: u32 1)}"),
        ("x = 1;", "{(= x 1)}"),
        ("a[i] += 1;", "{(+= (index a i) 1)}"),
        ("tile[s, i] -= 1;", "{(-= (index tile s i) 1)}"),
        ("remote(peer, 0)[0] = v;", "{(= (index (call remote peer 0) 0) v)}"),
        (
            "x *= 1; x /= 1; x %= 1; x &= 1; x |= 1; x ^= 1; x <<= 1; x >>= 1;",
            "{(*= x 1) (/= x 1) (%= x 1) (&= x 1) (|= x 1) (^= x 1) (<<= x 1) (>>= x 1)}",
        ),
        ("if c { }", "{(if c {})}"),
        ("if c { } else { x = 1; }", "{(if c {} {(= x 1)})}"),
        ("if a { } else if b { } else { }", "{(if a {} (if b {} {}))}"),
        ("while d > 0 { d = d >> 1; }", "{(while (> d 0) {(= d (>> d 1))})}"),
        ("for i in 0..n { }", "{(for i 0 n {})}"),
        ("for w in 1..8u32 { }", "{(for w 1 8u32 {})}"),
        (
            "for i in block_idx.x * 256 + thread_idx.x..n step grid_dim.x * 256 { }",
            "{(for i (+ (* (. block_idx x) 256) (. thread_idx x)) n step (* (. grid_dim x) 256) {})}",
        ),
        ("for t in 0..(k + TILE - 1) / TILE { }", "{(for t 0 (/ (paren (- (+ k TILE) 1)) TILE) {})}"),
        ("break; continue; return; return x + 1;", "{break continue (return) (return (+ x 1))}"),
        ("f(x); full[s].wait();", "{(call f x) (method (index full s) wait)}"),
        ("shared tile: [f32; 2, 1024];", "{(shared tile f32 2 1024)}"),
        ("barrier full[2]: cta(arrivals = 1);", "{(barrier full[2] cta arrivals=1)}"),
        ("barrier done: cluster(arrivals = 128);", "{(barrier done cluster arrivals=128)}"),
        ("let v = if c { 1 } else { 2 };", "{(let v (if c {(tail 1)} {(tail 2)}))}"),
        (";; x = 1;;", "{(= x 1)}"),
    ];
    for (text, want) in cases {
        assert_eq!(body(text), want, "{text}");
    }
}

#[test]
fn block_tails() {
    assert_eq!(body("let y = 1; y + 1"), "{(let y 1) (tail (+ y 1))}");
    assert_eq!(body("x"), "{(tail x)}");
    // An `if` at the end of a block stays a statement.
    assert_eq!(
        body("if c { a } else { b }"),
        "{(if c {(tail a)} {(tail b)})}"
    );
    // A statement-position `if` is not the left operand of an operator.
    assert_eq!(
        body("if c { a } else { b } - 1"),
        "{(if c {(tail a)} {(tail b)}) (tail (- 1))}"
    );
    assert_eq!(body("while c { } x"), "{(while c {}) (tail x)}");
}

// ------------------------------------------------------------ items

#[test]
fn items() {
    let text = r#"
import "lib/common.kdsl";
import "we\"ird\\name.kdsl";
const TILE: u32 = 16;
fn clamp(x: f32, lo: f32, hi: f32,) -> f32 { min(max(x, lo), hi) }
fn noop() { }
kernel k(a: global [f32], b: global mut [u32]) block(16, 16) cluster(2) { }
"#;
    let file = parse_ok(text);
    let [Item::Import(i1), Item::Import(i2), Item::Const(c), Item::Fn(f), Item::Fn(g), Item::Kernel(k)] =
        file.items.as_slice()
    else {
        panic!("{file:#?}")
    };
    assert_eq!(i1.path, "lib/common.kdsl");
    assert_eq!(text.get(i1.path_span.range()), Some("\"lib/common.kdsl\""));
    assert_eq!(i2.path, "we\"ird\\name.kdsl");
    assert_eq!(
        (&*c.name.name, type_sexpr(&c.ty), sexpr(&c.value)),
        ("TILE", "u32".to_string(), "16".to_string())
    );
    assert_eq!(f.params.len(), 3);
    assert_eq!(f.ret.as_ref().map(type_sexpr).as_deref(), Some("f32"));
    assert_eq!(block(&f.body), "{(tail (call min (call max x lo) hi))}");
    assert!(g.params.is_empty() && g.ret.is_none());
    let launch: Vec<String> = k
        .launch
        .iter()
        .map(|l| call("attr", &l.name.name, &l.args))
        .collect();
    assert_eq!(launch, ["(attr block 16 16)", "(attr cluster 2)"]);
    assert_eq!(
        k.launch.first().and_then(|l| text.get(l.span.range())),
        Some("block(16, 16)")
    );
    assert_eq!(type_sexpr(&k.params[1].ty), "(global mut u32)");
}

#[test]
fn keywords_are_not_identifiers_but_scope_names_are() {
    // `block`, `cluster`, `cta`, `arrivals` are ordinary names.
    assert_eq!(
        body("let block = cta + cluster * arrivals;"),
        "{(let block (+ cta (* cluster arrivals)))}"
    );
    let (_, diags) = parse("fn f() { let step = 1; }");
    assert_eq!(codes(&diags), ["E0010"]);
    assert_eq!(
        diags[0].message,
        "expected one of identifier, `(`, `mut`, found `step`"
    );
}

#[test]
fn let_patterns_bind_names_of_a_vector_load() {
    let b = body("let (a, mut b, _) = load4(x[i * 4]);");
    assert!(b.starts_with("{(let (a mut b _) (call load4 "), "{b}");
    // At least one name; a trailing comma is fine, an empty pattern is not.
    assert!(body("let (a,) = f();").starts_with("{(let (a) "));
    let (_, diags) = parse("fn f() { let () = g(); }");
    assert_eq!(codes(&diags), ["E0010"]);
}

// ------------------------------------------------------------ syntax errors

#[test]
fn three_errors_in_three_statements() {
    let text = "kernel k(n: u32) block(32) {
    let a = (1 + ;
    let b = 2 * * 3;
    foo(a b);
    let ok = a + b;
}";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010", "E0010", "E0010"], "{diags:#?}");
    let found: Vec<String> = diags.iter().map(|d| primary(text, d)).collect();
    assert_eq!(found, [";", "*", "b"]);
    assert_eq!(diags[0].message, "expected expression, found `;`");
    assert_eq!(
        diags[2].message,
        "expected one of `(`, `)`, `,`, `.`, `[`, an operator, found identifier `b`"
    );
    // The statements survive, with error nodes where the errors were.
    assert_eq!(
        body_of(&file),
        "{(let a <error>) (let b (* (* 2 <error>) 3)) (call foo <error>) (let ok (+ a b))}"
    );
}

#[test]
fn errors_in_separate_items_are_all_reported() {
    let text = "const A: u32 = ;
fn f(x: u32 y: u32) { }
kernel k() { let = 1; }
kernel good() { }
";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010", "E0010", "E0010"], "{diags:#?}");
    let found: Vec<String> = diags.iter().map(|d| primary(text, d)).collect();
    assert_eq!(found, [";", "y", "="]);
    assert!(
        matches!(file.items.last(), Some(Item::Kernel(k)) if &*k.name.name == "good"),
        "{file:#?}"
    );
    assert!(file.items.iter().any(|i| matches!(i, Item::Error(_))));
}

#[test]
fn broken_header_keeps_its_body() {
    let text = "kernel k(a: ) block(256) { let x = ; }";
    let (_, diags) = parse(text);
    let found: Vec<String> = diags.iter().map(|d| primary(text, d)).collect();
    assert_eq!(found, [")", ";"], "{diags:#?}");
    let text = "fn f() { if x < { y = 1; } z = 2 }";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010", "E0010"], "{diags:#?}");
    assert_eq!(body_of(&file), "{(if (< x <error>) {(= y 1)}) (= z 2)}");
}

#[test]
fn missing_semicolon_keeps_the_statement_and_offers_a_fix() {
    let text = "fn f() {\n    let x = 5\n    let y = x;\n}";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010"]);
    let d = &diags[0];
    assert_eq!(
        d.message,
        "expected one of `.`, `;`, `[`, an operator, found `let`"
    );
    assert_eq!(primary(text, d), "let");
    let fix = d.fixes.first().expect("a fix");
    let edit = fix.edits.first().expect("an edit");
    let after_5 = text.find("5").expect("5") + 1;
    assert_eq!(
        (
            edit.span.start as usize,
            edit.span.end as usize,
            edit.replacement.as_str()
        ),
        (after_5, after_5, ";")
    );
    assert_eq!(fix.message, "add `;` after `5`");
    assert!(d.help.is_empty(), "the fix is the help: {d:#?}");
    assert_eq!(body_of(&file), "{(let x 5) (let y x)}");

    // The only thing that fits: a fix even on the same line.
    let text = "fn f() { let x = 1 }";
    let (_, diags) = parse(text);
    assert_eq!(diags[0].message, "expected `;`, found `}`");
    assert_eq!(
        diags[0].fixes.first().map(|f| f.message.as_str()),
        Some("add `;` after `1`")
    );
}

#[test]
fn if_expression_needs_else() {
    let (_, diags) = parse("fn f() { let v = if c { 1 }; }");
    assert_eq!(codes(&diags), ["E0010"]);
    assert_eq!(diags[0].message, "expected `else`, found `;`");
    assert!(diags[0].fixes.is_empty());
}

#[test]
fn item_inside_a_block_points_at_the_open_brace() {
    let text = "kernel k() {\n    if a { b = 1;\n}\nkernel j() { }\n";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010"], "{diags:#?}");
    assert_eq!(primary(text, &diags[0]), "kernel");
    let secondary = diags[0]
        .labels
        .iter()
        .find(|l| !l.primary)
        .expect("a secondary label");
    assert_eq!(
        secondary.span.start as usize,
        text.find('{').expect("brace")
    );
    assert!(matches!(file.items.last(), Some(Item::Kernel(k)) if &*k.name.name == "j"));
}

#[test]
fn unexpected_end_of_file() {
    let text = "kernel k() {\n    let x = 1;\n";
    let (_, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0011"]);
    let d = &diags[0];
    assert_eq!(d.message, "unexpected end of file");
    let span = d.primary_span().expect("span");
    assert_eq!(
        (span.start as usize, span.end as usize),
        (text.len(), text.len())
    );
    assert_eq!(d.notes, ["expected one of statement, `}`"]);
    assert!(d
        .labels
        .iter()
        .any(|l| !l.primary && text.get(l.span.range()) == Some("{")));

    // The innermost open bracket is the one named.
    let text = "fn f() { let a = g(b[(1)], c";
    let (_, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0011"]);
    let open = diags[0]
        .labels
        .iter()
        .find(|l| !l.primary)
        .expect("a secondary label");
    assert_eq!(open.span.start as usize, text.find("g(").expect("call") + 1);
    assert_eq!(
        diags[0].notes,
        ["expected one of `(`, `)`, `,`, `.`, `[`, an operator"]
    );

    let (_, diags) = parse("const X: u32 =");
    assert_eq!(codes(&diags), ["E0011"]);
    assert_eq!(diags[0].notes, ["expected expression"]);
}

#[test]
fn stray_tokens_at_top_level() {
    let text = "} ) fn f() { }";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010"]);
    assert_eq!(diags[0].message, "expected item, found `}`");
    assert!(matches!(file.items.last(), Some(Item::Fn(_))));
}

// ------------------------------------------------------------ lexer errors

#[test]
fn unexpected_character() {
    let text = "fn f() { let x = 1 $ 2; let y = é; }";
    let (_, diags) = parse(text);
    let first: Vec<(&str, String, String)> = diags
        .iter()
        .map(|d| (d.code, d.message.clone(), primary(text, d)))
        .collect();
    // The parser's complaints right after a skipped character are dropped:
    // the character explains them.
    assert_eq!(
        first,
        [
            (
                "E0001",
                "unexpected character '$'".to_string(),
                "$".to_string()
            ),
            (
                "E0001",
                "unexpected character 'é'".to_string(),
                "é".to_string()
            ),
        ]
    );
    let (_, diags) = parse("fn f() { x = 1; }\u{0}");
    assert_eq!(diags[0].message, "unexpected character '\\0'");
}

#[test]
fn unterminated_block_comment() {
    let text = "fn f() { } /* outer /* inner */ still open";
    let (_, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0002"]);
    assert_eq!(diags[0].message, "unterminated block comment");
    let span = diags[0].primary_span().expect("span");
    assert_eq!((span.start as usize, span.end as usize), (11, 13));
    // Nested comments are one comment.
    parse_ok("fn f() { /* a /* b */ c */ }");
    // Unterminated inside a body: no extra "unexpected end of file".
    let (_, diags) = parse("fn f() { /* x ");
    assert_eq!(codes(&diags), ["E0002"]);
}

#[test]
fn invalid_number_literals() {
    for bad in [
        "0x", "1e", "0b102", "1.5u32", "0b1f32", "5u7", "1e+", "3abc",
    ] {
        let text = format!("const X: u32 = {bad} + 1;");
        let (file, diags) = parse(&text);
        assert_eq!(codes(&diags), ["E0003"], "{bad}: {diags:#?}");
        assert_eq!(diags[0].message, "invalid number literal", "{bad}");
        assert_eq!(primary(&text, &diags[0]), bad);
        // The literal still parses (as a zero), so the tree is whole.
        let [Item::Const(c)] = file.items.as_slice() else {
            panic!("{file:?}")
        };
        assert!(matches!(&c.value.kind, ExprKind::Binary { .. }), "{bad}");
    }
}

#[test]
fn literal_out_of_range() {
    let (_, diags) = parse("const X: u64 = 18446744073709551616u64;");
    assert_eq!(diags[0].message, "literal out of range for u64");
    // Unsuffixed, it is a wide integer literal: a float context may take
    // it, so only the checker can say it is out of range.
    let (file, diags) = parse("const X: f32 = 18446744073709551616;");
    assert!(diags.is_empty(), "{diags:#?}");
    let [Item::Const(c)] = file.items.as_slice() else {
        panic!("{file:?}")
    };
    assert!(matches!(&c.value.kind, ExprKind::WideInt(_)), "{c:?}");
    let (_, diags) = parse("const X: i32 = 99999999999999999999i32;");
    assert_eq!(diags[0].message, "literal out of range for i32");
    // u64::MAX fits; narrower types are the checker's business.
    parse_ok("const X: u64 = 18446744073709551615; const Y: u32 = 5000000000u32;");
}

#[test]
fn unterminated_string() {
    let text = "import \"lib.kdsl;\nfn f() { }";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0001"], "{diags:#?}");
    assert_eq!(diags[0].message, "unexpected character '\"'");
    assert!(matches!(file.items.last(), Some(Item::Fn(_))));
}

// ------------------------------------------------------------ tokens

#[test]
fn token_dump() {
    let text = "kernel k(x: global [f32]) { let a = 0x10u32; } // done";
    let (tokens, diags) = syntax::tokens(FILE, text);
    assert!(diags.is_empty());
    let shown: Vec<String> = tokens.iter().map(|(_, t)| t.to_string()).collect();
    assert_eq!(
        shown.join(" "),
        "kernel k ( x : global [ f32 ] ) { let a = 16u32 ; }"
    );
    for (span, tok) in &tokens {
        let written = text.get(span.range()).expect("span inside the text");
        if tok.spelling().is_some() || matches!(tok, Token::Ident(_)) {
            assert_eq!(written, tok.to_string());
        }
    }
    let (_, diags) = syntax::tokens(FILE, "a ` b");
    assert_eq!(codes(&diags), ["E0001"]);
}

// ------------------------------------------------------------ robustness

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// Every diagnostic points inside the text at character boundaries and
    /// has a syntax code, and an error node in the tree always comes with a
    /// diagnostic.
    fn check(text: &str) {
        let (file, diags) = syntax::parse(FILE, text);
        for d in &diags {
            assert!(
                ["E0001", "E0002", "E0003", "E0010", "E0011"].contains(&d.code),
                "{d:?}"
            );
            for l in &d.labels {
                assert!(
                    text.get(l.span.range()).is_some(),
                    "bad span {:?} in {text:?}",
                    l.span
                );
            }
        }
        if has_error_node(&file) {
            assert!(
                !diags.is_empty(),
                "error node without a diagnostic in {text:?}"
            );
        }
    }

    fn has_error_node(file: &File) -> bool {
        // The S-expression printers show every error node as `<error>`.
        file.items.iter().any(|i| match i {
            Item::Error(_) => true,
            Item::Const(c) => sexpr(&c.value).contains("<error>"),
            Item::Fn(f) => block(&f.body).contains("<error>"),
            Item::Kernel(k) => {
                block(&k.body).contains("<error>")
                    || k.launch
                        .iter()
                        .any(|l| call("a", "b", &l.args).contains("<error>"))
            }
            Item::Import(_) => false,
        })
    }

    fn samples() -> Vec<String> {
        fixtures().into_iter().map(|(_, t)| t).collect()
    }

    /// Pieces of kdsl, so random strings look like code often enough to
    /// reach deep into the grammar.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("kernel k(".to_string()),
            Just("fn f(".to_string()),
            Just(") block(256) {".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just("(".to_string()),
            Just(")".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(";".to_string()),
            Just(",".to_string()),
            Just("let x = ".to_string()),
            Just("if ".to_string()),
            Just("else ".to_string()),
            Just("for i in 0..n step 2 ".to_string()),
            Just("while ".to_string()),
            Just("barrier b[2]: cta(arrivals = 1);".to_string()),
            Just("shared t: [f32; 4];".to_string()),
            Just("a + b * c ".to_string()),
            Just("x as f32 ".to_string()),
            Just("full[s].wait()".to_string()),
            Just("= ".to_string()),
            Just("+= ".to_string()),
            Just("< ".to_string()),
            Just("/* ".to_string()),
            Just("*/ ".to_string()),
            Just("\"".to_string()),
            Just("0x1f32 ".to_string()),
            Just("1..".to_string()),
            Just("return ".to_string()),
            "[a-z]{1,3} ",
            "[0-9][0-9a-z_.]{0,4} ",
            any::<char>().prop_map(String::from),
        ]
    }

    proptest! {
        #![proptest_config(crate::common::proptest_config(400))]

        #[test]
        fn random_text(text in "\\PC{0,200}") {
            check(&text);
        }

        #[test]
        fn random_fragments(parts in prop::collection::vec(fragment(), 0..60)) {
            check(&parts.concat());
        }

        #[test]
        fn mutated_samples(
            which in 0usize..6,
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..12, fragment()), 1..6),
        ) {
            let samples = samples();
            let mut text = samples[which % samples.len()].clone();
            for (at, len, insert) in edits {
                let start = floor_char(&text, at.index(text.len() + 1));
                let end = floor_char(&text, (start + len).min(text.len()));
                text.replace_range(start..end.max(start), &insert);
            }
            check(&text);
        }

        #[test]
        fn truncated_samples(which in 0usize..6, cut in any::<prop::sample::Index>()) {
            let samples = samples();
            let text = &samples[which % samples.len()];
            let end = floor_char(text, cut.index(text.len() + 1));
            check(&text[..end]);
        }
    }

    fn floor_char(text: &str, mut i: usize) -> usize {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 2000;
    let text = format!("const X: u32 = {};", nested("(", "1", ")", depth));
    let (_, diags) = parse(&text);
    assert!(diags.is_empty());
    let text = format!("fn f() {{ {} }}", nested("if c { ", "", "}", depth));
    let (_, diags) = parse(&text);
    assert!(diags.is_empty());
}

#[test]
fn one_error_per_broken_stretch() {
    // `b` and `c` are both unexpected, but `c` is the same mistake.
    let text = "fn f() { let x = a b c; x = 5 6 7; }";
    let (_, diags) = parse(text);
    let found: Vec<String> = diags.iter().map(|d| primary(text, d)).collect();
    assert_eq!(found, ["b", "6"], "{diags:#?}");
    // Two missing `;` on two lines are two errors.
    let text = "fn f() {\n let x = 5\n let y = 6\n let z = 7;\n}";
    let (file, diags) = parse(text);
    assert_eq!(codes(&diags), ["E0010", "E0010"]);
    assert_eq!(body_of(&file), "{(let x 5) (let y 6) (let z 7)}");
}

/// Syntax errors (lexer and parser) in a parse of `text`.
fn syntax_errors(text: &str) -> Vec<Diagnostic> {
    let (_, diags) = parse(text);
    diags
        .into_iter()
        .filter(|d| d.code.starts_with("E00") || d.code.starts_with("E001"))
        .collect()
}

/// `text` with every edit of `fix` applied.
fn apply_fix(text: &str, fix: &kdsl::diagnostics::Fix) -> String {
    let mut out = text.to_string();
    let mut edits: Vec<_> = fix.edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    for e in edits {
        out.replace_range(e.span.range(), &e.replacement);
    }
    out
}

/// No machine-applicable fix the parser offers makes a file worse. Every
/// sample and valid program is broken in many ways (a token deleted, or a
/// stray token inserted, at every few tokens; C-style loops written in),
/// and every fix offered is applied: the result must have fewer syntax
/// errors than the broken file.
#[test]
fn parser_fixes_never_make_the_code_worse() {
    const INSERTED: [&str; 9] = [
        "(",
        ")",
        ";",
        "{",
        "}",
        "]",
        "=",
        "let",
        "for (i = 0; i < 4; i++)",
    ];
    let root = crate::common::repo_root();
    let mut sources: Vec<String> = fixtures().into_iter().map(|(_, t)| t).collect();
    for dir in ["samples", "tests/valid"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("directory")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "kdsl"))
            .collect();
        paths.sort();
        sources.extend(
            paths
                .iter()
                .map(|p| std::fs::read_to_string(p).expect("readable")),
        );
    }
    let mut broken: Vec<String> = Vec::new();
    for text in sources {
        let (tokens, _) = kdsl::syntax::lexer::lex(FileId(0), &text);
        for (k, (start, _, end)) in tokens.iter().enumerate() {
            if k % 3 == 0 {
                broken.push(format!("{}{}", &text[..*start], &text[*end..]));
            }
            if k % 7 == 0 {
                let tok = INSERTED[(k / 7) % INSERTED.len()];
                broken.push(format!("{} {tok} {}", &text[..*start], &text[*start..]));
            }
        }
    }
    let (mut offered, mut problems) = (0, Vec::new());
    for text in &broken {
        let before = syntax_errors(text);
        for d in &before {
            for fix in &d.fixes {
                offered += 1;
                let fixed = apply_fix(text, fix);
                let after = syntax_errors(&fixed);
                if after.len() >= before.len() {
                    problems.push(format!(
                        "fix `{}` for `{}` made {} errors into {}:\n{}\n---- fixed:\n{}\n---- now: {:?}",
                        fix.message,
                        d.message,
                        before.len(),
                        after.len(),
                        text,
                        fixed,
                        after.iter().map(|a| &a.message).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    assert!(
        offered > 50,
        "only {offered} fixes were offered: the test lost its teeth"
    );
    assert!(
        problems.is_empty(),
        "{} of {offered} fixes made the code worse; the first:\n{}",
        problems.len(),
        problems.first().map_or("", String::as_str)
    );
}
