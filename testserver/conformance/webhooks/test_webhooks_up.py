"""With the webhooks up: their decisions, defaults and conversions as kube-apiserver applies them."""

from conftest import refused


def configmap(name, labels=None):
    return {"metadata": {"name": name, "labels": labels or {}}, "data": {"k": "v"}}


def test_a_validating_webhook_refusal_is_the_webhooks_status(core, name):
    """ToStatusErr: the webhook's code (403) and its message behind `admission webhook "x"
    denied the request: `; nothing is stored."""
    code, status = refused(lambda: core.create_namespaced_config_map("default", configmap(name)))
    assert code == 403
    assert status["kind"] == "Status" and status["status"] == "Failure" and status["code"] == 403
    assert status["message"] == 'admission webhook "team.example.com" denied the request: label "team" is required'
    code, _ = refused(lambda: core.read_namespaced_config_map(name, "default"))
    assert code == 404


def test_a_mutating_webhook_defaults_before_validation(core, name):
    """Mutating admission runs before validation and storage: the default is in the answer
    and in the stored object."""
    created = core.create_namespaced_config_map("default", configmap(name, {"team": "payments"}))
    assert created.metadata.labels == {"team": "payments", "tier": "standard"}
    assert core.read_namespaced_config_map(name, "default").metadata.labels["tier"] == "standard"


def test_an_update_is_admitted_too(core, name):
    """UPDATE is an operation of the rules: removing the required label is refused."""
    core.create_namespaced_config_map("default", configmap(name, {"team": "payments"}))
    code, status = refused(
        lambda: core.patch_namespaced_config_map(name, "default", {"metadata": {"labels": {"team": None}}})
    )
    assert code == 403
    assert status["message"].endswith('label "team" is required')


def test_a_crd_converted_by_a_webhook_reads_in_both_versions(custom, name):
    """A CRD with `strategy: Webhook`: written in v2, read in v1 and v2 in each version's
    form, with one metadata."""
    body = {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": name},
            "spec": {"width": 3, "height": 4}}
    created = custom.create_namespaced_custom_object("example.com", "v2", "default", "widgets", body)
    assert created["spec"] == {"width": 3, "height": 4}
    v1 = custom.get_namespaced_custom_object("example.com", "v1", "default", "widgets", name)
    v2 = custom.get_namespaced_custom_object("example.com", "v2", "default", "widgets", name)
    assert (v1["apiVersion"], v1["spec"]) == ("example.com/v1", {"size": "3x4"})
    assert (v2["apiVersion"], v2["spec"]) == ("example.com/v2", {"width": 3, "height": 4})
    assert v1["metadata"]["resourceVersion"] == v2["metadata"]["resourceVersion"]
    listed = custom.list_namespaced_custom_object("example.com", "v2", "default", "widgets")
    assert {"width": 3, "height": 4} in [i["spec"] for i in listed["items"]]


def test_a_secret_the_lenient_webhook_refuses(core):
    """While it answers, a `failurePolicy: Ignore` webhook's refusal still refuses."""
    code, status = refused(
        lambda: core.create_namespaced_secret("default", {"metadata": {"name": "blocked-up"}})
    )
    assert code == 403
    assert status["message"] == 'admission webhook "secrets.example.com" denied the request: secret "blocked-up" is blocked'
