//! Rendering diagnostics: human (codespan-reporting), short, JSON.
