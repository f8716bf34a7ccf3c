//! `TestApiServer`: an in-process Kubernetes API server speaking the real wire protocol.
//!
//! No cluster runs in unit tests, and client-go's fakes do not speak HTTP, so controllers and
//! the kinform runtime are tested against this server instead. It reproduces the behaviour
//! described in <https://kubernetes.io/docs/reference/using-api/api-concepts/> for every
//! registered resource, closely enough that kubectl works against it:
//!
//! - discovery, legacy and aggregated (`discovery`); JSON, `PartialObjectMetadata` and
//!   `Table` answers (`handlers::negotiation::render`, `handlers::negotiation::table`);
//! - a store with one global resourceVersion counter and a bounded change history
//!   (`storage`); LIST with pagination, resourceVersion rules and selectors (`handlers::list`);
//!   WATCH with history replay, 410 after the window, bookmarks and streaming lists
//!   (`handlers::watch`);
//! - create/update/patch with optimistic concurrency and status subresources (`handlers::write`,
//!   `patch`: JSON merge patch, JSON patch, and strategic merge patch by the built-in
//!   schemas' merge keys and directives), delete with finalizers and `propagationPolicy`
//!   (`handlers::delete`), `dryRun` on every write (`storage::Storage::write`);
//! - server-side apply (`application/apply-patch+yaml`) with field managers, conflicts,
//!   `force` and schema-driven list merging, and `metadata.managedFields` kept on every write
//!   (`handlers::fieldmanager`);
//! - every built-in resource of Kubernetes v1.35's GA versions, derived from the embedded
//!   v1.35 OpenAPI documents (`registry::spec`), which are also served at `/openapi/v2` and
//!   `/openapi/v3` (`discovery::openapi`); every answer about a deprecated one
//!   (ComponentStatus, Endpoints) or a deprecated CRD version carries its `Warning` header
//!   (`server::router`); the review kinds (`SelfSubjectAccessReview`,
//!   `SelfSubjectReview`, ...) answered, not stored (`handlers::review`); `TokenRequest`s of the
//!   `serviceaccounts/token` subresource answered with a token that authenticates as the
//!   ServiceAccount (`handlers::token`);
//! - the pod subresources controllers and kubectl use without a kubelet: `pods/log` (the
//!   kubelet's answers for a pod not yet running, or the text a test sets), `pods/eviction`
//!   honouring PodDisruptionBudgets (`kubectl drain`), `pods/binding` and the `bindings`
//!   collection (custom schedulers), `pods/ephemeralcontainers` (`kubectl debug`);
//! - server-side sharded list and watch (KEP-5866, alpha in Kubernetes 1.36, behind
//!   [`TestApiServerBuilder::sharded_list_and_watch`], off by default as kube-apiserver's
//!   `ShardedListAndWatch` gate): `shardSelector` on LIST (every page of a paged one), WATCH
//!   (streaming lists included) and DELETECOLLECTION of every resource, built-in or custom,
//!   parsed by `kinform_core::shard` (the `shardRange()` grammar, FNV-1a 64 of `metadata.uid`
//!   or `metadata.namespace`, `[start, end)` ranges joined by `||`); `metadata.shardInfo` with
//!   the selector as sent, and no `remainingItemCount`, on a sharded LIST; bookmarks not
//!   filtered; a selector that does not parse refused with 400 BadRequest
//!   `invalid shard selector: ...` (module `handlers::params`, `Shard`, says where that
//!   comes from); with the gate off the parameter is ignored like any unknown one;
//! - CRD registration (`registry`) and faults switchable at run time ([`Faults`]);
//! - HTTPS with a CA of its own, written into its kubeconfig
//!   ([`TestApiServerBuilder::https`], the binary's default; module `server::tls`);
//! - the registry behaviour of the common built-ins (`registry::strategy`): defaults, a Pod's
//!   initial status, a Service's cluster IP and node ports, a Secret's `stringData` merged
//!   into `data`, a Job's generated selector and labels, `metadata.generation` only on kinds
//!   that track it; the namespaces `default`, `kube-system` and `kube-public` cannot be
//!   deleted (NamespaceLifecycle admission);
//! - decoding, pruning, defaulting and schema validation of every write (`handlers::validate`):
//!   built-ins decoded with Go's type rules (400 on a wrong type), custom resources pruned
//!   and defaulted from their structural schema, `fieldValidation=Strict|Warn|Ignore` on
//!   unknown and duplicate fields, 422 Invalid with one cause per schema failure, CRD
//!   `x-kubernetes-validations` CEL rules (with `oldSelf` on update);
//! - admission webhooks: the stored Mutating- and ValidatingWebhookConfigurations are called
//!   on every write they select, over HTTPS with their `caBundle` (`url`, or a `service`
//!   resolved to the address a test gives [`TestApiServer::register_service_port`]), with
//!   kube-apiserver's rules, selectors, `matchConditions`, order, reinvocation, failure
//!   policies, timeouts and error messages; ValidatingAdmissionPolicies evaluated in CEL;
//!   CRDs with `conversion.strategy: Webhook` are stored in their storage version and
//!   converted by their webhook (module `admission`);
//! - garbage collection of dependents through `ownerReferences` (`controllers::gc`), as
//!   kube-controller-manager does in a real cluster, and namespace termination as the
//!   namespace controller does.
//!
//! # Layout
//!
//! The modules follow a request's way through kube-apiserver, as k8s.io/apiserver groups
//! the same code, and import only downwards:
//!
//! - `server`: serving, routing and the filters around a request (`router`, `tls`, `faults`,
//!   `request_log`);
//! - `authorization`: bearer tokens and RBAC;
//! - `admission`: the webhooks a write calls (admission and CRD conversion);
//! - `discovery`: discovery documents and `/openapi/v2`, `/openapi/v3` (`openapi`);
//! - `handlers`: one module a verb (`list`, `watch`, `write`, `delete`, `patch`, `scale`),
//!   the pod subresources that are writes (`eviction`, `binding`, `ephemeral`), the computed
//!   kinds (`review`, `token`), request options (`params`), content negotiation
//!   (`negotiation`), decoding and validation of writes (`validate`) and server-side apply's
//!   field management (`fieldmanager`);
//! - `connect`: exec, attach, port-forward, proxy and logs, the kubelet's side included;
//! - `registry`: the served resources (`spec`, `builtin`, CRDs) and their strategies
//!   (`strategy`);
//! - `storage`: objects, the resourceVersion counter and the change history;
//! - `status`: the `metav1.Status` errors every layer answers with;
//! - `controllers`: what kube-controller-manager does (`gc`); `preload`: objects at start.
//!
//! The namespaces `default`, `kube-system` and `kube-public` exist at start, and the
//! `default/kubernetes` Service with its Endpoints (`preload::kubernetes_service`). Tests register
//! resources no GA version serves (a beta version, an aggregated API) with
//! [`TestApiServer::register_resource`].
//!
//! Not reproduced (each refused clearly or documented where it matters):
//! - protobuf answers: a protobuf request body of a built-in kind is decoded (module
//!   `protobuf`), but answers are always JSON (clients list JSON in `Accept` after protobuf),
//!   watch streams are JSON, and the protobuf form of `/openapi/v2` is not served (404:
//!   clients fall back on v3); a protobuf PATCH body is refused (415) as kube-apiserver does;
//! - a strategic merge patch merges fields the schema does not declare as a JSON merge patch
//!   would (kube-apiserver prunes them);
//! - of server-side apply and managedFields: apply to the `scale` subresource (415);
//!   "printable" of the `fieldManager` check approximated without Unicode general categories
//!   (module `handlers::validate`); conversion of entries recorded through another apiVersion (they are
//!   compared as they are); the Go zero values of built-ins, approximated from the schema (a
//!   create's entry may own a node the real typed object always carries); managedFields of
//!   the server's own writes (its Rust API, preloading, garbage collection), left as they
//!   were;
//! - of sharded list and watch (KEP-5866, `sharded_list_and_watch`): the `shardSelector`
//!   parameter is not in the served OpenAPI documents (they are v1.35's, which predate it,
//!   so a client probing `/openapi/v3` for support finds none); the watch cache's shard
//!   metrics; the text after `invalid shard selector: ` is kinform's own wording (the status,
//!   reason and prefix are kube-apiserver's); of CEL's string forms only plain single- or
//!   double-quoted strings are read (escapes, raw, triple-quoted and bytes literals are
//!   refused, where kube-apiserver's CEL parser would read them and then judge the value);
//! - of the managedFields opt-out (KEP-5958, `managed_fields_opt_out`): `drop` on the `Table`
//!   and `PartialObjectMetadata` forms (ignored there), and the refusal of a clause whose `drop`
//!   names no field the server supports (unknown targets are ignored, as the KEP text says);
//! - the hand-written Go validation of built-in kinds beyond the OpenAPI document's
//!   `required` and `enum` and the rules of module `handlers::validate::builtin` (Jobs'
//!   restart policy and selector, non-negative replica counts, immutable workload and Job
//!   selectors, the data of ConfigMaps and Secrets marked `immutable`, a Secret's `type`):
//!   DNS-label container names, port ranges, selector/template matching of other workloads,
//!   other immutable fields; CRD CEL rules that need Kubernetes' CEL libraries
//!   (`quantity()`, `url()`, `isSorted`, ...: not enforced) or `messageExpression`, the
//!   CRD's own validation beyond its group rules (a group with a dot; the
//!   `api-approved.kubernetes.io` annotation of `*.k8s.io` groups; a non-structural schema
//!   is accepted), and the re-encoding of
//!   built-ins (quantities not canonicalised, zero `omitempty` fields kept, except the empty
//!   `labels`, `annotations`, `ownerReferences` and `finalizers` of `metadata`): see module
//!   `validate`;
//! - of Services: the lowest free cluster IP is taken where kube-apiserver picks a random
//!   one; a `nodePort` left on a Service made ClusterIP is kept (kube-apiserver refuses it);
//!   dual-stack families and `loadBalancerClass` are not handled;
//! - service account tokens (`handlers::token`) are JWT-shaped but not signed (no `/openid/v1/jwks`),
//!   do not expire and outlive their ServiceAccount or bound object; their user has no
//!   `authentication.kubernetes.io/*` extras;
//! - defaulting beyond the common built-ins of module `registry::strategy` (Pods and pod templates,
//!   workloads, Services, Secrets, PersistentVolumeClaims) and CRD schema defaults; the
//!   admission plugins that need cluster state (ServiceAccount token volumes, LimitRanger,
//!   ResourceQuota);
//! - of admission (module `admission`): MutatingAdmissionPolicy; of ValidatingAdmissionPolicy
//!   `paramKind`/`paramRef` and the `authorizer` variable (refused clearly), `auditAnnotations`,
//!   `resourceNames` and `matchPolicy: Equivalent`; CEL expressions that need Kubernetes' CEL
//!   libraries (refused clearly); the CONNECT operation and the admission of `pods/eviction`,
//!   `pods/binding`, `pods/ephemeralcontainers`, `scale`, `serviceaccounts/token` and
//!   collection deletes; webhook client authentication, the system trust store for a webhook
//!   without `caBundle`, audit annotations and webhook metrics; the wording of network failures
//!   beyond Go's common ones;
//! - of CRD conversion webhooks: a watch in a version other than the storage version sends the
//!   form the webhook gave when the object was written (get and list ask the webhook again);
//!   objects written through the server's Rust API (`create_object`) are stored as sent;
//! - `metadata.finalizers` names are not validated (kube-apiserver refuses names that are not
//!   qualified names with 422 and warns about names without a domain), and a finalizer added
//!   to an object that already has `deletionTimestamp` is accepted (kube-apiserver forbids it);
//! - authentication and authorization are off unless asked for
//!   ([`TestApiServerBuilder::rbac`]: bearer tokens and RBAC, module `authorization`); off, every
//!   request is the one admin user and is allowed;
//! - alpha and beta API versions (not served unless registered), `autoscaling/v1`
//!   (horizontal pod autoscalers are served as `autoscaling/v2` only: the conversion between
//!   them is not reproduced);
//! - graceful pod deletion (immediate: there is no kubelet), the CRD
//!   `customresourcecleanup` finalizer (a CRD's objects go at once with it);
//! - of the built-ins' create strategies: a `status` sent with a create is kept where
//!   kube-apiserver's `PrepareForCreate` resets it (so tests may seed one), and only the zero
//!   counters of StatefulSets, ReplicaSets and DaemonSets are written where Go writes the
//!   whole empty status; ComponentStatuses are stored objects (kube-apiserver computes them
//!   from its components' health); a collection delete of namespaces stops at the first
//!   protected one with its 403;
//! - a slow watcher (its queue full for a second) has its response ended, but its
//!   connection stays open until the client reads or goes away;
//! - of the pod subresources (`connect::log`, `handlers::eviction`, `handlers::ephemeral`): `pods/log`'s
//!   `follow`, `timestamps` and time filters (validated only; logs come from
//!   [`TestApiServer::set_pod_log`]), the disruption controller (a PodDisruptionBudget's
//!   status, unless written, is computed at eviction time from the matching pods, not the
//!   owners' scale), the diff in the message for a changed ephemeral container, and
//!   server-side apply to `pods/ephemeralcontainers` (415);
//! - the deprecated `/watch/` path prefix is not served (use `?watch=true`); `events.k8s.io`
//!   writes get no validation of their own (its required `eventTime` and
//!   `reportingController`), and Event fields a client leaves out get no Go zero values;
//! - a path under a group no one serves answers the generic NotFound `Status`, where
//!   kube-apiserver answers a plain-text 404;
//! - of the connect subresources (module `connect`): exec and attach over SPDY (400: kubectl
//!   1.30+ uses WebSockets), the base64 channel protocols, the pod's phase (the server
//!   connects to a pod that is not Running), and of port-forward's SPDY/3.1: flow control,
//!   the kubelet's idle timeout, and the kubelet's plain-text refusals of a SPDY upgrade
//!   (answered as `Status` objects here, without `X-Accepted-Stream-Protocol-Versions`).
//!
//! A test starts a server, gets a client bound to it, and uses the real API (here
//! `kinform_client::Api`; kubectl works too, with [`TestApiServer::write_kubeconfig`]):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kinform_client::{Api, PostParams};
//! use kinform_testserver::TestApiServer;
//!
//! let server = TestApiServer::builder().history_window(1000).start().await?;
//! server.create_namespace("demo")?;
//! let configmaps: Api<ConfigMap> = Api::namespaced(server.client()?, "demo");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = configmaps.create(&PostParams::default(), &cm).await?;
//! // The server's answer, as kube-apiserver's: uid, resourceVersion, creationTimestamp.
//! assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
//! // A missing object is a 404 with a metav1.Status body, kept by the client's error.
//! let err = configmaps.get("absent").await.unwrap_err();
//! assert_eq!(err.code(), Some(404));
//! server.shutdown().await;
//! # Ok(()) }
//! ```

