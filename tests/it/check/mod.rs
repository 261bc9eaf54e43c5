//! The checker and the barrier pass: the diagnostics they give, the checked
//! IR (verified), constants and inferred types, imports, and the tables of
//! what the checker accepts (with ptxas as the judge of each accepted
//! combination).

mod atomics;
mod barriers;
mod consteval;
mod conversions;
mod imports;
mod inference;
mod limits;
mod render;
mod ui;
mod verify;
