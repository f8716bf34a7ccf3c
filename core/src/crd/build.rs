//! One version's CustomResourceDefinition from what `#[kinform(...)]` declared.
//!
//! The layout follows apiextensions.k8s.io/v1 (`spec.names`, `spec.scope`, one entry in
//! `spec.versions` with its schema, subresources, printer columns, selectable fields and
//! deprecation), with the object schema kube-derive writes: `apiVersion`, `kind`,
//! `metadata` (type object), `spec` (required) and `status`, plus the CEL rules
//! (`x-kubernetes-validations`) at the top.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    SelectableField,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};

use super::error::{CrdError, schema_props};

/// A `kubectl get` column (`additionalPrinterColumns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrinterColumnDef<'a> {
    /// Column header.
    pub name: &'a str,
    /// OpenAPI type: `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: &'a str,
    /// JSON path of the value, e.g. `.spec.replicas`.
    pub json_path: &'a str,
    /// Description.
    pub description: Option<&'a str>,
    /// Format hint (`int32`, `date-time`, ...).
    pub format: Option<&'a str>,
    /// Priority (0: shown by default).
    pub priority: i32,
}

/// The `scale` subresource's paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleDef<'a> {
    /// `.spec.replicas`.
    pub spec_replicas_path: &'a str,
    /// `.status.replicas`.
    pub status_replicas_path: &'a str,
    /// `.status.selector`.
    pub label_selector_path: Option<&'a str>,
}

/// A CEL validation rule (`x-kubernetes-validations`) on the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidationRuleDef<'a> {
    /// The CEL expression, e.g. `self.spec.replicas <= 10`.
    pub rule: &'a str,
    /// Message shown when the rule fails.
    pub message: Option<&'a str>,
    /// CEL expression producing the message.
    pub message_expression: Option<&'a str>,
    /// Machine-readable reason (`FieldValueInvalid`, ...).
    pub reason: Option<&'a str>,
    /// Field path the failure is reported at.
    pub field_path: Option<&'a str>,
    /// Whether the rule runs on create too when it refers to `oldSelf`.
    pub optional_old_self: Option<bool>,
}

/// Everything `#[kinform(...)]` says about one version of a custom resource.
#[derive(Clone, Copy, Debug)]
pub struct CrdDescription<'a> {
    /// API group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Plural (URL) name.
    pub plural: &'a str,
    /// Singular name.
    pub singular: &'a str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: &'a [&'a str],
    /// Categories (`all`).
    pub categories: &'a [&'a str],
    /// Whether this version is served.
    pub served: bool,
    /// Whether this version is the storage version.
    pub storage: bool,
    /// Whether this version is deprecated.
    pub deprecated: bool,
    /// The warning returned to clients of a deprecated version.
    pub deprecation_warning: Option<&'a str>,
    /// Printer columns.
    pub printer_columns: &'a [PrinterColumnDef<'a>],
    /// Selectable fields (JSON paths usable in field selectors).
    pub selectable_fields: &'a [&'a str],
    /// Whether the `status` subresource is enabled.
    pub status_subresource: bool,
    /// The `scale` subresource.
    pub scale: Option<ScaleDef<'a>>,
    /// CEL rules on the object.
    pub rules: &'a [ValidationRuleDef<'a>],
    /// Labels on the CRD object.
    pub labels: &'a [(&'a str, &'a str)],
    /// Annotations on the CRD object.
    pub annotations: &'a [(&'a str, &'a str)],
    /// Description of the object schema.
    pub description: Option<&'a str>,
}

fn rule_value(r: &ValidationRuleDef<'_>) -> Value {
    let mut m = Map::new();
    m.insert("rule".into(), json!(r.rule));
    let opt = [
        ("message", r.message),
        ("messageExpression", r.message_expression),
        ("reason", r.reason),
        ("fieldPath", r.field_path),
    ];
    for (k, v) in opt {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    if let Some(o) = r.optional_old_self {
        m.insert("optionalOldSelf".into(), json!(o));
    }
    Value::Object(m)
}

fn object_schema(desc: &CrdDescription<'_>, spec: Option<Value>, status: Option<Value>) -> Value {
    let spec = spec.unwrap_or_else(preserve_unknown_object);
    let mut props = Map::new();
    props.insert("apiVersion".into(), json!({ "type": "string" }));
    props.insert("kind".into(), json!({ "type": "string" }));
    props.insert("metadata".into(), json!({ "type": "object" }));
    props.insert("spec".into(), spec);
    if let Some(mut status) = status {
        if let Some(m) = status.as_object_mut() {
            m.insert("nullable".into(), json!(true));
        }
        props.insert("status".into(), status);
    }
    let mut root = Map::new();
    if let Some(d) = desc.description {
        root.insert("description".into(), json!(d));
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), Value::Object(props));
    root.insert("required".into(), json!(["spec"]));
    if !desc.rules.is_empty() {
        let rules: Vec<Value> = desc.rules.iter().map(rule_value).collect();
        root.insert("x-kubernetes-validations".into(), Value::Array(rules));
    }
    Value::Object(root)
}

