//! Acceptance of issue 5: the generator's full output for every CRD of ../shared/corpus/crds
//! (types, typed clients, listers, informers, factory accessors, written by [`Generator`] as a
//! user's build would) compiles with `-D warnings` (and `missing_docs`) in a separate crate
//! that depends only on the kinform runtime, and every example manifest of
//! ../shared/corpus/examples
//!
//! - survives deserialize -> serialize through its generated type: the output is the input,
//!   as a JSON value (decoding adds no default, drops no `null` the schema allows, rewrites no
//!   quantity, timestamp or number);
//! - with one kind of probe at every site of that kind (an integer quantity, a fractional and
//!   an offset timestamp, an integer in a `number` field) survives the same way;
//! - is created through its generated typed client against a `TestApiServer` with the corpus
//!   CRDs registered, read back with `get` (equal to what `create` returned, and to what was
//!   sent after the object's own `apply_schema_defaults`: the server defaults with the same
//!   rules), and is then listed, equal, by the lister of the informer reached through the
//!   generated factory accessor (`factory.<group>().<version>().<plural>()`) after
//!   `wait_for_cache_sync`;
//! - converts into its generated apply configuration (`FooApply::from(&typed)`), which
//!   serializes to the typed object's JSON (`null` members aside), and, server-side applied
//!   as a new object through the typed client's `apply`, is stored as `create` stored the
//!   object (issue #45's property over the corpus).
//!
//! Besides the examples, documents generated from every corpus CRD version's schema with
//! proptest's deterministic RNG (support/schema_docs.rs: absent optional properties, `null`s
//! where the schema allows them, unknown enum values, unknown keys beside preserved fields),
//! and, for every CRD version with such a site, a full document carrying each probe, survive
//! deserialize -> serialize unchanged.
//!
//! The test crate is a temporary crate (tests/support/temp_crate.rs: one target dir shared
//! with the other slow tests), so repeated runs only recompile the generated code when it
//! changed (the generator leaves unchanged files alone).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kinform_codegen::model::Scope;
use kinform_codegen::model::types::TypeModule;
use kinform_codegen::naming::{group_names, snake};
use kinform_codegen::read::yaml::parse_stream;
use kinform_codegen::{Generator, Layout};
use serde_json::{Value, json};

use crate::schema_docs::{self, Mode, Probe};
use proptest::test_runner::{RngAlgorithm, TestRng};

use crate::temp_crate::TempCrate;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Every non-empty YAML document of the corpus folder `sub` (one level of project folders,
/// then files), in path order: (file, document index, value).
fn corpus_documents(sub: &str) -> Vec<(PathBuf, usize, Value)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in std::fs::read_dir(corpus().join(sub)).unwrap() {
        for f in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for doc in parse_stream(&f, &text).unwrap() {
            if let Some(v) = doc.value {
                out.push((f.clone(), doc.index, v));
            }
        }
    }
    out
}

/// Every CRD of the corpus, as JSON.
fn crds() -> Vec<Value> {
    corpus_documents("crds")
        .into_iter()
        .map(|(_, _, v)| v)
        .collect()
}

/// Schemas by (apiVersion, kind), read from the raw CRDs (independently of the reader).
fn schemas() -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for crd in crds() {
        let group = crd["spec"]["group"].as_str().unwrap();
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap();
        for v in crd["spec"]["versions"].as_array().unwrap() {
            let av = format!("{group}/{}", v["name"].as_str().unwrap());
            out.insert(
                (av, kind.to_owned()),
                v["schema"]["openAPIV3Schema"].clone(),
            );
        }
    }
    out
}

