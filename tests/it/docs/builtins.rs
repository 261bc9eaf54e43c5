//! The table of built-ins (`src/check/builtins.rs`) against everything
//! else that lists them: `docs/language.md`, both editor highlighters and
//! the program generator's coverage list (an independent specification
//! kept by hand: these tests say where the two differ). The language
//! server's hover and completion are compared with it in `lsp.rs`.

use crate::common::gen_program::required_features;
use kdsl::check::builtins::{Builtin, Entry, Form, Function, BUILTINS};
use std::collections::BTreeSet;

fn read(path: &str) -> String {
    let p = crate::common::repo_root().join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn names(forms: &[Form]) -> BTreeSet<String> {
    BUILTINS
        .iter()
        .filter(|e| forms.contains(&e.form))
        .map(|e| e.name.to_string())
        .collect()
}

/// The rows of the first table of the section of `doc` that starts with
/// `heading`, as trimmed cells.
fn table_rows(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}`"));
    doc[start + heading.len()..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// Every built-in function is a row of language.md §8 whose signature is
/// the table's and whose target column starts with what the table needs;
/// every row is a built-in.
#[test]
fn the_language_reference_lists_every_function_as_the_table_does() {
    let doc = read("docs/language.md");
    let rows = table_rows(&doc, "## 8. Built-in functions");
    let mut seen = BTreeSet::new();
    for row in &rows {
        let sig = row[0].trim_matches('`');
        let e = BUILTINS
            .iter()
            .find(|e| e.form == Form::Function && e.signature() == sig)
            .unwrap_or_else(|| {
                panic!("language.md §8 lists `{sig}`, which is no built-in's signature")
            });
        let target = row.last().map(String::as_str).unwrap_or("");
        assert!(
            target.starts_with(&e.target_text()),
            "`{}`: language.md says `{target}`, the table `{}`",
            e.name,
            e.target_text()
        );
        assert!(seen.insert(e.name), "`{}` twice in language.md §8", e.name);
    }
    let missing: Vec<_> = names(&[Form::Function])
        .into_iter()
        .filter(|n| !seen.contains(n.as_str()))
        .collect();
    assert!(missing.is_empty(), "not in language.md §8: {missing:?}");
}

/// Every built-in value is a row of §7, written as the table writes it.
#[test]
fn the_language_reference_lists_every_value_as_the_table_does() {
    let doc = read("docs/language.md");
    let rows = table_rows(&doc, "## 7. Built-in values");
    let written: BTreeSet<String> = rows.iter().map(|r| r[0].trim_matches('`').into()).collect();
    for e in BUILTINS
        .iter()
        .filter(|e| matches!(e.form, Form::Scalar | Form::Vector))
    {
        let name = e.signature().trim_end_matches(": u32").to_string();
        assert!(written.contains(&name), "language.md §7 lacks `{name}`");
        let row = rows.iter().find(|r| r[0].trim_matches('`') == name);
        let target = row.and_then(|r| r.last()).map(String::as_str);
        assert_eq!(target, Some(e.target_text().as_str()), "`{name}`");
    }
    assert_eq!(written.len(), names(&[Form::Scalar, Form::Vector]).len());
}

/// Every barrier-group operation has its rows in §9, every named-barrier
/// operation is described in §4.3.
#[test]
fn the_language_reference_describes_every_barrier_operation() {
    let doc = read("docs/language.md");
    let rows = table_rows(&doc, "## 9. Barrier operations");
    for name in names(&[Form::BarrierMethod]) {
        let call = format!("`b.{name}(");
        assert!(
            rows.iter()
                .any(|r| format!("`{}", r[0].trim_start_matches('`')).starts_with(&call)),
            "language.md §9 has no row for `b.{name}(...)`"
        );
    }
    let named = &doc[doc.find("### 4.3 Named barriers").expect("§4.3")..];
    for name in names(&[Form::NamedMethod]) {
        assert!(
            named.contains(&format!("{name}()")),
            "§4.3 lacks `{name}()`"
        );
    }
}

