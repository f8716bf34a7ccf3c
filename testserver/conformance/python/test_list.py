"""LIST with label and field selectors and pagination (limit/continue), as
k8s.io/apiserver's generic registry answers it."""

import pytest
from kubernetes.client.rest import ApiException

from support import configmap, pod, raw, status_of


def names(items):
    return sorted(i.metadata.name for i in items)


def test_list_filters_by_label_selector(core, ns):
    """labelSelector supports equality, inequality, set-based and existence requirements."""
    core.create_namespaced_config_map(ns, configmap("a", {"app": "web", "tier": "front"}))
    core.create_namespaced_config_map(ns, configmap("b", {"app": "web", "tier": "back"}))
    core.create_namespaced_config_map(ns, configmap("c", {"app": "db"}))

    def sel(s):
        return names(core.list_namespaced_config_map(ns, label_selector=s).items)

    assert sel("app=web") == ["a", "b"]
    assert sel("app!=web") == ["c"]
    assert sel("tier in (front,middle)") == ["a"]
    assert sel("tier notin (front)") == ["b", "c"]
    assert sel("tier") == ["a", "b"]
    assert sel("!tier") == ["c"]
    assert sel("app=web,tier=back") == ["b"]


def test_list_filters_by_field_selector(core, ns):
    """fieldSelector on metadata.name (every resource) and spec.nodeName (a pod field):
    `=`, `!=`, and an empty value matching unscheduled pods."""
    core.create_namespaced_pod(ns, pod("p1"))
    core.create_namespaced_pod(ns, pod("p2"))

    def sel(s):
        return names(core.list_namespaced_pod(ns, field_selector=s).items)

    assert sel("metadata.name=p2") == ["p2"]
    assert sel("metadata.name!=p2") == ["p1"]
    assert sel("spec.nodeName=") == ["p1", "p2"]
    assert sel("spec.nodeName=node-1") == []


def test_created_pod_is_pending_and_selectable_by_phase(core, ns):
    """The pod strategy's PrepareForCreate sets status.phase Pending (and qosClass), so
    fieldSelector status.phase=Pending finds a new pod."""
    created = core.create_namespaced_pod(ns, pod("p"))
    assert created.status.phase == "Pending"
    assert created.status.qos_class == "BestEffort"
    assert names(core.list_namespaced_pod(ns, field_selector="status.phase=Pending").items) == [
        "p"
    ]


def test_unsupported_field_selector_is_400(core, ns):
    """A field a resource does not index is refused: 400 BadRequest `field label not
    supported`."""
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(ns, field_selector="data.k=v")
    assert e.value.status == 400
    assert "field label not supported" in status_of(e.value)["message"]


def test_list_all_namespaces_with_selector(core, ns):
    """The cluster-wide list path (/api/v1/configmaps) spans namespaces and applies
    selectors."""
    core.create_namespaced_config_map(ns, configmap("wide", {"scope": ns}))
    items = core.list_config_map_for_all_namespaces(label_selector=f"scope={ns}").items
    assert [(i.metadata.namespace, i.metadata.name) for i in items] == [(ns, "wide")]


def test_pagination_with_limit_and_continue(core, ns):
    """limit cuts a list into pages linked by metadata.continue; every page shares the first
    page's resourceVersion (one consistent snapshot), remainingItemCount counts what is left,
    and the last page has no continue token."""
    for i in range(5):
        core.create_namespaced_config_map(ns, configmap(f"cm-{i}"))
    page = core.list_namespaced_config_map(ns, limit=2)
    seen = names(page.items)
    assert len(page.items) == 2
    assert page.metadata._continue
    assert page.metadata.remaining_item_count == 3
    rv = page.metadata.resource_version
    # A write between pages does not show in the snapshot being paged.
    core.create_namespaced_config_map(ns, configmap("cm-9"))
    while page.metadata._continue:
        page = core.list_namespaced_config_map(ns, limit=2, _continue=page.metadata._continue)
        assert page.metadata.resource_version == rv
        seen += names(page.items)
    assert sorted(seen) == [f"cm-{i}" for i in range(5)]


def test_list_returns_kind_and_resource_version(api, ns, core):
    """A list answers kind ConfigMapList, apiVersion v1 and a resourceVersion for a
    following watch."""
    code, body = raw(api, "GET", f"/api/v1/namespaces/{ns}/configmaps")
    assert code == 200
    assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert int(body["metadata"]["resourceVersion"]) > 0


def test_invalid_continue_token_is_400(core, ns):
    """A continue token that does not decode is 400 BadRequest."""
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(ns, limit=1, _continue="not-a-token")
    assert e.value.status == 400
