"""Self-review APIs a client uses to ask who it is and what it may do."""

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def test_self_subject_access_review_answers_allowed(api, ns):
    """POST selfsubjectaccessreviews answers the review with status.allowed (every request
    is allowed by this server's authorizer) and echoes the spec."""
    review = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {
            "spec": {
                "resourceAttributes": {"namespace": ns, "verb": "create", "resource": "pods"}
            }
        }
    )
    assert review.status.allowed is True
    assert review.spec.resource_attributes.resource == "pods"


def test_self_subject_rules_review_lists_rules(api, ns):
    """POST selfsubjectrulesreviews answers resource rules for the namespace."""
    review = client.AuthorizationV1Api(api).create_self_subject_rules_review(
        {"spec": {"namespace": ns}}
    )
    assert review.status.resource_rules
    assert review.status.incomplete is False


def test_self_subject_review_names_the_user(api):
    """POST selfsubjectreviews (authentication.k8s.io/v1) answers the caller's user info;
    every authenticated user is in group system:authenticated."""
    review = client.AuthenticationV1Api(api).create_self_subject_review({"metadata": {}})
    assert review.status.user_info.username
    assert "system:authenticated" in review.status.user_info.groups


def test_token_request_issues_a_service_account_token(core, ns):
    """POST serviceaccounts/{name}/token (authentication.k8s.io/v1 TokenRequest) answers as
    kube-apiserver's TokenREST: 404 when the ServiceAccount is missing; otherwise the request
    with spec.audiences echoed (the API server's audience when empty), spec.expirationSeconds
    (3600 by default), status.token and status.expirationTimestamp; a lifetime under ten
    minutes is 422 Invalid on spec.expirationSeconds."""
    request = {"spec": {"audiences": ["https://example.com"], "expirationSeconds": 1800}}
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_service_account_token("robot", ns, request)
    assert missing.value.status == 404

    core.create_namespaced_service_account(ns, {"metadata": {"name": "robot"}})
    answer = core.create_namespaced_service_account_token("robot", ns, request)
    assert answer.spec.audiences == ["https://example.com"]
    assert answer.spec.expiration_seconds == 1800
    assert answer.status.token.count(".") == 2
    lifetime = answer.status.expiration_timestamp - answer.metadata.creation_timestamp
    assert lifetime.total_seconds() == 1800

    default = core.create_namespaced_service_account_token("robot", ns, {"spec": {}})
    assert default.spec.expiration_seconds == 3600
    assert default.spec.audiences == ["https://kubernetes.default.svc.cluster.local"]

    with pytest.raises(ApiException) as short:
        core.create_namespaced_service_account_token(
            "robot", ns, {"spec": {"expirationSeconds": 599}}
        )
    assert short.value.status == 422
    body = json.loads(short.value.body)
    assert body["details"]["causes"][0]["field"] == "spec.expirationSeconds"
