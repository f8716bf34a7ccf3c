//! `#[kinform(...)]` -> the macro's own AST ([`Attrs`]), with spans for every error.
//!
//! Parsing and validation live here, as in serde_derive: the derive front-end of
//! kinform-codegen receives only valid input. Each mistake is reported at the token that
//! caused it (a duplicate at its second occurrence, a missing key at the type's name), and
//! all mistakes are reported at once.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{LitBool, LitInt, LitStr};

use kinform_codegen::derive::{PrinterColumn, ScalePaths};

use crate::rule_expr::Rule;

/// Crate path overrides.
#[derive(Default)]
pub struct Crates {
    pub kinform: Option<syn::Path>,
    pub k8s_openapi: Option<syn::Path>,
    pub serde: Option<syn::Path>,
    pub schemars: Option<syn::Path>,
    pub std: Option<syn::Path>,
}

/// Where the CRD's schema comes from (kube-derive's `schema = "..."`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemaMode {
    /// From the spec and status types' `JsonSchema`; the root derives `JsonSchema` too.
    #[default]
    Derived,
    /// From the user's `impl JsonSchema for <Root>`: the whole object schema.
    Manual,
    /// None: the spec preserves unknown fields.
    Disabled,
}

/// Everything `#[kinform(...)]` may say.
#[derive(Default)]
pub struct Attrs {
    pub group: Option<LitStr>,
    pub version: Option<LitStr>,
    pub kind: Option<LitStr>,
    pub root: Option<LitStr>,
    pub namespaced: Option<Span>,
    pub plural: Option<LitStr>,
    pub singular: Option<LitStr>,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub status: Option<syn::Type>,
    pub scale: Option<ScalePaths>,
    pub printer_columns: Vec<PrinterColumn>,
    pub selectable: Vec<String>,
    pub rules: Vec<Rule>,
    pub served: Option<(bool, Span)>,
    pub storage: Option<(bool, Span)>,
    pub deprecated: Option<(Option<String>, Span)>,
    pub derives: Vec<syn::Path>,
    pub extra_attrs: Vec<syn::Meta>,
    pub schema: Option<(SchemaMode, Span)>,
    pub doc: Option<String>,
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<(String, String)>,
    pub crates: Crates,
    seen: Vec<String>,
}

/// Collected errors.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    pub fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Skips the rest of a failed item, up to the next comma.
fn skip_item(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    while !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

/// `meta.parse_nested_meta(f)`, going on after an item fails so every mistake inside the
/// parentheses is reported (and the parentheses are always fully consumed).
fn parse_nested(
    meta: &ParseNestedMeta<'_>,
    mut f: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    let mut errors = Errors::default();
    meta.parse_nested_meta(|m| {
        if let Err(e) = f(&m) {
            errors.push(e);
            skip_item(&m)?;
        }
        Ok(())
    })?;
    errors.finish()
}

fn set<T>(slot: &mut Option<T>, value: T, key: &str, span: Span) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(
            span,
            format!("duplicate `{key}`: it may be given once"),
        ));
    }
    *slot = Some(value);
    Ok(())
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    let path = &meta.path;
    path.get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| quote::quote!(#path).to_string().replace(' ', ""))
}

