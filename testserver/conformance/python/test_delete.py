"""Deletion: propagation policies over an owner chain (Deployment -> ReplicaSet -> Pod, linked
by ownerReferences as the controllers link them), as the garbage collector of
kube-controller-manager carries them out, and namespace deletion."""

import json

import pytest
from kubernetes import client

from support import configmap, deployment, eventually, gone, pod, unique


def owner_ref(owner, kind, api_version):
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": owner.metadata.name,
        "uid": owner.metadata.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def chain(apps, core, ns, name):
    """A Deployment owning a ReplicaSet owning a Pod; the three created objects."""
    d = apps.create_namespaced_deployment(ns, deployment(name))
    rs_body = {
        "metadata": {
            "name": f"{name}-rs",
            "labels": {"app": name},
            "ownerReferences": [owner_ref(d, "Deployment", "apps/v1")],
        },
        "spec": deployment(name)["spec"],
    }
    rs = apps.create_namespaced_replica_set(ns, rs_body)
    p = pod(f"{name}-pod", labels={"app": name})
    p["metadata"]["ownerReferences"] = [owner_ref(rs, "ReplicaSet", "apps/v1")]
    po = core.create_namespaced_pod(ns, p)
    return d, rs, po


def delete_raw(apps, name, ns, policy):
    """DELETE with a propagation policy; the answered object as a dict."""
    resp = apps.delete_namespaced_deployment(
        name, ns, propagation_policy=policy, _preload_content=False
    )
    return json.loads(resp.data)


def test_background_deletion_removes_the_owner_then_its_dependents(apps, core, ns):
    """propagationPolicy=Background: the owner is gone at once, the garbage collector then
    deletes the ReplicaSet and, through it, the Pod."""
    chain(apps, core, ns, "bg")
    apps.delete_namespaced_deployment("bg", ns, propagation_policy="Background")
    assert gone(lambda: apps.read_namespaced_deployment("bg", ns))
    assert eventually(lambda: gone(lambda: apps.read_namespaced_replica_set("bg-rs", ns)))
    assert eventually(lambda: gone(lambda: core.read_namespaced_pod("bg-pod", ns)))


def test_orphan_deletion_keeps_dependents_and_strips_their_owner_reference(apps, core, ns):
    """propagationPolicy=Orphan: the owner goes, the ReplicaSet stays and no longer lists it
    in ownerReferences; the Pod (owned by the ReplicaSet) stays owned."""
    d, rs, _ = chain(apps, core, ns, "orph")
    apps.delete_namespaced_deployment("orph", ns, propagation_policy="Orphan")
    assert eventually(lambda: gone(lambda: apps.read_namespaced_deployment("orph", ns)))

    def stripped():
        refs = apps.read_namespaced_replica_set("orph-rs", ns).metadata.owner_references or []
        return all(r.uid != d.metadata.uid for r in refs)

    assert eventually(stripped)
    refs = core.read_namespaced_pod("orph-pod", ns).metadata.owner_references
    assert [r.uid for r in refs] == [rs.metadata.uid]


def test_orphan_deletion_answers_the_owner_with_the_orphan_finalizer(apps, core, ns):
    """The DELETE answer is the owner still present, with deletionTimestamp and the
    `orphan` finalizer the garbage collector removes once dependents are released."""
    chain(apps, core, ns, "orphfin")
    body = delete_raw(apps, "orphfin", ns, "Orphan")
    assert body["metadata"]["deletionTimestamp"]
    assert "orphan" in body["metadata"]["finalizers"]


def test_foreground_deletion_removes_dependents_and_then_the_owner(apps, core, ns):
    """propagationPolicy=Foreground: the ReplicaSet and Pod are deleted, and then the
    owner."""
    chain(apps, core, ns, "fg")
    apps.delete_namespaced_deployment("fg", ns, propagation_policy="Foreground")
    assert eventually(lambda: gone(lambda: core.read_namespaced_pod("fg-pod", ns)))
    assert eventually(lambda: gone(lambda: apps.read_namespaced_replica_set("fg-rs", ns)))
    assert eventually(lambda: gone(lambda: apps.read_namespaced_deployment("fg", ns)))


