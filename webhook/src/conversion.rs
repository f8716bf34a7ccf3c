//! CRD conversion through a hub version (`apiextensions.k8s.io/v1` `ConversionReview`).
//!
//! A [`Converter`] knows one kind's versions: the hub `H` (usually the storage version) and
//! spokes `V` with `From<V> for H` and `From<H> for V` written by the user, as
//! controller-runtime's `Hub`/`Convertible` pair. An object goes spoke → hub → spoke, so `n`
//! versions need `2(n-1)` conversions, not `n(n-1)`:
//!
//! ```
//! # use kinform_webhook::conversion::hub;
//! # mod v1 { pub type Gadget = k8s_openapi::api::core::v1::ConfigMap; }
//! # mod v2 { pub type Gadget = k8s_openapi::api::core::v1::ConfigMap; }
//! let converter = hub::<v2::Gadget>().spoke::<v1::Gadget>();
//! ```
//!
//! A review is answered as kube-apiserver expects (`apiextensions-apiserver`'s
//! `webhook_converter.go`):
//! - every object converted, in order, or none: the first object that cannot be converted
//!   fails the whole review with `result.status: Failure` and a message naming it;
//! - each converted object has the desired `apiVersion` and the object's `kind`;
//! - metadata: only labels and annotations may change. A conversion that changes anything
//!   else of `metadata` fails the review (kube-apiserver would refuse its answer); the
//!   converted object's `metadata` is then the received one as sent (so members `ObjectMeta`
//!   does not model survive) with the converted labels and annotations.
//!
//! An object already at the desired version is answered as received (kube-apiserver does
//! not send those, but a review may hold them).

use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Status};
use kinform_core::Resource;
use serde_json::{Map, Value};

use crate::review::{ConversionRequest, ConversionResponse};

/// The converter whose hub is `H` (also [`Converter::hub`]).
pub fn hub<H: Resource>() -> Converter<H> {
    Converter::hub()
}

