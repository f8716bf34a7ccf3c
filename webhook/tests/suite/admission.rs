//! Typed admission through `Webhooks::respond`: verdicts, what reaches the handler, the
//! mutator's patch, and the requests denied or refused before any handler.

use std::sync::{Arc, Mutex};

use http::StatusCode;
use kinform_core::HasMetadata;
use kinform_webhook::admission::{mutator_fn, validator_fn};
use kinform_webhook::{Operation, Request, Validator, Verdict, Webhooks};
use serde_json::{Value, json};

use crate::support::{Widget, admission_review, widget};

const VALIDATE: &str = "/validate-example-com-v1-widget";
const MUTATE: &str = "/mutate-example-com-v1-widget";

/// Denies widgets larger than 10, warns on odd sizes, refuses to shrink.
struct SizeRules;

impl Validator<Widget> for SizeRules {
    async fn validate(&self, request: &Request<Widget>) -> Verdict {
        let Some(new) = &request.object else {
            return Verdict::allow().audit_annotation("deleted", request.name.clone());
        };
        if new.spec.size > 10 {
            return Verdict::deny(format!("size {} is over 10", new.spec.size));
        }
        if let Some(old) = &request.old_object
            && new.spec.size < old.spec.size
        {
            return Verdict::deny_with_code(422, "a widget cannot shrink");
        }
        let verdict = Verdict::allow();
        if new.spec.size % 2 == 1 {
            verdict.warning("odd sizes are deprecated")
        } else {
            verdict
        }
    }
}

fn webhooks() -> Webhooks {
    Webhooks::new()
        .validate::<Widget, _>(SizeRules)
        .mutate(mutator_fn(|_r: &Request<Widget>, w: &mut Widget| {
            w.spec.color.get_or_insert_with(|| "red".into());
            w.labels_mut().insert("defaulted".into(), "true".into());
            Verdict::allow()
        }))
}

async fn answer(webhooks: &Webhooks, path: &str, review: &Value) -> Value {
    let reply = webhooks
        .respond(path, &serde_json::to_vec(review).unwrap())
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(
        review["response"]["uid"], "11111111-2222-3333-4444-555555555555",
        "the uid is echoed"
    );
    review["response"].clone()
}

#[tokio::test]
async fn validator_allows_denies_and_warns() {
    let w = webhooks();
    let ok = answer(
        &w,
        VALIDATE,
        &admission_review("CREATE", Some(widget(4)), None),
    )
    .await;
    assert_eq!(ok["allowed"], true);
    assert!(
        ok.get("status").is_none() && ok.get("warnings").is_none(),
        "{ok}"
    );

    let odd = answer(
        &w,
        VALIDATE,
        &admission_review("CREATE", Some(widget(3)), None),
    )
    .await;
    assert_eq!(odd["allowed"], true);
    assert_eq!(odd["warnings"], json!(["odd sizes are deprecated"]));

    let big = answer(
        &w,
        VALIDATE,
        &admission_review("CREATE", Some(widget(11)), None),
    )
    .await;
    assert_eq!(big["allowed"], false);
    assert_eq!(big["status"]["reason"], "Forbidden");
    assert_eq!(big["status"]["code"], 403);
    assert_eq!(big["status"]["message"], "size 11 is over 10");
    assert_eq!(big["status"]["status"], "Failure");

    let shrink = answer(
        &w,
        VALIDATE,
        &admission_review("UPDATE", Some(widget(2)), Some(widget(5))),
    )
    .await;
    assert_eq!(shrink["allowed"], false);
    assert_eq!(shrink["status"]["code"], 422);
    assert_eq!(shrink["status"]["reason"], "Invalid");

    let delete = answer(
        &w,
        VALIDATE,
        &admission_review("DELETE", None, Some(widget(5))),
    )
    .await;
    assert_eq!(delete["allowed"], true);
    assert_eq!(delete["auditAnnotations"], json!({"deleted": "w"}));
}

/// Operation, dryRun, userInfo, sub-resource, options and both objects reach the handler.
#[tokio::test]
async fn the_request_reaches_the_handler() {
    let seen: Arc<Mutex<Vec<Request<Widget>>>> = Arc::default();
    let record = seen.clone();
    let w = Webhooks::new().validate(validator_fn(move |r: &Request<Widget>| {
        record.lock().unwrap().push(r.clone());
        Verdict::allow()
    }));
    let mut review = admission_review("UPDATE", Some(widget(2)), Some(widget(1)));
    review["request"]["dryRun"] = json!(true);
    review["request"]["subResource"] = json!("status");
    review["request"]["options"] = json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
    review["request"]["userInfo"]["extra"] = json!({"scopes": ["a"]});
    answer(&w, VALIDATE, &review).await;
    let seen = seen.lock().unwrap();
    let r = &seen[0];
    assert_eq!(r.operation, Operation::Update);
    assert!(r.dry_run);
    assert_eq!(r.sub_resource.as_deref(), Some("status"));
    assert_eq!(r.namespace.as_deref(), Some("default"));
    assert_eq!(r.user_info.username.as_deref(), Some("alice"));
    assert_eq!(
        r.user_info.extra.as_ref().unwrap()["scopes"],
        vec!["a".to_string()]
    );
    assert_eq!(r.object.as_ref().unwrap().spec.size, 2);
    assert_eq!(r.old_object.as_ref().unwrap().spec.size, 1);
    assert_eq!(r.options.as_ref().unwrap()["kind"], "UpdateOptions");
}

