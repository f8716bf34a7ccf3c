//! Raw HTTP helpers for the TestApiServer tests: no dependency on kinform's own client, so
//! the server is checked against the wire protocol itself.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// A raw HTTP client bound to one server.
pub struct Raw {
    base: String,
    client: Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>,
}

/// A response: status, headers and JSON body (`Value::Null` if not JSON).
pub struct Resp {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
}

impl Raw {
    /// A client for the server at `base` (`http://127.0.0.1:PORT`).
    pub fn new(base: &str) -> Self {
        Self {
            base: base.to_owned(),
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        content_type: &str,
        accept: Option<&str>,
    ) -> http::Response<Incoming> {
        let body = body
            .map(|v| Bytes::from(serde_json::to_vec(v).unwrap()))
            .unwrap_or_default();
        self.send_bytes(method, path, body, content_type, accept)
            .await
    }

    async fn send_bytes(
        &self,
        method: &str,
        path: &str,
        body: Bytes,
        content_type: &str,
        accept: Option<&str>,
    ) -> http::Response<Incoming> {
        let mut b = http::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.base, path))
            .header("content-type", content_type);
        if let Some(a) = accept {
            b = b.header("accept", a);
        }
        self.client
            .request(b.body(Full::new(body)).unwrap())
            .await
            .expect("request")
    }

    /// Sends `method path` with an optional JSON body, a `Content-Type` and an optional
    /// `Accept`, and reads the whole answer.
    pub async fn request_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        content_type: &str,
        accept: Option<&str>,
    ) -> Resp {
        let r = self.send(method, path, body, content_type, accept).await;
        Self::read(r).await
    }

    /// Sends `method path` with a body of raw bytes (protobuf, say) as `content_type`, and
    /// reads the whole answer.
    pub async fn request_bytes(
        &self,
        method: &str,
        path: &str,
        body: impl Into<Bytes>,
        content_type: &str,
    ) -> Resp {
        let r = self
            .send_bytes(method, path, body.into(), content_type, None)
            .await;
        Self::read(r).await
    }

    async fn read(r: http::Response<Incoming>) -> Resp {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        Resp {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// Sends `method path` with a JSON body as a client whose `User-Agent` is `user_agent`
    /// (the field manager kube-apiserver derives when no `fieldManager` is given).
    pub async fn request_as(
        &self,
        user_agent: &str,
        method: &str,
        path: &str,
        body: &Value,
    ) -> Resp {
        let b = http::Request::builder()
            .method(method)
            .uri(format!("{}{}", self.base, path))
            .header("content-type", "application/json")
            .header("user-agent", user_agent);
        let body = Bytes::from(serde_json::to_vec(body).unwrap());
        let r = self
            .client
            .request(b.body(Full::new(body)).unwrap())
            .await
            .expect("request");
        Self::read(r).await
    }

    /// Sends `method path` with an optional JSON body (`application/json`).
    pub async fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Resp {
        self.request_with(method, path, body, "application/json", None)
            .await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Resp {
        self.request("GET", path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Resp {
        self.request("POST", path, Some(body)).await
    }

    /// `PUT path` with a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> Resp {
        self.request("PUT", path, Some(body)).await
    }

    /// `DELETE path` without a body.
    pub async fn delete(&self, path: &str) -> Resp {
        self.request("DELETE", path, None).await
    }

    /// `PATCH path` with `body` sent as `content_type`.
    pub async fn patch(&self, path: &str, content_type: &str, body: &Value) -> Resp {
        self.request_with("PATCH", path, Some(body), content_type, None)
            .await
    }

    /// Sends `method path` without a body and reads the whole answer as text (an endpoint
    /// that does not answer JSON: probes, metrics).
    pub async fn text(&self, method: &str, path: &str) -> TextResp {
        let r = self
            .send_bytes(method, path, Bytes::new(), "text/plain", None)
            .await;
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        TextResp {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// Opens a watch (or any streaming GET) and returns its line reader.
    pub async fn watch(&self, path: &str) -> Watch {
        self.watch_with(path, None).await
    }

    /// Opens a watch with an optional `Accept` (e.g. a `Table` or metadata-only watch).
    pub async fn watch_with(&self, path: &str, accept: Option<&str>) -> Watch {
        let r = self
            .send("GET", path, None, "application/json", accept)
            .await;
        assert_eq!(r.status().as_u16(), 200, "watch {path}");
        Watch {
            body: r.into_body(),
            buf: Vec::new(),
        }
    }
}

/// A response read as text.
pub struct TextResp {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body, as UTF-8 (invalid bytes replaced).
    pub body: String,
}

/// Newline-delimited JSON events of a watch response.
pub struct Watch {
    body: Incoming,
    buf: Vec<u8>,
}

impl Watch {
    /// The next event, or `None` when the server ended the stream.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(serde_json::from_slice(&line).expect("watch line is JSON"));
            }
            match self.body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        self.buf.extend_from_slice(&d);
                    }
                }
                _ => {
                    assert!(self.buf.is_empty(), "stream ended inside a line");
                    return None;
                }
            }
        }
    }

    /// The next event that is not a BOOKMARK.
    pub async fn next_change(&mut self) -> Option<Value> {
        loop {
            let e = self.next().await?;
            if e["type"] != "BOOKMARK" {
                return Some(e);
            }
        }
    }
}

/// A minimal pod.
pub fn pod(ns: &str, name: &str, labels: Value) -> Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })
}

/// A configmap.
pub fn configmap(ns: &str, name: &str, labels: Value) -> Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "data": {"k": "v"},
    })
}

/// The resourceVersion of an object or list, as a number.
pub fn rv(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

/// The names of a list's items.
pub fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}
