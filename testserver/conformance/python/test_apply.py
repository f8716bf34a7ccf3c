"""Server-side apply (PATCH application/apply-patch+yaml with fieldManager), through the
dynamic client's `server_side_apply`, and managedFields bookkeeping."""

import pytest
from kubernetes.client.rest import ApiException

from support import configmap, status_of


def configmaps(dyn):
    return dyn.resources.get(api_version="v1", kind="ConfigMap")


def test_apply_creates_a_missing_object_and_records_the_manager(dyn, ns):
    """Applying an object that does not exist creates it; managedFields has one entry for
    the field manager with operation Apply and fieldsType FieldsV1."""
    out = configmaps(dyn).server_side_apply(
        body=configmap("applied", data={"a": "1"}), namespace=ns, field_manager="conformance-a"
    )
    assert out.data.a == "1"
    entries = [(m.manager, m.operation, m.fieldsType) for m in out.metadata.managedFields]
    assert entries == [("conformance-a", "Apply", "FieldsV1")]


def test_apply_without_field_manager_is_422(dyn, ns):
    """fieldManager is required for apply requests: 422 Invalid on PatchOptions
    (`fieldManager: Required value: is required for apply patch`)."""
    with pytest.raises(ApiException) as e:
        configmaps(dyn).server_side_apply(body=configmap("nofm"), namespace=ns)
    assert e.value.status == 422


def test_apply_conflict_between_managers_is_409_until_forced(dyn, ns):
    """A second manager applying a different value to a field another manager owns gets 409
    Conflict naming the owner and field; with force=true it takes the field over."""
    cms = configmaps(dyn)
    cms.server_side_apply(body=configmap("owned", data={"k": "a"}), namespace=ns, field_manager="first")
    with pytest.raises(ApiException) as e:
        cms.server_side_apply(
            body=configmap("owned", data={"k": "b"}), namespace=ns, field_manager="second"
        )
    assert e.value.status == 409
    s = status_of(e.value)
    assert s["reason"] == "Conflict"
    # One FieldManagerConflict cause per field (`.metadata.labels` too: the empty map both
    # apply is dropped from the stored object, as Go's omitempty does, so it is added again).
    causes = {c["field"]: c for c in s["details"]["causes"]}
    assert causes[".data.k"]["reason"] == "FieldManagerConflict"
    assert causes[".data.k"]["message"].startswith('conflict with "first"')
    assert '"first"' in s["message"] and ".data.k" in s["message"]
    out = cms.server_side_apply(
        body=configmap("owned", data={"k": "b"}),
        namespace=ns,
        field_manager="second",
        force_conflicts=True,
    )
    assert out.data.k == "b"


def test_apply_removes_fields_the_manager_stops_applying(dyn, ns):
    """A manager that re-applies without a field it alone owned removes that field."""
    cms = configmaps(dyn)
    cms.server_side_apply(
        body=configmap("shrink", data={"keep": "1", "drop": "2"}), namespace=ns, field_manager="m"
    )
    out = cms.server_side_apply(
        body=configmap("shrink", data={"keep": "1"}), namespace=ns, field_manager="m"
    )
    assert out.data.to_dict() == {"keep": "1"}


def test_create_records_an_update_manager(core, ns):
    """Every write records managedFields: a create with fieldManager=creator adds an entry
    with operation Update for that manager."""
    out = core.create_namespaced_config_map(ns, configmap("tracked"), field_manager="creator")
    entries = [(m.manager, m.operation) for m in out.metadata.managed_fields or []]
    assert entries == [("creator", "Update")]


def test_field_manager_longer_than_128_bytes_is_422(core, ns):
    """ValidateFieldManager: a fieldManager over 128 bytes fails the write with 422 Invalid on
    the options kind (CreateOptions.meta.k8s.io), cause fieldManager; 128 bytes is fine."""
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(ns, configmap("long"), field_manager="m" * 129)
    assert e.value.status == 422
    s = status_of(e.value)
    assert s["message"].startswith('CreateOptions.meta.k8s.io "" is invalid: fieldManager')
    assert s["details"]["causes"][0]["reason"] == "FieldValueTooLong"
    core.create_namespaced_config_map(ns, configmap("long"), field_manager="m" * 128)