mod admission;
mod authorization;
mod connect;
mod controllers;
mod discovery;
mod handlers;
mod preload;
mod registry;
mod server;
mod status;
mod storage;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use connect::{ExecContext, ExecResult};
pub use registry::ResourceInfo;
pub use server::faults::Faults;
pub use status::ApiError;

use handlers::negotiation::body::Body;
use storage::Storage;

/// Errors of the server's own API (not HTTP answers).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestServerError {
    /// Binding or accepting failed.
    #[error("test server I/O on {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A YAML document could not be parsed.
    #[error("parsing YAML document {document}: {message}")]
    Yaml {
        /// Index of the document in the input.
        document: usize,
        /// The parser's message.
        message: String,
    },
    /// An object names no served resource.
    #[error("no resource is served for apiVersion {api_version:?} kind {kind:?}")]
    UnknownKind {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// The server refused the object, with the Status it would answer.
    #[error("the server refused the object: {0}")]
    Api(#[from] ApiError),
    /// The server's certificates could not be made (see [`TestApiServerBuilder::https`]).
    #[error("test server TLS: {message}")]
    Tls {
        /// What failed.
        message: String,
    },
}

/// The bearer token of the kubeconfig the server writes ([`TestApiServer::kubeconfig_yaml`]).
const TOKEN: &str = "kinform-testserver";

/// Result alias of this module.
pub type Result<T, E = TestServerError> = std::result::Result<T, E>;

/// Server settings.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub bookmark_interval: Duration,
    /// How long a LIST or WATCH from a resourceVersion newer than the server's waits for it
    /// before answering "too large resource version".
    pub future_rv_wait: Duration,
    /// The `ManagedFieldsOptOut` feature gate (alpha, off by default): whether
    /// `Accept: ...;drop=metadata.managedFields` is honoured.
    pub managed_fields_opt_out: bool,
    /// The `ShardedListAndWatch` feature gate (KEP-5866, alpha, off by default): whether
    /// `shardSelector` is honoured on LIST, WATCH and DELETECOLLECTION.
    pub sharded_list_and_watch: bool,
}

