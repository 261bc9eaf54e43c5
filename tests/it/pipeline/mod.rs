//! The whole compiler at once on random, mutated, generated and huge input:
//! no panic, no blow-up, every generated program assembled by ptxas.

mod fuzz;
mod generated;
mod scaling;
