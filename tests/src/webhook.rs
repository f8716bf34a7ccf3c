//! Small webhook servers for the tests of TestApiServer's admission and CRD conversion: real
//! HTTPS servers (hyper 1 + rustls, certificates from an rcgen CA of their own) that speak
//! the `AdmissionReview` and `ConversionReview` wire formats and really decide (deny on
//! content, patch a field, convert between versions), so the tests can fail.
//!
//! A server answers on `https://127.0.0.1:<port>/<path>` for each route it was started
//! with; its certificate is valid for `127.0.0.1`, `localhost` and the extra host names
//! given (a Service's `<name>.<namespace>.svc`). [`WebhookServer::stop`] takes it down, as
//! a crashed webhook pod would be.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use parking_lot::Mutex;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// An admission decision: the `response` of an `AdmissionReview` but its `uid`.
pub type Decision = Pin<Box<dyn Future<Output = Value> + Send>>;

/// Decides on one admission `request`.
pub type Admit = Arc<dyn Fn(Value) -> Decision + Send + Sync>;

/// Converts one object to the desired `apiVersion`, or says why not.
pub type Convert = Arc<dyn Fn(&Value, &str) -> Result<Value, String> + Send + Sync>;

/// What a path of a [`WebhookServer`] does.
#[derive(Clone)]
pub enum Route {
    /// Answers `AdmissionReview`s.
    Admission(Admit),
    /// Answers `ConversionReview`s object by object.
    Conversion(Convert),
}

/// A synchronous admission route.
pub fn admission(decide: impl Fn(&Value) -> Value + Send + Sync + 'static) -> Route {
    let decide = Arc::new(decide);
    Route::Admission(Arc::new(move |request| {
        let decide = decide.clone();
        Box::pin(async move { decide(&request) })
    }))
}

/// An admission route whose decision is awaited (a slow webhook, or one that reads the API
/// server back).
pub fn admission_async<F>(decide: impl Fn(Value) -> F + Send + Sync + 'static) -> Route
where
    F: Future<Output = Value> + Send + 'static,
{
    Route::Admission(Arc::new(move |request| Box::pin(decide(request))))
}

/// `allowed: true`.
pub fn allow() -> Value {
    json!({"allowed": true})
}

/// `allowed: false` with a Status of `code` and `message`, and for 403 the reason
/// `Forbidden`, as controller-runtime's `admission.Denied` answers.
pub fn deny(code: u16, message: &str) -> Value {
    let mut status = json!({"code": code, "message": message});
    if code == 403 {
        status["reason"] = json!("Forbidden");
    }
    json!({"allowed": false, "status": status})
}

/// `allowed: true` with the JSON Patch `ops` (base64, `patchType: JSONPatch`).
pub fn patch(ops: Value) -> Value {
    let encoded = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
    json!({"allowed": true, "patchType": "JSONPatch", "patch": encoded})
}

/// A validating decision: refuses (403) an object without the label `key`, with the message
/// `label "<key>" is required`; admits everything else (deletes included).
pub fn require_label(key: &'static str) -> Route {
    admission(move |request| {
        let object = &request["object"];
        if object.is_null() || object["metadata"]["labels"][key].is_string() {
            allow()
        } else {
            deny(403, &format!("label {key:?} is required"))
        }
    })
}

/// A defaulting decision: sets `/metadata/labels/<key>` to `value` when the object lacks it.
pub fn default_label(key: &'static str, value: &'static str) -> Route {
    admission(move |request| {
        let object = &request["object"];
        if object.is_null() || object["metadata"]["labels"][key].is_string() {
            return allow();
        }
        if object["metadata"]["labels"].is_object() {
            patch(json!([{"op": "add", "path": format!("/metadata/labels/{key}"), "value": value}]))
        } else {
            patch(json!([{"op": "add", "path": "/metadata/labels", "value": {key: value}}]))
        }
    })
}

/// One request a server saw: its path and body.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The path and query (`/validate?timeout=10s`).
    pub path: String,
    /// The review received.
    pub review: Value,
}

