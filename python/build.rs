//! Records the commit the module is built from (`csfq.__build__`).

include!("../build-support/commit.rs");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    emit_commit(&[
        "../crates",
        "src",
        "../build-support",
        "Cargo.lock",
        "Cargo.toml",
    ])
}
