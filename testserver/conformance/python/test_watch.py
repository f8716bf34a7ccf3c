"""WATCH as the Python client drives it: `watch=True` in the query (sent as the string
`True`), `kubernetes.watch.Watch` streams resuming from resourceVersions, and the 410 Expired
event that makes a client relist."""

import json
import threading

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

from support import HISTORY_WINDOW, configmap, unique


def raw_events(core, ns, **kwargs):
    """The watch events of one request that the server closes after timeoutSeconds."""
    resp = core.list_namespaced_config_map(
        ns, watch=True, _preload_content=False, timeout_seconds=1, **kwargs
    )
    try:
        lines = resp.data.decode().splitlines()
    finally:
        resp.release_conn()
    return [json.loads(line) for line in lines if line.strip()]


def test_watch_query_true_capitalised_is_a_watch(core, ns):
    """The Python client sends `?watch=True`; kube-apiserver converts query booleans with
    runtime.Convert_Slice_string_To_bool (only "false" and "0" are false), so this is a watch
    stream, not a list: events start with synthetic ADDED for existing objects."""
    core.create_namespaced_config_map(ns, configmap("existing"))
    events = raw_events(core, ns)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "existing")
    ]
    assert events[0]["object"]["kind"] == "ConfigMap"


def test_watch_stream_from_resource_version_replays_changes_in_order(core, ns):
    """A watch from a list's resourceVersion delivers exactly the later changes, in order,
    with increasing resourceVersions, and the DELETED event carries the last state."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, configmap("w", data={"v": "1"}))
    core.patch_namespaced_config_map("w", ns, {"data": {"v": "2"}})
    core.delete_namespaced_config_map("w", ns)
    w = watch.Watch()
    seen = []
    for e in w.stream(core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=5):
        seen.append((e["type"], e["object"].data, int(e["object"].metadata.resource_version)))
        if e["type"] == "DELETED":
            w.stop()
    assert [(t, d) for t, d, _ in seen] == [
        ("ADDED", {"v": "1"}),
        ("MODIFIED", {"v": "2"}),
        ("DELETED", {"v": "2"}),
    ]
    rvs = [r for _, _, r in seen]
    assert rvs == sorted(rvs) and rvs[0] > int(rv)


def test_watch_stream_delivers_live_changes(core, ns):
    """An open watch delivers a change made after it started."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    timer = threading.Timer(
        0.3, lambda: core.create_namespaced_config_map(ns, configmap("live"))
    )
    timer.start()
    try:
        w = watch.Watch()
        for e in w.stream(
            core.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10
        ):
            assert (e["type"], e["object"].metadata.name) == ("ADDED", "live")
            w.stop()
            break
        else:
            pytest.fail("the watch ended without the live event")
    finally:
        timer.join()


def test_watch_filters_events_by_label_selector(core, ns):
    """A watch with a labelSelector only sees matching objects."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, configmap("skip", {"app": "other"}))
    core.create_namespaced_config_map(ns, configmap("take", {"app": "web"}))
    events = raw_events(core, ns, resource_version=rv, label_selector="app=web")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "take")]


def test_watch_of_cluster_wide_path_spans_namespaces(core, ns):
    """The all-namespaces watch (/api/v1/configmaps?watch=True) sees objects of any
    namespace."""
    rv = core.list_config_map_for_all_namespaces(limit=1).metadata.resource_version
    core.create_namespaced_config_map(ns, configmap("anywhere", {"scope": ns}))
    w = watch.Watch()
    for e in w.stream(
        core.list_config_map_for_all_namespaces,
        resource_version=rv,
        label_selector=f"scope={ns}",
        timeout_seconds=5,
    ):
        assert e["object"].metadata.namespace == ns
        w.stop()
        break
    else:
        pytest.fail("no event")


def test_watch_from_compacted_resource_version_gets_410_then_relist_recovers(api, core, ns):
    """A watch from a resourceVersion older than the server keeps answers 200 with one ERROR
    event holding a 410 Expired Status (`too old resource version`); the Python Watch raises
    ApiException(410); a relist gives a fresh resourceVersion that a new watch accepts."""
    if HISTORY_WINDOW > 1000:
        pytest.skip("the server keeps too much history to expire it here (KINFORM_HISTORY_WINDOW)")
    name = unique("old")
    cm = core.create_namespaced_config_map(ns, configmap(name))
    old_rv = cm.metadata.resource_version
    for i in range(HISTORY_WINDOW + 10):
        core.patch_namespaced_config_map(name, ns, {"data": {"k": str(i)}})

    resp = core.list_namespaced_config_map(
        ns, watch=True, resource_version=old_rv, timeout_seconds=1, _preload_content=False
    )
    try:
        assert resp.status == 200
        first = json.loads(resp.data.decode().splitlines()[0])
    finally:
        resp.release_conn()
    assert first["type"] == "ERROR"
    assert first["object"]["kind"] == "Status"
    assert first["object"]["code"] == 410
    assert first["object"]["reason"] == "Expired"
    assert first["object"]["message"].startswith("too old resource version")

    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, ns, resource_version=old_rv, timeout_seconds=2
        ):
            pass
    assert e.value.status == 410

    fresh = core.list_namespaced_config_map(ns).metadata.resource_version
    core.patch_namespaced_config_map(name, ns, {"data": {"k": "after"}})
    w = watch.Watch()
    for ev in w.stream(
        core.list_namespaced_config_map, ns, resource_version=fresh, timeout_seconds=5
    ):
        assert ev["type"] == "MODIFIED" and ev["object"].data == {"k": "after"}
        w.stop()
        break
    else:
        pytest.fail("no event after the relist")


def test_watch_ends_after_timeout_seconds(core, ns):
    """timeoutSeconds closes the stream cleanly (no error event) after that time."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    events = raw_events(core, ns, resource_version=rv)
    assert events == []


def test_watch_on_a_named_object_via_field_selector(core, ns):
    """Watching one object the way clients do (fieldSelector metadata.name=...) sees only
    it."""
    rv = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, configmap("one"))
    core.create_namespaced_config_map(ns, configmap("two"))
    events = raw_events(core, ns, resource_version=rv, field_selector="metadata.name=two")
    assert [e["object"]["metadata"]["name"] for e in events] == ["two"]

