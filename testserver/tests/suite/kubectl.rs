//! Acceptance: kubectl against TestApiServer through the server's kubeconfig. Runs only when
//! `kubectl` is on the PATH (otherwise the test passes after saying it was skipped, or fails
//! under `KINFORM_CONFORMANCE=require`, as in CI).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kinform_tests::http::{Raw, pod};
use kinform_tests::kubectl::Kubectl;
use kinform_testserver::TestApiServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus");

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    docs.into_iter().filter(Value::is_object).collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for project in std::fs::read_dir(dir).unwrap() {
        for f in std::fs::read_dir(project.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_against_the_server() {
    let server = TestApiServer::start().await.unwrap();
    let Some(k) = Kubectl::for_server(&server, "the kubectl acceptance test") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let raw = Raw::new(&server.url());
    server.create_namespace("apps").unwrap();
    for (ns, name) in [
        ("default", "web-1"),
        ("default", "web-2"),
        ("apps", "api-1"),
    ] {
        server
            .create_object(pod(ns, name, json!({"app": "demo"})))
            .unwrap();
    }

    // get pods -A
    let out = k.run(&["get", "pods", "-A"]).await;
    assert!(out.starts_with("NAMESPACE"), "{out}");
    for name in ["web-1", "web-2", "api-1"] {
        assert!(out.contains(name), "{out}");
    }

    // get --raw with a limit
    let out = k.run(&["get", "--raw", "/api/v1/pods?limit=2"]).await;
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    assert!(list["metadata"]["continue"].is_string());

    // get pods -w shows a change made meanwhile
    let mut child = k
        .command(&["get", "pods", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let watched = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("kubectl -w ended");
            if line.starts_with("web-2") {
                break;
            }
        }
        server
            .create_object(pod("default", "web-3", json!({})))
            .unwrap();
        loop {
            let line = lines.next_line().await.unwrap().expect("kubectl -w ended");
            if line.starts_with("web-3") {
                break line;
            }
        }
    })
    .await
    .expect("kubectl get -w did not show the new pod");
    assert!(watched.contains("Pending"), "{watched}");
    child.kill().await.unwrap();

    // CRDs from the corpus: create -f, then custom resources from the examples.
    let crd_files = files(&Path::new(CORPUS).join("crds"));
    let mut served: BTreeSet<(String, String)> = BTreeSet::new();
    let mut plural_of = std::collections::BTreeMap::new();
    for f in &crd_files {
        let out = k.run(&["create", "-f", f.to_str().unwrap()]).await;
        assert!(out.contains("created"), "{out}");
        for crd in yaml_docs(f) {
            let group = crd["spec"]["group"].as_str().unwrap().to_owned();
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap().to_owned();
            let plural = crd["spec"]["names"]["plural"].as_str().unwrap().to_owned();
            for v in crd["spec"]["versions"].as_array().unwrap() {
                if v["served"].as_bool() == Some(true) {
                    let gv = format!("{group}/{}", v["name"].as_str().unwrap());
                    served.insert((gv, kind.clone()));
                }
            }
            plural_of.insert(kind, format!("{plural}.{group}"));
        }
    }
    let crds = k.run(&["get", "crds"]).await;
    assert!(crds.contains("scaledobjects.keda.sh"), "{crds}");

    let mut created = Vec::new();
    for f in files(&Path::new(CORPUS).join("examples")) {
        let docs: Vec<Value> = yaml_docs(&f)
            .into_iter()
            .filter(|d| {
                let key = (
                    d["apiVersion"].as_str().unwrap_or_default().to_owned(),
                    d["kind"].as_str().unwrap_or_default().to_owned(),
                );
                served.contains(&key) && d["metadata"]["name"].is_string()
            })
            .collect();
        if docs.is_empty() {
            continue;
        }
        for d in &docs {
            if let Some(ns) = d["metadata"]["namespace"].as_str() {
                server.create_namespace(ns).unwrap();
            }
        }
        // One JSON file per document (kubectl reads a file starting with `{` as JSON only).
        let stem = f.file_stem().unwrap().to_str().unwrap().to_owned();
        let mut args = vec!["create".to_owned()];
        for (i, d) in docs.iter().enumerate() {
            let file = dir.path().join(format!("{stem}-{i}.json"));
            // Examples dumped from live clusters carry a resourceVersion, which a create
            // must not (the server answers 400, as the real one does).
            let mut d = d.clone();
            if let Some(m) = d["metadata"].as_object_mut() {
                m.remove("resourceVersion");
            }
            std::fs::write(&file, d.to_string()).unwrap();
            args.extend(["-f".to_owned(), file.to_str().unwrap().to_owned()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = k.run(&args).await;
        assert_eq!(out.matches("created").count(), docs.len(), "{out}");
        for d in docs {
            let kind = d["kind"].as_str().unwrap();
            let name = d["metadata"]["name"].as_str().unwrap().to_owned();
            let ns = d["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned();
            let resource = plural_of[kind].clone();
            let out = k.run(&["get", &resource, &name, "-n", &ns]).await;
            assert!(out.contains(&name), "{out}");
            created.push((resource, name, ns));
        }
    }
    assert!(
        created.len() >= 20,
        "only {} custom resources created",
        created.len()
    );

    // label, annotate, patch on a custom resource and on a pod.
    let (resource, name, ns) = created[0].clone();
    for target in [vec![resource.as_str(), name.as_str()], vec!["pod", "web-1"]] {
        let ns = if target[0] == "pod" {
            "default"
        } else {
            ns.as_str()
        };
        let mut args = vec!["label"];
        args.extend(&target);
        args.extend(["tier=gold", "-n", ns]);
        assert!(k.run(&args).await.contains("labeled"));
        let mut args = vec!["annotate"];
        args.extend(&target);
        args.extend(["owner=team-a", "-n", ns]);
        assert!(k.run(&args).await.contains("annotated"));
        let mut args = vec!["patch"];
        args.extend(&target);
        args.extend([
            "--type=merge",
            "-p",
            r#"{"metadata":{"labels":{"merged":"yes"}}}"#,
            "-n",
            ns,
        ]);
        assert!(k.run(&args).await.contains("patched"));
        let mut args = vec!["patch"];
        args.extend(&target);
        args.extend([
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/metadata/labels/json","value":"yes"}]"#,
            "-n",
            ns,
        ]);
        assert!(k.run(&args).await.contains("patched"));
        let mut args = vec!["get"];
        args.extend(&target);
        args.extend(["-n", ns, "-o", "json"]);
        let obj: Value = serde_json::from_str(&k.run(&args).await).unwrap();
        let labels = &obj["metadata"]["labels"];
        assert_eq!(
            (
                labels["tier"].as_str(),
                labels["merged"].as_str(),
                labels["json"].as_str()
            ),
            (Some("gold"), Some("yes"), Some("yes"))
        );
        assert_eq!(obj["metadata"]["annotations"]["owner"], "team-a");
    }

    // delete -f of the CRDs removes their APIs.
    for f in &crd_files {
        let out = k.run(&["delete", "-f", f.to_str().unwrap()]).await;
        assert!(out.contains("deleted"), "{out}");
    }
    assert_eq!(raw.get("/apis/keda.sh/v1alpha1").await.status, 404);
    let crds = raw
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .await;
    assert_eq!(crds.body["items"].as_array().unwrap().len(), 0);
    server.shutdown().await;
}
