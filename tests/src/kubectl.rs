//! kubectl as the real client of the kubectl acceptance tests: a kubeconfig written by the
//! TestApiServer, its own cache directory, and helpers to run commands.

use std::path::PathBuf;
use std::process::{Output, Stdio};

use kinform::testing::TestApiServer;
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// kubectl pointed at one TestApiServer.
pub struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
    _dir: TempDir,
}

impl Kubectl {
    /// kubectl for `server`, or `None` (after saying so) when kubectl is not on the PATH.
    ///
    /// # Panics
    ///
    /// When kubectl is missing and [`KINFORM_CONFORMANCE`](crate::python::REQUIRE_ENV) is
    /// `require` (CI sets it): there the kubectl tests must run, not pass by skipping.
    pub fn for_server(server: &TestApiServer, test: &str) -> Option<Self> {
        let available = std::process::Command::new("kubectl")
            .args(["version", "--client"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !available {
            if crate::python::required() {
                panic!(
                    "kubectl is not on the PATH ({}=require): {test} cannot run",
                    crate::python::REQUIRE_ENV
                );
            }
            eprintln!(
                "kubectl is not on the PATH: skipping {test} (set {}=require to fail instead)",
                crate::python::REQUIRE_ENV
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let k = Kubectl {
            kubeconfig: dir.path().join("kubeconfig"),
            cache: dir.path().join("cache"),
            _dir: dir,
        };
        server.write_kubeconfig(&k.kubeconfig).unwrap();
        Some(k)
    }

    /// `kubectl <args>` with this kubeconfig, stdin closed.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }

    /// Runs kubectl, feeding `stdin` if given, and returns its output whatever its status.
    pub async fn output(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut c = self.command(args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        if stdin.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().expect("run kubectl");
        if let Some(input) = stdin {
            let mut w = child.stdin.take().unwrap();
            w.write_all(input).await.unwrap();
            drop(w);
        }
        child.wait_with_output().await.unwrap()
    }

    /// Runs `kubectl exec <args>` as [`output`](Self::output) does, once more (up to three
    /// runs) when kubectl itself dropped the server's frames: client-go before 1.33 starts
    /// reading a WebSocket exec connection before it has registered its streams, and
    /// discards a frame that arrives first ("Unknown stream id N, discarding message",
    /// kubernetes/kubernetes#131189, fixed by #131203 in 1.33). Against a server on loopback
    /// that answers at once the race shows now and then with kubectl 1.32; any other
    /// failure is returned as it is.
    pub async fn exec_output(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let args: Vec<&str> = std::iter::once("exec")
            .chain(args.iter().copied())
            .collect();
        let mut runs = 1;
        loop {
            let out = self.output(&args, stdin).await;
            let dropped = String::from_utf8_lossy(&out.stderr).contains("Unknown stream id");
            if !dropped || runs == 3 {
                return out;
            }
            eprintln!(
                "kubectl {args:?} dropped frames (client-go's stream race); running it again"
            );
            runs += 1;
        }
    }

    /// Runs kubectl and returns stdout; panics with stderr on failure.
    pub async fn run(&self, args: &[&str]) -> String {
        let out = self.output(args, None).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}
