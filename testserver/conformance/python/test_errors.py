"""Failures are metav1.Status objects shaped as k8s.io/apimachinery/pkg/api/errors builds
them: kind Status, status Failure, code repeated, a reason, and details naming the object."""

import pytest
from kubernetes.client.rest import ApiException

from support import configmap, deployment, raw, status_of, unique


def failure(call):
    with pytest.raises(ApiException) as e:
        call()
    return e.value.status, status_of(e.value)


def test_get_missing_object_is_404_status_with_name_and_resource_in_details(core, ns):
    """NewNotFound: 404, reason NotFound, message `configmaps "missing" not found`, details
    {name, kind: the resource} (the empty core group omitted)."""
    code, s = failure(lambda: core.read_namespaced_config_map("missing", ns))
    assert code == 404
    assert s["kind"] == "Status" and s["apiVersion"] == "v1"
    assert s["status"] == "Failure" and s["code"] == 404 and s["reason"] == "NotFound"
    assert s["message"] == 'configmaps "missing" not found'
    assert s["details"] == {"name": "missing", "kind": "configmaps"}


def test_404_of_a_grouped_resource_names_the_group_in_details(apps, ns):
    """For a named group the message qualifies the resource (`deployments.apps`) and details
    carry the group."""
    code, s = failure(lambda: apps.read_namespaced_deployment("missing", ns))
    assert code == 404
    assert s["message"] == 'deployments.apps "missing" not found'
    assert s["details"] == {"name": "missing", "group": "apps", "kind": "deployments"}


def test_delete_missing_object_is_404_with_details(core, ns):
    """DELETE of a missing object is the same NotFound Status as GET."""
    code, s = failure(lambda: core.delete_namespaced_config_map("missing", ns))
    assert code == 404
    assert s["details"]["name"] == "missing"


def test_404_for_an_unserved_path_is_a_status_with_empty_details(api):
    """A path in a served group version naming no resource answers go-restful's generic
    NotFound Status: message `the server could not find the requested resource`, details
    present but empty."""
    code, s = raw(api, "GET", "/apis/apps/v1/widgets")
    assert code == 404
    assert s["kind"] == "Status" and s["reason"] == "NotFound" and s["code"] == 404
    assert s["message"] == "the server could not find the requested resource"
    assert s["details"] == {}


def test_create_existing_name_is_409_already_exists(core, ns):
    """NewAlreadyExists: 409, reason AlreadyExists, details naming the object."""
    core.create_namespaced_config_map(ns, configmap("dup"))
    code, s = failure(lambda: core.create_namespaced_config_map(ns, configmap("dup")))
    assert code == 409
    assert s["reason"] == "AlreadyExists"
    assert s["message"] == 'configmaps "dup" already exists'
    assert s["details"] == {"name": "dup", "kind": "configmaps"}


def test_update_with_stale_resource_version_is_409_conflict(core, ns):
    """Optimistic concurrency: a replace carrying an older resourceVersion than stored is
    refused with 409 Conflict, and the stored object is unchanged."""
    core.create_namespaced_config_map(ns, configmap("occ", data={"v": "0"}))
    first = core.read_namespaced_config_map("occ", ns)
    second = core.read_namespaced_config_map("occ", ns)
    first.data = {"v": "1"}
    core.replace_namespaced_config_map("occ", ns, first)
    second.data = {"v": "2"}
    code, s = failure(lambda: core.replace_namespaced_config_map("occ", ns, second))
    assert code == 409
    assert s["reason"] == "Conflict"
    assert s["message"] == (
        'Operation cannot be fulfilled on configmaps "occ": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert s["details"] == {"name": "occ", "kind": "configmaps"}
    assert core.read_namespaced_config_map("occ", ns).data == {"v": "1"}


def test_update_without_resource_version_is_unconditional(core, ns):
    """A replace with no resourceVersion overwrites (ConfigMaps allow unconditional
    update)."""
    core.create_namespaced_config_map(ns, configmap("uncond"))
    body = configmap("uncond", data={"v": "new"})
    core.replace_namespaced_config_map("uncond", ns, body)
    assert core.read_namespaced_config_map("uncond", ns).data == {"v": "new"}


def test_string_replicas_on_a_built_in_is_400_bad_request(api, ns):
    """A built-in body that does not decode into its Go type (replicas: "three") is refused
    before validation: 400 BadRequest `Deployment in version "v1" cannot be handled as a
    Deployment: ...`, and nothing is stored."""
    body = deployment("three")
    body["spec"]["replicas"] = "three"
    code, s = raw(api, "POST", f"/apis/apps/v1/namespaces/{ns}/deployments", body=body)
    assert code == 400, s
    assert s["reason"] == "BadRequest"
    assert 'Deployment in version "v1" cannot be handled as a Deployment' in s["message"]
    code, _ = raw(api, "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/three")
    assert code == 404


def test_negative_replicas_is_422_invalid_with_field_cause(apps, ns):
    """Deployment validation: replicas -1 is 422 Invalid naming `spec.replicas` in the
    message and in details.causes, with details {name, group, kind: Deployment}."""
    body = deployment("neg")
    body["spec"]["replicas"] = -1
    code, s = failure(lambda: apps.create_namespaced_deployment(ns, body))
    assert code == 422
    assert s["reason"] == "Invalid"
    assert s["message"].startswith('Deployment.apps "neg" is invalid: spec.replicas: Invalid value: -1')
    assert s["details"]["kind"] == "Deployment" and s["details"]["group"] == "apps"
    assert s["details"]["causes"][0]["field"] == "spec.replicas"
    assert s["details"]["causes"][0]["reason"] == "FieldValueInvalid"


def test_invalid_object_name_is_422(core, ns):
    """metadata.name must be a DNS-1123 subdomain for ConfigMaps: `Bad_Name` is 422 Invalid
    on metadata.name."""
    code, s = failure(lambda: core.create_namespaced_config_map(ns, configmap("Bad_Name")))
    assert code == 422
    assert s["details"]["causes"][0]["field"] == "metadata.name"


def test_namespace_in_body_must_match_the_path(core, ns):
    """A body whose metadata.namespace differs from the request's namespace is refused with
    400 BadRequest (`the namespace of the provided object does not match the namespace sent
    on the request`)."""
    body = configmap("mismatch")
    body["metadata"]["namespace"] = unique("other")
    code, s = failure(lambda: core.create_namespaced_config_map(ns, body))
    assert code == 400
    assert "does not match the namespace sent on the request" in s["message"]