/// The driver crate: the generator's full output (types, clients, listers, informers,
/// factory accessors) for the whole corpus, as a user's crate would hold it, plus dispatch
/// functions from (apiVersion, kind) to the generated type, typed client and informer.
fn write_test_crate(krate: &TempCrate) -> Vec<TypeModule> {
    let generator = Generator::new()
        .crd_dir(corpus().join("crds"))
        .layout(Layout::Tree {
            root_file: "mod.rs".to_owned(),
        })
        .out_dir(krate.dir().join("src/generated"));
    generator.generate().expect("the corpus generates");
    let (model, types) = generator.model().unwrap();
    let group_names = group_names(model.groups.keys().map(String::as_str));
    let mut roundtrip_arms = String::new();
    let mut fast_arms = String::new();
    let mut create_arms = String::new();
    let mut informer_arms = String::new();
    let mut list_arms = String::new();
    for t in &types {
        let av = format!("{}/{}", t.group, t.version);
        let (g, v, plural) = (&group_names[&t.group], snake(&t.version), snake(&t.plural));
        let ty = format!("generated::{g}::{v}::{}", t.root);
        let apply = format!("generated::{g}::{v}::{}Apply", t.root);
        let client = match t.scope {
            Scope::Namespaced => format!("client.{g}_{v}().{plural}(namespace)"),
            Scope::Cluster => format!("client.{g}_{v}().{plural}()"),
        };
        let accessor = format!("factory.{g}().{v}().{plural}()");
        let key = format!("({av:?}, {:?})", t.kind);
        roundtrip_arms.push_str(&format!(
            "        {key} => Some(rt::<{ty}, {apply}>(value)),\n"
        ));
        fast_arms.push_str(&format!("        {key} => Some(fast_of::<{ty}>(docs)),\n"));
        create_arms.push_str(&format!(
            "        {key} => Some(create_get!({ty}, {apply}, {client}, value, name)),\n"
        ));
        informer_arms.push_str(&format!(
            "        {key} => {{ {accessor}.informer(); true }}\n"
        ));
        list_arms.push_str(&format!(
            "        {key} => Some(listed({accessor}.lister().list_all())),\n"
        ));
    }
    let lib = format!(
        r#"#![deny(warnings, missing_docs)]
//! Generated CRD code under test, and dispatch from (apiVersion, kind) to it.

/// The generator's output.
pub mod generated;

use generated::prelude::*;
use kinform::client::{{ApplyParams, DeleteParams, PostParams}};
use kinform::informer::InformerFactory;
use kinform::k8s_openapi::serde_json::{{self, Value}};
use kinform::{{Client, HasMetadata}};

/// Round-trips `value` through the generated type of (apiVersion, kind), and checks its
/// apply configuration converted from the typed object serializes to the same JSON
/// (`null` members aside: an apply configuration does not express them).
pub fn roundtrip(api_version: &str, kind: &str, value: Value) -> Option<Result<Value, String>> {{
    match (api_version, kind) {{
{roundtrip_arms}        _ => None,
    }}
}}

fn rt<K, A>(value: Value) -> Result<Value, String>
where
    K: kinform::Resource,
    A: for<'a> From<&'a K> + kinform::k8s_openapi::serde::Serialize,
{{
    let typed: K = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let out = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let applied = to_json(&A::from(&typed))?;
    if without_nulls(&applied) != without_nulls(&out) {{
        return Err(format!("the apply configuration of {{out}} serializes as {{applied}}"));
    }}
    Ok(out)
}}

/// `v` without the object members whose value is `null`, at every depth.
fn without_nulls(v: &Value) -> Value {{
    match v {{
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }}
}}

/// Decodes each of `docs` (JSON texts) of (apiVersion, kind) by serde and by the in-place
/// walk alone, new and into the object of the document before (see [`fast_of`]).
pub fn fast(api_version: &str, kind: &str, docs: &[String]) -> Option<Result<Value, String>> {{
    match (api_version, kind) {{
{fast_arms}        _ => None,
    }}
}}

/// The in-place walk of `K` against `serde_json`: a new object the walk builds is the one
/// serde builds, a document serde refuses the walk refuses too, and a document decoded into
/// the object of the last one serde took is the one serde builds; counts what it saw.
fn fast_of<K>(docs: &[String]) -> Result<Value, String>
where
    K: HasMetadata + PartialEq + std::fmt::Debug + kinform::k8s_openapi::serde::de::DeserializeOwned,
{{
    use kinform::client::decode::bench::DocDecoder;
    let mut decoder = DocDecoder::default();
    let (mut walked, mut gave_up, mut refused, mut into) = (0, 0, 0, 0);
    let mut previous: Option<K> = None;
    let mut first_walked = false;
    for (i, doc) in docs.iter().enumerate() {{
        let by_serde = serde_json::from_str::<K>(doc);
        match (&by_serde, decoder.walk_new_resource::<K>(doc.as_bytes())) {{
            (Ok(a), Some(b)) if *a == b => {{
                walked += 1;
                first_walked |= i == 0;
            }}
            (Ok(a), Some(b)) => return Err(format!("the walk built {{b:?}}, serde {{a:?}}, from {{doc}}")),
            (Ok(_), None) => gave_up += 1,
            (Err(_), None) => refused += 1,
            (Err(e), Some(b)) => return Err(format!("serde refuses {{doc}} ({{e}}), the walk built {{b:?}}")),
        }}
        if let Some(mut target) = previous.take()
            && decoder.decode_resource_into(&mut target, doc.as_bytes())
        {{
            match &by_serde {{
                Ok(a) if *a == target => into += 1,
                Ok(a) => return Err(format!("decoded into: {{target:?}}, serde {{a:?}}, from {{doc}}")),
                Err(e) => return Err(format!("serde refuses {{doc}} ({{e}}), decoded into: {{target:?}}")),
            }}
        }}
        if let Ok(obj) = by_serde {{
            previous = Some(obj);
        }}
    }}
    Ok(serde_json::json!({{
        "in_place": DocDecoder::has_in_place::<K>(), "first_walked": first_walked,
        "walked": walked, "gave_up": gave_up, "refused": refused, "into": into,
    }}))
}}

/// Deserializes `$value` into `$ty`, names it `$name` when it has no name, creates it through
/// the generated typed client `$client`, gets it back and checks both answers agree with each
/// other and with what was sent (metadata aside); then applies its apply configuration
/// `$apply` (converted from the object) as a new object and checks the server stored the
/// same (metadata aside); evaluates to the created object as JSON.
macro_rules! create_get {{
    ($ty:ty, $apply:ty, $client:expr, $value:expr, $name:expr) => {{{{
        let result: Result<Value, String> = async {{
            let mut object: $ty = serde_json::from_value($value).map_err(|e| e.to_string())?;
            if object.name().is_empty() {{
                object.metadata_mut().name = Some($name.to_owned());
            }}
            // Manifests exported from a cluster may carry a resourceVersion, which a create
            // must not (the API server answers 400), so drop it as a user would.
            object.metadata_mut().resource_version = None;
            let typed = $client;
            let created = typed
                .create(&PostParams::default(), &object)
                .await
                .map_err(|e| format!("create: {{e}}"))?;
            let got = typed
                .get(created.name())
                .await
                .map_err(|e| format!("get: {{e}}"))?;
            if got != created {{
                return Err(format!("get returned {{got:?}}, create returned {{created:?}}"));
            }}
            // The server defaults with the rules of `apply_schema_defaults`.
            let mut defaulted = object.clone();
            defaulted.apply_schema_defaults().map_err(|e| format!("defaults: {{e}}"))?;
            let (mut sent, mut back) = (to_json(&defaulted)?, to_json(&got)?);
            sent.as_object_mut().map(|m| m.remove("metadata"));
            back.as_object_mut().map(|m| m.remove("metadata"));
            if sent != back {{
                return Err(format!("the server returned {{back}} for {{sent}}"));
            }}
            // The same object through server-side apply of its apply configuration.
            // Without finalizers, so that it is gone before the informers start.
            let mut intent = object.clone();
            let applied_name = format!("{{}}-applied", created.name());
            intent.metadata_mut().name = Some(applied_name.clone());
            intent.metadata_mut().finalizers = None;
            let applied = typed
                .apply(&applied_name, &ApplyParams::new("roundtrip"), &<$apply>::from(&intent))
                .await
                .map_err(|e| format!("apply: {{e}}"))?;
            let mut applied = to_json(&applied)?;
            applied.as_object_mut().map(|m| m.remove("metadata"));
            if applied != back {{
                return Err(format!("apply stored {{applied}} where create stored {{back}}"));
            }}
            typed
                .delete(&applied_name, &DeleteParams::default())
                .await
                .map_err(|e| format!("delete: {{e}}"))?;
            to_json(&got)
        }}
        .await;
        result
    }}}};
}}

fn to_json<T: kinform::k8s_openapi::serde::Serialize>(value: &T) -> Result<Value, String> {{
    serde_json::to_value(value).map_err(|e| e.to_string())
}}

/// Creates `value` through the typed client of (apiVersion, kind) in `namespace` (ignored for
/// cluster-scoped kinds), gets it back; returns the object read back as JSON.
pub async fn create_get(
    client: &Client,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    value: Value,
) -> Option<Result<Value, String>> {{
    let _ = namespace;
    match (api_version, kind) {{
{create_arms}        _ => None,
    }}
}}

/// Registers the shared informer of (apiVersion, kind) through the factory accessor.
pub fn informer(factory: &InformerFactory, api_version: &str, kind: &str) -> bool {{
    match (api_version, kind) {{
{informer_arms}        _ => false,
    }}
}}

/// Every object of (apiVersion, kind) in the factory accessor's lister, as JSON.
pub fn list(factory: &InformerFactory, api_version: &str, kind: &str) -> Option<Result<Vec<Value>, String>> {{
    match (api_version, kind) {{
{list_arms}        _ => None,
    }}
}}

fn listed<K: kinform::Resource>(objects: Vec<std::sync::Arc<K>>) -> Result<Vec<Value>, String> {{
    objects.iter().map(|o| to_json(o.as_ref())).collect()
}}
"#
    );
    krate.write("src/lib.rs", &lib);
    krate.write("src/main.rs", DRIVER_MAIN);
    types
}

