"""Fixtures of the webhook acceptance tests driven by the official Python client.

The Rust test `conformance_python::python_client_sees_webhook_decisions` starts a
TestApiServer with the webhooks of `kinform_tests::webhook::Demo` registered (a mutating
webhook defaulting the label `tier: standard` on ConfigMaps, a validating one refusing
ConfigMaps without a `team` label, one refusing Secrets named `blocked-*`, and the
`widgets.example.com` CRD converted between `v1` and `v2` by a webhook), runs
`test_webhooks_up.py`, stops the webhooks, and runs `test_webhooks_down.py`. Every test
states the kube-apiserver behaviour it checks.
"""

import json
import os
import uuid

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException


@pytest.fixture(scope="session")
def api():
    if not os.environ.get("KUBECONFIG"):
        pytest.exit("KUBECONFIG must name the kubeconfig of a running kinform-testserver", returncode=4)
    configuration = client.Configuration()
    config.load_kube_config(client_configuration=configuration)
    with client.ApiClient(configuration) as api_client:
        yield api_client


@pytest.fixture(scope="session")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="session")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture
def name(request):
    """A name of the test's own."""
    return request.node.name.replace("_", "-").lower()[5:40].strip("-") + "-" + uuid.uuid4().hex[:6]


def refused(call):
    """The status code and the `metav1.Status` of a refused call."""
    with pytest.raises(ApiException) as e:
        call()
    return e.value.status, json.loads(e.value.body)
