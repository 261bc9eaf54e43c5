//! A readable text form of the IR (`--emit ir`).