/// The driver: reads `{apiVersion, kind, object, crd}` request lines (`crd`: a CRD to
/// register), answers each object line with `{roundtrip: {ok}|{err}|{skip}, server: ...}`.
/// Round trips first; then every CRD is registered with a `TestApiServer`, every object is
/// created and read back through its typed client, the informers of the kinds seen start
/// through the factory accessors and, once synced, every object must be in its lister, equal
/// to what `get` returned.
const DRIVER_MAIN: &str = r#"//! Round-trip and client driver (see the acceptance test).
use std::collections::BTreeSet;
use std::io::BufRead;
use std::time::Duration;

use kinform::informer::InformerFactory;
use kinform::k8s_openapi::serde_json::{self, Value, json};
use kinform::testing::TestApiServer;
use kinform::{Client, Config};
use kinform_crd_roundtrip as driver;

#[tokio::main]
async fn main() {
    let mut objects: Vec<Value> = Vec::new();
    let mut crds: Vec<Value> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let req: Value = serde_json::from_str(&line.expect("stdin")).expect("request");
        match req.get("crd") {
            Some(crd) => crds.push(crd.clone()),
            None => objects.push(req),
        }
    }
    let mut answers: Vec<Value> = objects
        .iter()
        .map(|req| {
            let av = req["apiVersion"].as_str().unwrap_or_default();
            let kind = req["kind"].as_str().unwrap_or_default();
            let out = match driver::roundtrip(av, kind, req["object"].clone()) {
                None => json!({"skip": true}),
                Some(Ok(v)) => json!({"ok": v}),
                Some(Err(e)) => json!({"err": e}),
            };
            let docs: Vec<String> = req["fast"]
                .as_array()
                .map(|d| d.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            let fast = match driver::fast(av, kind, &docs) {
                None => json!({"skip": true}),
                Some(Ok(v)) => json!({"ok": v}),
                Some(Err(e)) => json!({"err": e}),
            };
            json!({"roundtrip": out, "fast": fast})
        })
        .collect();

    let server = TestApiServer::start().await.expect("server starts");
    for crd in crds {
        server.register_crd(crd).expect("CRD registers");
    }
    let client = Client::new(Config::new(server.url().parse().expect("url"))).expect("client");
    let mut kinds = BTreeSet::new();
    for (i, req) in objects.iter().enumerate() {
        if req["server"] != json!(true) {
            continue;
        }
        let av = req["apiVersion"].as_str().unwrap_or_default();
        let kind = req["kind"].as_str().unwrap_or_default();
        let object = &req["object"];
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
        server.create_namespace(namespace).expect("namespace");
        let name = format!("example-{i}");
        let out = match driver::create_get(&client, av, kind, namespace, &name, object.clone()).await {
            None => json!({"skip": true}),
            Some(Ok(v)) => {
                kinds.insert((av.to_owned(), kind.to_owned()));
                json!({"ok": v})
            }
            Some(Err(e)) => json!({"err": e}),
        };
        answers[i]["server"] = out;
    }

    let factory = InformerFactory::new(client);
    for (av, kind) in &kinds {
        assert!(driver::informer(&factory, av, kind), "{av} {kind}: no informer");
    }
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(120))
        .await
        .expect("caches sync");
    let mut lists = serde_json::Map::new();
    for (av, kind) in &kinds {
        let listed = match driver::list(&factory, av, kind) {
            None => json!({"err": "no lister"}),
            Some(Ok(v)) => json!({"ok": v}),
            Some(Err(e)) => json!({"err": e}),
        };
        lists.insert(format!("{av} {kind}"), listed);
    }
    factory.shutdown().await;
    server.shutdown().await;
    for answer in answers {
        println!("{answer}");
    }
    println!("{}", json!({ "lists": lists }));
}
"#;