impl Attrs {
    /// Parses every `#[kinform(...)]` of `attrs`.
    pub fn parse(attrs: &[syn::Attribute], errors: &mut Errors) -> Self {
        let mut out = Attrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("kinform")) {
            let parsed = attr.parse_nested_meta(|meta| {
                if let Err(e) = out.item(&meta) {
                    // Report it, skip the rest of this item, and go on with the next one,
                    // so every mistake is reported in one build.
                    errors.push(e);
                    skip_item(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = parsed {
                errors.push(e);
            }
        }
        out
    }

    fn once(&mut self, key: &str, span: Span) -> syn::Result<()> {
        if self.seen.iter().any(|k| k == key) {
            return Err(syn::Error::new(
                span,
                format!("duplicate `{key}`: it may be given once"),
            ));
        }
        self.seen.push(key.to_owned());
        Ok(())
    }

    fn item(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = key_of(meta);
        let span = meta.path.span();
        match key.as_str() {
            "group" => set(&mut self.group, string(meta)?, "group", span),
            "version" => set(&mut self.version, string(meta)?, "version", span),
            "kind" => set(&mut self.kind, string(meta)?, "kind", span),
            // `struct` is kube-derive's former name of `root`.
            "root" | "struct" => set(&mut self.root, string(meta)?, "root", span),
            "plural" => set(&mut self.plural, string(meta)?, "plural", span),
            "singular" => set(&mut self.singular, string(meta)?, "singular", span),
            "namespaced" => set(&mut self.namespaced, span, "namespaced", span),
            "storage" => {
                let value = if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<LitBool>()?.value
                } else {
                    true
                };
                set(&mut self.storage, (value, span), "storage", span)
            }
            "shortname" => {
                self.short_names.push(string(meta)?.value());
                Ok(())
            }
            "category" => {
                self.categories.push(string(meta)?.value());
                Ok(())
            }
            "selectable" => {
                self.selectable.push(string(meta)?.value());
                Ok(())
            }
            "doc" => {
                let doc = string(meta)?.value();
                set(&mut self.doc, doc, "doc", span)
            }
            "status" => {
                let lit = string(meta)?;
                let ty: syn::Type = lit.parse().map_err(|_| {
                    syn::Error::new(lit.span(), "`status` must name a type, e.g. \"FooStatus\"")
                })?;
                set(&mut self.status, ty, "status", span)
            }
            "served" => {
                let lit: LitBool = meta.value()?.parse()?;
                set(&mut self.served, (lit.value, lit.span()), "served", span)
            }
            "deprecated" => {
                let warning = if meta.input.peek(syn::Token![=]) {
                    Some(string(meta)?.value())
                } else {
                    None
                };
                set(&mut self.deprecated, (warning, span), "deprecated", span)
            }
            "attr" => {
                let lit = string(meta)?;
                let attr: syn::Meta = lit.parse().map_err(|_| {
                    syn::Error::new(
                        lit.span(),
                        "`attr` must be an attribute's contents, e.g. \"allow(deprecated)\"",
                    )
                })?;
                // As kube-derive: derives go through `derive = "..."`, and serde / schemars
                // attributes would fight the generated (de)serialization and schema.
                let path = attr.path();
                if path.is_ident("derive") {
                    return Err(syn::Error::new(
                        lit.span(),
                        "`attr` cannot add derives: use `derive = \"Trait\"`",
                    ));
                }
                if path.is_ident("serde") || path.is_ident("schemars") {
                    return Err(syn::Error::new(
                        lit.span(),
                        "`attr` cannot set `serde` or `schemars` attributes: the root type's serialization and schema are generated",
                    ));
                }
                self.extra_attrs.push(attr);
                Ok(())
            }
            "derive" => {
                let lit = string(meta)?;
                let path: syn::Path = lit.parse().map_err(|_| {
                    syn::Error::new(lit.span(), "`derive` must name a trait, e.g. \"PartialEq\"")
                })?;
                self.derives.push(path);
                Ok(())
            }
            "schema" => {
                let lit = string(meta)?;
                let mode = match lit.value().as_str() {
                    "derived" => SchemaMode::Derived,
                    "manual" => SchemaMode::Manual,
                    "disabled" => SchemaMode::Disabled,
                    _ => {
                        return Err(syn::Error::new(
                            lit.span(),
                            "`schema` is \"derived\" (default), \"manual\" or \"disabled\"",
                        ));
                    }
                };
                set(&mut self.schema, (mode, lit.span()), "schema", span)
            }
            "scale" => {
                self.once("scale", span)?;
                self.scale = Some(if meta.input.peek(syn::Token![=]) {
                    scale_json(&string(meta)?)?
                } else {
                    parse_scale(meta)?
                });
                Ok(())
            }
            "printcolumn" => {
                let col = if meta.input.peek(syn::Token![=]) {
                    printcolumn_json(&string(meta)?)?
                } else {
                    parse_printcolumn(meta)?
                };
                self.printer_columns.push(col);
                Ok(())
            }
            "validation" | "rule" => {
                let rule = if meta.input.peek(syn::Token![=]) {
                    crate::rule_expr::rule(&meta.value()?.parse::<syn::Expr>()?)?
                } else {
                    parse_rule(meta)?
                };
                self.rules.push(rule);
                Ok(())
            }
            "label" | "annotation" => {
                let (k, v) = parse_key_value(meta, &key)?;
                if key == "label" {
                    self.labels.push((k, v));
                } else {
                    self.annotations.push((k, v));
                }
                Ok(())
            }
            "crates" => {
                self.once("crates", span)?;
                let crates = &mut self.crates;
                parse_nested(meta, |m| {
                    let which = key_of(m);
                    let lit = string(m)?;
                    let path: syn::Path = lit
                        .parse()
                        .map_err(|_| syn::Error::new(lit.span(), "expected a crate path"))?;
                    let sp = m.path.span();
                    match which.as_str() {
                        "kinform" => set(&mut crates.kinform, path, "kinform", sp),
                        "k8s_openapi" => set(&mut crates.k8s_openapi, path, "k8s_openapi", sp),
                        "serde" => set(&mut crates.serde, path, "serde", sp),
                        "schemars" => set(&mut crates.schemars, path, "schemars", sp),
                        "std" => set(&mut crates.std, path, "std", sp),
                        "kube" | "kube_core" => Err(m.error(format!(
                            "`{which}` is kube-derive's: kinform's runtime crate is set with `kinform = \"...\"`"
                        ))),
                        "serde_json" => Err(m.error(
                            "kinform's expansion never names serde_json (the runtime builds the CRD), so there is nothing to override: remove `serde_json`",
                        )),
                        other => Err(m.error(format!(
                            "unknown crate `{other}`: expected `kinform`, `k8s_openapi`, `serde`, `schemars` or `std`"
                        ))),
                    }
                })
            }
            "cel" => Err(meta.error(
                "`cel` (kube-derive's client-side CEL evaluation) has no kinform counterpart: the API server evaluates the `validation` rules",
            )),
            "group_resolver" => Err(meta.error(
                "`group_resolver` has no kinform counterpart: a kinform resource's group is the constant `Resource::GROUP`",
            )),
            "apiextensions" => Err(meta.error(
                "`apiextensions` is gone from kube-derive too: kinform writes apiextensions.k8s.io/v1 CRDs",
            )),
            other => Err(meta.error(format!("unknown kinform attribute `{other}`"))),
        }
    }
}

fn parse_scale(meta: &ParseNestedMeta<'_>) -> syn::Result<ScalePaths> {
    let (mut spec, mut status, mut selector) = (None, None, None);
    parse_nested(meta, |m| {
        let sp = m.path.span();
        match key_of(m).as_str() {
            "spec_replicas_path" => set(&mut spec, string(m)?.value(), "spec_replicas_path", sp),
            "status_replicas_path" => {
                set(&mut status, string(m)?.value(), "status_replicas_path", sp)
            }
            "label_selector_path" => {
                set(&mut selector, string(m)?.value(), "label_selector_path", sp)
            }
            other => Err(m.error(format!(
                "unknown `scale` key `{other}`: expected `spec_replicas_path`, `status_replicas_path` or `label_selector_path`"
            ))),
        }
    })?;
    let span = meta.path.span();
    Ok(ScalePaths {
        spec_replicas_path: spec
            .ok_or_else(|| syn::Error::new(span, "`scale` needs `spec_replicas_path = \"...\"`"))?,
        status_replicas_path: status.ok_or_else(|| {
            syn::Error::new(span, "`scale` needs `status_replicas_path = \"...\"`")
        })?,
        label_selector_path: selector,
    })
}

/// kube-derive's JSON form: `scale = r#"{"specReplicasPath": "..", "statusReplicasPath": ".."}"#`.
fn scale_json(lit: &LitStr) -> syn::Result<ScalePaths> {
    let err = |m: String| syn::Error::new(lit.span(), m);
    let v: serde_json::Value =
        serde_json::from_str(&lit.value()).map_err(|e| err(format!("scale JSON: {e}")))?;
    let text = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let need = |k: &str| text(k).ok_or_else(|| err(format!("scale JSON needs \"{k}\"")));
    Ok(ScalePaths {
        spec_replicas_path: need("specReplicasPath")?,
        status_replicas_path: need("statusReplicasPath")?,
        label_selector_path: text("labelSelectorPath"),
    })
}

/// `label("key", "value")` (kube-derive's form) or `label(key = "...", value = "...")`.
fn parse_key_value(meta: &ParseNestedMeta<'_>, what: &str) -> syn::Result<(String, String)> {
    let content;
    syn::parenthesized!(content in meta.input);
    if content.peek(LitStr) {
        let k: LitStr = content.parse()?;
        if content.is_empty() {
            return Err(syn::Error::new(
                k.span(),
                format!("`{what}` takes a key and a value: `{what}(\"key\", \"value\")`"),
            ));
        }
        content.parse::<syn::Token![,]>()?;
        let v: LitStr = content.parse()?;
        if content.peek(syn::Token![,]) {
            content.parse::<syn::Token![,]>()?;
        }
        if !content.is_empty() {
            return Err(content.error(format!("`{what}` takes a key and a value")));
        }
        return Ok((k.value(), v.value()));
    }
    let (mut k, mut v) = (None, None);
    while !content.is_empty() {
        let name: syn::Ident = content.parse()?;
        content.parse::<syn::Token![=]>()?;
        let lit: LitStr = content.parse()?;
        match name.to_string().as_str() {
            "key" => set(&mut k, lit.value(), "key", name.span())?,
            "value" => set(&mut v, lit.value(), "value", name.span())?,
            other => {
                return Err(syn::Error::new(
                    name.span(),
                    format!("unknown `{what}` key `{other}`: expected `key` or `value`"),
                ));
            }
        }
        if content.is_empty() {
            break;
        }
        content.parse::<syn::Token![,]>()?;
    }
    match (k, v) {
        (Some(k), Some(v)) => Ok((k, v)),
        _ => Err(syn::Error::new(
            meta.path.span(),
            format!("`{what}` needs a key and a value: `{what}(\"key\", \"value\")`"),
        )),
    }
}

const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

fn parse_printcolumn(meta: &ParseNestedMeta<'_>) -> syn::Result<PrinterColumn> {
    let (mut name, mut ty, mut path, mut desc, mut format, mut prio) =
        (None, None, None, None, None, None);
    parse_nested(meta, |m| {
        let sp = m.path.span();
        match key_of(m).as_str() {
            "name" => set(&mut name, string(m)?.value(), "name", sp),
            "type" | "type_" => {
                let lit = string(m)?;
                if !COLUMN_TYPES.contains(&lit.value().as_str()) {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("printcolumn type must be one of {COLUMN_TYPES:?}"),
                    ));
                }
                set(&mut ty, lit.value(), "type", sp)
            }
            "json_path" | "jsonPath" => set(&mut path, string(m)?.value(), "json_path", sp),
            "description" => set(&mut desc, string(m)?.value(), "description", sp),
            "format" => set(&mut format, string(m)?.value(), "format", sp),
            "priority" => {
                let lit: LitInt = m.value()?.parse()?;
                set(&mut prio, lit.base10_parse::<i32>()?, "priority", sp)
            }
            other => Err(m.error(format!(
                "unknown `printcolumn` key `{other}`: expected `name`, `type`, `json_path`, `description`, `format` or `priority`"
            ))),
        }
    })?;
    let span = meta.path.span();
    let need = |v: Option<String>, what: &str| {
        v.ok_or_else(|| syn::Error::new(span, format!("`printcolumn` needs `{what} = \"...\"`")))
    };
    Ok(PrinterColumn {
        name: need(name, "name")?,
        type_: need(ty, "type")?,
        json_path: need(path, "json_path")?,
        description: desc,
        format,
        priority: prio.unwrap_or(0),
    })
}