/// The words of Vim's `syn keyword GROUP ...` lines and the alternatives
/// of its `syn match GROUP "...\%(a\|b\)..."` lines.
fn vim_words(syntax: &str, group: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in syntax.lines() {
        let mut words = line.split_whitespace();
        let (Some("syn"), Some(kind), Some(g)) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if g != group {
            continue;
        }
        match kind {
            "keyword" => out.extend(words.map(str::to_string)),
            "match" => {
                let inner = line
                    .split_once("\\%(")
                    .and_then(|(_, r)| r.split_once("\\)"))
                    .map(|(l, _)| l)
                    .unwrap_or_else(|| panic!("unexpected Vim pattern: {line}"));
                out.extend(inner.split("\\|").map(str::to_string));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn the_vim_highlighter_knows_exactly_the_built_ins() {
    let syntax = read("editors/vim/syntax/kdsl.vim");
    assert_eq!(
        vim_words(&syntax, "kdslBuiltinVar"),
        names(&[Form::Scalar, Form::Vector])
    );
    assert_eq!(
        vim_words(&syntax, "kdslBuiltinFn"),
        names(&[Form::Function])
    );
    assert_eq!(
        vim_words(&syntax, "kdslBarrierOp"),
        names(&[Form::BarrierMethod, Form::NamedMethod])
    );
}

/// The alternatives of the first `(a|b|c)` group of a TextMate pattern.
fn alternatives(pattern: &str) -> BTreeSet<String> {
    let (_, rest) = pattern.split_once('(').expect("a group");
    let rest = rest.strip_prefix("\\.)\\s*(").unwrap_or(rest);
    let (inner, _) = rest.split_once(')').expect("a closed group");
    inner.split('|').map(str::to_string).collect()
}

#[test]
fn the_vscode_highlighter_knows_exactly_the_built_ins() {
    let grammar: serde_json::Value =
        serde_json::from_str(&read("editors/vscode/syntaxes/kdsl.tmLanguage.json"))
            .expect("the grammar is JSON");
    let repo = &grammar["repository"];
    let pattern = |name: &str| -> String {
        repo["builtins"]["patterns"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == name)
            .and_then(|p| p["match"].as_str())
            .unwrap_or_else(|| panic!("no builtins pattern `{name}`"))
            .to_string()
    };
    assert_eq!(
        alternatives(&pattern("variable.language.kdsl")),
        names(&[Form::Scalar, Form::Vector])
    );
    assert_eq!(
        alternatives(&pattern("support.function.kdsl")),
        names(&[Form::Function])
    );
    let methods = repo["barrier-methods"]["match"]
        .as_str()
        .expect("barrier-methods");
    assert_eq!(
        alternatives(methods),
        names(&[Form::BarrierMethod, Form::NamedMethod])
    );
}

/// The features of the generator's coverage list that stand for `e`.
fn features_of(e: &Entry) -> Vec<String> {
    let n = e.name;
    match (e.form, e.builtin) {
        (Form::Function, Builtin::Function(Function::Remote)) => vec!["remote:".into()],
        (
            Form::Function,
            Builtin::Function(
                Function::Load2 | Function::Load4 | Function::Store2 | Function::Store4,
            ),
        ) => vec![format!("vector:{n}")],
        (Form::Function, _) => vec![format!("builtin:{n}")],
        (Form::Scalar | Form::Vector, _) => vec![format!("value:{n}")],
        (Form::BarrierMethod, _) => vec![format!("barrier:{n}")],
        (Form::NamedMethod, _) => vec![format!("named:{n}")],
    }
}

/// The generator covers every built-in of the table (each feature of
/// `features_of` is a prefix of one of `required_features()`), and its
/// list of built-in functions names nothing the table lacks.
#[test]
fn the_generator_covers_every_built_in() {
    let required = required_features();
    for e in BUILTINS {
        for f in features_of(e) {
            assert!(
                required.iter().any(|r| r.starts_with(&f)),
                "the generator's coverage list lacks `{f}` (the built-in `{}`)",
                e.name
            );
        }
    }
    let functions = names(&[Form::Function]);
    for r in &required {
        if let Some(name) = r.strip_prefix("builtin:") {
            assert!(
                functions.contains(name) || name == "warp_mask" || name == "mask_by_name",
                "the generator covers `{name}`, which is no built-in function"
            );
        }
    }
}
