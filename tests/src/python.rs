//! The official Python client (`kubernetes` from PyPI) as a client of TestApiServer: finding
//! an interpreter that has it, and running a pytest suite against a server through the
//! kubeconfig the server writes.
//!
//! A machine without the package skips such tests after saying so, unless
//! `KINFORM_CONFORMANCE=require` is set (CI sets it after installing the suite's
//! requirements), in which case a missing package fails the test.

use std::path::Path;
use std::process::{Output, Stdio};

use kinform::testing::TestApiServer;
use tokio::process::Command;

/// The environment variable that turns a missing real client (the Python client, kubectl)
/// into a failure.
pub const REQUIRE_ENV: &str = "KINFORM_CONFORMANCE";

/// Whether `KINFORM_CONFORMANCE=require` is set.
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "require")
}

/// `python3` on the PATH, when it can import every module of `modules`; otherwise why not.
pub fn interpreter_with(modules: &[&str]) -> Result<&'static str, String> {
    let import = format!("import {}", modules.join(", "));
    match std::process::Command::new("python3")
        .args(["-c", &import])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => Ok("python3"),
        Ok(out) => Err(format!(
            "python3 cannot `{import}`: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("python3 is not runnable: {e}")),
    }
}

/// `python3` with `modules`, or `None` after saying that `test` is skipped; panics instead
/// when [`required`].
pub fn interpreter_or_skip(modules: &[&str], test: &str) -> Option<&'static str> {
    match interpreter_with(modules) {
        Ok(python) => Some(python),
        Err(why) if required() => panic!("{why} ({REQUIRE_ENV}=require): {test} cannot run"),
        Err(why) => {
            eprintln!("{why}: skipping {test} (set {REQUIRE_ENV}=require to fail instead)");
            None
        }
    }
}

/// Runs `python -m pytest -q <suite>` with `KUBECONFIG` naming `server`'s kubeconfig and the
/// extra environment `env`; pytest's output whatever its status.
pub async fn pytest(
    python: &str,
    server: &TestApiServer,
    suite: &Path,
    env: &[(&str, String)],
) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    server
        .write_kubeconfig(&kubeconfig)
        .expect("write the kubeconfig");
    let mut c = Command::new(python);
    c.args(["-m", "pytest", "-q"])
        .arg(suite)
        .env("KUBECONFIG", &kubeconfig)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().await.expect("run pytest")
}
