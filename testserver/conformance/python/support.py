"""Helpers shared by the conformance tests: unique names, polling, raw requests, manifests."""

import json
import os
import time
import uuid

from kubernetes.client.rest import ApiException

# The repository's shared corpus (real CRDs and manifests), beside the repository root.
CORPUS = os.path.normpath(
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "corpus")
)

# Change events the server keeps for watch resumption; the Rust driver sets it, a server
# started by hand keeps its default (the binary's --history).
HISTORY_WINDOW = int(os.environ.get("KINFORM_HISTORY_WINDOW", "10000"))


def unique(prefix):
    """A DNS-1123 name unique to this run."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def eventually(cond, timeout=10.0, interval=0.05):
    """Polls `cond` until it returns a truthy value (returned), for at most `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def status_of(exc):
    """The metav1.Status body of an ApiException."""
    return json.loads(exc.body)


def raw(api, method, path, body=None, query=None, content_type="application/json"):
    """(status, parsed JSON body) of one request through the client's own transport."""
    headers = {"Accept": "application/json", "Content-Type": content_type}
    try:
        resp = api.call_api(
            path,
            method,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=False,
        )
        r = resp[0]
        return r.status, json.loads(r.data or b"null")
    except ApiException as e:
        return e.status, json.loads(e.body or b"null")


def gone(read):
    """True when `read()` answers 404."""
    try:
        read()
    except ApiException as e:
        if e.status == 404:
            return True
        raise
    return False


def configmap(name, labels=None, data=None):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": data if data is not None else {"k": "v"},
    }


def pod(name, labels=None, containers=None):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": containers or [{"name": "app", "image": "nginx:1.27"}]},
    }


def deployment(name, replicas=1, containers=None):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": containers or [{"name": "app", "image": "nginx:1.27"}]
                },
            },
        },
    }


# The Widget CRD of the custom-resource tests: status and scale subresources, a structural
# schema, a printer column.
WIDGET_GROUP = "conformance.kinform.dev"


def widget_crd(group=WIDGET_GROUP, plural="widgets", kind="Widget"):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
                "shortNames": [kind.lower()[:2] + "x"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color"}
                    ],
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer", "minimum": 0},
                                        "size": {"type": "integer"},
                                        "color": {"type": "string"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer"},
                                        "selector": {"type": "string"},
                                        "phase": {"type": "string"},
                                    },
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def established(apiext, name):
    """True once the CRD's Established condition is True."""
    crd = apiext.read_custom_resource_definition(name)
    conditions = (crd.status and crd.status.conditions) or []
    return any(c.type == "Established" and c.status == "True" for c in conditions)


_ENSURED = set()


def ensure_widget_crd(apiext):
    """Creates the Widget CRD once per run and waits (once) until it is established;
    (group, version, plural)."""
    crd = widget_crd()
    if crd["metadata"]["name"] in _ENSURED:
        return WIDGET_GROUP, "v1", "widgets"
    _ENSURED.add(crd["metadata"]["name"])
    try:
        apiext.create_custom_resource_definition(crd)
    except ApiException as e:
        if e.status != 409:
            raise
    eventually(lambda: established(apiext, crd["metadata"]["name"]), timeout=10)
    return WIDGET_GROUP, "v1", "widgets"


def widget(name, replicas=1, color="blue"):
    return {
        "apiVersion": f"{WIDGET_GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "color": color},
    }
