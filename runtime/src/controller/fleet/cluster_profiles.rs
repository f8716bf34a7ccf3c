//! [`ClusterProfiles`]: the clusters a hub cluster's inventory lists as `ClusterProfile`
//! objects (`multicluster.x-k8s.io/v1alpha1`, KEP-4322's Cluster Inventory API), reached
//! through the access providers of KEP-5339.
//!
//! A cluster manager publishes one `ClusterProfile` per member cluster; its
//! `status.accessProviders` (older managers: `status.credentialProviders`) name a way in
//! (`name`) and how to reach the API server (`cluster`: a kubeconfig `Cluster`). The consumer
//! holds an [`AccessConfig`] (the `--clusterprofile-provider-file` of
//! `sigs.k8s.io/cluster-inventory-api/pkg/access`): per provider name, the exec credential
//! plugin that logs in. This module reproduces that library's `BuildConfigFromCP`:
//!
//! - the first provider of the access config that the profile offers wins (an
//!   `accessProviders` entry replaces a `credentialProviders` entry of the same name);
//! - the client reaches the profile's `server` with its `certificate-authority-data` and
//!   `proxy-url` only: a path (`certificate-authority`) or a TLS switch written by the hub is
//!   not followed;
//! - the plugin runs with `interactiveMode: Never`; the cluster extension
//!   `client.authentication.k8s.io/exec` becomes `spec.cluster.config` of the plugin's
//!   `KUBERNETES_EXEC_INFO` (with `provideClusterInfo`);
//! - the extensions `clusterprofiles.multicluster.x-k8s.io/exec/additional-args` and
//!   `.../additional-envs` add arguments and environment variables as the provider's
//!   `profileSourcedCLIArgsPolicy` (`Append`, `Ignore`) and `profileSourcedEnvVarsPolicy`
//!   (`AppendIfNotExists`, `Replace`, `Ignore`) allow; `Ignore` is the default.
//!
//! Decided where upstream is silent: an unknown policy is an error when the access config is
//! read, naming the provider, not when a profile first needs it; a profile is engaged
//! whatever its `ControlPlaneHealthy` condition says (the fleet reconnects and isolates a
//! failing cluster on its own).
//!
//! Hand-written on serde: no Rust crate models the Cluster Inventory API.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::cluster::{Cluster, ClusterProvider, ClusterSink};
use crate::fifo::Deleted;
use crate::informer::{EventHandlerFns, InformerFactory};
use kinform_client::config::{
    AuthInfo, Cluster as KubeCluster, Context, ExecConfig, ExecEnvVar, NamedAuthInfo, NamedCluster,
    NamedContext,
};
use kinform_client::{AuthConfig, Client, Config, KubeConfigOptions, Kubeconfig, Secret};
use kinform_core::{HasMetadata, Resource, Scope};

/// The label a cluster manager puts on the profiles it publishes (`x-k8s.io/cluster-manager`).
pub const CLUSTER_MANAGER_LABEL: &str = "x-k8s.io/cluster-manager";
/// The cluster extension whose value the exec plugin gets as `spec.cluster.config`.
pub const EXEC_EXTENSION: &str = "client.authentication.k8s.io/exec";
/// The cluster extension with profile-sourced plugin arguments (KEP-5339).
pub const ADDITIONAL_ARGS_EXTENSION: &str =
    "clusterprofiles.multicluster.x-k8s.io/exec/additional-args";
/// The cluster extension with profile-sourced plugin environment variables (KEP-5339).
pub const ADDITIONAL_ENVS_EXTENSION: &str =
    "clusterprofiles.multicluster.x-k8s.io/exec/additional-envs";

/// A `ClusterProfile` (`multicluster.x-k8s.io/v1alpha1`, namespaced): the part of the Cluster
/// Inventory API a consumer reads, with everything else kept as sent.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ClusterProfile {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `spec` (`displayName`, `clusterManager`), as sent.
    #[serde(default)]
    pub spec: Option<Value>,
    /// `status`.
    #[serde(default)]
    pub status: Option<ClusterProfileStatus>,
}

