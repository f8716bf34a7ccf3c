"""The pod subresources that stand in for the kubelet and the scheduler: `pods/exec` through
`kubernetes.stream.stream` (WebSockets, `v4.channel.k8s.io`), `pods/log`, `pods/eviction`,
`pods/binding` and `pods/ephemeralcontainers`, as kube-apiserver 1.35 serves them
(k8s.io/kubernetes pkg/registry/core/pod/rest and pkg/registry/core/pod/storage).

No container runs here: without a handler a test registers, exec runs the server's built-in
commands (`echo`, `sh -c` over `;`-separated commands, `exit N`, `>&2`)."""

from kubernetes.stream import stream

from support import pod


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