/// Compares the input with the round-tripped output as JSON values (key order aside);
/// returns the differences, each at its path.
fn compare(path: &str, input: &Value, output: &Value, diffs: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => {
            for (k, vi) in i {
                let p = format!("{path}.{k}");
                match o.get(k) {
                    Some(vo) => compare(&p, vi, vo, diffs),
                    None => diffs.push(format!("{p}: dropped")),
                }
            }
            for (k, vo) in o {
                if !i.contains_key(k) {
                    diffs.push(format!("{path}.{k}: added {vo}"));
                }
            }
        }
        (Value::Array(i), Value::Array(o)) if i.len() == o.len() => {
            for (n, (vi, vo)) in i.iter().zip(o).enumerate() {
                compare(&format!("{path}[{n}]"), vi, vo, diffs);
            }
        }
        (i, o) if i == o => {}
        (i, o) => diffs.push(format!("{path}: {i} became {o}")),
    }
}

/// Random documents generated per CRD version.
const GENERATED_PER_VERSION: usize = 8;

fn examples() -> Vec<(String, Value)> {
    corpus_documents("examples")
        .into_iter()
        .map(|(f, index, v)| {
            let name = format!("{}#{index}", f.strip_prefix(corpus()).unwrap().display());
            (name, v)
        })
        .collect()
}

