//! The modifiers of one instruction, taken one kind at a time by the
//! opcode's decoder; whatever is left over at the end is a modifier the
//! simulator does not know for that opcode, which is a load error rather
//! than a silently wrong run.

use super::ops::{Space, Ty};

/// Memory-model and cache modifiers that change nothing in a sequentially
/// consistent simulator without caches.
pub const MEMORY_ORDER: &[&str] = &[
    "weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio", "cta", "gpu",
    "sys", "cluster",
];

/// The orders of `atom`/`red` (PTX's `.sem`) and of `fence`.
pub const SEMS: &[&str] = &["relaxed", "acquire", "release", "acq_rel"];

/// The scopes of `atom`/`red`/`fence`.
pub const SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];

/// Every type word, as written.
pub const TYPE_WORDS: &[&str] = &[
    "pred", "u8", "b8", "u16", "b16", "u32", "b32", "u64", "b64", "b128", "s8", "s16", "s32",
    "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64",
];

pub const CACHE: &[&str] = &[
    "ca",
    "cg",
    "cs",
    "lu",
    "cv",
    "wb",
    "wt",
    "nc",
    "L1::no_allocate",
    "L1::evict_normal",
    "L1::evict_first",
    "L1::evict_last",
    "L1::evict_unchanged",
    "L2::evict_normal",
    "L2::evict_first",
    "L2::evict_last",
    "L2::64B",
    "L2::128B",
    "L2::256B",
];

pub struct Mods<'a> {
    opcode: &'a str,
    words: Vec<&'a str>,
}

impl<'a> Mods<'a> {
    pub fn new(opcode: &'a str, mods: &'a [String]) -> Mods<'a> {
        Mods {
            opcode,
            words: mods.iter().map(String::as_str).collect(),
        }
    }

    /// Removes `word` if present.
    pub fn take(&mut self, word: &str) -> bool {
        match self.words.iter().position(|w| *w == word) {
            Some(i) => {
                self.words.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes and returns the first of `words` present.
    pub fn take_any(&mut self, words: &[&'static str]) -> Option<&'static str> {
        for (i, w) in self.words.iter().enumerate() {
            if let Some(found) = words.iter().find(|x| *x == w) {
                self.words.remove(i);
                return Some(found);
            }
        }
        None
    }

    /// The words not taken yet, in order.
    pub fn words(&self) -> &[&'a str] {
        &self.words
    }

    /// Takes every word left.
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// The first of `words` present, left in place.
    pub fn peek_any(&self, words: &[&'static str]) -> Option<&'static str> {
        self.words
            .iter()
            .find_map(|w| words.iter().find(|x| *x == w).copied())
    }

    /// Removes the words of `words` present and returns how many there
    /// were, the first of them with it.
    pub fn take_count(&mut self, words: &[&'static str]) -> (usize, Option<&'static str>) {
        let first = self.peek_any(words);
        let before = self.words.len();
        self.drop_all(words);
        (before - self.words.len(), first)
    }

    /// Removes every word of `words`.
    pub fn drop_all(&mut self, words: &[&str]) {
        self.words.retain(|w| !words.contains(w));
    }

    /// Removes and returns the type modifiers, in order.
    pub fn take_types(&mut self) -> Vec<Ty> {
        let mut types = Vec::new();
        self.words.retain(|w| match Ty::from_name(w) {
            Some(t) => {
                types.push(t);
                false
            }
            None => true,
        });
        types
    }

    /// Removes and returns the state-space modifiers, in order.
    pub fn take_spaces(&mut self) -> Vec<Space> {
        let mut spaces = Vec::new();
        self.words.retain(|w| match space_of(w) {
            Some(s) => {
                spaces.push(s);
                false
            }
            None => true,
        });
        spaces
    }

    /// `.v2`/`.v4`: the vector length (1 without).
    pub fn take_vector(&mut self) -> u8 {
        match self.take_any(&["v2", "v4", "v8"]) {
            Some("v2") => 2,
            Some("v4") => 4,
            Some(_) => 8,
            None => 1,
        }
    }

    /// Fails on any modifier not taken.
    pub fn finish(&self) -> Result<(), String> {
        match self.words.first() {
            None => Ok(()),
            Some(w) => Err(format!("modifier `.{w}` of `{}`", self.opcode)),
        }
    }
}

pub fn space_of(word: &str) -> Option<Space> {
    Some(match word {
        "global" => Space::Global,
        "shared" | "shared::cta" => Space::Shared,
        "shared::cluster" => Space::SharedCluster,
        "local" => Space::Local,
        "const" => Space::Const,
        "param" | "param::entry" | "param::func" => Space::Param,
        _ => return None,
    })
}
