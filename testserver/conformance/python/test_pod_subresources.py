"""The pod subresources that stand in for the kubelet and the scheduler: `pods/exec` through
`kubernetes.stream.stream` (WebSockets, `v4.channel.k8s.io`), `pods/log`, `pods/eviction`,
`pods/binding` and `pods/ephemeralcontainers`, as kube-apiserver 1.35 serves them
(k8s.io/kubernetes pkg/registry/core/pod/rest and pkg/registry/core/pod/storage).

No container runs here: without a handler a test registers, exec runs the server's built-in
commands (`echo`, `sh -c` over `;`-separated commands, `exit N`, `>&2`)."""

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

from support import pod, status_of


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
