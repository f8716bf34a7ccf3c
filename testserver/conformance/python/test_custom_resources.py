"""CustomResourceDefinitions as apiextensions-apiserver serves them: a created CRD's versions
are served at once, custom objects get CRUD, watch, the status and scale subresources and
structural-schema validation through the CustomObjectsApi."""

import os

import pytest
import yaml
from kubernetes import watch
from kubernetes.client.rest import ApiException

from support import (
    CORPUS,
    WIDGET_GROUP,
    deployment,
    ensure_widget_crd,
    established,
    eventually,
    gone,
    raw,
    status_of,
    unique,
    widget,
    widget_crd,
)


@pytest.fixture
def widgets(apiext):
    return ensure_widget_crd(apiext)


def test_crd_becomes_established_with_accepted_names(apiext, widgets):
    """The CRD's status reports NamesAccepted and Established, and acceptedNames echo the
    spec's names."""
    name = f"widgets.{WIDGET_GROUP}"
    assert eventually(lambda: established(apiext, name), timeout=10)
    crd = apiext.read_custom_resource_definition(name)
    types = {c.type: c.status for c in crd.status.conditions}
    assert types.get("NamesAccepted") == "True"
    assert crd.status.accepted_names.kind == "Widget"
    assert crd.status.stored_versions == ["v1"]


def test_crd_versions_are_in_discovery_with_subresources(api, widgets):
    """/apis/{group}/{version} lists the plural with its verbs, short names and the status
    and scale subresources."""
    group, version, plural = widgets
    code, doc = raw(api, "GET", f"/apis/{group}/{version}")
    assert code == 200
    by_name = {r["name"]: r for r in doc["resources"]}
    assert by_name[plural]["kind"] == "Widget" and by_name[plural]["namespaced"] is True
    assert "wix" in by_name[plural]["shortNames"]
    assert {"create", "get", "list", "watch", "patch", "update", "delete"} <= set(
        by_name[plural]["verbs"]
    )
    assert f"{plural}/status" in by_name and f"{plural}/scale" in by_name
    code, groups = raw(api, "GET", "/apis")
    assert any(g["name"] == group for g in groups["groups"])


def test_custom_object_crud(custom, widgets, ns):
    """Custom objects: create (server fills uid, resourceVersion, generation 1), get, list,
    merge patch (the CustomObjectsApi's patch type), replace, delete."""
    group, version, plural = widgets
    created = custom.create_namespaced_custom_object(group, version, ns, plural, widget("a"))
    assert created["metadata"]["uid"] and created["metadata"]["generation"] == 1
    got = custom.get_namespaced_custom_object(group, version, ns, plural, "a")
    assert got["spec"] == {"replicas": 1, "color": "blue"}
    listed = custom.list_namespaced_custom_object(group, version, ns, plural)
    assert listed["kind"] == "WidgetList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    patched = custom.patch_namespaced_custom_object(
        group, version, ns, plural, "a", {"spec": {"color": "red"}}
    )
    assert patched["spec"] == {"replicas": 1, "color": "red"}
    assert patched["metadata"]["generation"] == 2
    patched["spec"]["size"] = 3
    replaced = custom.replace_namespaced_custom_object(group, version, ns, plural, "a", patched)
    assert replaced["spec"]["size"] == 3
    custom.delete_namespaced_custom_object(group, version, ns, plural, "a")
    assert gone(lambda: custom.get_namespaced_custom_object(group, version, ns, plural, "a"))


def test_custom_object_404_names_the_qualified_resource(custom, widgets, ns):
    """NotFound for a custom object names `widgets.<group>` and details carry the group."""
    group, version, plural = widgets
    with pytest.raises(ApiException) as e:
        custom.get_namespaced_custom_object(group, version, ns, plural, "missing")
    s = status_of(e.value)
    assert e.value.status == 404
    assert s["message"] == f'{plural}.{group} "missing" not found'
    assert s["details"] == {"name": "missing", "group": group, "kind": plural}


def test_custom_object_watch(custom, widgets, ns):
    """Watching custom objects from a list's resourceVersion yields ADDED, MODIFIED and
    DELETED as dicts."""
    group, version, plural = widgets
    rv = custom.list_namespaced_custom_object(group, version, ns, plural)["metadata"][
        "resourceVersion"
    ]
    custom.create_namespaced_custom_object(group, version, ns, plural, widget("w"))
    custom.patch_namespaced_custom_object(group, version, ns, plural, "w", {"spec": {"size": 9}})
    custom.delete_namespaced_custom_object(group, version, ns, plural, "w")
    w = watch.Watch()
    seen = []
    for e in w.stream(
        custom.list_namespaced_custom_object,
        group,
        version,
        ns,
        plural,
        resource_version=rv,
        timeout_seconds=5,
    ):
        seen.append((e["type"], e["object"]["metadata"]["name"]))
        if e["type"] == "DELETED":
            w.stop()
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_status_subresource_splits_spec_and_status_writes(custom, widgets, ns):
    """With the status subresource, a main-resource write ignores status, a /status write
    ignores spec, and only spec changes bump metadata.generation."""
    group, version, plural = widgets
    body = widget("s")
    body["status"] = {"phase": "Ignored"}
    created = custom.create_namespaced_custom_object(group, version, ns, plural, body)
    assert "status" not in created or created["status"].get("phase") != "Ignored"
    out = custom.patch_namespaced_custom_object_status(
        group, version, ns, plural, "s", {"status": {"phase": "Ready"}, "spec": {"color": "x"}}
    )
    assert out["status"]["phase"] == "Ready"
    assert out["spec"]["color"] == "blue"
    assert out["metadata"]["generation"] == 1
    out = custom.patch_namespaced_custom_object(
        group, version, ns, plural, "s", {"status": {"phase": "Lost"}, "spec": {"color": "red"}}
    )
    assert out["status"]["phase"] == "Ready"
    assert out["metadata"]["generation"] == 2


