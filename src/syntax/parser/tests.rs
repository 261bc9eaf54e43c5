use super::context::innermost_open;
use super::convert::{readable, EXPRESSION_STARTS, ITEM_KEYWORDS, MAX_EXPECTED, OPERATORS};
use super::error::list;
use super::*;

/// One parse by either driver: the tree (or error), the errors judged
/// as they came, and the nesting errors, as text.
fn run(text: &str, lalrpop: bool) -> String {
    let (tokens, lexed) = super::super::lexer::lex(FileId(0), text);
    let cx = Context {
        file: FileId(0),
        text,
        tokens: &tokens,
        open_brackets: std::cell::OnceCell::new(),
        stretches: std::cell::OnceCell::new(),
    };
    let mut recovery = Recovery::new(cx, (&lexed.gaps, &lexed.misread), None);
    let mut depth = super::super::depth::Guard::default();
    let input = tokens.iter().cloned().map(Ok::<_, Infallible>);
    let result = if lalrpop {
        grammar::lalrpop::FileParser::new().parse(FileId(0), &mut recovery, &mut depth, input)
    } else {
        grammar::FileParser::new().parse(FileId(0), &mut recovery, &mut depth, input)
    };
    let result = match result {
        Ok(tree) => format!("{tree:?}"),
        Err(e) => format!("error {e:?}"),
    };
    let found = recovery.finish();
    format!(
        "{result}\n{:?}\n{}\n{:?}\n{:?}",
        found.kept, found.count, found.misread, depth.found
    )
}

/// Every program of the repository, and variants of each with a token
/// deleted, doubled, replaced or moved, and inputs built to stress
/// recovery: kdsl's driver and LALRPOP's agree on all of them.
#[test]
fn the_driver_parses_as_lalrpops_does() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<String> = Vec::new();
    for dir in ["tests/ui", "tests/valid", "samples", "tests/sim/broken"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "kdsl") {
                texts.extend(std::fs::read_to_string(&p).ok());
            }
        }
    }
    assert!(texts.len() > 100, "{} programs", texts.len());
    let k = "kernel k(out: global mut [u32], x: u32) block(32) {\n";
    for n in [1, 2, 17, 40] {
        texts.push(format!("{k}{}\n}}\n", "{".repeat(n)));
        texts.push(format!(
            "{k}    out[0] = {} ) {} 1;\n}}\n",
            "!".repeat(n),
            "!".repeat(n)
        ));
        texts.push(format!("{k}{}}}\n", ");\n".repeat(n)));
        texts.push("fn)".repeat(n));
        texts.push(format!("{k}    out[0] = {}x @ ;\n}}\n", "-!".repeat(n)));
        texts.push(format!(
            "{k}    out[0] = {}1{};\n}}\n",
            "(".repeat(n),
            "]".repeat(n)
        ));
    }
    // A fixed linear congruential generator: the same variants each run.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % n.max(1)
    };
    let pieces = [
        "{", "}", "(", ")", ";", "=", "if", "else", "let", "fn", "!", "+", "[", "]", ",", "x", "1",
        "for", "in", "..", "kernel", "#", ".", "<", "while", "return", "?", ":", "[f32; 4]",
        "[0.0; 2]",
    ];
    let mut variants = Vec::new();
    for text in &texts {
        let (tokens, _) = super::super::lexer::lex(FileId(0), text);
        if tokens.is_empty() {
            continue;
        }
        for _ in 0..12 {
            let (s, _, e) = tokens[next(tokens.len())];
            let piece = pieces[next(pieces.len())];
            let v = match next(4) {
                0 => format!("{}{}", &text[..s], &text[e..]),
                1 => format!("{}{}{}", &text[..e], &text[s..e], &text[e..]),
                2 => format!("{}{piece}{}", &text[..s], &text[e..]),
                _ => {
                    let (s2, _, e2) = tokens[next(tokens.len())];
                    let (a, b) = if s2 < s {
                        ((s2, e2), (s, e))
                    } else {
                        ((s, e), (s2, e2))
                    };
                    if a.1 > b.0 {
                        continue;
                    }
                    format!(
                        "{}{}{}{}{}",
                        &text[..a.0],
                        &text[b.0..b.1],
                        &text[a.1..b.0],
                        &text[a.0..a.1],
                        &text[b.1..]
                    )
                }
            };
            variants.push(v);
        }
    }
    texts.extend(variants);
    for text in &texts {
        let ours = run(text, false);
        let theirs = run(text, true);
        assert!(
            ours == theirs,
            "the drivers differ on:\n{text}\nours:\n{ours}\nLALRPOP's:\n{theirs}"
        );
    }
}

fn raw(names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            if n.chars().all(char::is_alphanumeric) && n.starts_with(char::is_uppercase) {
                n.to_string()
            } else {
                format!("\"{n}\"")
            }
        })
        .collect()
}

#[test]
fn terminal_names_become_readable() {
    assert_eq!(readable(&raw(&[";"])), vec!["`;`"]);
    assert_eq!(
        readable(&raw(&[")", ",", "Ident"])),
        vec!["identifier", "`)`", "`,`"]
    );
}

#[test]
fn groups_collapse() {
    let mut names = EXPRESSION_STARTS.to_vec();
    names.push("if");
    assert_eq!(readable(&raw(&names)), vec!["expression"]);
    let mut after_operand = OPERATORS.to_vec();
    after_operand.extend([";", "."]);
    assert_eq!(
        readable(&raw(&after_operand)),
        vec!["`.`", "`;`", "an operator"]
    );
    assert_eq!(readable(&raw(&ITEM_KEYWORDS)), vec!["item"]);
}

#[test]
fn long_lists_are_cut() {
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let r = readable(&raw(&names));
    assert_eq!(r.len(), MAX_EXPECTED + 1);
    assert_eq!(r.last().map(String::as_str), Some("…"));
}

#[test]
fn innermost_open_bracket_ignores_stray_closers() {
    let (tokens, _) = super::super::lexer::lex(FileId(0), "{ ( ] ) [ ) x");
    let tops = innermost_open(&tokens);
    let spelled: Vec<Option<&str>> = tops.iter().map(|t| t.map(|(_, _, o)| o)).collect();
    // `]` is stray (nothing to close), `)` closes `(`, the last `)` is
    // stray and leaves `[` open.
    assert_eq!(
        spelled,
        [
            None,
            Some("{"),
            Some("("),
            Some("("),
            Some("{"),
            Some("["),
            Some("["),
            Some("[")
        ]
    );
    let (tokens, _) = super::super::lexer::lex(FileId(0), "{ [ ( }");
    // A `}` closes the brackets opened inside its block too.
    assert_eq!(innermost_open(&tokens).last(), Some(&None));
}

#[test]
fn list_wording() {
    assert_eq!(list(&["`;`".to_string()]), "`;`");
    assert_eq!(
        list(&["`,`".to_string(), "`)`".to_string()]),
        "one of `,`, `)`"
    );
}
