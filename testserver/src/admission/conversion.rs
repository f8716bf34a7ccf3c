//! CRD conversion, as apiextensions-apiserver's `conversion.crConverter` does it: strategy
//! `None` rewrites `apiVersion`; strategy `Webhook` sends the objects not yet in the desired
//! version in one `apiextensions.k8s.io/v1` `ConversionReview` and checks the answer
//! (`webhookConverter.Convert`): as many objects as sent, each in the desired
//! `group/version` with its kind, name, namespace and uid; its metadata restored from the
//! original but for labels and annotations.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};

use super::Context;
use super::client::{self, CallError};
use super::config::ServiceRef;
use crate::status::ApiError;

/// How long a conversion call may take (client-go's timeout of the webhook client,
/// `?timeout=30s`).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `crd` converts through a webhook.
pub(crate) fn is_webhook(crd: &Value) -> bool {
    crd["spec"]["conversion"]["strategy"].as_str() == Some("Webhook")
}

/// Whether the stored CRD `crd` converts through a webhook, and then the CRD: answered once
/// per stored state of the CRD (a CRD may be a megabyte, and this is asked on every write
/// and read of its objects), its JSON parsed only when it names the strategy at all.
pub(crate) fn webhook_crd(crd: &Arc<crate::storage::Obj>) -> Option<Arc<Value>> {
    type Cache = HashMap<String, (Arc<crate::storage::Obj>, Option<Arc<Value>>)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock();
    if let Some((stored, answer)) = cache.get(&crd.key)
        && Arc::ptr_eq(stored, crd)
    {
        return answer.clone();
    }
    const NEEDLE: &[u8] = b"\"Webhook\"";
    let answer = crd
        .bytes
        .windows(NEEDLE.len())
        .any(|w| w == NEEDLE)
        .then(|| crd.value())
        .filter(is_webhook)
        .map(Arc::new);
    if cache.len() > 256 {
        cache.clear();
    }
    // Keeping the stored object keeps its address from being reused by another.
    cache.insert(crd.key.clone(), (crd.clone(), answer.clone()));
    answer
}

/// `group/version, Kind=Kind` of an object, as Go prints a `GroupVersionKind`.
fn gvk(object: &Value) -> String {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
    format!(
        "{g}/{v}, Kind={}",
        object["kind"].as_str().unwrap_or_default()
    )
}

fn failed(object: &Value, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        500,
        "",
        format!("conversion webhook for {} failed: {why}", gvk(object)),
    )
}

/// `objects` (of `crd`'s resource, or of a built-in when `crd` is `None`) in `to`
/// (`group/version`).
pub(crate) async fn convert(
    cx: &Context,
    crd: Option<&Value>,
    mut objects: Vec<Value>,
    to: &str,
) -> Result<Vec<Value>, ApiError> {
    let webhook = crd.filter(|c| is_webhook(c));
    let Some(crd) = webhook else {
        for o in &mut objects {
            o["apiVersion"] = json!(to);
        }
        return Ok(objects);
    };
    let send: Vec<usize> = (0..objects.len())
        .filter(|i| objects[*i]["apiVersion"].as_str() != Some(to))
        .collect();
    if send.is_empty() {
        return Ok(objects);
    }
    let first = objects[send[0]].clone();
    let wh = &crd["spec"]["conversion"]["webhook"];
    let cc = &wh["clientConfig"];
    let version = wh["conversionReviewVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|v| match v.as_str() {
            Some("v1") => Some("v1"),
            Some("v1beta1") => Some("v1beta1"),
            _ => None,
        })
        .ok_or_else(|| failed(&first, "no supported conversion review versions"))?;
    let service = cc["service"].as_object().map(|s| ServiceRef {
        namespace: s
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        name: s
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        path: s
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        port: s
            .get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443),
    });
    use base64::Engine as _;
    let ca = cc["caBundle"]
        .as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok());
    let endpoint = client::endpoint(
        &cx.services,
        cc["url"].as_str(),
        service.as_ref(),
        ca.as_deref(),
        Some(TIMEOUT),
    )
    .map_err(|CallError(e)| failed(&first, e))?;
    let uid = super::new_uid();
    let review = json!({
        "kind": "ConversionReview",
        "apiVersion": format!("apiextensions.k8s.io/{version}"),
        "request": {
            "uid": uid,
            "desiredAPIVersion": to,
            "objects": send.iter().map(|i| objects[*i].clone()).collect::<Vec<_>>(),
        },
    });
    let answer = client::post(&endpoint, review.to_string().into_bytes(), TIMEOUT)
        .await
        .map_err(|CallError(e)| failed(&first, e))?;
    let converted = answer_objects(version, &uid, &answer).map_err(|e| failed(&first, e))?;
    if converted.len() != send.len() {
        return Err(ApiError::new(
            500,
            "",
            format!(
                "conversion webhook for {} returned {} objects, expected {}",
                gvk(&first),
                converted.len(),
                send.len()
            ),
        ));
    }
    for (index, (i, mut out)) in send.into_iter().zip(converted).enumerate() {
        let original = &objects[i];
        let invalid = |why: String| {
            ApiError::new(
                500,
                "",
                format!(
                    "conversion webhook for {} returned invalid converted object at index {index}: {why}",
                    gvk(original)
                ),
            )
        };
        if out["apiVersion"].as_str() != Some(to) {
            return Err(invalid(format!(
                "invalid groupVersion (expected {to}, received {})",
                out["apiVersion"].as_str().unwrap_or_default()
            )));
        }
        if out["kind"] != original["kind"] {
            return Err(invalid(format!(
                "invalid kind (expected {}, received {})",
                original["kind"].as_str().unwrap_or_default(),
                out["kind"].as_str().unwrap_or_default()
            )));
        }
        for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
            let a = original["metadata"][field].as_str().unwrap_or_default();
            let b = out["metadata"][field].as_str().unwrap_or_default();
            if a != b {
                return Err(invalid(format!("must have the same {what}: {a} != {b}")));
            }
        }
        restore_metadata(original, &mut out).map_err(|e| {
            ApiError::new(
                500,
                "",
                format!(
                    "conversion webhook for {} returned invalid metadata in object at index {index}: {e}",
                    gvk(original)
                ),
            )
        })?;
        objects[i] = out;
    }
    Ok(objects)
}