/// Converts one kind's objects between its versions through the hub version `H`.
#[must_use = "a converter does nothing until it is added to `Webhooks`"]
pub struct Converter<H> {
    pub(crate) path: Option<String>,
    spokes: Vec<Spoke<H>>,
    /// Spokes of another group or kind, reported by `Webhooks::check`.
    pub(crate) mismatches: Vec<String>,
    hub: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for Converter<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converter")
            .field("path", &self.path)
            .field(
                "versions",
                &self.spokes.iter().map(|s| s.version).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// One version: how its objects reach the hub and come back.
struct Spoke<H> {
    version: &'static str,
    api_version: &'static str,
    into_hub: fn(Value) -> Result<H, serde_json::Error>,
    from_hub: fn(H) -> Result<Value, serde_json::Error>,
}

fn decode_into_hub<V, H>(value: Value) -> Result<H, serde_json::Error>
where
    V: Resource,
    H: From<V>,
{
    serde_json::from_value::<V>(value).map(H::from)
}

fn encode_from_hub<V, H>(hub: H) -> Result<Value, serde_json::Error>
where
    V: Resource + From<H>,
{
    serde_json::to_value(V::from(hub))
}

fn decode_hub<H: Resource>(value: Value) -> Result<H, serde_json::Error> {
    serde_json::from_value(value)
}

fn encode_hub<H: Resource>(hub: H) -> Result<Value, serde_json::Error> {
    serde_json::to_value(hub)
}

impl<H: Resource> Converter<H> {
    /// A converter that knows only the hub version `H`.
    pub fn hub() -> Self {
        Self {
            path: None,
            spokes: vec![Spoke {
                version: H::VERSION,
                api_version: H::API_VERSION,
                into_hub: decode_hub::<H>,
                from_hub: encode_hub::<H>,
            }],
            mismatches: Vec::new(),
            hub: PhantomData,
        }
    }

    /// Also convert version `V` (of the same group and kind), through `From` both ways.
    pub fn spoke<V>(mut self) -> Self
    where
        V: Resource + From<H>,
        H: From<V>,
    {
        if V::GROUP != H::GROUP || V::KIND != H::KIND {
            self.mismatches.push(format!(
                "spoke {} {} is not of the hub's group and kind ({} {})",
                V::API_VERSION,
                V::KIND,
                H::GROUP,
                H::KIND
            ));
        }
        if self.spokes.iter().any(|s| s.version == V::VERSION) {
            self.mismatches
                .push(format!("version {} is given twice", V::VERSION));
        }
        self.spokes.push(Spoke {
            version: V::VERSION,
            api_version: V::API_VERSION,
            into_hub: decode_into_hub::<V, H>,
            from_hub: encode_from_hub::<V, H>,
        });
        self
    }

    /// The path the server answers on (default `/convert/<plural>.<group>`, the CRD's name).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The versions this converter knows, the hub's first.
    pub fn versions(&self) -> Vec<&'static str> {
        self.spokes.iter().map(|s| s.version).collect()
    }

    /// The answer to a conversion request (what the server answers on the converter's path).
    pub fn convert(&self, request: ConversionRequest) -> ConversionResponse {
        let mut converted = Vec::with_capacity(request.objects.len());
        for (index, object) in request.objects.into_iter().enumerate() {
            match self.convert_one(object, &request.desired_api_version) {
                Ok(object) => converted.push(object),
                Err(message) => {
                    let message = format!(
                        "converting object {index} of the review to {}: {message}",
                        request.desired_api_version
                    );
                    tracing::warn!(kind = H::KIND, "conversion failed: {message}");
                    return ConversionResponse {
                        uid: request.uid,
                        converted_objects: Vec::new(),
                        result: Status {
                            status: Some("Failure".into()),
                            message: Some(message),
                            ..Status::default()
                        },
                    };
                }
            }
        }
        ConversionResponse {
            uid: request.uid,
            converted_objects: converted,
            result: Status {
                status: Some("Success".into()),
                ..Status::default()
            },
        }
    }

    fn convert_one(&self, object: Value, desired: &str) -> Result<Value, String> {
        let Value::Object(fields) = &object else {
            return Err("not a JSON object".into());
        };
        let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion").to_owned(), text("kind").to_owned());
        let name = describe(fields);
        if kind != H::KIND {
            return Err(format!("{name} is of kind {kind:?}, not {}", H::KIND));
        }
        let spoke = |api_version: &str| {
            self.spokes
                .iter()
                .find(|s| s.api_version == api_version)
                .ok_or_else(|| {
                    format!(
                        "no conversion for apiVersion {api_version:?} of {} (known: {})",
                        H::KIND,
                        self.spokes
                            .iter()
                            .map(|s| s.api_version)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
        };
        let target = spoke(desired)?;
        if api_version == desired {
            return Ok(object);
        }
        let source = spoke(&api_version)?;
        let received_meta = fields.get("metadata").cloned();
        let hub = (source.into_hub)(object)
            .map_err(|e| format!("{name} is not a valid {api_version} {kind}: {e}"))?;
        let mut out = (target.from_hub)(hub)
            .map_err(|e| format!("encoding {name} as {desired} {kind}: {e}"))?;
        let Value::Object(out_fields) = &mut out else {
            return Err(format!(
                "{name}: the {desired} encoding is not a JSON object"
            ));
        };
        out_fields.insert("apiVersion".into(), Value::String(desired.to_owned()));
        out_fields.insert("kind".into(), Value::String(kind));
        let metadata = keep_metadata(received_meta, out_fields.get("metadata"))
            .map_err(|e| format!("{name} from {api_version}: {e}"))?;
        out_fields.insert("metadata".into(), metadata);
        Ok(out)
    }
}

/// `namespace/name` of an object for messages.
fn describe(fields: &Map<String, Value>) -> String {
    let meta = fields.get("metadata");
    let get = |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str);
    match (get("namespace"), get("name")) {
        (Some(ns), Some(name)) if !ns.is_empty() => format!("{ns}/{name}"),
        (_, Some(name)) => name.to_owned(),
        _ => "an object without a name".to_owned(),
    }
}

/// The converted object's metadata: the received metadata with the converted labels and
/// annotations, or why the conversion changed more than those.
fn keep_metadata(received: Option<Value>, converted: Option<&Value>) -> Result<Value, String> {
    let decode = |v: Option<&Value>, which: &str| -> Result<ObjectMeta, String> {
        match v {
            None | Some(Value::Null) => Ok(ObjectMeta::default()),
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| format!("the {which} metadata is not valid ObjectMeta: {e}")),
        }
    };
    let mut before = decode(received.as_ref(), "received")?;
    let mut after = decode(converted, "converted")?;
    let labels = after.labels.take();
    let annotations = after.annotations.take();
    before.labels = None;
    before.annotations = None;
    if before != after {
        let changed = changed_members(&before, &after);
        return Err(format!(
            "the conversion changed metadata.{changed}; only labels and annotations may change"
        ));
    }
    let mut metadata = match received {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for (key, value) in [("labels", labels), ("annotations", annotations)] {
        match value {
            Some(map) if !map.is_empty() => {
                metadata.insert(key.into(), serde_json::to_value(map).unwrap_or_default());
            }
            _ => {
                metadata.remove(key);
            }
        }
    }
    Ok(Value::Object(metadata))
}

/// The members of `ObjectMeta` that differ, comma-separated, for a message.
fn changed_members(before: &ObjectMeta, after: &ObjectMeta) -> String {
    let (Ok(Value::Object(b)), Ok(Value::Object(a))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return "(unknown)".into();
    };
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| b.get(*k) != a.get(*k))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", metadata.")
}

/// A converter with its hub type erased, as the router holds it.
pub(crate) trait Convert: Send + Sync {
    fn convert(&self, request: ConversionRequest) -> ConversionResponse;
    fn group(&self) -> &'static str;
    fn kind(&self) -> &'static str;
    fn plural(&self) -> &'static str;
    fn versions(&self) -> Vec<&'static str>;
}

impl<H: Resource> Convert for Converter<H> {
    fn convert(&self, request: ConversionRequest) -> ConversionResponse {
        Converter::convert(self, request)
    }
    fn group(&self) -> &'static str {
        H::GROUP
    }
    fn kind(&self) -> &'static str {
        H::KIND
    }
    fn plural(&self) -> &'static str {
        H::PLURAL
    }
    fn versions(&self) -> Vec<&'static str> {
        Converter::versions(self)
    }
}
