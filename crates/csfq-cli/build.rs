//! Records the commit the binary is built from (`csfq --version`): `VERGEN_GIT_SHA` and
//! `VERGEN_GIT_DIRTY` (uncommitted changes to tracked files). Outside a git work tree (a
//! source archive) vergen writes a placeholder and warns; the build goes on.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let git = vergen_gitcl::GitclBuilder::default()
        .sha(true)
        .dirty(false)
        .build()?;
    vergen_gitcl::Emitter::default()
        .add_instructions(&git)?
        .emit()?;
    // vergen reruns this script when HEAD moves; an edit to a tracked file under crates/
    // changes the dirty state too.
    println!("cargo:rerun-if-changed=../../crates");
    Ok(())
}
