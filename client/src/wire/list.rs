//! The body of a LIST answer as the API server writes it, decoded with `serde_json` alone.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kinform_core::ShardInfo;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A list body as the server writes it (`items` may be `null`).
#[derive(Deserialize)]
#[serde(bound(deserialize = "K: DeserializeOwned"))]
pub(crate) struct RawList<K> {
    #[serde(default)]
    pub(crate) metadata: ListMetadata,
    #[serde(default)]
    pub(crate) items: Option<Vec<K>>,
}

impl<K> RawList<K> {
    /// The page: `items: null` is no items.
    pub(crate) fn into_list(self) -> kinform_core::ObjectList<K> {
        kinform_core::ObjectList {
            metadata: self.metadata.meta,
            shard_info: self.metadata.shard_info,
            items: self.items.unwrap_or_default(),
        }
    }
}

/// A list's `metadata`: k8s-openapi's `ListMeta`, and `shardInfo` on its own, since
/// `ListMeta` has that field only from Kubernetes 1.36 on (KEP-5866). Both are decoded from
/// the same bytes, so a 1.36 `ListMeta` keeps its `shard_info` too.
#[derive(Debug, Default)]
pub(crate) struct ListMetadata {
    pub(crate) meta: ListMeta,
    pub(crate) shard_info: Option<ShardInfo>,
}

/// The member of `metadata` that k8s-openapi's `ListMeta` may lack.
#[derive(Deserialize)]
struct ShardPart {
    #[serde(default, rename = "shardInfo")]
    shard_info: Option<ShardInfo>,
}

impl ListMetadata {
    /// Decodes the JSON object `bytes`, which must be UTF-8 throughout (as the
    /// [`Deserialize`] impl's raw value requires, so that both paths refuse the same bodies:
    /// serde_json alone does not check the keys it ignores).
    pub(crate) fn from_slice(bytes: &[u8]) -> serde_json::Result<Self> {
        std::str::from_utf8(bytes).map_err(serde_json::Error::custom)?;
        Ok(Self {
            meta: serde_json::from_slice(bytes)?,
            shard_info: serde_json::from_slice::<ShardPart>(bytes)?.shard_info,
        })
    }
}

impl<'de> Deserialize<'de> for ListMetadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Self::from_slice(raw.get().as_bytes()).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both decoding paths refuse metadata that is not UTF-8, even in a key no field reads
    /// (the differential test found the raw value refusing it and serde_json alone not).
    #[test]
    fn metadata_that_is_not_utf8_is_refused_by_both_paths() {
        let body = b"{\"metadata\":{\"continue\":\"next\",\"x\x80\":1},\"items\":[]}";
        assert!(serde_json::from_slice::<RawList<serde_json::Value>>(body).is_err());
        let metadata = &body[12..body.len() - 12];
        assert!(metadata.starts_with(b"{") && metadata.ends_with(b"}"));
        assert!(ListMetadata::from_slice(metadata).is_err());
    }

    #[test]
    fn shard_info_is_decoded_beside_list_meta() {
        let raw: RawList<serde_json::Value> = serde_json::from_str(
            r#"{"metadata":{"resourceVersion":"7","continue":"c",
                "shardInfo":{"selector":"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"}},
               "items":[]}"#,
        )
        .unwrap();
        assert_eq!(raw.metadata.meta.resource_version.as_deref(), Some("7"));
        assert_eq!(raw.metadata.meta.continue_.as_deref(), Some("c"));
        assert_eq!(
            raw.metadata.shard_info,
            Some(ShardInfo {
                selector:
                    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
                        .into()
            })
        );
        let plain: RawList<serde_json::Value> =
            serde_json::from_str(r#"{"metadata":{"resourceVersion":"7"},"items":null}"#).unwrap();
        assert_eq!(plain.metadata.shard_info, None);
        let none: RawList<serde_json::Value> = serde_json::from_str(r#"{"items":[]}"#).unwrap();
        assert_eq!(none.metadata.shard_info, None);
        // What the bytes say: a shardInfo without its required selector is an error.
        assert!(
            serde_json::from_str::<RawList<serde_json::Value>>(
                r#"{"metadata":{"shardInfo":{}},"items":[]}"#
            )
            .is_err()
        );
    }
}
