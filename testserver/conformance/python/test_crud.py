"""CRUD of built-in resources, namespaced and cluster-scoped, through the typed APIs."""

import base64

import pytest
from kubernetes.client.rest import ApiException

from support import configmap, deployment, gone, pod, raw, unique


def test_pod_create_get_replace_delete_sets_server_fields(core, ns):
    """kube-apiserver fills uid, resourceVersion, creationTimestamp and namespace on create,
    bumps resourceVersion on replace, and an unscheduled pod is deleted at once (no kubelet
    holds it), after which GET is 404."""
    created = core.create_namespaced_pod(ns, pod("web"))
    meta = created.metadata
    assert meta.uid and meta.resource_version and meta.creation_timestamp
    assert meta.namespace == ns
    got = core.read_namespaced_pod("web", ns)
    assert got.metadata.uid == meta.uid
    got.metadata.labels = {"tier": "front"}
    replaced = core.replace_namespaced_pod("web", ns, got)
    assert replaced.metadata.labels == {"tier": "front"}
    assert int(replaced.metadata.resource_version) > int(meta.resource_version)
    core.delete_namespaced_pod("web", ns)
    assert gone(lambda: core.read_namespaced_pod("web", ns))


def test_configmap_crud_and_list(core, ns):
    """ConfigMaps: create, read, replace data, list in the namespace, delete."""
    core.create_namespaced_config_map(ns, configmap("cfg", data={"a": "1"}))
    cm = core.read_namespaced_config_map("cfg", ns)
    assert cm.data == {"a": "1"}
    cm.data["b"] = "2"
    core.replace_namespaced_config_map("cfg", ns, cm)
    names = [c.metadata.name for c in core.list_namespaced_config_map(ns).items]
    assert "cfg" in names
    assert core.read_namespaced_config_map("cfg", ns).data == {"a": "1", "b": "2"}
    status = core.delete_namespaced_config_map("cfg", ns)
    assert status is not None
    assert gone(lambda: core.read_namespaced_config_map("cfg", ns))


def test_secret_string_data_is_stored_base64_in_data(core, ns):
    """A Secret's write-only stringData is merged into data (base64) by the server and is not
    returned."""
    core.create_namespaced_secret(
        ns, {"metadata": {"name": "s"}, "type": "Opaque", "stringData": {"user": "admin"}}
    )
    s = core.read_namespaced_secret("s", ns)
    assert s.data == {"user": base64.b64encode(b"admin").decode()}
    assert s.string_data is None


def test_deployment_crud(apps, ns):
    """apps/v1 Deployments: create, read, replace the image, list, delete."""
    apps.create_namespaced_deployment(ns, deployment("web", replicas=2))
    d = apps.read_namespaced_deployment("web", ns)
    assert d.spec.replicas == 2
    d.spec.template.spec.containers[0].image = "nginx:1.28"
    apps.replace_namespaced_deployment("web", ns, d)
    d = apps.read_namespaced_deployment("web", ns)
    assert d.spec.template.spec.containers[0].image == "nginx:1.28"
    assert [x.metadata.name for x in apps.list_namespaced_deployment(ns).items] == ["web"]
    apps.delete_namespaced_deployment("web", ns)
    assert gone(lambda: apps.read_namespaced_deployment("web", ns))


def test_deployment_generation_bumps_on_spec_change_only(apps, ns):
    """metadata.generation starts at 1 and increases on a spec change, not on a label
    change."""
    apps.create_namespaced_deployment(ns, deployment("gen"))
    d = apps.read_namespaced_deployment("gen", ns)
    assert d.metadata.generation == 1
    d.metadata.labels["extra"] = "yes"
    d = apps.replace_namespaced_deployment("gen", ns, d)
    assert d.metadata.generation == 1
    d.spec.replicas = 3
    d = apps.replace_namespaced_deployment("gen", ns, d)
    assert d.metadata.generation == 2


def test_node_crud_cluster_scoped(core):
    """Nodes are cluster-scoped: created without a namespace, listed cluster-wide."""
    name = unique("node")
    node = core.create_node({"metadata": {"name": name, "labels": {"conformance": name}}})
    assert node.metadata.namespace is None
    listed = core.list_node(label_selector=f"conformance={name}").items
    assert [n.metadata.name for n in listed] == [name]
    core.patch_node(name, {"metadata": {"labels": {"zone": "a"}}})
    assert core.read_node(name).metadata.labels["zone"] == "a"
    core.delete_node(name)
    assert gone(lambda: core.read_node(name))


def test_serviceaccount_crud(core, ns):
    """ServiceAccounts: create, read, list, delete."""
    core.create_namespaced_service_account(ns, {"metadata": {"name": "robot"}})
    assert core.read_namespaced_service_account("robot", ns).metadata.name == "robot"
    names = [s.metadata.name for s in core.list_namespaced_service_account(ns).items]
    assert "robot" in names
    core.delete_namespaced_service_account("robot", ns)
    assert gone(lambda: core.read_namespaced_service_account("robot", ns))


def test_role_and_rolebinding_crud(rbac, ns):
    """rbac.authorization.k8s.io/v1 Roles and RoleBindings round-trip their rules and
    subjects."""
    rbac.create_namespaced_role(
        ns,
        {
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        ns,
        {
            "metadata": {"name": "reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}],
        },
    )
    role = rbac.read_namespaced_role("reader", ns)
    assert role.rules[0].verbs == ["get", "list"]
    binding = rbac.read_namespaced_role_binding("reader", ns)
    assert binding.role_ref.name == "reader"
    rbac.delete_namespaced_role_binding("reader", ns)
    rbac.delete_namespaced_role("reader", ns)
    assert gone(lambda: rbac.read_namespaced_role("reader", ns))


def test_clusterrole_crud(rbac):
    """ClusterRoles are cluster-scoped."""
    name = unique("cr")
    rbac.create_cluster_role(
        {
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}],
        }
    )
    assert rbac.read_cluster_role(name).rules[0].resources == ["deployments"]
    rbac.delete_cluster_role(name)
    assert gone(lambda: rbac.read_cluster_role(name))


