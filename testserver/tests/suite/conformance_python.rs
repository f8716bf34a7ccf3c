//! Conformance: the official Python client (`kubernetes` from PyPI, pinned in
//! `conformance/python/requirements.txt`) drives TestApiServer over HTTPS through the
//! kubeconfig the server writes, running the pytest suite in `conformance/python`. Each test
//! there names the kube-apiserver behaviour it checks; behaviours not reproduced yet are
//! strict xfails, so the suite turns red when one starts to work and its mark must go.
//!
//! Skipped (after saying so) where python3 cannot import `kubernetes` and `pytest`, unless
//! `KINFORM_CONFORMANCE=require` (CI) makes that a failure.

use std::path::Path;

use kinform_tests::python;
use kinform_testserver::TestApiServer;

/// Change events the server keeps: small, so the suite can expire a resourceVersion (410)
/// with a few hundred writes.
const HISTORY_WINDOW: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_conformance_suite_passes() {
    let Some(py) = python::interpreter_or_skip(
        &["kubernetes", "pytest"],
        "the Python client conformance suite",
    ) else {
        return;
    };
    let server = TestApiServer::builder()
        .https()
        .history_window(HISTORY_WINDOW)
        .start()
        .await
        .expect("server starts");
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/python");
    let out = python::pytest(
        py,
        &server,
        &suite,
        &[("KINFORM_HISTORY_WINDOW", HISTORY_WINDOW.to_string())],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pytest failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // The summary line (`N passed, M xfailed`) in the test's output.
    println!("{}", stdout.lines().last().unwrap_or_default());
}

/// The official Python client against TestApiServer with admission and conversion webhooks
/// registered (`kinform_tests::webhook::Demo`): `conformance/webhooks/test_webhooks_up.py`
/// while they answer, `test_webhooks_down.py` once they are stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_sees_webhook_decisions() {
    let Some(py) =
        python::interpreter_or_skip(&["kubernetes", "pytest"], "the Python webhook tests")
    else {
        return;
    };
    let server = TestApiServer::builder()
        .https()
        .start()
        .await
        .expect("server starts");
    let demo = kinform_tests::webhook::Demo::install(&server).await;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/webhooks");
    for phase in ["up", "down"] {
        if phase == "down" {
            demo.hooks.stop();
        }
        let file = dir.join(format!("test_webhooks_{phase}.py"));
        let out = python::pytest(py, &server, &file, &[]).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "pytest {phase} failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
        println!("{phase}: {}", stdout.lines().last().unwrap_or_default());
    }
}