/// State shared by every connection.
pub(crate) struct State {
    pub storage: Arc<Storage>,
    pub faults: Arc<Faults>,
    pub config: Config,
    pub cancel: CancellationToken,
    pub addr: SocketAddr,
    /// Exec handlers and port-forward/proxy backends.
    pub connect: connect::Connect,
    /// Every request received (the latest [`request_log::CAPACITY`]).
    pub requests: server::request_log::RequestLog,
    /// Tokens, and whether RBAC is enforced.
    pub auth: authorization::Auth,
    /// The loopback addresses of the Services webhooks name.
    pub services: Arc<admission::Services>,
}

impl State {
    /// What admission needs of the server.
    pub(crate) fn admission(&self) -> admission::Context {
        admission::Context {
            storage: self.storage.clone(),
            services: self.services.clone(),
        }
    }
}

/// Configures a [`TestApiServer`].
#[derive(Clone, Debug)]
#[must_use]
pub struct TestApiServerBuilder {
    port: u16,
    history_window: usize,
    broadcast_capacity: usize,
    bookmark_interval: Duration,
    future_rv_wait: Duration,
    pods: usize,
    namespaces: usize,
    https: bool,
    rbac: bool,
    managed_fields_opt_out: bool,
    sharded_list_and_watch: bool,
}

