//! [`KubeconfigDir`]: one cluster per kubeconfig file of a directory, followed as files are
//! added, changed and removed.
//!
//! The directory is read again every [`poll`](KubeconfigDir::poll) period and each file's
//! bytes compared with the last read: polling follows a mounted Secret or ConfigMap volume
//! (whose files the kubelet swaps through a `..data` symlink), network file systems and
//! editors that replace files, where inotify-based watching (the `notify` crate, which was
//! the alternative) sees the swap as events on other paths or none at all. The cost is one
//! `read_dir` and one read per file per period.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::cluster::{Cluster, ClusterProvider, ClusterSink};
use kinform_client::{Client, Config, KubeConfigOptions, Kubeconfig};

/// A provider of one cluster per kubeconfig file in a directory (multicluster-runtime's
/// `kubeconfig` provider, reading files instead of Secrets).
///
/// - **Which files**: every regular file (or symlink to one) directly in the directory whose
///   name does not start with `.`; subdirectories are not read.
/// - **The cluster's name** is the file name without a `.yaml`, `.yml`, `.json`, `.conf`
///   or `.kubeconfig` extension (`prod-eu.yaml` is `prod-eu`). Two files with the same name
///   so (`a.yaml` and `a.yml`): the second in name order is skipped with a warning.
/// - **The connection** is the file's current context (or [`context`](Self::context)), as
///   kubectl reads it: relative paths resolve against the directory, exec plugins run.
/// - **Changes**: a new file engages its cluster; a file whose bytes changed reconnects it
///   (the running work stops, then starts again with the new client); a removed file
///   disengages it. A file that does not parse or names no usable context is a warning
///   (naming the file and the error, once per content) and keeps its last good connection,
///   if any, so a half-written file never drops a cluster; its next good content reconnects.
#[derive(Clone, Debug)]
pub struct KubeconfigDir {
    dir: PathBuf,
    poll: Duration,
    options: KubeConfigOptions,
}

impl KubeconfigDir {
    /// The kubeconfig files of `dir`, read every 5 seconds.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            poll: Duration::from_secs(5),
            options: KubeConfigOptions::default(),
        }
    }

    /// How often the directory is read again.
    pub fn poll(mut self, period: Duration) -> Self {
        self.poll = period;
        self
    }

    /// The context to use in every file instead of its `current-context`.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.options.context = Some(context.into());
        self
    }
}

/// What is known of one file.
struct Known {
    /// The bytes last read.
    bytes: Option<Vec<u8>>,
    /// Whether a client was built from some content of the file (its cluster is engaged).
    engaged: bool,
}

impl ClusterProvider for KubeconfigDir {
    async fn run(self, sink: ClusterSink, stop: CancellationToken) {
        let mut known: BTreeMap<String, Known> = BTreeMap::new();
        let mut dir_error: Option<String> = None;
        loop {
            let dir = self.dir.clone();
            let scanned = tokio::task::spawn_blocking(move || scan(&dir)).await;
            match scanned {
                Ok(Ok(files)) => {
                    dir_error = None;
                    self.apply(files, &mut known, &sink);
                }
                Ok(Err(error)) => {
                    let message = error.to_string();
                    if dir_error.as_deref() != Some(&message) {
                        tracing::warn!(dir = %self.dir.display(), error = %message, "cannot read the kubeconfig directory; its clusters stay as they were");
                        dir_error = Some(message);
                    }
                }
                Err(join) => {
                    tracing::warn!(dir = %self.dir.display(), error = %join, "reading the kubeconfig directory failed")
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.poll) => {}
            }
        }
    }
}

impl KubeconfigDir {
    /// Reports what changed between `known` and the files just read.
    fn apply(&self, files: Vec<File>, known: &mut BTreeMap<String, Known>, sink: &ClusterSink) {
        let mut seen = BTreeMap::new();
        for file in files {
            if seen.contains_key(&file.cluster) {
                tracing::warn!(file = %file.path.display(), cluster = %file.cluster, "another kubeconfig file of the directory names the same cluster; this one is skipped");
                continue;
            }
            seen.insert(file.cluster.clone(), ());
            let entry = known.entry(file.cluster.clone()).or_insert(Known {
                bytes: None,
                engaged: false,
            });
            if entry.bytes.as_deref() == Some(&file.bytes) {
                continue;
            }
            match self.client_of(&file.path, &file.bytes) {
                Ok(client) => {
                    entry.bytes = Some(file.bytes);
                    entry.engaged = true;
                    tracing::info!(file = %file.path.display(), cluster = %file.cluster, "engaging the cluster of a kubeconfig file");
                    sink.engage(Cluster::new(file.cluster, client));
                }
                Err(error) => {
                    entry.bytes = Some(file.bytes);
                    let kept = if entry.engaged {
                        "its last good connection is kept"
                    } else {
                        "the cluster is not engaged"
                    };
                    tracing::warn!(file = %file.path.display(), cluster = %file.cluster, %error, "cannot use the kubeconfig file; {kept}");
                }
            }
        }
        known.retain(|cluster, k| {
            let stays = seen.contains_key(cluster);
            if !stays && k.engaged {
                tracing::info!(dir = %self.dir.display(), %cluster, "kubeconfig file removed: disengaging its cluster");
                sink.disengage(cluster);
            }
            stays
        });
    }

    fn client_of(&self, path: &Path, bytes: &[u8]) -> Result<Client, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
        let kubeconfig = Kubeconfig::parse(text, path).map_err(|e| e.to_string())?;
        let config =
            Config::from_custom_kubeconfig(kubeconfig, &self.options).map_err(|e| e.to_string())?;
        Client::new(config).map_err(|e| e.to_string())
    }
}

/// One kubeconfig file as read.
struct File {
    path: PathBuf,
    cluster: String,
    bytes: Vec<u8>,
}

/// The kubeconfig files of `dir`, in name order. A file that vanishes between listing and
/// reading is left out (it is gone); any other read error fails the scan, so that a
/// transient error never looks like a removed file.
fn scan(dir: &Path) -> std::io::Result<Vec<File>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // `metadata` follows symlinks: a link to a file counts, to a directory not.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        }
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        files.push(File {
            cluster: cluster_name(name).to_owned(),
            path,
            bytes,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// A file's cluster name: its name without a kubeconfig extension.
fn cluster_name(file: &str) -> &str {
    for ext in [".yaml", ".yml", ".json", ".conf", ".kubeconfig"] {
        if let Some(stem) = file.strip_suffix(ext)
            && !stem.is_empty()
        {
            return stem;
        }
    }
    file
}

#[cfg(test)]
mod tests {
    use super::cluster_name;

    #[test]
    fn names_drop_kubeconfig_extensions_only() {
        assert_eq!(cluster_name("prod-eu.yaml"), "prod-eu");
        assert_eq!(cluster_name("prod.eu.kubeconfig"), "prod.eu");
        assert_eq!(cluster_name("staging"), "staging");
        assert_eq!(cluster_name("notes.txt"), "notes.txt");
        assert_eq!(cluster_name(".yaml"), ".yaml");
    }
}