/// The patch sets the defaults, keeps what the type does not model, and applies.
#[tokio::test]
async fn mutator_answers_a_json_patch() {
    let w = webhooks();
    let mut object = widget(4);
    object["spec"]["unmodelled"] = json!({"keep": true});
    object["status"] = json!({"ready": true});
    let response = answer(
        &w,
        MUTATE,
        &admission_review("CREATE", Some(object.clone()), None),
    )
    .await;
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    use base64::Engine as _;
    let patch = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().unwrap())
        .unwrap();
    let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    let mut expected = object;
    expected["spec"]["color"] = json!("red");
    expected["metadata"]["labels"] = json!({"defaulted": "true"});
    assert_eq!(patched, expected);

    // Already defaulted: no patch at all.
    let response = answer(&w, MUTATE, &admission_review("CREATE", Some(patched), None)).await;
    assert_eq!(response["allowed"], true);
    assert!(response.get("patch").is_none(), "{response}");

    // DELETE carries no object: admitted unchanged.
    let response = answer(
        &w,
        MUTATE,
        &admission_review("DELETE", None, Some(widget(1))),
    )
    .await;
    assert_eq!(response["allowed"], true);
    assert!(response.get("patch").is_none());
}

/// A mutator's denial carries no patch.
#[tokio::test]
async fn a_denying_mutator_patches_nothing() {
    let w = Webhooks::new().mutate(mutator_fn(|_r: &Request<Widget>, w: &mut Widget| {
        w.spec.size = 0;
        Verdict::deny("no")
    }));
    let response = answer(
        &w,
        MUTATE,
        &admission_review("CREATE", Some(widget(4)), None),
    )
    .await;
    assert_eq!(response["allowed"], false);
    assert!(response.get("patch").is_none() && response.get("patchType").is_none());
}

/// An object the type cannot read is denied with a message naming it; the uid is echoed
/// and the handler is never called.
#[tokio::test]
async fn undecodable_objects_are_denied() {
    let called = Arc::new(Mutex::new(0));
    let count = called.clone();
    let w = Webhooks::new().validate(validator_fn(move |_r: &Request<Widget>| {
        *count.lock().unwrap() += 1;
        Verdict::allow()
    }));
    let mut bad = widget(1);
    bad["spec"]["size"] = json!("large");
    for review in [
        admission_review("CREATE", Some(bad.clone()), None),
        admission_review("UPDATE", Some(widget(1)), Some(bad)),
        admission_review("CREATE", Some(json!([1, 2])), None),
    ] {
        let response = answer(&w, VALIDATE, &review).await;
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 400);
        let message = response["status"]["message"].as_str().unwrap();
        assert!(
            message.contains("is not a valid example.com/v1 Widget"),
            "{message}"
        );
    }
    assert_eq!(*called.lock().unwrap(), 0);

    // Another kind on this route (a scale sub-resource's Scale).
    let mut scale = admission_review("UPDATE", Some(json!({"spec": {"replicas": 1}})), None);
    scale["request"]["kind"] = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
    let response = answer(&w, VALIDATE, &scale).await;
    assert_eq!(response["allowed"], false);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .contains("the request's object is autoscaling/v1 Scale"),
        "{response}"
    );
}

/// CONNECT's object is the connect options, handed over as JSON.
#[tokio::test]
async fn connect_options_are_json() {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let record = seen.clone();
    let w = Webhooks::new().validate(validator_fn(move |r: &Request<Widget>| {
        assert!(r.object.is_none());
        *record.lock().unwrap() = r.connect_options.clone();
        Verdict::allow()
    }));
    let mut review = admission_review(
        "CONNECT",
        Some(json!({"kind": "PodExecOptions", "command": ["sh"]})),
        None,
    );
    review["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "PodExecOptions"});
    assert_eq!(answer(&w, VALIDATE, &review).await["allowed"], true);
    assert_eq!(
        seen.lock().unwrap().as_ref().unwrap()["command"],
        json!(["sh"])
    );
}

/// Bodies that are not a v1 AdmissionReview get 400 with a plain text reason; unknown paths
/// 404.
#[tokio::test]
async fn malformed_reviews_are_refused() {
    let w = webhooks();
    let v1beta1 = {
        let mut r = admission_review("CREATE", Some(widget(1)), None);
        r["apiVersion"] = json!("admission.k8s.io/v1beta1");
        serde_json::to_vec(&r).unwrap()
    };
    let no_request = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec();
    let bad_operation = {
        let mut r = admission_review("PATCH", Some(widget(1)), None);
        r["request"]["operation"] = json!("PATCH");
        serde_json::to_vec(&r).unwrap()
    };
    for (body, expect) in [
        (b"not json".to_vec(), "not an AdmissionReview"),
        (b"".to_vec(), "not an AdmissionReview"),
        (v1beta1, "expected a admission.k8s.io/v1 AdmissionReview"),
        (no_request, "has no request"),
        (bad_operation, "not an AdmissionReview"),
    ] {
        let reply = w.respond(VALIDATE, &body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        let text = String::from_utf8_lossy(&reply.body);
        assert!(text.contains(expect), "{text}");
    }
    let reply = w.respond("/nowhere", b"{}").await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}