/// kube-derive's JSON form: `printcolumn = r#"{"name": "..", "type": "..", "jsonPath": ".."}"#`.
fn printcolumn_json(lit: &LitStr) -> syn::Result<PrinterColumn> {
    let err = |m: String| syn::Error::new(lit.span(), m);
    let v: serde_json::Value =
        serde_json::from_str(&lit.value()).map_err(|e| err(format!("printcolumn JSON: {e}")))?;
    let text = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let need = |k: &str| text(k).ok_or_else(|| err(format!("printcolumn JSON needs \"{k}\"")));
    let type_ = need("type")?;
    if !COLUMN_TYPES.contains(&type_.as_str()) {
        return Err(err(format!(
            "printcolumn type must be one of {COLUMN_TYPES:?}"
        )));
    }
    let priority = match v.get("priority") {
        None => 0,
        Some(p) => p
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| err("printcolumn priority must be an integer".to_owned()))?,
    };
    Ok(PrinterColumn {
        name: need("name")?,
        type_,
        json_path: need("jsonPath")?,
        description: text("description"),
        format: text("format"),
        priority,
    })
}

fn parse_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Rule> {
    let mut r = Rule {
        rule: String::new(),
        message: None,
        message_expression: None,
        reason: None,
        field_path: None,
        optional_old_self: None,
    };
    let mut rule = None;
    parse_nested(meta, |m| {
        let sp = m.path.span();
        match key_of(m).as_str() {
            "rule" => set(&mut rule, string(m)?.value(), "rule", sp),
            "message" => set(&mut r.message, string(m)?.value(), "message", sp),
            "message_expression" => set(
                &mut r.message_expression,
                string(m)?.value(),
                "message_expression",
                sp,
            ),
            "reason" => {
                let lit = string(m)?;
                const REASONS: &[&str] = &[
                    "FieldValueInvalid",
                    "FieldValueForbidden",
                    "FieldValueRequired",
                    "FieldValueDuplicate",
                ];
                if !REASONS.contains(&lit.value().as_str()) {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("`reason` must be one of {REASONS:?}"),
                    ));
                }
                set(&mut r.reason, lit.value(), "reason", sp)
            }
            "field_path" => set(&mut r.field_path, string(m)?.value(), "field_path", sp),
            "optional_old_self" => {
                let lit: LitBool = m.value()?.parse()?;
                set(&mut r.optional_old_self, lit.value, "optional_old_self", sp)
            }
            other => Err(m.error(format!(
                "unknown `validation` key `{other}`: expected `rule`, `message`, `message_expression`, `reason`, `field_path` or `optional_old_self`"
            ))),
        }
    })?;
    r.rule = rule
        .ok_or_else(|| syn::Error::new(meta.path.span(), "`validation` needs `rule = \"...\"`"))?;
    Ok(r)
}