def job(name):
    return {
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                }
            }
        },
    }


def test_job_crud(batch, ns):
    """batch/v1 Jobs: create, read, list, delete."""
    batch.create_namespaced_job(ns, job("once"))
    j = batch.read_namespaced_job("once", ns)
    assert j.spec.template.spec.restart_policy == "Never"
    assert [x.metadata.name for x in batch.list_namespaced_job(ns).items] == ["once"]
    batch.delete_namespaced_job("once", ns, propagation_policy="Background")
    assert gone(lambda: batch.read_namespaced_job("once", ns))


def test_job_create_defaults_selector_and_labels_from_uid(batch, ns):
    """The Job strategy generates spec.selector from the Job's uid
    (batch.kubernetes.io/controller-uid) and labels the template with it."""
    j = batch.create_namespaced_job(ns, job("defaulted"))
    uid = j.metadata.uid
    assert j.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == uid
    assert j.spec.template.metadata.labels["batch.kubernetes.io/controller-uid"] == uid
    assert j.spec.backoff_limit == 6


def test_cronjob_crud(batch, ns):
    """batch/v1 CronJobs: create, read, delete."""
    batch.create_namespaced_cron_job(
        ns,
        {
            "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": job("x")["spec"]}},
        },
    )
    assert batch.read_namespaced_cron_job("nightly", ns).spec.schedule == "0 3 * * *"
    batch.delete_namespaced_cron_job("nightly", ns)
    assert gone(lambda: batch.read_namespaced_cron_job("nightly", ns))


def test_delete_answers_a_status_or_the_object_as_each_storage_does(api, ns, core):
    """A completed DELETE answers what the kind's registry returns: a `Status` of `Success`
    naming the object (resource as `kind`, uid) for a ConfigMap, whose storage does not set
    `ReturnDeletedObject`; the deleted object itself for a Pod, whose storage does."""
    created = core.create_namespaced_config_map(ns, configmap("d"))
    code, body = raw(api, "DELETE", f"/api/v1/namespaces/{ns}/configmaps/d")
    assert code == 200
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"] == {"name": "d", "kind": "configmaps", "uid": created.metadata.uid}
    core.create_namespaced_pod(ns, pod("p"))
    code, body = raw(api, "DELETE", f"/api/v1/namespaces/{ns}/pods/p")
    assert code == 200
    assert body["kind"] == "Pod"
    assert body["metadata"]["name"] == "p"


def test_create_in_missing_namespace_is_404(core):
    """Creating in a namespace that does not exist answers 404 NotFound for the namespace."""
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(unique("nowhere"), configmap("x"))
    assert e.value.status == 404


def test_nodeport_service_gets_node_ports_and_keeps_them_on_replace(core, ns):
    """A NodePort Service gets a nodePort per port from the default range 30000-32767 (the
    service registry's port allocator), distinct across Services; an ExternalName Service
    gets no clusterIP; a replace that leaves out clusterIP and nodePort keeps both
    (patchAllocatedValues)."""
    ports = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    svc = core.create_namespaced_service(
        ns, {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": ports}}
    )
    node_ports = [p.node_port for p in svc.spec.ports]
    assert all(30000 <= n <= 32767 for n in node_ports) and len(set(node_ports)) == 2
    replaced = core.replace_namespaced_service(
        "np", ns, {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": ports}}
    )
    assert [p.node_port for p in replaced.spec.ports] == node_ports
    assert replaced.spec.cluster_ip == svc.spec.cluster_ip

    ext = core.create_namespaced_service(
        ns,
        {"metadata": {"name": "ext"},
         "spec": {"type": "ExternalName", "externalName": "example.com"}},
    )
    assert ext.spec.cluster_ip is None


def test_new_workloads_show_zero_status_counters(apps, ns):
    """kube-apiserver's PrepareForCreate resets a StatefulSet's, ReplicaSet's and DaemonSet's
    status to the zero struct, whose counters Go encodes even at 0 (no omitempty): the typed
    client reads replicas == 0 (a required field of V1StatefulSetStatus) and a DaemonSet's
    desiredNumberScheduled == 0 before any controller ran."""
    template = deployment("x")["spec"]["template"]
    selector = {"matchLabels": template["metadata"]["labels"]}
    apps.create_namespaced_stateful_set(
        ns,
        {"metadata": {"name": "db"},
         "spec": {"selector": selector, "serviceName": "db", "template": template}},
    )
    sts = apps.read_namespaced_stateful_set("db", ns)
    assert sts.status is not None
    assert sts.status.replicas == 0 and sts.status.available_replicas == 0
    apps.create_namespaced_daemon_set(
        ns, {"metadata": {"name": "agent"}, "spec": {"selector": selector, "template": template}}
    )
    ds = apps.read_namespaced_daemon_set("agent", ns)
    assert ds.status is not None
    assert ds.status.desired_number_scheduled == 0
    assert ds.status.current_number_scheduled == 0 and ds.status.number_ready == 0
    apps.create_namespaced_replica_set(
        ns, {"metadata": {"name": "rs"}, "spec": {"selector": selector, "template": template}}
    )
    assert apps.read_namespaced_replica_set("rs", ns).status.replicas == 0