impl Default for TestApiServerBuilder {
    fn default() -> Self {
        Self {
            port: 0,
            history_window: 10_000,
            broadcast_capacity: 65_536,
            bookmark_interval: Duration::from_secs(5),
            future_rv_wait: Duration::from_secs(3),
            pods: 0,
            namespaces: 1,
            https: false,
            rbac: false,
            managed_fields_opt_out: false,
            sharded_list_and_watch: false,
        }
    }
}

impl TestApiServerBuilder {
    /// The port on 127.0.0.1 (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How many change events the server remembers; watches and continue tokens from before
    /// the window get 410 Expired (default 10,000).
    pub fn history_window(mut self, events: usize) -> Self {
        self.history_window = events;
        self
    }

    /// How many events a watch may fall behind before the server closes it (default 65,536).
    pub fn watch_buffer(mut self, events: usize) -> Self {
        self.broadcast_capacity = events;
        self
    }

    /// How often watches that allow bookmarks get one (default 5 s).
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = interval;
        self
    }

    /// How long a LIST or WATCH from a resourceVersion newer than the server's waits for the
    /// server to reach it before answering 504 "Too large resource version" (default 3 s, the
    /// watch cache's wait in kube-apiserver). A client that survived a server restart gets
    /// that answer and relists, as client-go's reflector does.
    pub fn future_rv_wait(mut self, wait: Duration) -> Self {
        self.future_rv_wait = wait;
        self
    }

    /// Preloads `pods` realistic pods (about 5 KB of JSON each, with managedFields) spread
    /// over [`namespaces`](Self::namespaces) namespaces `ns-0`, `ns-1`, ...
    pub fn pods(mut self, pods: usize) -> Self {
        self.pods = pods;
        self
    }

    /// How many namespaces the preloaded pods are spread over (default 1).
    pub fn namespaces(mut self, namespaces: usize) -> Self {
        self.namespaces = namespaces.max(1);
        self
    }

    /// Serves HTTPS, as kube-apiserver does, with a certificate signed by a CA the server
    /// makes at start; [`TestApiServer::kubeconfig_yaml`] and
    /// [`TestApiServer::client_config`] carry that CA, so clients verify the server as they
    /// would a real one (default: plain HTTP).
    pub fn https(mut self) -> Self {
        self.https = true;
        self
    }

    /// Enforces authentication and RBAC authorization (module `authz`): requests must carry
    /// a token the server knows, and are allowed only what the RBAC objects stored in the
    /// server grant, as on a cluster with `--authorization-mode=RBAC`. The kubeconfig's and
    /// [`TestApiServer::client`]'s token is an admin (`system:masters`); act as another user
    /// with [`TestApiServer::client_for`] or [`TestApiServer::service_account_client`].
    pub fn rbac(mut self) -> Self {
        self.rbac = true;
        self
    }

    /// Turns on the `ManagedFieldsOptOut` feature gate (KEP-5958, alpha, off by default as
    /// on kube-apiserver): a GET, LIST or WATCH whose `Accept` asks for JSON with
    /// `drop=metadata.managedFields` is answered without `metadata.managedFields` (module
    /// `handlers::negotiation::render`). With the gate off, as on a server that predates it,
    /// the parameter is ignored and the objects keep their managedFields.
    pub fn managed_fields_opt_out(mut self) -> Self {
        self.managed_fields_opt_out = true;
        self
    }

    /// Turns on the `ShardedListAndWatch` feature gate (KEP-5866, alpha in Kubernetes 1.36,
    /// off by default as on kube-apiserver): LIST, WATCH and DELETECOLLECTION of every
    /// resource, built-in or custom, honour `shardSelector` (`kinform_core::shard`: the
    /// objects whose FNV-1a 64 hash of `metadata.uid` or `metadata.namespace` falls in the
    /// selector's ranges), a sharded LIST answers `metadata.shardInfo` and no
    /// `remainingItemCount`, watch events are filtered (bookmarks are not), and a selector that
    /// does not parse is refused with 400 BadRequest `invalid shard selector: ...`. With the
    /// gate off, as on a server that predates it, the parameter is ignored like any unknown one:
    /// the whole collection, no `shardInfo`.
    pub fn sharded_list_and_watch(mut self) -> Self {
        self.sharded_list_and_watch = true;
        self
    }

    /// Binds and starts serving.
    pub async fn start(self) -> Result<TestApiServer> {
        let tls = if self.https {
            Some(server::tls::ServerTls::generate()?)
        } else {
            None
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TestServerError::Io {
                what: format!("binding {addr}"),
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TestServerError::Io {
                what: "reading the bound address".into(),
                source,
            })?;
        let storage = Arc::new(Storage::new(self.history_window, self.broadcast_capacity));
        {
            let mut inner = storage.lock();
            let ns = inner
                .registry
                .get("", "v1", "namespaces")
                .ok_or_else(|| ApiError::internal("namespaces are not registered"))?;
            for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                handlers::write::create(
                    &mut inner,
                    &ns,
                    None,
                    json!({"metadata": {"name": name}}),
                    &mut handlers::validate::Check::default(),
                )?;
            }
            preload::kubernetes_service(&mut inner, addr.port())?;
            if self.pods > 0 {
                preload::preload(&mut inner, self.pods, self.namespaces)?;
            }
        }
        let faults = Arc::new(Faults::new(storage.clone()));
        let cancel = CancellationToken::new();
        // Subscribed before serving: the collector sees every change made through the API.
        let gc_events = storage.subscribe();
        tokio::spawn(controllers::gc::run(
            storage.clone(),
            gc_events,
            cancel.clone(),
        ));
        let state = Arc::new(State {
            storage,
            faults: faults.clone(),
            config: Config {
                bookmark_interval: self.bookmark_interval,
                future_rv_wait: self.future_rv_wait,
                managed_fields_opt_out: self.managed_fields_opt_out,
                sharded_list_and_watch: self.sharded_list_and_watch,
            },
            cancel: cancel.clone(),
            addr,
            connect: connect::Connect::default(),
            requests: server::request_log::RequestLog::default(),
            auth: authorization::Auth::new(self.rbac),
            services: Arc::default(),
        });
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let task = tokio::spawn(serve(listener, state.clone(), tls.map(|t| t.acceptor)));
        Ok(TestApiServer {
            addr,
            ca_pem,
            state,
            faults,
            task: Some(task),
        })
    }
}