fn strings(items: &[&str]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| items.iter().map(|s| (*s).to_owned()).collect())
}

fn string_map(items: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    (!items.is_empty()).then(|| {
        items
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    })
}

/// The CRD of one version: `spec` and `status` are structural schemas (from
/// [`super::schema_for`]); `spec: None` means the schema is disabled (the spec preserves
/// unknown fields).
///
/// Fails when the schema is not a `JSONSchemaProps`, which a derived schema can only be when a
/// field type's hand-written `JsonSchema` impl writes a keyword with a value of the wrong type.
/// A disabled schema (`spec: None`, `status` `None` or [`preserve_unknown_object`]) cannot
/// fail: it is made of `object_schema`'s fixed keywords (strings, a string list, objects),
/// the description (a string) and the CEL rules (strings and a boolean, each in the field of
/// that type in `ValidationRule`).
pub fn custom_resource_definition(
    desc: &CrdDescription<'_>,
    spec: Option<Value>,
    status: Option<Value>,
) -> Result<CustomResourceDefinition, CrdError> {
    crd_with_schema(desc, object_schema(desc, spec, status))
}

/// The schema of a value the API server keeps as it is: an object with
/// `x-kubernetes-preserve-unknown-fields` (a disabled schema's spec and status).
pub fn preserve_unknown_object() -> Value {
    json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}

/// The CRD of one version whose whole object schema is `root` (`schema = "manual"`: the
/// user's `impl JsonSchema` for the root type, made structural by [`super::schema_for`]), as
/// kube-derive's manual mode takes it. What `desc` says about the schema still applies: its
/// CEL rules are appended to the root's `x-kubernetes-validations`, its description is used
/// when the schema has none, and the root gets `type: object` when it names no type.
///
/// Fails when the schema (a JSON object) is not a `JSONSchemaProps`, naming where.
pub fn custom_resource_definition_with_root_schema(
    desc: &CrdDescription<'_>,
    root: Value,
) -> Result<CustomResourceDefinition, CrdError> {
    let mut root = match root {
        Value::Object(m) => m,
        other => {
            return Err(CrdError::InvalidSchema {
                kind: desc.kind.to_owned(),
                version: desc.version.to_owned(),
                path: "openAPIV3Schema".to_owned(),
                message: format!("expected a JSON object, found {other}"),
            });
        }
    };
    root.entry("type").or_insert_with(|| json!("object"));
    if let Some(d) = desc.description {
        root.entry("description").or_insert_with(|| json!(d));
    }
    if !desc.rules.is_empty() {
        let rules = root
            .entry("x-kubernetes-validations")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = rules {
            list.extend(desc.rules.iter().map(rule_value));
        }
    }
    crd_with_schema(desc, Value::Object(root))
}

