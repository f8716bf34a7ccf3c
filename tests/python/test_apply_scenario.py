"""The typed server-side apply scenario of `tests/tests/suite/client_apply.rs`
(`the_python_client_applying_the_same_scenario_agrees_on_managed_fields`), driven by the
official Python client with hand-written intents: each step applies to the BackupSchedule
named in ``KINFORM_APPLY_OBJECT`` in namespace ``default``, as a user of the Python client
writes it (PATCH application/apply-patch+yaml with fieldManager). The Rust side compares
the managedFields both objects end with.
"""

import os

from kubernetes import client, config

GROUP, VERSION, PLURAL = "ops.example.com", "v1", "backupschedules"
T = "2026-01-02T03:04:05Z"


def intent(name, spec=None, status=None):
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "BackupSchedule", "metadata": {"name": name}}
    if spec is not None:
        body["spec"] = spec
    if status is not None:
        body["status"] = status
    return body


def orders(schedule):
    return {"schedule": schedule, "target": {"database": "orders"}}


def hooks(names):
    return [{"name": n, "command": [f"run-{n}"]} for n in names]


def conditions(types):
    return {"conditions": [
        {"type": t, "status": "True", "reason": "Fine", "message": "fine", "lastTransitionTime": T}
        for t in types
    ]}


def apply(api, name, manager, body, subresource=""):
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/{PLURAL}/{name}"
    if subresource:
        path += "/" + subresource
    resp = api.call_api(
        path,
        "PATCH",
        query_params=[("fieldManager", manager)],
        header_params={"Accept": "application/json", "Content-Type": "application/apply-patch+yaml"},
        body=body,
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=False,
    )
    assert resp[0].status in (200, 201), resp[0].data


def test_the_scenario_applies():
    """kube-apiserver records, per field manager, the fields of that manager's last intent
    (minus those it lost): the steps below leave managedFields that depend only on the
    intents, whichever client sent them."""
    configuration = client.Configuration()
    config.load_kube_config(client_configuration=configuration)
    name = os.environ["KINFORM_APPLY_OBJECT"]
    with client.ApiClient(configuration) as api:
        spec = orders("0 1 * * *")
        spec["hooks"] = hooks(["dump", "vacuum"])
        apply(api, name, "a", intent(name, spec=spec))
        apply(api, name, "b", intent(name, spec={"hooks": hooks(["notify", "vacuum"])}))
        apply(api, name, "a", intent(name, status=conditions(["Ready", "Synced"])), "status")
        apply(api, name, "b", intent(name, status=conditions(["Synced"])), "status")
        apply(api, name, "a", intent(name, spec=orders("0 2 * * *")))
