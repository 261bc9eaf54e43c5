//! `kdslc`: the command-line driver. All logic lives in [`kdsl::driver`].

fn main() {
    std::process::exit(kdsl::driver::main());
}