/// `status` of a [`ClusterProfile`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterProfileStatus {
    /// The ways into the cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access_providers: Vec<AccessProvider>,
    /// The deprecated name of `accessProviders`, still read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_providers: Vec<AccessProvider>,
    /// Every other member (`conditions`, `properties`, `version`, ...), as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One way into a member cluster: a provider name and a kubeconfig `Cluster` (`server`,
/// `certificate-authority-data`, `proxy-url`, `extensions`), kept as sent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessProvider {
    /// The provider's name, matched against [`AccessConfig`]'s providers.
    pub name: String,
    /// How to reach the cluster.
    #[serde(default)]
    pub cluster: Value,
}

impl Serialize for ClusterProfile {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("apiVersion", Self::API_VERSION)?;
        map.serialize_entry("kind", Self::KIND)?;
        map.serialize_entry("metadata", &self.metadata)?;
        if let Some(spec) = &self.spec {
            map.serialize_entry("spec", spec)?;
        }
        if let Some(status) = &self.status {
            map.serialize_entry("status", status)?;
        }
        map.end()
    }
}

impl HasMetadata for ClusterProfile {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Resource for ClusterProfile {
    const GROUP: &'static str = "multicluster.x-k8s.io";
    const VERSION: &'static str = "v1alpha1";
    const API_VERSION: &'static str = "multicluster.x-k8s.io/v1alpha1";
    const KIND: &'static str = "ClusterProfile";
    const PLURAL: &'static str = "clusterprofiles";
    const SCOPE: Scope = Scope::Namespaced;
}

/// Why an [`AccessConfig`] cannot be read, or a profile not reached through it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    /// The access config file cannot be read.
    #[error("access config {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The access config is not valid JSON of its shape, or names an unknown policy.
    #[error("access config {origin}: {message}")]
    Invalid {
        /// Where it came from (a file, or what the caller said).
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// The profile offers no provider the access config has.
    #[error(
        "ClusterProfile {profile}: none of its access providers ({offered:?}) is in the access config ({known:?})"
    )]
    NoProvider {
        /// `namespace/name` of the profile.
        profile: String,
        /// The providers it offers.
        offered: Vec<String>,
        /// The providers the access config has.
        known: Vec<String>,
    },
    /// The chosen provider's cluster or extensions do not make a client.
    #[error("ClusterProfile {profile}: access provider {provider}: {message}")]
    Cluster {
        /// `namespace/name` of the profile.
        profile: String,
        /// The provider.
        provider: String,
        /// What is wrong.
        message: String,
    },
}

/// The consumer's access providers (`--clusterprofile-provider-file`): per provider name, the
/// exec plugin that logs in to clusters offered under it, and what a profile may add to it.
///
/// ```json
/// {"providers": [{"name": "token-secretreader",
///                 "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
///                                "command": "/plugins/secretreader", "provideClusterInfo": true},
///                 "profileSourcedCLIArgsPolicy": "Append"}]}
/// ```
#[derive(Clone, Debug, Default)]
pub struct AccessConfig {
    providers: Vec<ProviderConfig>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProviderConfig {
    name: String,
    exec_config: Option<ExecConfig>,
    #[serde(default, rename = "profileSourcedCLIArgsPolicy")]
    args_policy: Option<String>,
    #[serde(default, rename = "profileSourcedEnvVarsPolicy")]
    envs_policy: Option<String>,
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    providers: Vec<ProviderConfig>,
}

impl AccessConfig {
    /// Reads the access config file at `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is not an access config, or names an unknown policy.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, AccessError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| AccessError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// Parses an access config; `origin` names it in errors.
    ///
    /// # Errors
    ///
    /// As [`AccessConfig::from_file`].
    pub fn from_json(text: &str, origin: &str) -> Result<Self, AccessError> {
        let invalid = |message: String| AccessError::Invalid {
            origin: origin.to_owned(),
            message,
        };
        let file: ConfigFile = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
        for p in &file.providers {
            if let Some(policy) = p.args_policy.as_deref()
                && !matches!(policy, "" | "Append" | "Ignore")
            {
                return Err(invalid(format!(
                    "provider {}: profileSourcedCLIArgsPolicy {policy:?} is none of Append, Ignore",
                    p.name
                )));
            }
            if let Some(policy) = p.envs_policy.as_deref()
                && !matches!(policy, "" | "AppendIfNotExists" | "Replace" | "Ignore")
            {
                return Err(invalid(format!(
                    "provider {}: profileSourcedEnvVarsPolicy {policy:?} is none of \
                     AppendIfNotExists, Replace, Ignore",
                    p.name
                )));
            }
        }
        Ok(Self {
            providers: file.providers,
        })
    }

