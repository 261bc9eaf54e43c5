//! Compile-time evaluation of IR expressions.