def test_scale_subresource_of_a_custom_resource(custom, widgets, ns):
    """/scale reads and writes the paths the CRD declares, as an autoscaling/v1 Scale."""
    group, version, plural = widgets
    custom.create_namespaced_custom_object(group, version, ns, plural, widget("sc", replicas=2))
    scale = custom.get_namespaced_custom_object_scale(group, version, ns, plural, "sc")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2
    custom.patch_namespaced_custom_object_scale(
        group, version, ns, plural, "sc", {"spec": {"replicas": 5}}
    )
    got = custom.get_namespaced_custom_object(group, version, ns, plural, "sc")
    assert got["spec"]["replicas"] == 5


def test_scale_subresource_of_a_deployment(apps, ns):
    """A Deployment's /scale is an autoscaling/v1 Scale over spec.replicas; replacing it
    changes the Deployment."""
    apps.create_namespaced_deployment(ns, deployment("web", replicas=1))
    scale = apps.read_namespaced_deployment_scale("web", ns)
    assert scale.spec.replicas == 1
    scale.spec.replicas = 4
    apps.replace_namespaced_deployment_scale("web", ns, scale)
    assert apps.read_namespaced_deployment("web", ns).spec.replicas == 4


def test_schema_violation_is_422_invalid_naming_the_field(custom, widgets, ns):
    """A custom object that breaks the structural schema (replicas: "three") is 422 Invalid
    with the field in the message and in details.causes; nothing is stored."""
    group, version, plural = widgets
    body = widget("bad")
    body["spec"]["replicas"] = "three"
    with pytest.raises(ApiException) as e:
        custom.create_namespaced_custom_object(group, version, ns, plural, body)
    s = status_of(e.value)
    assert e.value.status == 422 and s["reason"] == "Invalid"
    assert "spec.replicas" in s["message"]
    assert s["details"]["group"] == group and s["details"]["kind"] == "Widget"
    assert any(c["field"] == "spec.replicas" for c in s["details"]["causes"])
    assert gone(lambda: custom.get_namespaced_custom_object(group, version, ns, plural, "bad"))


def test_unknown_fields_are_pruned(custom, widgets, ns):
    """Fields the structural schema does not declare are dropped on write."""
    group, version, plural = widgets
    body = widget("pruned")
    body["spec"]["bogus"] = "x"
    out = custom.create_namespaced_custom_object(group, version, ns, plural, body)
    assert "bogus" not in out["spec"]


def test_deleting_a_crd_stops_serving_its_resource(api, apiext, custom):
    """Deleting a CRD removes its objects and its group version from discovery; requests to
    it answer 404."""
    group = f"{unique('g')}.kinform.dev"
    crd = widget_crd(group=group, plural="gadgets", kind="Gadget")
    apiext.create_custom_resource_definition(crd)
    eventually(lambda: established(apiext, crd["metadata"]["name"]))
    body = {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}}
    custom.create_namespaced_custom_object(group, "v1", "default", "gadgets", body)
    apiext.delete_custom_resource_definition(crd["metadata"]["name"])
    assert eventually(lambda: raw(api, "GET", f"/apis/{group}/v1")[0] == 404)
    with pytest.raises(ApiException) as e:
        custom.list_namespaced_custom_object(group, "v1", "default", "gadgets")
    assert e.value.status == 404


def test_corpus_crd_serves_custom_objects(api, apiext, custom, ns):
    """A real CRD (KEDA's ScaledObject, from the corpus) is accepted and serves objects
    shaped by its schema."""
    path = os.path.join(CORPUS, "crds", "keda", "keda.sh_scaledobjects.yaml")
    with open(path) as f:
        crd = next(d for d in yaml.safe_load_all(f) if d)
    try:
        apiext.create_custom_resource_definition(crd)
    except ApiException as e:
        if e.status != 409:
            raise
    eventually(lambda: established(apiext, crd["metadata"]["name"]))
    version = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    obj = {
        "apiVersion": f"keda.sh/{version}",
        "kind": "ScaledObject",
        "metadata": {"name": "web"},
        "spec": {
            "scaleTargetRef": {"name": "web"},
            "triggers": [{"type": "cpu", "metadata": {"value": "50"}}],
        },
    }
    custom.create_namespaced_custom_object("keda.sh", version, ns, "scaledobjects", obj)
    got = custom.get_namespaced_custom_object("keda.sh", version, ns, "scaledobjects", "web")
    assert got["spec"]["scaleTargetRef"] == {"name": "web"}
    code, doc = raw(api, "GET", f"/apis/keda.sh/{version}")
    assert any(r["name"] == "scaledobjects" for r in doc["resources"])
