#!/usr/bin/env bash
# Acceptance check of kinform as a citizen of the Rust Kubernetes ecosystem: an application
# outside this workspace, in a temporary directory, depends on kinform (by path), kinform-api,
# kube 5 and k8s-openapi with a version feature other than the workspace's (1.35, from
# .cargo/config.toml), and passes one k8s-openapi object from kinform's client to kube's. It
# must build: kinform's crates pick no version (else k8s-openapi's build script refuses two),
# kinform-api's groups that the chosen version lacks or changes are gated out rather than
# failing to compile, and both libraries name the very same k8s-openapi types.
#
#   .ci/scratch-app.sh [v1_36]   (any k8s-openapi 0.29 version feature kinform supports)
#
# Cost is kept to a `cargo check` with kube's `client` feature alone (no TLS, no runtime), in
# the workspace's target directory and starting from its Cargo.lock, so the dependencies both
# share are not checked twice.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
feature=${1:-v1_36}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/src"
cp "$repo/Cargo.lock" "$dir/Cargo.lock"

cat >"$dir/Cargo.toml" <<TOML
[package]
name = "kinform-scratch-app"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kinform = { path = "$repo/kinform" }
# The groups whose resources some supported Kubernetes versions lack (gated in kinform-api).
kinform-api = { path = "$repo/generated", features = ["core", "certificates", "networking", "scheduling", "storage"] }
kube = { version = "5", default-features = false, features = ["client"] }
k8s-openapi = { version = "0.29", features = ["$feature"] }
tokio = { version = "1", features = ["rt", "macros"] }
TOML

cat >"$dir/src/main.rs" <<'RUST'
//! One ConfigMap read with kinform and written with kube: the same k8s-openapi type on both
//! sides, no conversion.
use k8s_openapi::api::core::v1::ConfigMap;
use kinform_api::prelude::*;

async fn copy(
    from: kinform::Client,
    to: kube::Client,
) -> Result<ConfigMap, Box<dyn std::error::Error>> {
    let source: kinform::Api<ConfigMap> = kinform::Api::namespaced(from.clone(), "default");
    let cm: ConfigMap = source.get("settings").await?;
    // The generated clientset hands out the same type.
    let _same: ConfigMap = from.core_v1().configmaps("default").get("settings").await?;
    let target: kube::Api<ConfigMap> = kube::Api::namespaced(to, "copy");
    let mut copy = cm.clone();
    copy.metadata.resource_version = None;
    Ok(target.create(&kube::api::PostParams::default(), &copy).await?)
}

fn main() {
    let _ = copy;
}
RUST

cd "$dir"
echo "scratch app in $dir: k8s-openapi feature $feature"
env -u K8S_OPENAPI_ENABLED_VERSION \
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}" \
  cargo check --quiet
echo "scratch app ($feature) builds with kinform, kinform-api and kube 5"
