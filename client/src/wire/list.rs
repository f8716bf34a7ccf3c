//! The body of a LIST answer as the API server writes it, decoded with `serde_json` alone.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A list body as the server writes it (`items` may be `null`).
#[derive(Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
pub(crate) struct RawList<K> {
    #[serde(default)]
    pub(crate) metadata: ListMeta,
    #[serde(default)]
    pub(crate) items: Option<Vec<K>>,
}
