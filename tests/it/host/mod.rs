//! Host code from kdsl: the C/C++ header of `kdslc --emit header`
//! (`header.rs`: golden headers, gcc and g++, the embedded PTX, emitting
//! with the PTX in one run) and host programs built from it against a stub
//! driver (`programs.rs`: `examples/host/` through its Makefile, as
//! docs/build-systems.md shows it, and the checks the header makes before
//! calling the driver).

mod header;
mod programs;