/// The counts the driver's in-place check answers, in [`fast_totals`]'s order.
const FAST_COUNTS: [&str; 4] = ["walked", "gave_up", "refused", "into"];

/// Mutants of each document for the in-place check.
const MUTANTS_PER_DOCUMENT: usize = 4;

/// The documents the driver decodes by serde and by the in-place walk for `v`: its text,
/// mutants of it (see [`mutant`]), and its text again (decoded into the last mutant serde
/// took).
fn fast_documents(v: &Value, rng: &mut TestRng) -> Vec<String> {
    let text = v.to_string();
    let mut docs = vec![text.clone()];
    docs.extend((0..MUTANTS_PER_DOCUMENT).map(|_| mutant(v, rng)));
    docs.push(text);
    docs
}

/// JSON pointers of every value of `v` (`at` its own), in document order.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let k = k.replace('~', "~0").replace('/', "~1");
                pointers(x, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `v` with one value changed at random (proptest's deterministic RNG): replaced by a value of
/// another shape, removed, wrapped in an array, or (an object) given its first member twice.
fn mutant(v: &Value, rng: &mut TestRng) -> String {
    use proptest::prelude::Rng as _;
    let mut at = Vec::new();
    pointers(v, "", &mut at);
    let at = &at[rng.next_u32() as usize % at.len()];
    let mut m = v.clone();
    let target = m.pointer_mut(at).expect("a pointer of the document");
    match rng.next_u32() % 4 {
        0 => {
            let others = [
                json!(null),
                json!(7),
                json!(-1.5),
                json!("x"),
                json!(true),
                json!([]),
                json!({}),
            ];
            *target = others[rng.next_u32() as usize % others.len()].clone();
        }
        1 => {
            if let Some((parent, key)) = at.rsplit_once('/') {
                let key = key.replace("~1", "/").replace("~0", "~");
                match m.pointer_mut(parent) {
                    Some(Value::Object(p)) => {
                        p.remove(&key);
                    }
                    Some(Value::Array(p)) => {
                        p.remove(key.parse::<usize>().unwrap());
                    }
                    _ => {}
                }
            }
        }
        2 => {
            let mut out = String::new();
            with_duplicate(&m, at, "", &mut out);
            return out;
        }
        _ => *target = json!([target.take()]),
    }
    m.to_string()
}

/// The text of `v` with the object at pointer `dup` (`at` is `v`'s own) writing its first
/// member twice.
fn with_duplicate(v: &Value, dup: &str, at: &str, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json!(k).to_string());
                out.push(':');
                let ke = k.replace('~', "~0").replace('/', "~1");
                with_duplicate(x, dup, &format!("{at}/{ke}"), out);
            }
            if at == dup
                && let Some((k, x)) = m.iter().next()
            {
                out.push_str(&format!(",{}:{x}", json!(k)));
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                with_duplicate(x, dup, &format!("{at}/{i}"), out);
            }
            out.push(']');
        }
        _ => out.push_str(&v.to_string()),
    }
}

