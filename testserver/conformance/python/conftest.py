"""Fixtures of the TestApiServer conformance suite driven by the official Python client.

The suite talks to a running server through the kubeconfig in ``KUBECONFIG`` (HTTPS, the
server's own CA, a bearer token), exactly as a user's program would. Start one with

    cargo run -p kinform-testserver -- --kubeconfig /tmp/kc
    KUBECONFIG=/tmp/kc python3 -m pytest -q testserver/conformance/python

or let ``cargo test -p kinform-testserver --test conformance_python`` do both.

Every test states the kube-apiserver 1.35 behaviour it checks. Tests are isolated from each
other by namespaces (``ns``) and by unique names for cluster-scoped objects (``unique``), so
they may run against one shared server in any order.
"""

import os

import pytest
from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

from support import unique


@pytest.fixture(scope="session")
def api():
    """An ApiClient configured from KUBECONFIG, as `config.load_kube_config()` does."""
    if not os.environ.get("KUBECONFIG"):
        pytest.exit(
            "KUBECONFIG must name the kubeconfig of a running kinform-testserver", returncode=4
        )
    configuration = client.Configuration()
    config.load_kube_config(client_configuration=configuration)
    with client.ApiClient(configuration) as api_client:
        yield api_client


@pytest.fixture(scope="session")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="session")
def apps(api):
    return client.AppsV1Api(api)


@pytest.fixture(scope="session")
def batch(api):
    return client.BatchV1Api(api)


@pytest.fixture(scope="session")
def rbac(api):
    return client.RbacAuthorizationV1Api(api)


@pytest.fixture(scope="session")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture(scope="session")
def apiext(api):
    return client.ApiextensionsV1Api(api)


@pytest.fixture
def dyn(api, tmp_path):
    """The dynamic client (discovery-driven), with a discovery cache of its own."""
    return dynamic.DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))


@pytest.fixture
def ns(core, request):
    """A namespace of the test's own, deleted afterwards."""
    name = unique(request.node.name.replace("_", "-").lower()[:40].strip("-"))
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        core.delete_namespace(name)
    except ApiException as e:
        if e.status != 404:
            raise


