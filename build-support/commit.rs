// Shared by the `csfq` command's and the Python module's build scripts (`include!`d):
// records the commit a binary is built from, `VERGEN_GIT_SHA` and `VERGEN_GIT_DIRTY`
// (uncommitted changes to tracked files). Outside a git work tree (a source archive) vergen
// writes a placeholder and warns; the build goes on.

/// Emits the commit; the build script runs again when HEAD moves (vergen) or a file under
/// one of `sources` (relative to the package) changes, which may change the dirty state.
fn emit_commit(sources: &[&str]) -> Result<(), Box<dyn std::error::Error>> {
    let git = vergen_gitcl::GitclBuilder::default()
        .sha(true)
        .dirty(false)
        .build()?;
    vergen_gitcl::Emitter::default()
        .add_instructions(&git)?
        .emit()?;
    for s in sources {
        println!("cargo:rerun-if-changed={s}");
    }
    Ok(())
}
