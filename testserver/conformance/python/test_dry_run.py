"""dryRun=All: the request is validated and answered as if it were carried out, and nothing
is persisted."""

import pytest

from support import configmap, gone


def test_dry_run_create_answers_the_object_and_persists_nothing(core, ns):
    """A dry-run create answers 201 with the object as it would be stored; a GET then is
    404."""
    out = core.create_namespaced_config_map(ns, configmap("dry"), dry_run="All")
    assert out.metadata.name == "dry" and out.metadata.uid
    assert gone(lambda: core.read_namespaced_config_map("dry", ns))


def test_dry_run_patch_answers_the_patched_object_and_changes_nothing(core, ns):
    """A dry-run patch answers the patched object; the stored object and its
    resourceVersion are unchanged."""
    before = core.create_namespaced_config_map(ns, configmap("dp", data={"a": "1"}))
    out = core.patch_namespaced_config_map("dp", ns, [{"op": "replace", "path": "/data/a", "value": "2"}], dry_run="All")
    assert out.data == {"a": "2"}
    after = core.read_namespaced_config_map("dp", ns)
    assert after.data == {"a": "1"}
    assert after.metadata.resource_version == before.metadata.resource_version


def test_dry_run_delete_keeps_the_object(core, ns):
    """A dry-run delete answers success and the object is still there."""
    core.create_namespaced_config_map(ns, configmap("dd"))
    core.delete_namespaced_config_map("dd", ns, dry_run="All")
    assert core.read_namespaced_config_map("dd", ns).metadata.name == "dd"


def test_dry_run_update_keeps_the_stored_object(core, ns):
    """A dry-run replace answers the new object; the stored one is unchanged."""
    cm = core.create_namespaced_config_map(ns, configmap("du", data={"a": "1"}))
    cm.data = {"a": "2"}
    out = core.replace_namespaced_config_map("du", ns, cm, dry_run="All")
    assert out.data == {"a": "2"}
    assert core.read_namespaced_config_map("du", ns).data == {"a": "1"}
