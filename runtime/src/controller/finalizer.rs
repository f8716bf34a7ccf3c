//! The finalizer helper, [`finalizer`] (kube-rs's `runtime::finalizer`,
//! controller-runtime's `controllerutil.AddFinalizer` / `RemoveFinalizer` plus the
//! `if deletionTimestamp.IsZero()` branch every controller writes); its rules are on the
//! function.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Value, json};

use super::action::Action;
use kinform_client::{Api, Patch, PatchParams};
use kinform_core::resource::Resource;

/// What the reconcile given to [`finalizer`] is asked to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object is not being deleted and carries the finalizer: bring the world in line
    /// with it.
    Apply(Arc<K>),
    /// The object is being deleted: release what it holds. On `Ok` the finalizer is
    /// removed; on `Err` it stays and the cleanup is retried.
    Cleanup(Arc<K>),
}

/// Which finalizer write failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinalizerWrite {
    /// Adding the finalizer.
    Add,
    /// Removing it after the cleanup.
    Remove,
}

impl fmt::Display for FinalizerWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Add => "adding",
            Self::Remove => "removing",
        })
    }
}

/// Why [`finalizer`] failed; every case but [`InvalidName`](Self::InvalidName) and
/// [`Unnamed`](Self::Unnamed) is worth a retry (return it from the reconcile).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FinalizerError<E> {
    /// The user's `Apply` failed.
    #[error("reconcile of {key} failed: {error}")]
    Apply {
        /// The object's key.
        key: String,
        /// The reconcile's error.
        error: E,
    },
    /// The user's `Cleanup` failed; the finalizer stays.
    #[error("cleanup of {key} failed, finalizer {finalizer} kept: {error}")]
    Cleanup {
        /// The object's key.
        key: String,
        /// The finalizer.
        finalizer: String,
        /// The cleanup's error.
        error: E,
    },
    /// The finalizers of the object changed since the copy the reconcile was given (the
    /// server refused the patch's `test`, or answered 409 Conflict).
    #[error("{write} finalizer {finalizer} of {key}: its finalizers changed since the cached copy")]
    Conflict {
        /// The object's key.
        key: String,
        /// The finalizer.
        finalizer: String,
        /// The write.
        write: FinalizerWrite,
    },
    /// The API server refused the write for another reason (or could not be reached).
    #[error("{write} finalizer {finalizer} of {key}: {source}")]
    Write {
        /// The object's key.
        key: String,
        /// The finalizer.
        finalizer: String,
        /// The write.
        write: FinalizerWrite,
        /// The client's error, with the server's Status.
        #[source]
        source: kinform_client::Error,
    },
    /// The finalizer name is not a qualified name (`[prefix/]name`, as labels keys).
    #[error("invalid finalizer name {finalizer:?}: {reason}")]
    InvalidName {
        /// The name given.
        finalizer: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The object has no `metadata.name`.
    #[error("the object has no name")]
    Unnamed,
}

