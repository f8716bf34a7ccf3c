"""PATCH in its three classic forms, with the content types the Python clients send:
the typed API sends a dict as strategic merge patch and a list as JSON patch; the dynamic
client sends whatever `content_type` says."""

import pytest
from kubernetes.client.rest import ApiException

from support import configmap, deployment, ensure_widget_crd, raw, status_of, widget


def test_json_patch_add_replace_remove(core, ns):
    """application/json-patch+json (RFC 6902): operations apply in order."""
    core.create_namespaced_config_map(ns, configmap("jp", data={"a": "1", "b": "2"}))
    patched = core.patch_namespaced_config_map(
        "jp",
        ns,
        [
            {"op": "replace", "path": "/data/a", "value": "10"},
            {"op": "remove", "path": "/data/b"},
            {"op": "add", "path": "/metadata/labels", "value": {"patched": "json"}},
        ],
    )
    assert patched.data == {"a": "10"}
    assert patched.metadata.labels == {"patched": "json"}


def test_json_patch_failing_test_op_is_refused_and_changes_nothing(core, ns):
    """A JSON patch whose `test` operation fails is refused (422 Invalid) and the object is
    unchanged."""
    core.create_namespaced_config_map(ns, configmap("jt", data={"a": "1"}))
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(
            "jt",
            ns,
            [
                {"op": "test", "path": "/data/a", "value": "2"},
                {"op": "replace", "path": "/data/a", "value": "3"},
            ],
        )
    assert e.value.status == 422
    assert core.read_namespaced_config_map("jt", ns).data == {"a": "1"}


def test_merge_patch_sets_and_deletes_keys(dyn, ns):
    """application/merge-patch+json (RFC 7386): keys merge, null deletes, lists replace."""
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body=configmap("mp", labels={"keep": "1", "drop": "1"}, data={"a": "1"}), namespace=ns)
    out = cms.patch(
        name="mp",
        namespace=ns,
        body={"metadata": {"labels": {"drop": None, "new": "1"}}, "data": {"b": "2"}},
        content_type="application/merge-patch+json",
    )
    assert out.metadata.labels.to_dict() == {"keep": "1", "new": "1"}
    assert out.data.to_dict() == {"a": "1", "b": "2"}


def test_merge_patch_on_deployment_replaces_container_list(dyn, ns):
    """A JSON merge patch replaces a list wholesale, even one that strategic merge would
    merge by key (containers)."""
    deps = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    two = [{"name": "app", "image": "nginx:1"}, {"name": "sidecar", "image": "envoy:1"}]
    deps.create(body=deployment("mpd", containers=two), namespace=ns)
    out = deps.patch(
        name="mpd",
        namespace=ns,
        body={"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
        content_type="application/merge-patch+json",
    )
    assert [c.name for c in out.spec.template.spec.containers] == ["app"]


def test_strategic_merge_patch_merges_containers_by_name(apps, ns):
    """patch_namespaced_deployment with a dict sends application/strategic-merge-patch+json;
    containers merge by their `name` key: the patched container changes, the other stays."""
    two = [{"name": "app", "image": "nginx:1"}, {"name": "sidecar", "image": "envoy:1"}]
    apps.create_namespaced_deployment(ns, deployment("smp", containers=two))
    out = apps.patch_namespaced_deployment(
        "smp",
        ns,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}},
    )
    images = {c.name: c.image for c in out.spec.template.spec.containers}
    assert images == {"app": "nginx:2", "sidecar": "envoy:1"}


def test_strategic_merge_patch_delete_directive_removes_one_container(apps, ns):
    """The `$patch: delete` directive removes the list element with that key."""
    two = [{"name": "app", "image": "nginx:1"}, {"name": "sidecar", "image": "envoy:1"}]
    apps.create_namespaced_deployment(ns, deployment("smpdel", containers=two))
    out = apps.patch_namespaced_deployment(
        "smpdel",
        ns,
        {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}},
    )
    assert [c.name for c in out.spec.template.spec.containers] == ["app"]


def test_strategic_merge_patch_on_a_custom_resource_is_415(api, custom, apiext, ns):
    """Custom resources have no Go struct to carry patch strategies: a strategic merge patch
    on one is 415 UnsupportedMediaType."""
    group, version, plural = ensure_widget_crd(apiext)
    custom.create_namespaced_custom_object(group, version, ns, plural, widget("w"))
    code, s = raw(
        api,
        "PATCH",
        f"/apis/{group}/{version}/namespaces/{ns}/{plural}/w",
        body={"spec": {"size": 2}},
        content_type="application/strategic-merge-patch+json",
    )
    assert code == 415, s
    assert s["reason"] == "UnsupportedMediaType"


def test_patch_of_missing_object_is_404(core, ns):
    """PATCH of a missing object is NotFound (patches never create)."""
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map("nobody", ns, {"data": {"a": "1"}})
    assert e.value.status == 404
    assert status_of(e.value)["details"]["name"] == "nobody"


def test_patch_with_stale_resource_version_in_body_is_409(core, ns):
    """A patch carrying metadata.resourceVersion is a precondition: stale means 409
    Conflict."""
    cm = core.create_namespaced_config_map(ns, configmap("prec"))
    core.patch_namespaced_config_map("prec", ns, {"data": {"k": "2"}})
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(
            "prec",
            ns,
            [{"op": "replace", "path": "/metadata/resourceVersion", "value": cm.metadata.resource_version}],
        )
    assert e.value.status == 409