fn crd_with_schema(
    desc: &CrdDescription<'_>,
    schema: Value,
) -> Result<CustomResourceDefinition, CrdError> {
    let schema = schema_props(desc.kind, desc.version, schema)?;
    let columns: Vec<CustomResourceColumnDefinition> = desc
        .printer_columns
        .iter()
        .map(|c| CustomResourceColumnDefinition {
            name: c.name.to_owned(),
            type_: c.type_.to_owned(),
            json_path: c.json_path.to_owned(),
            description: c.description.map(str::to_owned),
            format: c.format.map(str::to_owned),
            priority: (c.priority != 0).then_some(c.priority),
        })
        .collect();
    let subresources =
        (desc.status_subresource || desc.scale.is_some()).then(|| CustomResourceSubresources {
            status: desc
                .status_subresource
                .then_some(CustomResourceSubresourceStatus(Value::Object(Map::new()))),
            scale: desc.scale.map(|s| CustomResourceSubresourceScale {
                spec_replicas_path: s.spec_replicas_path.to_owned(),
                status_replicas_path: s.status_replicas_path.to_owned(),
                label_selector_path: s.label_selector_path.map(str::to_owned),
            }),
        });
    let version = CustomResourceDefinitionVersion {
        name: desc.version.to_owned(),
        served: desc.served,
        storage: desc.storage,
        deprecated: desc.deprecated.then_some(true),
        deprecation_warning: desc.deprecation_warning.map(str::to_owned),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(schema),
        }),
        subresources,
        additional_printer_columns: (!columns.is_empty()).then_some(columns),
        selectable_fields: (!desc.selectable_fields.is_empty()).then(|| {
            desc.selectable_fields
                .iter()
                .map(|p| SelectableField {
                    json_path: (*p).to_owned(),
                })
                .collect()
        }),
    };
    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", desc.plural, desc.group)),
            labels: string_map(desc.labels),
            annotations: string_map(desc.annotations),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: desc.group.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: desc.kind.to_owned(),
                list_kind: Some(format!("{}List", desc.kind)),
                plural: desc.plural.to_owned(),
                singular: Some(desc.singular.to_owned()),
                short_names: strings(desc.short_names),
                categories: strings(desc.categories),
            },
            scope: if desc.namespaced {
                "Namespaced".to_owned()
            } else {
                "Cluster".to_owned()
            },
            versions: vec![version],
            conversion: None,
            preserve_unknown_fields: None,
        },
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> CrdDescription<'static> {
        CrdDescription {
            group: "example.com",
            version: "v1",
            kind: "Foo",
            plural: "foos",
            singular: "foo",
            namespaced: true,
            short_names: &[],
            categories: &[],
            served: true,
            storage: true,
            deprecated: false,
            deprecation_warning: None,
            printer_columns: &[],
            selectable_fields: &[],
            status_subresource: false,
            scale: None,
            rules: &[ValidationRuleDef {
                rule: "self.spec.a > 0",
                message: Some("positive"),
                message_expression: None,
                reason: None,
                field_path: None,
                optional_old_self: Some(true),
            }],
            labels: &[],
            annotations: &[],
            description: Some("A foo."),
        }
    }

    #[test]
    fn a_schema_that_is_not_json_schema_props_is_an_error_not_dropped() {
        let root = json!({"properties": {"spec": {"type": "object", "required": "a"}}});
        let err = custom_resource_definition_with_root_schema(&desc(), root).unwrap_err();
        assert_eq!(
            err,
            CrdError::InvalidSchema {
                kind: "Foo".into(),
                version: "v1".into(),
                path: "openAPIV3Schema.properties.spec.required".into(),
                message: err_message(&err),
            }
        );
        assert!(err_message(&err).contains("invalid type"), "{err}");
        let spec = Some(json!({"type": "object", "properties": {"a": {"minimum": "1"}}}));
        let err = custom_resource_definition(&desc(), spec, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("`openAPIV3Schema.properties.spec.properties.a.minimum`"),
            "{err}"
        );
        let err = custom_resource_definition_with_root_schema(&desc(), json!(true)).unwrap_err();
        assert!(err.to_string().contains("expected a JSON object"), "{err}");
    }

    fn err_message(err: &CrdError) -> String {
        let CrdError::InvalidSchema { message, .. } = err;
        message.clone()
    }

    #[test]
    fn valid_and_disabled_schemas_build() {
        let crd =
            custom_resource_definition(&desc(), None, Some(preserve_unknown_object())).unwrap();
        let schema = crd.spec.versions[0].schema.as_ref().unwrap();
        let root = schema.open_api_v3_schema.as_ref().unwrap();
        assert_eq!(root.description.as_deref(), Some("A foo."));
        assert_eq!(root.x_kubernetes_validations.as_ref().unwrap().len(), 1);
        let spec = &root.properties.as_ref().unwrap()["spec"];
        assert_eq!(spec.x_kubernetes_preserve_unknown_fields, Some(true));
        let manual = json!({"properties": {"spec": {"type": "object"}}});
        let crd = custom_resource_definition_with_root_schema(&desc(), manual).unwrap();
        let root = crd.spec.versions[0].schema.as_ref().unwrap();
        let root = root.open_api_v3_schema.as_ref().unwrap();
        assert_eq!(root.type_.as_deref(), Some("object"));
        assert_eq!(crd.metadata.name.as_deref(), Some("foos.example.com"));
    }
}