async fn serve(listener: TcpListener, state: Arc<State>, tls: Option<tokio_rustls::TlsAcceptor>) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = state.cancel.cancelled() => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_connection(stream, state).await,
                Some(acceptor) => {
                    // A failed handshake (a client that does not trust the CA) closes the
                    // connection, as any TLS server does.
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve_connection(stream, state).await;
                    }
                }
            }
        });
    }
}

/// Serves HTTP/1.1 (with upgrades) and HTTP/2 on one connection until it ends or the
/// server shuts down.
async fn serve_connection<S>(stream: S, state: Arc<State>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc_state = state.clone();
    let service =
        hyper::service::service_fn(move |req| server::router::handle(svc_state.clone(), req));
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::select! {
        _ = conn => {}
        _ = state.cancel.cancelled() => {}
    }
}

/// A running in-process API server on 127.0.0.1.
pub struct TestApiServer {
    addr: SocketAddr,
    /// The CA that signed the server's certificate, when it serves HTTPS.
    ca_pem: Option<String>,
    state: Arc<State>,
    faults: Arc<Faults>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TestApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestApiServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl TestApiServer {
    /// Starts a server with default settings on a free port.
    pub async fn start() -> Result<Self> {
        Self::builder().start().await
    }

    /// A builder for non-default settings.
    pub fn builder() -> TestApiServerBuilder {
        TestApiServerBuilder::default()
    }

    /// `http://127.0.0.1:PORT`, or `https://127.0.0.1:PORT` when it serves HTTPS.
    pub fn url(&self) -> String {
        let scheme = if self.ca_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The CA certificate (PEM) that signed the server's certificate, when it serves HTTPS
    /// ([`TestApiServerBuilder::https`]).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A kinform client configuration for this server: its URL and namespace `default`, as
    /// [`kubeconfig_yaml`](Self::kubeconfig_yaml) says. Adjust it (retries, timeouts, QPS)
    /// and build a client with [`Client::new`](kinform_client::Client::new), or take
    /// [`client`](Self::client) as it is.
    pub fn client_config(&self) -> kinform_client::Config {
        let url = self
            .url()
            .parse()
            .expect("http://127.0.0.1:PORT is a valid URI");
        let mut config = kinform_client::Config::new(url);
        config.default_namespace = "default".into();
        config.root_cert_pem = self.ca_pem.as_ref().map(|pem| pem.as_bytes().to_vec());
        config.auth = kinform_client::AuthConfig::Token(kinform_client::Secret::new(TOKEN.into()));
        config
    }

    /// A bearer token that authenticates as `user` in `groups` (and `system:authenticated`),
    /// for a server built with [`TestApiServerBuilder::rbac`] (e.g. `kubectl --token`).
    pub fn token_for(&self, user: &str, groups: &[&str]) -> String {
        let mut groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        groups.push("system:authenticated".to_owned());
        self.state.auth.issue(authorization::User {
            name: user.to_owned(),
            groups,
        })
    }

    /// A kinform client that authenticates as `user` in `groups` (see
    /// [`token_for`](Self::token_for)).
    pub fn client_for(
        &self,
        user: &str,
        groups: &[&str],
    ) -> kinform_client::Result<kinform_client::Client> {
        self.client_with_token(self.token_for(user, groups))
    }

    /// A kinform client that authenticates as service account `namespace/name` (user
    /// `system:serviceaccount:{namespace}:{name}` in its groups), as a controller's pod does
    /// in a cluster.
    pub fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
    ) -> kinform_client::Result<kinform_client::Client> {
        let token = self
            .state
            .auth
            .issue(authorization::User::service_account(namespace, name));
        self.client_with_token(token)
    }

    fn client_with_token(&self, token: String) -> kinform_client::Result<kinform_client::Client> {
        let mut config = self.client_config();
        config.auth = kinform_client::AuthConfig::Token(kinform_client::Secret::new(token));
        kinform_client::Client::new(config)
    }

    /// A kinform client bound to this server with [`client_config`](Self::client_config)'s
    /// settings (kinform's defaults: retries on 429/503/504, no QPS limit beyond the
    /// default).
    pub fn client(&self) -> kinform_client::Result<kinform_client::Client> {
        kinform_client::Client::new(self.client_config())
    }

    /// A kinform client bound to this server, as [`client`](Self::client), whose config
    /// `tweak` adjusts first (timeouts, retries, read-ahead budgets of a test).
    pub fn client_with(
        &self,
        tweak: impl FnOnce(&mut kinform_client::Config),
    ) -> kinform_client::Result<kinform_client::Client> {
        let mut config = self.client_config();
        tweak(&mut config);
        kinform_client::Client::new(config)
    }

    /// A kubeconfig whose current context points at this server (namespace `default`), with
    /// the server's CA when it serves HTTPS and the admin's bearer token (checked when the
    /// server enforces RBAC, [`TestApiServerBuilder::rbac`]; kubectl prompts for a password
    /// when an HTTPS server's user has none).
    pub fn kubeconfig_yaml(&self) -> String {
        use base64::Engine as _;
        let ca = self
            .ca_pem
            .as_ref()
            .map(|pem| {
                let data = base64::engine::general_purpose::STANDARD.encode(pem);
                format!("    certificate-authority-data: {data}\n")
            })
            .unwrap_or_default();
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: kinform-test\n  cluster:\n    server: {}\n{ca}\
             contexts:\n- name: kinform-test\n  context:\n    cluster: kinform-test\n    user: kinform-test\n    namespace: default\n\
             current-context: kinform-test\nusers:\n- name: kinform-test\n  user:\n    token: {TOKEN}\npreferences: {{}}\n",
            self.url()
        )
    }