def test_foreground_deletion_answers_the_owner_with_the_foreground_finalizer(apps, core, ns):
    """The DELETE answer is the owner with deletionTimestamp and the `foregroundDeletion`
    finalizer; it stays readable while dependents are deleted."""
    chain(apps, core, ns, "fgfin")
    body = delete_raw(apps, "fgfin", ns, "Foreground")
    assert body["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in body["metadata"]["finalizers"]


def test_default_propagation_of_a_deployment_deletes_dependents(apps, core, ns):
    """Without a policy, apps/v1 objects delete in the background: dependents go too."""
    chain(apps, core, ns, "dflt")
    apps.delete_namespaced_deployment("dflt", ns)
    assert eventually(lambda: gone(lambda: apps.read_namespaced_replica_set("dflt-rs", ns)))


def test_finalizers_hold_an_object_until_removed(core, ns):
    """An object with a finalizer is only marked (deletionTimestamp) by DELETE; removing the
    finalizer completes the deletion."""
    body = configmap("held")
    body["metadata"]["finalizers"] = ["conformance.kinform.dev/hold"]
    core.create_namespaced_config_map(ns, body)
    core.delete_namespaced_config_map("held", ns)
    held = core.read_namespaced_config_map("held", ns)
    assert held.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("held", ns, [{"op": "remove", "path": "/metadata/finalizers"}])
    assert eventually(lambda: gone(lambda: core.read_namespaced_config_map("held", ns)))


def test_delete_collection_with_label_selector(core, ns):
    """DELETE on the collection removes exactly the objects the selector matches."""
    core.create_namespaced_config_map(ns, configmap("x1", {"batch": "old"}))
    core.create_namespaced_config_map(ns, configmap("x2", {"batch": "old"}))
    core.create_namespaced_config_map(ns, configmap("y", {"batch": "new"}))
    core.delete_collection_namespaced_config_map(ns, label_selector="batch=old")
    left = sorted(c.metadata.name for c in core.list_namespaced_config_map(ns).items)
    assert left == ["y"] or left == ["kube-root-ca.crt", "y"]


def test_namespace_deletion_removes_its_contents(core, apps):
    """Deleting a namespace deletes everything in it, then the namespace itself."""
    name = unique("doomed")
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, configmap("c"))
    core.create_namespaced_pod(name, pod("p"))
    apps.create_namespaced_deployment(name, deployment("d"))
    core.delete_namespace(name)
    assert eventually(lambda: gone(lambda: core.read_namespace(name)))
    sel = f"metadata.namespace={name}"
    assert core.list_config_map_for_all_namespaces(field_selector=sel).items == []
    assert core.list_pod_for_all_namespaces(field_selector=sel).items == []
    assert apps.list_deployment_for_all_namespaces(field_selector=sel).items == []


def test_namespace_delete_answers_terminating(core):
    """DELETE of a namespace answers it with status.phase Terminating and a
    deletionTimestamp (the namespace controller finishes the deletion later)."""
    name = unique("term")
    core.create_namespace({"metadata": {"name": name}})
    resp = core.delete_namespace(name, _preload_content=False)
    body = json.loads(resp.data)
    assert body["kind"] == "Namespace"
    assert body["status"]["phase"] == "Terminating"
    assert body["metadata"]["deletionTimestamp"]


def test_namespace_gets_kubernetes_finalizer_and_active_phase(core):
    """A created namespace is Active with the `kubernetes` finalizer in spec."""
    name = unique("fresh")
    ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert ns.status.phase == "Active"
    assert ns.spec.finalizers == ["kubernetes"]
    core.delete_namespace(name)
