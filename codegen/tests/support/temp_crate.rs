//! The temporary crates the slow tests build: kinform-codegen's `crd_roundtrip` and
//! `crd_fixture_behaviour`, and kinform-macros' `derive_roundtrip` (which includes this file
//! with `#[path]`). Generated code is only proven by compiling it, in a crate that depends on
//! the runtime alone, as a user's would.
//!
//! Every such crate lives in `<target dir>/temp-crates/<name>/`, declares the same dependencies
//! (the runtime with its `testing` feature, tokio), copies the workspace's `Cargo.lock`, uses
//! the same profile, and is built `--offline` into ONE shared target dir with the same
//! `RUSTFLAGS`: the runtime and all its dependencies compile once for all of them, and a
//! rerun only recompiles generated code that changed (files are written only when their
//! content changes).
//!
//! Warnings are errors in the temporary crate itself (its manifest's `[lints]`: the generated
//! code must be warning-free), not in its dependencies: a `-D warnings` in `RUSTFLAGS` would
//! also fail these tests on a warning in another crate of the workspace.

#![allow(dead_code)] // each test uses its own part

use std::path::{Path, PathBuf};
use std::process::Command;

/// `RUSTFLAGS` of every temporary crate's build (identical flags share the artifacts; none,
/// so an ambient `RUSTFLAGS` does not change what is tested).
pub const RUSTFLAGS: &str = "";

/// The workspace root (every including crate is a direct child of it).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is inside the workspace")
        .to_owned()
}

/// Where the temporary crates and their shared target dir live: `temp-crates/` in the
/// target dir of the running build (`CARGO_TARGET_DIR` when set, else the workspace's
/// `target/`).
fn root() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| workspace().join("target"))
        .join("temp-crates")
}

/// Writes `content` to `path` unless it already holds exactly that (keeps mtimes, so cargo
/// does not rebuild unchanged code).
pub fn write_if_changed(path: &Path, content: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("creates the directory");
    }
    if std::fs::read_to_string(path).ok().as_deref() != Some(content) {
        std::fs::write(path, content).expect("writes the file");
    }
}

/// One temporary crate (a package named `name`, outside the workspace).
pub struct TempCrate {
    name: String,
    dir: PathBuf,
}

impl TempCrate {
    /// Creates (or refreshes) the crate `name`: its manifest and the workspace's lock file.
    pub fn new(name: &str) -> Self {
        Self::with_dependencies(name, "")
    }

    /// [`TempCrate::new`] with more `[dependencies]` lines (`kinform-api = { path = ... }`).
    pub fn with_dependencies(name: &str, more: &str) -> Self {
        let dir = root().join(name);
        let runtime = workspace().join("kinform");
        write_if_changed(
            &dir.join("Cargo.toml"),
            &format!(
                "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2024\"\n\
                 publish = false\n\n[workspace]\n\n[dependencies]\n\
                 kinform = {{ path = {:?}, features = [\"testing\"] }}\n\
                 tokio = {{ version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }}\n{more}\n\
                 [lints.rust]\nwarnings = \"deny\"\n\n\
                 [lints.clippy]\nall = {{ level = \"warn\", priority = -1 }}\n\n\
                 [profile.dev]\ndebug = false\nincremental = false\n",
                runtime.display().to_string()
            ),
        );
        if let Ok(lock) = std::fs::read_to_string(workspace().join("Cargo.lock")) {
            write_if_changed(&dir.join("Cargo.lock"), &lock);
        }
        Self {
            name: name.to_owned(),
            dir,
        }
    }

    /// The crate's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a file of the crate (`src/lib.rs`, ...) if its content changed.
    pub fn write(&self, path: &str, content: &str) {
        write_if_changed(&self.dir.join(path), content);
    }

    /// Runs `cargo {subcommand}` (`build`, `test`) on the crate in the shared target dir;
    /// panics, naming the crate, when it fails.
    pub fn cargo(&self, subcommand: &str) {
        self.cargo_with(&[subcommand], &[]);
    }

    /// Runs `cargo {args[0]} --offline --quiet --manifest-path ... {args[1..]}` with the extra
    /// environment `env` (e.g. `RUSTDOCFLAGS`), as [`TempCrate::cargo`] does.
    pub fn cargo_with(&self, args: &[&str], env: &[(&str, &str)]) {
        let (subcommand, rest) = args.split_first().expect("a cargo subcommand");
        let status = Command::new(env!("CARGO"))
            .args([subcommand, "--offline", "--quiet", "--manifest-path"])
            .arg(self.dir.join("Cargo.toml"))
            .args(rest)
            .env("CARGO_TARGET_DIR", root().join("target"))
            .env("RUSTFLAGS", RUSTFLAGS)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .envs(env.iter().copied())
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "cargo {} failed for the temporary crate {}",
            args.join(" "),
            self.dir.display()
        );
    }

    /// The crate's binary, after [`TempCrate::cargo`]`("build")`.
    pub fn binary(&self) -> PathBuf {
        root().join("target/debug").join(&self.name)
    }
}