/// A running webhook server.
pub struct WebhookServer {
    addr: SocketAddr,
    ca_pem: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl WebhookServer {
    /// Starts a server with `routes` (path, route), its certificate valid for `127.0.0.1`,
    /// `localhost` and `hosts`.
    pub async fn start(hosts: &[&str], routes: Vec<(&str, Route)>) -> Self {
        let (ca_pem, config) = tls(hosts);
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let routes: Arc<HashMap<String, Route>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.to_owned(), r)).collect());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let routes = routes.clone();
                let seen = seen2.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                        let routes = routes.clone();
                        let seen = seen.clone();
                        async move { Ok::<_, Infallible>(answer(req, &routes, &seen).await) }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        Self {
            addr,
            ca_pem,
            seen,
            task,
        }
    }

    /// The loopback address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The CA that signed its certificate, PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The CA as a `caBundle` (base64 of the PEM).
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// A `clientConfig` calling `path` by URL.
    pub fn url_config(&self, path: &str) -> Value {
        json!({"url": self.url(path), "caBundle": self.ca_bundle()})
    }

    /// The reviews received on `path` (without the query), oldest first.
    pub fn reviews(&self, path: &str) -> Vec<Value> {
        self.seen
            .lock()
            .iter()
            .filter(|s| s.path.split('?').next() == Some(path))
            .map(|s| s.review.clone())
            .collect()
    }

    /// Every request received, oldest first.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }

    /// Stops accepting connections (its port then refuses them).
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    req: http::Request<Incoming>,
    routes: &HashMap<String, Route>,
    seen: &Mutex<Vec<Seen>>,
) -> http::Response<Full<Bytes>> {
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let body = req.into_body().collect().await.map(|b| b.to_bytes());
    let review: Value = body
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    seen.lock().push(Seen {
        path: path.clone(),
        review: review.clone(),
    });
    let reply = |status: u16, v: Value| {
        http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(v.to_string())))
            .expect("response")
    };
    let route = routes.get(path.split('?').next().unwrap_or_default());
    match route {
        None => reply(404, json!({"error": "no such route"})),
        Some(Route::Admission(decide)) => {
            let request = review["request"].clone();
            let uid = request["uid"].clone();
            let mut response = decide(request).await;
            response["uid"] = uid;
            reply(
                200,
                json!({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": response}),
            )
        }
        Some(Route::Conversion(convert)) => {
            let request = &review["request"];
            let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
            let converted: Result<Vec<Value>, String> = request["objects"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| convert(o, desired))
                .collect();
            let response = match converted {
                Ok(objects) => json!({"uid": request["uid"], "convertedObjects": objects,
                                      "result": {"status": "Success"}}),
                Err(why) => json!({"uid": request["uid"],
                                   "result": {"status": "Failure", "message": why}}),
            };
            reply(
                200,
                json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": response}),
            )
        }
    }
}

/// A fresh CA and a server configuration whose certificate it signed.
fn tls(hosts: &[&str]) -> (String, rustls::ServerConfig) {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kinform test webhook CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = Issuer::new(ca_params, ca_key);
    let mut names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
    names.extend(hosts.iter().map(|h| h.to_string()));
    let key = KeyPair::generate().expect("key");
    let cert = CertificateParams::new(names)
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("certificate");
    (ca.pem(), config)
}

/// A `ValidatingWebhookConfiguration` (or, with `mutating`, a Mutating one) named `name`
/// with one webhook `webhook` calling `client_config` for `rules`; `extra` is merged into
/// the webhook (failurePolicy, selectors, matchConditions, ...).
pub fn configuration(
    mutating: bool,
    name: &str,
    webhook: &str,
    client_config: Value,
    rules: Value,
    extra: Value,
) -> Value {
    let mut hook = json!({
        "name": webhook,
        "clientConfig": client_config,
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    });
    if let (Some(h), Some(e)) = (hook.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            h.insert(k.clone(), v.clone());
        }
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": if mutating { "MutatingWebhookConfiguration" } else { "ValidatingWebhookConfiguration" },
        "metadata": {"name": name},
        "webhooks": [hook],
    })
}

/// One `rules` entry: `operations` on `resources` of the core group's `v1`.
pub fn core_rule(operations: &[&str], resources: &[&str]) -> Value {
    json!([{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}])
}

/// How long a "slow" webhook of a timeout test takes.
pub const SLOW: Duration = Duration::from_secs(3);

