//! Generation time as a user meets it: one `kinform-gen crd FILE --version V` process per
//! served CRD version, beside kopium (`kopium -f FILE --api-version V --docs`, when the
//! `KOPIUM` variable names its binary), over two sets:
//!
//! - `corpus`: the files of ../shared/corpus/crds as their projects ship them (some hold
//!   several versions: each run reads the whole file);
//! - `single`: each of those versions alone in a file of its own, as most CRD files outside
//!   the corpus hold one served version.
//!
//! `cargo bench -p kinform-codegen --features cli --bench gen_processes` (`KOPIUM=path`,
//! `ROUNDS=n`, default 5): the rounds alternate between the tools; the median round of each
//! is printed, and their ratio. Without a runnable kopium the first line says so and only
//! kinform-gen is measured; the bench never installs anything (CI builds it, never runs it).

// A bench binary: undocumented helpers are fine.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kinform_codegen::read::yaml::parse_stream;

/// One run: a file and the version to generate.
struct Run {
    file: PathBuf,
    version: String,
}

fn corpus() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/crds"
    ))
}

/// Every served version of every CRD file under `dir`; with `split`, each written alone into
/// its own file under `out`.
fn runs(dir: &Path, split: Option<&Path>) -> Vec<Run> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for doc in parse_stream(&file, &text).unwrap() {
            let Some(crd) = doc.value else { continue };
            let Some(versions) = crd["spec"]["versions"].as_array() else {
                continue;
            };
            for v in versions.iter().filter(|v| v["served"] == true) {
                let version = v["name"].as_str().unwrap().to_owned();
                let file = match split {
                    None => file.clone(),
                    Some(to) => {
                        let mut one = crd.clone();
                        one["spec"]["versions"] = serde_json::json!([v]);
                        let name = format!(
                            "{}-{version}.json",
                            crd["metadata"]["name"].as_str().unwrap()
                        );
                        let path = to.join(name);
                        std::fs::write(&path, serde_json::to_string_pretty(&one).unwrap()).unwrap();
                        path
                    }
                };
                out.push(Run { file, version });
            }
        }
    }
    out
}

/// The wall time of one process per run.
fn time(runs: &[Run], command: impl Fn(&Run) -> Command) -> Duration {
    let start = Instant::now();
    for run in runs {
        let status = command(run)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("the generator runs");
        assert!(status.success(), "{} {}", run.file.display(), run.version);
    }
    start.elapsed()
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

/// kopium's binary, from `KOPIUM`, if it runs; otherwise a line saying why it is not measured.
fn kopium() -> Option<PathBuf> {
    const INSTALL: &str = "install kopium 0.24 with `cargo install kopium --version '0.24.*' \
                           --root target/kopium` and set KOPIUM=target/kopium/bin/kopium";
    let Some(path) = std::env::var_os("KOPIUM").map(PathBuf::from) else {
        println!("kopium: not measured, KOPIUM is not set ({INSTALL})");
        return None;
    };
    match Command::new(&path).arg("--version").output() {
        Ok(out) if out.status.success() => {
            print!("kopium: {}", String::from_utf8_lossy(&out.stdout));
            Some(path)
        }
        Ok(out) => {
            println!(
                "kopium: not measured, `{} --version` failed: {}",
                path.display(),
                out.status
            );
            None
        }
        Err(e) => {
            println!(
                "kopium: not measured, {} does not run: {e} ({INSTALL})",
                path.display()
            );
            None
        }
    }
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let kopium = kopium();
    let tmp = tempfile::tempdir().unwrap();
    let split = tmp.path().join("single");
    std::fs::create_dir_all(&split).unwrap();
    let out = tmp.path().join("out");
    let kinform = |run: &Run| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kinform-gen"));
        c.arg("crd")
            .arg(&run.file)
            .args(["--version", &run.version, "--out"])
            .arg(&out);
        c
    };
    let kopium_cmd = |k: &Path| {
        let k = k.to_owned();
        move |run: &Run| {
            let mut c = Command::new(&k);
            c.arg("-f")
                .arg(&run.file)
                .args(["--api-version", &run.version, "--docs"]);
            c
        }
    };
    for (set, runs) in [
        ("corpus", runs(&corpus(), None)),
        ("single", runs(&corpus(), Some(&split))),
    ] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            ours.push(time(&runs, kinform));
            if let Some(k) = &kopium {
                theirs.push(time(&runs, kopium_cmd(k)));
            }
        }
        let ours = median(ours);
        print!(
            "{set}: {} versions, kinform-gen {:.3} s",
            runs.len(),
            ours.as_secs_f64()
        );
        if !theirs.is_empty() {
            let theirs = median(theirs);
            print!(
                ", kopium {:.3} s, kinform-gen / kopium {:.2}",
                theirs.as_secs_f64(),
                ours.as_secs_f64() / theirs.as_secs_f64()
            );
        }
        println!(" (median of {rounds} rounds)");
    }
}
