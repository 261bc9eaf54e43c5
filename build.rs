//! Generates the parser from `grammar/kdsl.lalrpop` with LALRPOP.
fn main() {
    println!("cargo:rerun-if-changed=grammar/kdsl.lalrpop");
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .process()
        .expect("LALRPOP failed to generate the parser from grammar/kdsl.lalrpop");
}
