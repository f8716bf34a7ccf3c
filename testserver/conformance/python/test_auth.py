"""Self-review APIs a client uses to ask who it is and what it may do."""

import pytest
from kubernetes import client


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
