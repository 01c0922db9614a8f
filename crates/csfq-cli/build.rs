//! Records the commit the binary is built from (`csfq --version`).

include!("../../build-support/commit.rs");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    emit_commit(&[
        "../../crates",
        "../../build-support",
        "../../Cargo.lock",
        "../../Cargo.toml",
    ])
}
