"""With the webhooks down: `failurePolicy` decides, as on a cluster whose webhook pod is gone."""

from conftest import refused


def test_fail_refuses_when_the_webhook_cannot_be_called(core, name):
    """failurePolicy Fail: 500 InternalError `failed calling webhook "team.example.com"`."""
    body = {"metadata": {"name": name, "labels": {"team": "payments"}}}
    code, status = refused(lambda: core.create_namespaced_config_map("default", body))
    assert code == 500 and status["reason"] == "InternalError"
    assert status["message"].startswith(
        'Internal error occurred: failed calling webhook "team.example.com": failed to call webhook: Post "https://127.0.0.1:'
    )
    assert status["message"].endswith("connect: connection refused")


def test_ignore_admits_when_the_webhook_cannot_be_called(core):
    """failurePolicy Ignore: the request goes on as if the webhook had admitted it."""
    created = core.create_namespaced_secret("default", {"metadata": {"name": "blocked-down"}})
    assert created.metadata.name == "blocked-down"


def test_reads_in_the_converted_version_fail_without_the_conversion_webhook(custom):
    """A list in the version the webhook serves fails (`conversion webhook for
    example.com/v1, Kind=Widget failed: ...`); the storage version is still served."""
    code, status = refused(lambda: custom.list_namespaced_custom_object("example.com", "v2", "default", "widgets"))
    assert code == 500
    assert status["message"].startswith("conversion webhook for example.com/v1, Kind=Widget failed: Post ")
    listed = custom.list_namespaced_custom_object("example.com", "v1", "default", "widgets")
    assert listed["items"] and all(i["apiVersion"] == "example.com/v1" for i in listed["items"])