    /// Writes [`kubeconfig_yaml`](Self::kubeconfig_yaml) to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.kubeconfig_yaml()).map_err(|source| TestServerError::Io {
            what: format!("writing kubeconfig {}", path.display()),
            source,
        })
    }

    /// The run-time fault switches: a shared handle, which a background task may own.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kinform_client::Api;
    /// use kinform_testserver::TestApiServer;
    ///
    /// let server = TestApiServer::start().await?;
    /// // See each failure instead of the client's retries.
    /// let client = server.client_with(|config| config.max_retries = 0)?;
    /// let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    ///
    /// server.faults().set_internal_errors(0.5); // exactly every second request fails
    /// let ok = [
    ///     configmaps.list(&Default::default()).await.is_ok(),
    ///     configmaps.list(&Default::default()).await.is_ok(),
    /// ];
    /// assert_eq!(ok.iter().filter(|ok| !**ok).count(), 1);
    ///
    /// server.faults().set_internal_errors(0.0);
    /// server.faults().set_latency(Duration::from_millis(50));
    /// let started = std::time::Instant::now();
    /// configmaps.list(&Default::default()).await?;
    /// assert!(started.elapsed() >= Duration::from_millis(50));
    ///
    /// // Watch events arrive 10 to 50 ms late, each watch in its order.
    /// server.faults().set_watch_delay(Duration::from_millis(10), Duration::from_millis(50));
    /// server.faults().compact(); // watches from older resourceVersions: 410 Gone
    /// server.faults().drop_watches(); // every open watch ends, as in an API server restart
    /// server.faults().clear();
    ///
    /// // The switches are a shared handle: a background task may own them.
    /// let faults = server.faults();
    /// let flapping = tokio::spawn(async move {
    ///     faults.drop_watches();
    ///     faults.clear();
    /// });
    /// flapping.await?;
    /// # Ok(()) }
    /// ```
    pub fn faults(&self) -> Arc<Faults> {
        Arc::clone(&self.faults)
    }

    /// The requests received so far, oldest first, as `METHOD path?query` (the query as the
    /// client encoded it); at most the latest 10,000.
    pub fn requests(&self) -> Vec<String> {
        self.state.requests.entries()
    }

    /// Makes the Service `namespace/name` answer on its `port` at `addr`, for the webhooks
    /// (admission and CRD conversion) whose `clientConfig.service` names it: kube-apiserver
    /// resolves such a reference through the Service's endpoints and calls
    /// `https://<name>.<namespace>.svc:<port><path>`; this server connects to `addr` instead
    /// and verifies the certificate for that same host name against the `caBundle`. A
    /// Service no test registered fails the call (then `failurePolicy` decides).
    pub fn register_service_port(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.state.services.register(namespace, name, port, addr);
    }

    /// The latest resourceVersion handed out.
    pub fn resource_version(&self) -> u64 {
        self.state.storage.lock().rv
    }

    /// Creates a namespace (no-op if it exists).
    pub fn create_namespace(&self, name: &str) -> Result<()> {
        let mut inner = self.state.storage.lock();
        if inner.get("/namespaces", name).is_some() {
            return Ok(());
        }
        let ns = inner
            .registry
            .get("", "v1", "namespaces")
            .ok_or_else(|| ApiError::internal("namespaces are not registered"))?;
        handlers::write::create(
            &mut inner,
            &ns,
            None,
            json!({"metadata": {"name": name}}),
            &mut handlers::validate::Check::default(),
        )?;
        Ok(())
    }

    /// Creates any object whose `apiVersion`/`kind` is served (CRDs included, which registers
    /// them), as a POST would; returns the stored object.
    pub fn create_object(&self, object: Value) -> Result<Value> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_owned();
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let mut inner = self.state.storage.lock();
        let info = inner
            .registry
            .by_kind(&api_version, &kind)
            .ok_or(TestServerError::UnknownKind { api_version, kind })?;
        let obj = handlers::write::create(
            &mut inner,
            &info,
            None,
            object,
            &mut handlers::validate::Check::default(),
        )?;
        Ok(obj.value())
    }

    /// Changes a stored object with a JSON merge patch (RFC 7386), as a PATCH with
    /// `Content-Type: application/merge-patch+json` would; returns the stored object.
    /// `namespace` is `None` for a cluster-scoped kind.
    pub fn merge_patch_object(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<Value> {
        let mut inner = self.state.storage.lock();
        let info = inner.registry.by_kind(api_version, kind).ok_or_else(|| {
            TestServerError::UnknownKind {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            }
        })?;
        let obj = handlers::write::patch(
            &mut inner,
            &info,
            namespace.unwrap_or_default(),
            name,
            false,
            handlers::patch::PatchType::Merge,
            patch.to_string().as_bytes(),
            &mut handlers::validate::Check::default(),
        )?;
        Ok(obj.value())
    }

    /// Registers a CustomResourceDefinition given as JSON.
    pub fn register_crd(&self, crd: Value) -> Result<Value> {
        self.create_object(crd)
    }

    /// Registers every CustomResourceDefinition of a (multi-document) YAML text; returns
    /// the created CRDs.
    pub fn register_crd_yaml(&self, yaml: &str) -> Result<Vec<Value>> {
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(yaml).map_err(|e| TestServerError::Yaml {
                document: 0,
                message: e.to_string(),
            })?;
        docs.into_iter()
            .filter(|d| d.is_object())
            .map(|d| self.register_crd(d))
            .collect()
    }

    /// Stops accepting, ends every connection and watch.
    pub async fn shutdown(mut self) {
        self.state.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for TestApiServer {
    fn drop(&mut self) {
        self.state.cancel.cancel();
    }
}

/// A response with a body and content type.
pub(crate) fn response(
    code: u16,
    content_type: &'static str,
    body: Body,
) -> ::http::Response<Body> {
    let mut r = ::http::Response::new(body);
    *r.status_mut() =
        ::http::StatusCode::from_u16(code).unwrap_or(::http::StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static(content_type),
    );
    r
}

/// A JSON response.
pub(crate) fn json_response(code: u16, bytes: Bytes) -> ::http::Response<Body> {
    response(
        code,
        "application/json",
        handlers::negotiation::body::full(bytes),
    )
}