impl<E> FinalizerError<E> {
    /// Whether this is a [`Conflict`](Self::Conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// Runs one reconcile of `object` through its finalizer `name`: adds the finalizer before
/// any work, calls `reconcile` with [`FinalizerEvent::Apply`] while the object lives and with
/// [`FinalizerEvent::Cleanup`] once it is being deleted, and removes the finalizer when the
/// cleanup succeeds. Answers the reconcile's [`Action`] (`Action::done()` when there was
/// nothing to do). Writes go through `api`'s client to the object's own namespace (an
/// `Api::all` serves namespaced objects too).
///
/// A controller that must release something outside the object when it goes (a cloud
/// resource, an entry in another system) puts its finalizer on the object; the API server
/// then keeps a deleted object, with `deletionTimestamp` set, until every finalizer is
/// removed. The cycle:
///
/// | the object | the helper |
/// | --- | --- |
/// | not being deleted, without the finalizer | adds it (before any work), then [`Apply`](FinalizerEvent::Apply) on the object the server answered |
/// | not being deleted, with the finalizer | [`Apply`](FinalizerEvent::Apply) |
/// | being deleted, with the finalizer | [`Cleanup`](FinalizerEvent::Cleanup); once it succeeds, removes the finalizer (the server then deletes the object if it was the last one) |
/// | being deleted, without the finalizer | nothing: the cleanup is done (or was never needed) |
///
/// **Conflicts, not lost writes.** Both writes are JSON patches (RFC 6902) that touch only
/// `metadata.finalizers` and carry `test` operations of the state they were computed from:
/// the object's UID (a deleted and recreated object of the same name is another object), and
/// the finalizer list (adding) or the finalizer's position in it (removing). If another
/// writer changed the list since the cached copy was read, the server refuses the patch
/// (`422`, the answer to a failed `test`) and the helper answers
/// [`FinalizerError::Conflict`]: the reconcile fails and is retried with the key's backoff,
/// on the newer object. Another controller's finalizer is never dropped, and no field other
/// than the finalizers is written. A `404` (the object is gone) ends the reconcile.
///
/// **The cleanup may run more than once** (its removal conflicted, the process stopped in
/// between): make it idempotent, as with every finalizer.
///
/// **Where kinform differs.** kube-rs ends the reconcile after adding the finalizer and waits
/// for the watch event of that write; here `Apply` runs at once on the patched object, so the
/// first reconcile does the work and an event filter (e.g.
/// [`Filter::generation_changed`](super::Filter::generation_changed), which a finalizer
/// write does not pass) cannot hold it back. The finalizer name is checked before any
/// request (a qualified name, as the API server requires; it warns about names without a
/// domain, so prefer `example.com/cleanup`).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kinform_client::Api;
/// use kinform_runtime::controller::{Action, FinalizerEvent, finalizer};
/// use kinform_testserver::TestApiServer;
///
/// let server = TestApiServer::start().await?;
/// let created = server.create_object(serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "bucket", "namespace": "default"}
/// }))?;
/// let object: Arc<ConfigMap> = Arc::new(serde_json::from_value(created)?);
/// let api: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
/// // In a reconcile: `finalizer(&api, NAME, req.object?, |event| ...)`.
/// let action = finalizer(&api, "example.com/release-bucket", object, |event| async move {
///     match event {
///         FinalizerEvent::Apply(cm) => println!("make the bucket of {:?} exist", cm.metadata.name),
///         FinalizerEvent::Cleanup(cm) => println!("delete the bucket of {:?}", cm.metadata.name),
///     }
///     Ok::<_, std::convert::Infallible>(Action::done())
/// })
/// .await?;
/// assert_eq!(action, Action::done());
/// let stored = api.get("bucket").await?;
/// assert_eq!(stored.metadata.finalizers, Some(vec!["example.com/release-bucket".to_owned()]));
/// # Ok(()) }
/// ```
pub async fn finalizer<K, F, Fut, E>(
    api: &Api<K>,
    name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Resource,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
{
    if let Err(reason) = check_name(name) {
        return Err(FinalizerError::InvalidName {
            finalizer: name.to_owned(),
            reason,
        });
    }
    if object.name().is_empty() {
        return Err(FinalizerError::Unnamed);
    }
    let key = object.key();
    let api = match object.namespace() {
        Some(ns) => Api::<K>::namespaced_with(api.client().clone(), ns, api.resource()),
        None => Api::<K>::all_with(api.client().clone(), api.resource()),
    };
    let at = object.finalizers().iter().position(|f| f == name);
    match (object.deletion_timestamp().is_some(), at) {
        (false, held) => {
            let object = match held {
                Some(_) => object,
                None => {
                    let ops = add_ops(object.uid(), object.finalizers(), name);
                    match write(&api, &object, ops).await {
                        Ok(Some(patched)) => Arc::new(patched),
                        Ok(None) => return Ok(Action::done()),
                        Err(e) => return Err(e.into_error(key, name, FinalizerWrite::Add)),
                    }
                }
            };
            reconcile(FinalizerEvent::Apply(object))
                .await
                .map_err(|error| FinalizerError::Apply { key, error })
        }
        (true, Some(index)) => {
            let uid = object.uid().to_owned();
            let action = reconcile(FinalizerEvent::Cleanup(Arc::clone(&object)))
                .await
                .map_err(|error| FinalizerError::Cleanup {
                    key: key.clone(),
                    finalizer: name.to_owned(),
                    error,
                })?;
            let ops = remove_ops(&uid, index, name);
            match write(&api, &object, ops).await {
                Ok(_) => Ok(action),
                Err(e) => Err(e.into_error(key, name, FinalizerWrite::Remove)),
            }
        }
        (true, None) => Ok(Action::done()),
    }
}

/// A failed finalizer write, before it names its object.
enum Failed {
    Conflict,
    Other(kinform_client::Error),
}

impl Failed {
    fn into_error<E>(self, key: String, name: &str, write: FinalizerWrite) -> FinalizerError<E> {
        let finalizer = name.to_owned();
        match self {
            Self::Conflict => FinalizerError::Conflict {
                key,
                finalizer,
                write,
            },
            Self::Other(source) => FinalizerError::Write {
                key,
                finalizer,
                write,
                source,
            },
        }
    }
}

/// Sends the JSON patch `ops`; `Ok(None)` when the object is gone.
async fn write<K: Resource>(api: &Api<K>, object: &K, ops: Value) -> Result<Option<K>, Failed> {
    match api
        .patch(
            object.name(),
            &PatchParams::default(),
            &Patch::<Value>::Json(ops),
        )
        .await
    {
        Ok(patched) => Ok(Some(patched)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) if is_conflict(&e) => Err(Failed::Conflict),
        Err(e) => Err(Failed::Other(e)),
    }
}

/// 409 Conflict, or the 422 a JSON patch whose `test` fails gets: kube-apiserver answers it
/// with `NewGenericServerResponse(422, ...)`, reason `Invalid` and no causes (a validation
/// error of the patched object names its fields in causes).
fn is_conflict(e: &kinform_client::Error) -> bool {
    if e.is_conflict() {
        return true;
    }
    let Some(status) = e.status() else {
        return false;
    };
    status.code == Some(422)
        && status.reason.as_deref() == Some("Invalid")
        && status
            .details
            .as_ref()
            .and_then(|d| d.causes.as_ref())
            .is_none_or(Vec::is_empty)
}

/// Adds `name` to `finalizers`, if the object is still `uid` with exactly these finalizers.
fn add_ops(uid: &str, finalizers: &[String], name: &str) -> Value {
    let mut ops = uid_test(uid);
    if finalizers.is_empty() {
        // A missing member tests equal to null (the JSON patch library of kube-apiserver).
        ops.push(json!({"op": "test", "path": "/metadata/finalizers", "value": null}));
        ops.push(json!({"op": "add", "path": "/metadata/finalizers", "value": [name]}));
    } else {
        ops.push(json!({"op": "test", "path": "/metadata/finalizers", "value": finalizers}));
        ops.push(json!({"op": "add", "path": "/metadata/finalizers/-", "value": name}));
    }
    Value::Array(ops)
}

/// Removes the finalizer at `index`, if the object is still `uid` and `name` is still there.
fn remove_ops(uid: &str, index: usize, name: &str) -> Value {
    let mut ops = uid_test(uid);
    let path = format!("/metadata/finalizers/{index}");
    ops.push(json!({"op": "test", "path": path, "value": name}));
    ops.push(json!({"op": "remove", "path": path}));
    Value::Array(ops)
}

fn uid_test(uid: &str) -> Vec<Value> {
    if uid.is_empty() {
        Vec::new()
    } else {
        vec![json!({"op": "test", "path": "/metadata/uid", "value": uid})]
    }
}

/// apimachinery's `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`, then a
/// name of at most 63 characters, alphanumeric at both ends, `-`, `_` and `.` inside.
fn check_name(name: &str) -> Result<(), &'static str> {
    let (prefix, local) = match name.split_once('/') {
        Some((prefix, local)) => (Some(prefix), local),
        None => (None, name),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() || prefix.len() > 253 {
            return Err("the prefix must be a DNS subdomain of 1 to 253 characters");
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if !prefix.split('.').all(label_ok) {
            return Err("the prefix must be a DNS subdomain (lowercase alphanumerics, '-', '.')");
        }
    }
    if local.is_empty() || local.len() > 63 {
        return Err("the name part must be 1 to 63 characters");
    }
    let inner_ok = local
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let ends_ok = local.starts_with(|c: char| c.is_ascii_alphanumeric())
        && local.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !(inner_ok && ends_ok) {
        return Err(
            "the name part must be alphanumerics, '-', '_' or '.', starting and ending alphanumeric",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for good in [
            "example.com/cleanup",
            "cleanup",
            "a.b-c/x_y.z",
            "kubernetes",
        ] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "/x",
            "Example.com/x",
            "example.com/",
            "a/b/c",
            "-x",
            "x-",
            "ex_ample.com/x",
            &"x".repeat(64),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn patches_test_what_they_were_computed_from() {
        assert_eq!(
            add_ops("u1", &[], "f"),
            json!([
                {"op": "test", "path": "/metadata/uid", "value": "u1"},
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": ["f"]}
            ])
        );
        assert_eq!(
            add_ops("u1", &["other".to_owned()], "f"),
            json!([
                {"op": "test", "path": "/metadata/uid", "value": "u1"},
                {"op": "test", "path": "/metadata/finalizers", "value": ["other"]},
                {"op": "add", "path": "/metadata/finalizers/-", "value": "f"}
            ])
        );
        assert_eq!(
            remove_ops("u1", 1, "f"),
            json!([
                {"op": "test", "path": "/metadata/uid", "value": "u1"},
                {"op": "test", "path": "/metadata/finalizers/1", "value": "f"},
                {"op": "remove", "path": "/metadata/finalizers/1"}
            ])
        );
    }
}