/// Asks the conversion webhook of `info`'s CRD again for the stored objects a GET or a
/// LIST of `info`'s version reads (`name`: one object; else those of `namespace`, or all),
/// as kube-apiserver converts every object it reads from etcd; their forms in that version
/// are refreshed in the store. A failure is the read's answer. Nothing to do for a
/// built-in, a CRD without a conversion webhook, or objects stored in the version read.
pub(crate) async fn refresh(
    cx: &Context,
    info: &crate::registry::ResourceInfo,
    namespace: Option<&str>,
    name: Option<&str>,
) -> Result<(), ApiError> {
    let to = info.api_version();
    let storage = info.storage_key();
    let (crd, objects) = {
        let inner = cx.storage.lock();
        let Some(crd) = inner.crd_of(info).and_then(|c| webhook_crd(&c)) else {
            return Ok(());
        };
        let crd = (*crd).clone();
        let objects: Vec<_> = match name {
            Some(n) => inner
                .get(
                    &storage,
                    &crate::storage::object_key(namespace.unwrap_or_default(), n),
                )
                .into_iter()
                .collect(),
            None => inner.objects(&storage, namespace),
        };
        let objects: Vec<_> = objects
            .into_iter()
            .filter(|o| o.api_version != to)
            .collect();
        (crd, objects)
    };
    if objects.is_empty() {
        return Ok(());
    }
    let values = objects.iter().map(|o| o.value()).collect();
    let converted = convert(cx, Some(&crd), values, &to).await?;
    let mut inner = cx.storage.lock();
    for (current, view) in objects.iter().zip(converted) {
        inner.refresh_view(&storage, current, &to, view);
    }
    Ok(())
}

/// The converted objects of a `ConversionReview` answer (`getConvertedObjectsFromResponse`).
fn answer_objects(version: &str, uid: &str, body: &[u8]) -> Result<Vec<Value>, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    if version == "v1" {
        let api_version = review["apiVersion"].as_str().unwrap_or_default();
        let kind = review["kind"].as_str().unwrap_or_default();
        if api_version != "apiextensions.k8s.io/v1" || kind != "ConversionReview" {
            let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {g}/{v}, Kind={kind}"
            ));
        }
    }
    let response = &review["response"];
    if !response.is_object() {
        return Err("no response provided".into());
    }
    if version == "v1" {
        let got = response["uid"].as_str().unwrap_or_default();
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = &response["result"];
    if result["status"].as_str() != Some("Success") {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None => format!(
                "response.result.status was '{}', not 'Success'",
                result["status"].as_str().unwrap_or_default()
            ),
        });
    }
    Ok(response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// `restoreObjectMeta`: the original's metadata, with the converted labels and annotations.
fn restore_metadata(original: &Value, converted: &mut Value) -> Result<(), String> {
    let Some(response_meta) = converted["metadata"].as_object().cloned() else {
        return Err("missing metadata in converted object".into());
    };
    let mut meta = original["metadata"].clone();
    if !meta.is_object() {
        meta = json!({});
    }
    for field in ["labels", "annotations"] {
        match response_meta.get(field) {
            None | Some(Value::Null) => {
                if let Some(m) = meta.as_object_mut() {
                    m.remove(field);
                }
            }
            Some(Value::Object(m)) => {
                if let Some((k, _)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{field}[{k}] must be a string in converted object"
                    ));
                }
                meta[field] = Value::Object(m.clone());
            }
            Some(_) => return Err(format!("invalid metadata.{field} in converted object")),
        }
    }
    converted["metadata"] = meta;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_metadata_keeps_only_labels_and_annotations() {
        let original = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "5", "labels": {"x": "1"}}});
        let mut out = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "9", "annotations": {"y": "2"}}});
        restore_metadata(&original, &mut out).unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "a", "uid": "u", "resourceVersion": "5", "annotations": {"y": "2"}})
        );
        let mut bad = json!({"metadata": {"labels": {"x": 1}}});
        assert!(restore_metadata(&original, &mut bad).is_err());
    }

    #[test]
    fn answers_are_checked_as_get_converted_objects_from_response() {
        let answer = |v: Value| answer_objects("v1", "u", v.to_string().as_bytes());
        let review = |r: Value| json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": r});
        assert_eq!(
            answer(review(
                json!({"uid": "u", "result": {"status": "Success"}, "convertedObjects": [{}]})
            ))
            .unwrap()
            .len(),
            1
        );
        assert_eq!(
            answer(review(
                json!({"uid": "u", "result": {"status": "Failure", "message": "cannot"}})
            ))
            .unwrap_err(),
            "cannot"
        );
        assert_eq!(
            answer(review(json!({"uid": "v", "result": {"status": "Success"}}))).unwrap_err(),
            "expected response.uid=\"u\", got \"v\""
        );
        assert_eq!(
            gvk(&json!({"apiVersion": "example.com/v2", "kind": "Widget"})),
            "example.com/v2, Kind=Widget"
        );
    }
}
