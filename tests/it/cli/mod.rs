//! The `kdslc` binary as a build system, a person or `make` runs it: exit
//! statuses, where output goes, depfiles, formats, and the launch flags of
//! `kdslc sim` and `kdslc run`.

mod build;
mod instances;
mod launch;
mod make;
