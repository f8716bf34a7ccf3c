#!/usr/bin/env bash
# Build cost of a small controller, kinform vs kube-rs, in one run on one machine.
#
# Writes two applications into a work directory (default: a new temp dir), each its own
# workspace with its own target directory, and builds each from clean, then incrementally:
# - `kinform-ctl`: `#[derive(kinform::CustomResource)]` Foo, a `kinform::controller::Controller`
#   that creates a ConfigMap owned by each Foo, and a test running it against TestApiServer.
# - `kube-ctl`: the same controller on kube 5 (`#[derive(kube::CustomResource)]`,
#   `kube::runtime::Controller`), tested against the same TestApiServer (the
#   `kinform-testserver` library as a dev-dependency: kube-rs has no API server of its own), so
#   its test build includes the server.
# Both pick k8s-openapi's v1_35 and use debug builds (the profile a developer iterates with).
#
# For each side, in this order: `cargo build` (the controller alone, clean), `cargo test
# --no-run` (adds the test and the test server), then after a one-line change to the
# reconcile function `cargo build` and `cargo test --no-run` again (incremental). Reported:
# wall seconds and CPU seconds (user + system of every process cargo ran). Only the ratios are
# stable on a shared machine: the two sides run back to back in the same conditions.
#
#   benches/compare/build-cost.sh [work-dir]
#   benches/compare/build-cost.sh --check [work-dir]   only `cargo check --all-targets` both
#                                                      apps, in $CARGO_TARGET_DIR if set
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
work=${1:-$(mktemp -d)}
mkdir -p "$work"
echo "work dir: $work"

# --- kinform-ctl ---------------------------------------------------------------------------
k="$work/kinform-ctl"
mkdir -p "$k/src" "$k/tests"
cat >"$k/Cargo.toml" <<EOF
[package]
name = "kinform-ctl"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kinform = { path = "$repo/kinform", features = ["derive"] }
k8s-openapi = { version = "0.29", features = ["v1_35"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }

[dev-dependencies]
kinform = { path = "$repo/kinform", features = ["derive", "testing"] }
serde_json = "1"
EOF
cat >"$k/src/lib.rs" <<'EOF'
//! A Foo controller: each Foo gets a ConfigMap `<name>-config` it owns.
use std::future::Future;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::client::PostParams;
use kinform::controller::{Action, Controller, controller_reference};
use kinform::informer::InformerFactory;
use kinform::{Api, Client};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The spec of Foo.
#[derive(kinform::CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    /// Replicas.
    pub replicas: i32,
}

async fn reconcile(client: Client, foo: &Foo) -> Result<Action, kinform::Error> {
    let ns = foo.metadata.namespace.clone().unwrap_or_default();
    let name = format!("{}-config", foo.metadata.name.clone().unwrap_or_default());
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            owner_references: Some(vec![controller_reference(foo)]),
            ..ObjectMeta::default()
        },
        data: Some([("replicas".to_owned(), foo.spec.replicas.to_string())].into()),
        ..ConfigMap::default()
    };
    match Api::<ConfigMap>::namespaced(client, &ns)
        .create(&PostParams::default(), &cm)
        .await
    {
        Ok(_) => Ok(Action::done()),
        Err(e) if e.is_already_exists() => Ok(Action::done()),
        Err(e) => Err(e),
    }
}