    /// The provider names, in the order they are preferred.
    pub fn provider_names(&self) -> Vec<&str> {
        self.providers.iter().map(|p| p.name.as_str()).collect()
    }

    /// The client configuration of the cluster `profile` describes (`BuildConfigFromCP`).
    ///
    /// # Errors
    ///
    /// The profile offers no provider of this config, the provider has no exec plugin, or
    /// its cluster or extensions are malformed.
    pub fn config_for(&self, profile: &ClusterProfile) -> Result<Config, AccessError> {
        let name = profile_name(profile);
        let status = profile.status.clone().unwrap_or_default();
        let mut offered: BTreeMap<&str, &AccessProvider> = BTreeMap::new();
        for p in status
            .credential_providers
            .iter()
            .chain(&status.access_providers)
        {
            offered.insert(p.name.as_str(), p);
        }
        let Some((provider, access)) = self
            .providers
            .iter()
            .find_map(|p| offered.get(p.name.as_str()).map(|a| (p, *a)))
        else {
            return Err(AccessError::NoProvider {
                profile: name,
                offered: offered.keys().map(|k| (*k).to_owned()).collect(),
                known: self
                    .provider_names()
                    .iter()
                    .map(|k| (*k).to_owned())
                    .collect(),
            });
        };
        let fail = |message: String| AccessError::Cluster {
            profile: name.clone(),
            provider: provider.name.clone(),
            message,
        };
        let Some(mut exec) = provider.exec_config.clone() else {
            return Err(fail("the access config gives it no execConfig".to_owned()));
        };
        let parsed: KubeCluster = serde_json::from_value(access.cluster.clone())
            .map_err(|e| fail(format!("cluster: {e}")))?;
        let cluster = KubeCluster {
            server: parsed.server,
            certificate_authority_data: parsed.certificate_authority_data,
            proxy_url: parsed.proxy_url,
            ..KubeCluster::default()
        };
        let extensions = extensions(&access.cluster).map_err(fail)?;
        if let Some(args) = extensions.get(ADDITIONAL_ARGS_EXTENSION) {
            add_args(&mut exec, args, provider.args_policy.as_deref()).map_err(fail)?;
        }
        if let Some(envs) = extensions.get(ADDITIONAL_ENVS_EXTENSION) {
            add_envs(&mut exec, envs, provider.envs_policy.as_deref()).map_err(fail)?;
        }
        exec.interactive_mode = Some("Never".to_owned());
        let kubeconfig = Kubeconfig {
            clusters: vec![NamedCluster {
                name: name.clone(),
                cluster,
            }],
            auth_infos: vec![NamedAuthInfo {
                name: name.clone(),
                user: AuthInfo {
                    exec: Some(exec),
                    ..AuthInfo::default()
                },
            }],
            contexts: vec![NamedContext {
                name: name.clone(),
                context: Context {
                    cluster: name.clone(),
                    user: name.clone(),
                    ..Context::default()
                },
            }],
            current_context: Some(name.clone()),
            ..Kubeconfig::default()
        };
        let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .map_err(|e| fail(e.to_string()))?;
        if let (AuthConfig::Exec(auth), Some(value)) =
            (&mut config.auth, extensions.get(EXEC_EXTENSION))
            && let Some(info) = auth.cluster_info.as_mut()
        {
            info["config"] = value.clone();
        }
        Ok(config)
    }
}

/// `namespace/name` of a profile: its name in the fleet.
fn profile_name(profile: &ClusterProfile) -> String {
    format!(
        "{}/{}",
        profile.metadata.namespace.as_deref().unwrap_or_default(),
        profile.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The cluster's `extensions` (a list of `{name, extension}`) by name.
fn extensions(cluster: &Value) -> Result<BTreeMap<String, Value>, String> {
    let Some(list) = cluster.get("extensions").filter(|v| !v.is_null()) else {
        return Ok(BTreeMap::new());
    };
    let Value::Array(items) = list else {
        return Err("cluster.extensions is not a list".to_owned());
    };
    let mut out = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            return Err(format!("cluster.extensions[{i}] has no name"));
        };
        out.insert(
            name.to_owned(),
            item.get("extension").cloned().unwrap_or(Value::Null),
        );
    }
    Ok(out)
}

fn add_args(exec: &mut ExecConfig, args: &Value, policy: Option<&str>) -> Result<(), String> {
    match policy.unwrap_or_default() {
        "Append" => {
            let args: Vec<String> = serde_json::from_value(args.clone())
                .map_err(|e| format!("{ADDITIONAL_ARGS_EXTENSION}: {e}"))?;
            exec.args.extend(args);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn add_envs(exec: &mut ExecConfig, envs: &Value, policy: Option<&str>) -> Result<(), String> {
    let policy = policy.unwrap_or_default();
    if !matches!(policy, "AppendIfNotExists" | "Replace") {
        return Ok(());
    }
    let mut merged: BTreeMap<String, String> = serde_json::from_value(envs.clone())
        .map_err(|e| format!("{ADDITIONAL_ENVS_EXTENSION}: {e}"))?;
    for env in &exec.env {
        // `AppendIfNotExists`: the access config's value wins; `Replace`: the profile's.
        if policy == "AppendIfNotExists" || !merged.contains_key(&env.name) {
            merged.insert(env.name.clone(), env.value.expose().clone());
        }
    }
    exec.env = merged
        .into_iter()
        .map(|(name, value)| ExecEnvVar {
            name,
            value: Secret::new(value),
        })
        .collect();
    Ok(())
}

/// A provider of the clusters a hub's `ClusterProfile`s list (multicluster-runtime's
/// `cluster-inventory-api` provider), each reached through an [`AccessConfig`].
///
/// - The cluster's name in the fleet is the profile's `namespace/name`.
/// - A profile appearing engages its cluster; a change of its access providers reconnects
///   it; its deletion disengages it.
/// - A profile that cannot be reached (no provider of the access config, a malformed
///   cluster) is a warning naming it, and its cluster keeps its last good connection, if any.
///
/// It watches profiles with an informer of its own (one namespace, or all; optionally one
/// cluster manager's, by [`CLUSTER_MANAGER_LABEL`]). **RBAC** on the hub: `get`, `list` and
/// `watch` on `clusterprofiles.multicluster.x-k8s.io`.
#[derive(Clone, Debug)]
pub struct ClusterProfiles {
    client: Client,
    access: Arc<AccessConfig>,
    namespace: Option<String>,
    cluster_manager: Option<String>,
}

impl ClusterProfiles {
    /// The profiles of every namespace of the hub `client` reaches, through `access`.
    pub fn new(client: Client, access: AccessConfig) -> Self {
        Self {
            client,
            access: Arc::new(access),
            namespace: None,
            cluster_manager: None,
        }
    }

    /// Only the profiles of `namespace`.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Only the profiles cluster manager `manager` published (`x-k8s.io/cluster-manager`).
    pub fn cluster_manager(mut self, manager: impl Into<String>) -> Self {
        self.cluster_manager = Some(manager.into());
        self
    }
}

impl ClusterProvider for ClusterProfiles {
    async fn run(self, sink: ClusterSink, stop: CancellationToken) {
        let mut builder = InformerFactory::builder(self.client);
        if let Some(ns) = &self.namespace {
            builder = builder.namespace(ns.clone());
        }
        if let Some(manager) = &self.cluster_manager {
            builder = builder.label_selector(format!("{CLUSTER_MANAGER_LABEL}={manager}"));
        }
        let factory = builder.build();
        let informer = factory.informer::<ClusterProfile>();
        let (on_add, on_update, on_delete) = (sink.clone(), sink.clone(), sink);
        let (add_access, update_access) = (self.access.clone(), self.access);
        let _registration = informer.add_event_handler(
            EventHandlerFns::new()
                .on_add(move |profile: &Arc<ClusterProfile>, _| {
                    engage(&on_add, profile, &add_access);
                })
                .on_update(move |old: &Arc<ClusterProfile>, new: &Arc<ClusterProfile>| {
                    if providers(old) != providers(new) {
                        engage(&on_update, new, &update_access);
                    }
                })
                .on_delete(move |deleted: &Deleted<ClusterProfile>| {
                    let last = match deleted {
                        Deleted::Object(p) => Some(p),
                        Deleted::FinalStateUnknown { last_known, .. } => last_known.as_ref(),
                    };
                    if let Some(profile) = last {
                        let name = profile_name(profile);
                        tracing::info!(cluster = %name, "ClusterProfile deleted: disengaging its cluster");
                        on_delete.disengage(&name);
                    }
                }),
        );
        factory.start();
        stop.cancelled().await;
        factory.shutdown().await;
    }
}

/// What a profile offers to reach it.
fn providers(profile: &ClusterProfile) -> Option<(&[AccessProvider], &[AccessProvider])> {
    profile
        .status
        .as_ref()
        .map(|s| (&s.access_providers[..], &s.credential_providers[..]))
}

fn engage(sink: &ClusterSink, profile: &ClusterProfile, access: &AccessConfig) {
    let name = profile_name(profile);
    match access.config_for(profile).and_then(|config| {
        Client::new(config).map_err(|e| AccessError::Cluster {
            profile: name.clone(),
            provider: String::new(),
            message: e.to_string(),
        })
    }) {
        Ok(client) => {
            tracing::info!(cluster = %name, "engaging the cluster of a ClusterProfile");
            sink.engage(Cluster::new(name, client));
        }
        Err(error) => {
            tracing::warn!(cluster = %name, %error, "cannot reach the cluster of a ClusterProfile; it keeps its last good connection, if any");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn profile(status: Value) -> ClusterProfile {
        serde_json::from_value(json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": "east", "namespace": "fleet"}, "status": status}))
        .unwrap()
    }

    fn access(providers: Value) -> AccessConfig {
        AccessConfig::from_json(&json!({ "providers": providers }).to_string(), "test").unwrap()
    }

    fn exec_of(config: &Config) -> (&ExecConfig, Option<&Value>) {
        match &config.auth {
            AuthConfig::Exec(e) => (&e.config, e.cluster_info.as_ref()),
            _ => panic!("not exec auth"),
        }
    }

    #[test]
    fn the_first_provider_of_the_access_config_the_profile_offers_wins() {
        let cp = profile(json!({
            "credentialProviders": [{"name": "a", "cluster": {"server": "https://old.example"}}],
            "accessProviders": [
                {"name": "a", "cluster": {"server": "https://a.example"}},
                {"name": "b", "cluster": {"server": "https://b.example",
                  "certificate-authority": "/etc/hub-path", "insecure-skip-tls-verify": true}}]}));
        let cfg = access(json!([
            {"name": "b", "execConfig": {"command": "b-plugin"}},
            {"name": "a", "execConfig": {"command": "a-plugin"}}]));
        let config = cfg.config_for(&cp).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://b.example/");
        assert!(
            !config.accept_invalid_certs,
            "a hub's TLS switch is not followed"
        );
        assert_eq!(exec_of(&config).0.command, "b-plugin");
        assert_eq!(
            exec_of(&config).0.interactive_mode.as_deref(),
            Some("Never")
        );
        // accessProviders replaces the credentialProviders entry of the same name.
        let only_a = access(json!([{"name": "a", "execConfig": {"command": "a"}}]));
        let config = only_a.config_for(&cp).unwrap();
        assert_eq!(config.cluster_url.to_string(), "https://a.example/");
    }

    #[test]
    fn extensions_reach_the_plugin_as_the_policies_allow() {
        let cp = profile(json!({"accessProviders": [{"name": "p", "cluster": {
            "server": "https://east.example",
            "extensions": [
                {"name": EXEC_EXTENSION, "extension": {"audience": "east"}},
                {"name": ADDITIONAL_ARGS_EXTENSION, "extension": ["--region", "east"]},
                {"name": ADDITIONAL_ENVS_EXTENSION, "extension": {"A": "profile", "B": "profile"}}]}}]}));
        let exec = |args: &str, envs: &str| {
            json!([{"name": "p", "profileSourcedCLIArgsPolicy": args,
                    "profileSourcedEnvVarsPolicy": envs,
                    "execConfig": {"command": "plugin", "args": ["--x"], "provideClusterInfo": true,
                                   "env": [{"name": "A", "value": "config"}]}}])
        };
        let config = access(exec("Append", "AppendIfNotExists"))
            .config_for(&cp)
            .unwrap();
        let (plugin, info) = exec_of(&config);
        assert_eq!(plugin.args, ["--x", "--region", "east"]);
        let env: Vec<(String, String)> = plugin
            .env
            .iter()
            .map(|e| (e.name.clone(), e.value.expose().clone()))
            .collect();
        assert_eq!(
            env,
            [
                ("A".into(), "config".into()),
                ("B".into(), "profile".into())
            ]
        );
        assert_eq!(info.unwrap()["config"], json!({"audience": "east"}));
        assert_eq!(info.unwrap()["server"], "https://east.example/");

        let config = access(exec("Ignore", "Replace")).config_for(&cp).unwrap();
        let (plugin, _) = exec_of(&config);
        assert_eq!(plugin.args, ["--x"]);
        assert_eq!(plugin.env[0].value.expose(), "profile");

        let config = access(exec("", "")).config_for(&cp).unwrap();
        assert_eq!(exec_of(&config).0.env.len(), 1);
    }

    #[test]
    fn errors_name_the_profile_provider_and_policy() {
        let cp = profile(
            json!({"accessProviders": [{"name": "x", "cluster": {"server": "https://x"}}]}),
        );
        let err = access(json!([{"name": "y", "execConfig": {"command": "y"}}]))
            .config_for(&cp)
            .unwrap_err();
        assert!(
            err.to_string().contains("fleet/east") && err.to_string().contains("\"x\""),
            "{err}"
        );
        let err = access(json!([{"name": "x"}])).config_for(&cp).unwrap_err();
        assert!(err.to_string().contains("no execConfig"), "{err}");
        let err = AccessConfig::from_json(
            r#"{"providers": [{"name": "x", "profileSourcedCLIArgsPolicy": "Prepend"}]}"#,
            "cp-creds.json",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("cp-creds.json") && err.to_string().contains("Prepend"),
            "{err}"
        );
        assert!(AccessConfig::from_json("{", "f.json").is_err());
    }

    #[test]
    fn other_status_members_are_kept() {
        let cp = profile(
            json!({"conditions": [{"type": "ControlPlaneHealthy"}], "version": {"kubernetes": "1.35"}}),
        );
        let back = serde_json::to_value(&cp).unwrap();
        assert_eq!(back["status"]["version"]["kubernetes"], "1.35");
        assert_eq!(back["kind"], "ClusterProfile");
    }
}
