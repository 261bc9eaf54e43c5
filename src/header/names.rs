//! C names for the header: the module's prefix from a file name, and
//! parameter names that are C or C++ keywords (or the launchers' own
//! parameter names) renamed with a trailing `_`.

/// The C and C++ keywords and the names a launcher gives its own
/// parameters and locals: a kdsl parameter with one of these names gets a
/// trailing `_` in the header (kdsl's keywords are fewer than C's, so
/// `float`, `int` or `grid` are valid kdsl parameter names).
const TAKEN: &[&str] = &[
    // C11 and C23
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "alignas",
    "alignof",
    "nullptr",
    "static_assert",
    "thread_local",
    "typeof",
    "constexpr",
    // C++17 and C++20 beyond those
    "and",
    "and_eq",
    "asm",
    "bitand",
    "bitor",
    "catch",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "consteval",
    "constinit",
    "const_cast",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_cast",
    "template",
    "this",
    "throw",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
    // what <stdbool.h>, <stdint.h> and <stddef.h> define as macros or types
    "NULL",
    "offsetof",
    "size_t",
    "uintptr_t",
    // the launchers' own parameters and locals
    "function",
    "stream",
    "grid",
    "block",
    "params",
    "config",
    "args",
    "module",
    "map",
    "base",
    "dims",
    "strides",
    "shape",
    "box",
    "element_strides",
    "i",
    "size",
];

/// `name` as a C identifier in the header: itself, or with a trailing `_`
/// when it is taken (above) or reserved (`_X...`, `__...`).
pub fn param(name: &str) -> String {
    let reserved = name.starts_with("__")
        || (name.starts_with('_') && name.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase()));
    // `kdsl_value_0`, ...: the launchers' locals.
    if TAKEN.contains(&name) || reserved || name.starts_with("kdsl_") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// The module's name in the header's identifiers, from the stem of the
/// source file: ASCII letters, digits and `_`, every other character `_`,
/// `_` in front of a leading digit; `module` for an empty stem.
pub fn module(stem: &str) -> String {
    let mut out: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() {
        out.push_str("module");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// An identifier in upper case, for macros (`KDSL_SAXPY_PARAM_BYTES`).
pub fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_reserved_names_get_an_underscore() {
        assert_eq!(param("x"), "x");
        assert_eq!(param("float"), "float_");
        assert_eq!(param("grid"), "grid_");
        assert_eq!(param("class"), "class_");
        assert_eq!(param("_A"), "_A_");
        assert_eq!(param("__x"), "__x_");
        assert_eq!(param("_a"), "_a");
    }

    #[test]
    fn module_names_are_c_identifiers() {
        assert_eq!(module("saxpy"), "saxpy");
        assert_eq!(module("my-kernels.v2"), "my_kernels_v2");
        assert_eq!(module("3d"), "_3d");
        assert_eq!(module(""), "module");
        assert_eq!(module("é"), "_");
    }
}