/// The conversion of the two-version `Widget` of [`widget_crd`]: `example.com/v1` says
/// `spec.size: "WxH"`, `example.com/v2` says `spec.width` and `spec.height`; a v1 size that
/// is not `WxH` cannot be converted (the webhook answers a `Failure` naming it).
pub fn widget_conversion() -> Route {
    Route::Conversion(Arc::new(|object, desired| {
        let mut out = object.clone();
        let from = object["apiVersion"].as_str().unwrap_or_default();
        let spec = &object["spec"];
        out["spec"] = match (from, desired) {
            ("example.com/v1", "example.com/v2") => {
                let size = spec["size"].as_str().unwrap_or_default();
                let (w, h) = size
                    .split_once('x')
                    .and_then(|(w, h)| Some((w.parse::<i64>().ok()?, h.parse::<i64>().ok()?)))
                    .ok_or_else(|| format!("spec.size {size:?} is not WxH"))?;
                json!({"width": w, "height": h})
            }
            ("example.com/v2", "example.com/v1") => {
                json!({"size": format!("{}x{}", spec["width"], spec["height"])})
            }
            (a, b) if a == b => spec.clone(),
            (a, b) => return Err(format!("cannot convert {a} to {b}")),
        };
        out["apiVersion"] = json!(desired);
        Ok(out)
    }))
}

/// The `widgets.example.com` CRD: versions `v1` (stored) and `v2`, both served, converted
/// by the webhook at `client_config` (see [`widget_conversion`]).
pub fn widget_crd(client_config: Value) -> Value {
    let version = |name: &str, storage: bool, spec: Value| {
        json!({
            "name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": spec}}}},
            "additionalPrinterColumns": if name == "v1" {
                json!([{"name": "Size", "type": "string", "jsonPath": ".spec.size"}])
            } else {
                json!([{"name": "Width", "type": "integer", "jsonPath": ".spec.width"},
                       {"name": "Height", "type": "integer", "jsonPath": ".spec.height"}])
            },
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                version("v1", true, json!({"size": {"type": "string"}})),
                version("v2", false, json!({"width": {"type": "integer"}, "height": {"type": "integer"}})),
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": client_config,
                "conversionReviewVersions": ["v1"],
            }},
        },
    })
}

/// The webhooks of the kubectl and Python acceptance tests, registered in a TestApiServer
/// as a cluster would have them:
///
/// - a mutating webhook `tier.example.com` defaulting the label `tier: standard` on
///   ConfigMaps (`failurePolicy: Ignore`);
/// - a validating webhook `team.example.com` refusing ConfigMaps without a `team` label
///   (`failurePolicy: Fail`);
/// - a validating webhook `secrets.example.com` refusing Secrets named `blocked-*`
///   (`failurePolicy: Ignore`);
/// - the `widgets.example.com` CRD converted by [`widget_conversion`].
pub struct Demo {
    /// The one server behind every webhook (`/default`, `/validate`, `/secrets`,
    /// `/convert`); [`WebhookServer::stop`] takes them all down.
    pub hooks: WebhookServer,
}

impl Demo {
    /// Starts the webhooks and registers them in `server`.
    pub async fn install(server: &kinform::testing::TestApiServer) -> Self {
        let secrets = admission(|request| {
            let name = request["name"].as_str().unwrap_or_default();
            if request["operation"] == "CREATE" && name.starts_with("blocked-") {
                deny(403, &format!("secret {name:?} is blocked"))
            } else {
                allow()
            }
        });
        let hooks = WebhookServer::start(
            &[],
            vec![
                ("/default", default_label("tier", "standard")),
                ("/validate", require_label("team")),
                ("/secrets", secrets),
                ("/convert", widget_conversion()),
            ],
        )
        .await;
        let configmaps = core_rule(&["CREATE", "UPDATE"], &["configmaps"]);
        for config in [
            configuration(
                true,
                "defaults",
                "tier.example.com",
                hooks.url_config("/default"),
                configmaps.clone(),
                json!({"failurePolicy": "Ignore"}),
            ),
            configuration(
                false,
                "require-team",
                "team.example.com",
                hooks.url_config("/validate"),
                configmaps,
                json!({"failurePolicy": "Fail"}),
            ),
            configuration(
                false,
                "secrets",
                "secrets.example.com",
                hooks.url_config("/secrets"),
                core_rule(&["CREATE"], &["secrets"]),
                json!({"failurePolicy": "Ignore"}),
            ),
            widget_crd(hooks.url_config("/convert")),
        ] {
            server.create_object(config).expect("registered");
        }
        Self { hooks }
    }
}