#[test]
fn generated_code_compiles_round_trips_and_serves_every_example() {
    let krate = TempCrate::new("kinform-crd-roundtrip");
    let types = write_test_crate(&krate);
    krate.cargo("build");

    let schemas = schemas();
    let mut requests = Vec::new();
    for (name, v) in examples() {
        let av = v["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = v["kind"].as_str().unwrap_or_default().to_owned();
        // Only kinds with their own CRD go to the server.
        let server = types
            .iter()
            .any(|t| format!("{}/{}", t.group, t.version) == av && t.kind == kind);
        // cert-manager's Issuer has no CRD in the corpus; it shares ClusterIssuer's schema.
        let kind = if av == "cert-manager.io/v1" && kind == "Issuer" {
            "ClusterIssuer".to_owned()
        } else {
            kind
        };
        requests.push((name, av, kind, v, server));
    }
    // Probes on the real documents: each kind of value at every site of that kind.
    let mut probes: Vec<(String, String, String, Value, bool)> = Vec::new();
    for (name, av, kind, v, _) in &requests {
        let Some(schema) = schemas.get(&(av.clone(), kind.clone())) else {
            continue;
        };
        for probe in Probe::ALL {
            if let Some(doc) = schema_docs::probe_document(v, schema, probe) {
                probes.push((
                    format!("{name} probe {probe:?}"),
                    av.clone(),
                    kind.clone(),
                    doc,
                    false,
                ));
            }
        }
    }
    let real_probes = probes.len();
    // Documents generated from every CRD version's schema: random ones, and a full one per
    // probe the schema has a site for.
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut probed_crds: BTreeMap<Probe, usize> = BTreeMap::new();
    for ((av, kind), schema) in &schemas {
        if !types
            .iter()
            .any(|t| format!("{}/{}", t.group, t.version) == *av && t.kind == *kind)
        {
            continue; // a version the generator does not emit (not served)
        }
        for i in 0..GENERATED_PER_VERSION {
            let name = format!("generated-{i}");
            let doc = schema_docs::document(schema, av, kind, &name, Mode::Random, &mut rng);
            probes.push((
                format!("{av} {kind} random #{i}"),
                av.clone(),
                kind.clone(),
                doc,
                false,
            ));
        }
        for probe in Probe::ALL {
            if schema_docs::has_site(schema, probe) {
                *probed_crds.entry(probe).or_default() += 1;
                let doc =
                    schema_docs::document(schema, av, kind, "probe", Mode::Full(probe), &mut rng);
                probes.push((
                    format!("{av} {kind} full {probe:?}"),
                    av.clone(),
                    kind.clone(),
                    doc,
                    false,
                ));
            }
        }
    }
    eprintln!(
        "{} examples, {real_probes} probes of them, {} generated documents; CRD versions per probe: {probed_crds:?}",
        requests.len(),
        probes.len() - real_probes
    );
    // The corpus has quantity and date-time sites (no CRD of it has a `number` property:
    // the fixtures' behaviour test covers those).
    for probe in [
        Probe::IntegerQuantity,
        Probe::FractionTime,
        Probe::OffsetTime,
    ] {
        assert!(
            probed_crds.get(&probe).copied().unwrap_or(0) > 0,
            "no CRD has a {probe:?} site"
        );
    }
    requests.extend(probes);
    let mut child = Command::new(krate.binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("driver runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut input: String = crds()
        .into_iter()
        .map(|crd| format!("{}\n", json!({ "crd": crd })))
        .collect();
    let mut mutation_rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    for (_, av, kind, v, server) in &requests {
        let fast = fast_documents(v, &mut mutation_rng);
        input.push_str(&format!(
            "{}\n",
            json!({"apiVersion": av, "kind": kind, "object": v, "server": server, "fast": fast})
        ));
    }
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "the driver failed");
    let mut lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lists = lines.pop().expect("the lists line")["lists"].clone();
    assert_eq!(lines.len(), requests.len());

    let mut failures = Vec::new();
    let mut checked = 0;
    let mut fast_totals = [0u64; FAST_COUNTS.len()];
    let mut in_place_kinds = std::collections::BTreeSet::new();
    let mut served: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for ((name, av, kind, input, server), answer) in requests.iter().zip(&lines) {
        let result = &answer["roundtrip"];
        if result.get("skip").is_some() {
            assert!(
                !schemas.contains_key(&(av.clone(), kind.clone())),
                "{name}: {av} {kind} has a CRD but no generated type"
            );
            continue;
        }
        match answer["fast"].get("ok") {
            Some(f) => {
                for (total, key) in fast_totals.iter_mut().zip(FAST_COUNTS) {
                    *total += f[key].as_u64().unwrap_or(0);
                }
                if f["in_place"] == json!(true) {
                    in_place_kinds.insert(format!("{av} {kind}"));
                    if result.get("ok").is_some() && f["first_walked"] != json!(true) {
                        failures.push(format!("{name}: the in-place walk gives up on it"));
                    }
                }
            }
            None => failures.push(format!("{name}: in-place decode: {}", answer["fast"])),
        }
        if *server {
            match answer["server"].get("ok") {
                Some(obj) => served
                    .entry(format!("{av} {kind}"))
                    .or_default()
                    .push(without_managed_fields(obj)),
                None => failures.push(format!("{name}: through the client: {}", answer["server"])),
            }
        }
        if let Some(e) = result.get("err") {
            failures.push(format!("{name}: does not deserialize: {e}"));
            continue;
        }
        checked += 1;
        let mut output = result["ok"].clone();
        if output["kind"] != input["kind"] {
            output["kind"] = input["kind"].clone(); // the Issuer alias above
        }
        let mut diffs = Vec::new();
        compare("", input, &output, &mut diffs);
        for d in diffs {
            failures.push(format!("{name}: {d}"));
        }
    }
    // Every object must be in the lister of its own version, equal to what `get` returned;
    // the lister of a version holds every object of the resource, whichever version it was
    // created through (the server serves all versions of one storage).
    let served_count: usize = served.values().map(Vec::len).sum();
    let group_kind = |key: &str| {
        let (av, kind) = key.split_once(' ').unwrap();
        format!("{} {kind}", av.split('/').next().unwrap())
    };
    for (key, objects) in &served {
        let listed: Vec<Value> = match lists[key].get("ok").and_then(Value::as_array) {
            Some(l) => l.iter().map(without_managed_fields).collect(),
            None => {
                failures.push(format!("{key}: lister: {}", lists[key]));
                continue;
            }
        };
        let of_resource: usize = served
            .iter()
            .filter(|(k, _)| group_kind(k) == group_kind(key))
            .map(|(_, o)| o.len())
            .sum();
        if listed.len() != of_resource {
            failures.push(format!(
                "{key}: the lister holds {} objects, {of_resource} were created",
                listed.len()
            ));
        }
        for object in objects {
            let uid = &object["metadata"]["uid"];
            match listed.iter().find(|l| l["metadata"]["uid"] == *uid) {
                Some(l) if l == object => {}
                Some(l) => failures.push(format!(
                    "{key}: the lister holds {l}, get returned {object}"
                )),
                None => failures.push(format!(
                    "{key}: {} is not in the lister",
                    object["metadata"]["name"]
                )),
            }
        }
    }
    assert!(checked >= 250, "only {checked} documents round-tripped");
    // The in-place walk: most generated root types have one, it builds objects and decodes
    // into them, and the mutants include documents both refuse.
    let [walked, gave_up, refused, into] = fast_totals;
    eprintln!(
        "in place: {} kinds; {walked} walked, {gave_up} given up, {refused} refused by both, {into} decoded into",
        in_place_kinds.len()
    );
    assert!(
        in_place_kinds.len() >= 10,
        "in place: only {in_place_kinds:?}"
    );
    assert!(
        walked >= 1000 && refused >= 100 && into >= 500,
        "in place: {fast_totals:?}"
    );
    assert!(
        served_count >= 30,
        "only {served_count} documents went through the client"
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    v
}

#[test]
fn the_comparison_sees_drops_additions_and_changes() {
    let input =
        json!({"spec": {"a": 1, "b": [1, 2], "q": 2, "t": null}, "metadata": {"name": "x"}});
    let mut diffs = Vec::new();
    compare("", &input, &input.clone(), &mut diffs);
    assert!(diffs.is_empty(), "{diffs:?}");
    compare(
        "",
        &input,
        &json!({"spec": {"a": 1.0, "b": [1, 3], "q": "2", "x": 0}}),
        &mut diffs,
    );
    assert_eq!(
        diffs,
        [
            ".metadata: dropped",
            ".spec.a: 1 became 1.0",
            ".spec.b[1]: 2 became 3",
            ".spec.q: 2 became \"2\"",
            ".spec.t: dropped",
            ".spec.x: added 0"
        ]
    );
}
