"""The pod subresources that stand in for the kubelet and the scheduler: `pods/exec` through
`kubernetes.stream.stream` (WebSockets, `v4.channel.k8s.io`), `pods/log`, `pods/eviction`,
`pods/binding` and `pods/ephemeralcontainers`, as kube-apiserver 1.35 serves them
(k8s.io/kubernetes pkg/registry/core/pod/rest and pkg/registry/core/pod/storage).

No container runs here: without a handler a test registers, exec runs the server's built-in
commands (`echo`, `sh -c` over `;`-separated commands, `exit N`, `>&2`)."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

from support import gone, pod, status_of


def test_exec_through_stream_reads_python_booleans(core, ns):
    """PodExecOptions are decoded from the query as every query boolean
    (`Convert_Slice_string_To_bool`): the client's `stdout=True` turns stdout on."""
    core.create_namespaced_pod(ns, pod("shell"))
    out = stream(
        core.connect_get_namespaced_pod_exec,
        "shell",
        ns,
        command=["echo", "hello from exec"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert out == "hello from exec\n"


def test_exec_reports_stderr_and_the_exit_code(core, ns):
    """The kubelet's error channel carries the exit code (`NonZeroExitCode` Status), which
    the client exposes as `returncode`; stderr arrives on its own channel."""
    core.create_namespaced_pod(ns, pod("shell"))
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        "shell",
        ns,
        command=["sh", "-c", "echo out; echo err >&2; exit 3"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.run_forever(timeout=10)
    assert resp.read_stdout() == "out\n"
    assert resp.read_stderr() == "err\n"
    assert resp.returncode == 3
    resp.close()


def test_log_of_an_unscheduled_pod_is_empty(core, ns):
    """LogLocation gives no kubelet location for a pod without spec.nodeName: the answer
    is an empty stream (204)."""
    core.create_namespaced_pod(ns, pod("waiting"))
    assert core.read_namespaced_pod_log("waiting", ns) == ""


def test_log_of_a_container_not_started_is_the_kubelets_400(core, ns):
    """The kubelet refuses logs of a container still waiting (validateContainerLogStatus);
    kube-apiserver passes its text on as a 400 BadRequest Status."""
    manifest = pod("bound")
    manifest["spec"]["nodeName"] = "node-1"
    core.create_namespaced_pod(ns, manifest)
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod_log("bound", ns)
    assert e.value.status == 400
    s = status_of(e.value)
    assert s["reason"] == "BadRequest"
    assert s["message"] == 'container "app" in pod "bound" is waiting to start: ContainerCreating'


def test_log_of_a_missing_pod_is_404(core, ns):
    """getPod's NotFound: `pods "absent" not found`."""
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod_log("absent", ns)
    assert e.value.status == 404
    assert status_of(e.value)["message"] == 'pods "absent" not found'


def _running(core, ns, name):
    core.patch_namespaced_pod_status(
        name,
        ns,
        {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
    )


def test_eviction_is_refused_while_the_budget_allows_no_disruption(core, api, ns):
    """EvictionREST's checkAndDecrement: 429 TooManyRequests with a DisruptionBudget cause
    while the PodDisruptionBudget selecting a Running pod allows no disruption; once the
    budget is gone the pod is deleted."""
    policy = client.PolicyV1Api(api)
    core.create_namespaced_pod(ns, pod("guarded", labels={"app": "guarded"}))
    _running(core, ns, "guarded")
    policy.create_namespaced_pod_disruption_budget(
        ns,
        {
            "metadata": {"name": "guard"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
        },
    )
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="guarded", namespace=ns))
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod_eviction("guarded", ns, eviction)
    assert e.value.status == 429
    s = status_of(e.value)
    assert s["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert s["details"]["causes"][0]["reason"] == "DisruptionBudget"
    policy.delete_namespaced_pod_disruption_budget("guard", ns)
    core.create_namespaced_pod_eviction("guarded", ns, eviction)
    assert gone(lambda: core.read_namespaced_pod("guarded", ns))


def test_binding_sets_the_node_of_an_unbound_pod_once(core, ns):
    """BindingREST: the pod gets spec.nodeName; binding it again is 409 Conflict on
    pods/binding. (The answer is a Status, so the client is told not to decode it.)"""
    core.create_namespaced_pod(ns, pod("unbound"))
    body = client.V1Binding(
        metadata=client.V1ObjectMeta(name="unbound"),
        target=client.V1ObjectReference(kind="Node", name="node-1"),
    )
    resp = core.create_namespaced_pod_binding("unbound", ns, body, _preload_content=False)
    assert resp.status == 201
    assert core.read_namespaced_pod("unbound", ns).spec.node_name == "node-1"
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod_binding("unbound", ns, body, _preload_content=False)
    assert e.value.status == 409
    assert status_of(e.value)["message"] == (
        'Operation cannot be fulfilled on pods/binding "unbound": '
        'pod unbound is already assigned to node "node-1"'
    )