/// Runs the controller until `shutdown` completes.
pub async fn run(client: Client, shutdown: impl Future<Output = ()> + Send + 'static) {
    let factory = InformerFactory::new(client.clone());
    let controller = Controller::<Foo>::builder(&factory).owns::<ConfigMap>().build();
    controller
        .run(
            move |req| {
                let client = client.clone();
                async move {
                    match req.object {
                        Some(foo) => reconcile(client, &foo).await,
                        None => Ok(Action::done()),
                    }
                }
            },
            shutdown,
        )
        .await;
    factory.shutdown().await;
}
EOF
cat >"$k/src/main.rs" <<'EOF'
#[tokio::main]
async fn main() -> Result<(), kinform::Error> {
    let client = kinform::Client::try_default().await?;
    kinform_ctl::run(client, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
EOF
cat >"$k/tests/controller.rs" <<'EOF'
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform::Api;
use kinform::testing::TestApiServer;
use kinform_ctl::Foo;

#[tokio::test]
async fn a_foo_gets_its_config_map() {
    let server = TestApiServer::start().await.unwrap();
    server.create_object(serde_json::to_value(Foo::crd()).unwrap()).unwrap();
    let client = server.client().unwrap();
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    foos.create(&Default::default(), &Foo::new("a", kinform_ctl::FooSpec { replicas: 2 }))
        .await
        .unwrap();
    tokio::spawn(kinform_ctl::run(client.clone(), std::future::pending()));
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    for _ in 0..1200 {
        if let Ok(cm) = cms.get("a-config").await {
            assert_eq!(cm.data.unwrap()["replicas"], "2");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no ConfigMap");
}
EOF

# --- kube-ctl ------------------------------------------------------------------------------
b="$work/kube-ctl"
mkdir -p "$b/src" "$b/tests"
cat >"$b/Cargo.toml" <<EOF
[package]
name = "kube-ctl"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kube = { version = "5.0.0", default-features = false, features = ["client", "runtime", "derive", "rustls-tls", "ring"] }
k8s-openapi = { version = "0.29", features = ["v1_35"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
# kube's derive names serde_json in its expansion.
serde_json = "1"
futures-util = "0.3"
tokio = { version = "1", features = ["rt-multi-thread", "macros", "signal"] }

[dev-dependencies]
kinform-testserver = { path = "$repo/testserver" }
EOF
cat >"$b/src/lib.rs" <<'EOF'
//! A Foo controller: each Foo gets a ConfigMap `<name>-config` it owns.
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, CustomResource, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The spec of Foo.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Foo", namespaced)]
pub struct FooSpec {
    /// Replicas.
    pub replicas: i32,
}

async fn reconcile(foo: Arc<Foo>, client: Arc<Client>) -> Result<Action, kube::Error> {
    let ns = foo.namespace().unwrap_or_default();
    let name = format!("{}-config", foo.name_any());
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            owner_references: foo.controller_owner_ref(&()).map(|r| vec![r]),
            ..ObjectMeta::default()
        },
        data: Some([("replicas".to_owned(), foo.spec.replicas.to_string())].into()),
        ..ConfigMap::default()
    };
    match Api::<ConfigMap>::namespaced((*client).clone(), &ns)
        .create(&PostParams::default(), &cm)
        .await
    {
        Ok(_) => Ok(Action::await_change()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(Action::await_change()),
        Err(e) => Err(e),
    }
}

fn error_policy(_: Arc<Foo>, _: &kube::Error, _: Arc<Client>) -> Action {
    Action::requeue(Duration::from_secs(5))
}

/// Runs the controller until `shutdown` completes.
pub async fn run(client: Client, shutdown: impl Future<Output = ()> + Send + Sync + 'static) {
    Controller::new(Api::<Foo>::all(client.clone()), watcher::Config::default())
        .owns(Api::<ConfigMap>::all(client.clone()), watcher::Config::default())
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, Arc::new(client))
        .for_each(|_| async {})
        .await;
}
EOF
cat >"$b/src/main.rs" <<'EOF'
#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = kube::Client::try_default().await?;
    kube_ctl::run(client, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok(())
}
EOF
cat >"$b/tests/controller.rs" <<'EOF'
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_testserver::TestApiServer;
use kube::Api;
use kube_ctl::Foo;
use kube::CustomResourceExt;

#[tokio::test]
async fn a_foo_gets_its_config_map() {
    let server = TestApiServer::start().await.unwrap();
    server.create_object(serde_json::to_value(Foo::crd()).unwrap()).unwrap();
    let config = kube::Config::new(server.url().parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    foos.create(&Default::default(), &Foo::new("a", kube_ctl::FooSpec { replicas: 2 }))
        .await
        .unwrap();
    tokio::spawn(kube_ctl::run(client.clone(), std::future::pending()));
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    for _ in 0..1200 {
        if let Ok(cm) = cms.get("a-config").await {
            assert_eq!(cm.data.unwrap()["replicas"], "2");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no ConfigMap");
}
EOF

# --- measuring -----------------------------------------------------------------------------
# Runs a command, prints "<wall> <cpu>" seconds (CPU: user + system of all its children).
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.1f} {r.ru_utime + r.ru_stime:.1f}")
PY
}

if $check; then
  for side in kinform-ctl kube-ctl; do
    (cd "$work/$side" && env -u K8S_OPENAPI_ENABLED_VERSION cargo check --quiet --all-targets)
    echo "$side: checks"
  done
  exit 0
fi

declare -A result
for side in kinform-ctl kube-ctl; do
  dir="$work/$side"
  (cd "$dir" && env -u K8S_OPENAPI_ENABLED_VERSION cargo fetch --quiet)
  rm -rf "$dir/target"
  cd "$dir"
  export CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=1
  result[$side.build]=$(measure env -u K8S_OPENAPI_ENABLED_VERSION cargo build --quiet)
  echo "$side build: ${result[$side.build]} (wall s, CPU s)"
  result[$side.test]=$(measure env -u K8S_OPENAPI_ENABLED_VERSION cargo test --quiet --no-run)
  echo "$side test: ${result[$side.test]} (wall s, CPU s)"
  # The one-line change: the reconcile's name format.
  # (the test looks for the new name: it must still pass after the change).
  sed -i 's/{}-config/{}-cfg/' src/lib.rs
  sed -i 's/"a-config"/"a-cfg"/' tests/controller.rs
  result[$side.build_incr]=$(measure env -u K8S_OPENAPI_ENABLED_VERSION cargo build --quiet)
  echo "$side build_incr: ${result[$side.build_incr]} (wall s, CPU s)"
  result[$side.test_incr]=$(measure env -u K8S_OPENAPI_ENABLED_VERSION cargo test --quiet --no-run)
  echo "$side test_incr: ${result[$side.test_incr]} (wall s, CPU s)"
  env -u K8S_OPENAPI_ENABLED_VERSION cargo test --quiet >/dev/null
  cd - >/dev/null
done

printf '%-34s %16s %16s %14s\n' "step (debug)" "kinform wall/CPU" "kube-rs wall/CPU" "CPU kinform/kube"
for step in build test build_incr test_incr; do
  read -r kw kc <<<"${result[kinform-ctl.$step]}"
  read -r bw bc <<<"${result[kube-ctl.$step]}"
  ratio=$(python3 -c "print(f'{$kc/$bc:.2f}')")
  case $step in
    build) label="clean: cargo build";;
    test) label="then: cargo test --no-run";;
    build_incr) label="one-line change: cargo build";;
    test_incr) label="then: cargo test --no-run";;
  esac
  printf '%-34s %16s %16s %14s\n' "$label" "${kw}s/${kc}s" "${bw}s/${bc}s" "$ratio"
done
