//! Names in scope while a function is decoded: `{ }` blocks nest, an inner
//! declaration shadows an outer one, and `%r<N>` declares a whole range
//! without storing N names.

use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Binding {
    Reg(u32),
    /// A shared variable at this CTA shared offset.
    Shared(u32),
    /// A `.local` variable at this per-thread offset.
    Local(u32),
    /// A kernel parameter at this offset of the parameter buffer.
    Param(u32),
    /// A `.func` or call-site parameter at this per-thread offset.
    FuncParam(u32),
    /// A module `.global`/`.const` variable at this global address.
    Global(u64),
    Label(u32),
    Func(u32),
}

#[derive(Clone, Debug, Default)]
struct Scope {
    names: HashMap<String, Binding>,
    /// `prefix → (first slot, count)` for `%prefix<count>`.
    ranges: HashMap<String, (u32, u32)>,
}

#[derive(Clone, Debug, Default)]
pub struct Scopes {
    global: Scope,
    stack: Vec<Scope>,
}

impl Scopes {
    pub fn push(&mut self) {
        self.stack.push(Scope::default());
    }

    pub fn pop(&mut self) {
        self.stack.pop();
    }

    pub fn declare_global(&mut self, name: &str, b: Binding) {
        self.global.names.insert(name.to_string(), b);
    }

    pub fn declare(&mut self, name: &str, b: Binding) {
        match self.stack.last_mut() {
            Some(s) => {
                s.names.insert(name.to_string(), b);
            }
            None => self.declare_global(name, b),
        }
    }

    pub fn declare_range(&mut self, prefix: &str, base: u32, count: u32) {
        if let Some(s) = self.stack.last_mut() {
            s.ranges.insert(prefix.to_string(), (base, count));
        }
    }

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        let split = split_index(name);
        for scope in self.stack.iter().rev().chain(std::iter::once(&self.global)) {
            if let Some(b) = scope.names.get(name) {
                return Some(*b);
            }
            if let Some((prefix, n)) = split {
                if let Some(&(base, count)) = scope.ranges.get(prefix) {
                    if n < count {
                        return Some(Binding::Reg(base + n));
                    }
                }
            }
        }
        None
    }
}

/// `%rd12` → (`%rd`, 12). A leading zero (`%r01`) is not a range member.
fn split_index(name: &str) -> Option<(&str, u32)> {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits == name.len() {
        return None;
    }
    let (prefix, num) = name.split_at(name.len() - digits);
    if num.len() > 1 && num.starts_with('0') {
        return None;
    }
    Some((prefix, num.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_shadowing() {
        let mut s = Scopes::default();
        s.push();
        s.declare_range("%r", 10, 5);
        assert_eq!(s.lookup("%r4"), Some(Binding::Reg(14)));
        assert_eq!(s.lookup("%r5"), None);
        assert_eq!(s.lookup("%r04"), None);
        s.push();
        s.declare("%r4", Binding::Reg(99));
        assert_eq!(s.lookup("%r4"), Some(Binding::Reg(99)));
        s.pop();
        assert_eq!(s.lookup("%r4"), Some(Binding::Reg(14)));
    }
}
