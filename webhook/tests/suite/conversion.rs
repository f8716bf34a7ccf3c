//! CRD conversion through the hub: each object converted or the whole review failed, and
//! metadata kept as kube-apiserver requires.

use http::StatusCode;
use kinform_webhook::Webhooks;
use kinform_webhook::conversion::hub;
use serde_json::{Value, json};

use crate::support::{conversion_review, gadget_v1, v1, v2};

const PATH: &str = "/convert/gadgets.example.com";

fn webhooks() -> Webhooks {
    Webhooks::new().convert(hub::<v2::Gadget>().spoke::<v1::Gadget>())
}

async fn answer(webhooks: &Webhooks, review: &Value) -> Value {
    let reply = webhooks
        .respond(PATH, &serde_json::to_vec(review).unwrap())
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    let review: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(review["kind"], "ConversionReview");
    assert_eq!(review["response"]["uid"], "c-1");
    review["response"].clone()
}

#[tokio::test]
async fn converts_every_object_both_ways() {
    let w = webhooks();
    let mut a = gadget_v1("a", "first");
    // A metadata member ObjectMeta does not model survives as sent.
    a["metadata"]["futureField"] = json!("kept");
    let b = gadget_v1("b", "second");
    let response = answer(&w, &conversion_review("example.com/v2", vec![a.clone(), b])).await;
    assert_eq!(response["result"]["status"], "Success");
    let converted = response["convertedObjects"].as_array().unwrap();
    assert_eq!(converted.len(), 2);
    assert_eq!(converted[0]["apiVersion"], "example.com/v2");
    assert_eq!(converted[0]["kind"], "Gadget");
    assert_eq!(converted[0]["spec"], json!({"names": ["first"]}));
    assert_eq!(converted[0]["metadata"], a["metadata"], "metadata as sent");
    assert_eq!(converted[1]["spec"], json!({"names": ["second"]}));

    // And back, through the hub.
    let response = answer(
        &w,
        &conversion_review("example.com/v1", vec![converted[0].clone()]),
    )
    .await;
    assert_eq!(response["result"]["status"], "Success");
    assert_eq!(response["convertedObjects"][0], a);
}

/// Objects of several versions in one review; one already at the desired version comes back
/// as it was.
#[tokio::test]
async fn mixed_versions() {
    let w = webhooks();
    let v2_object = json!({
        "apiVersion": "example.com/v2", "kind": "Gadget",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"names": ["x", "y"]}
    });
    let response = answer(
        &w,
        &conversion_review(
            "example.com/v2",
            vec![gadget_v1("a", "n"), v2_object.clone()],
        ),
    )
    .await;
    let converted = response["convertedObjects"].as_array().unwrap();
    assert_eq!(converted[0]["spec"], json!({"names": ["n"]}));
    assert_eq!(converted[1], v2_object);
}

/// One object that cannot be converted fails the whole review with a message naming it.
#[tokio::test]
async fn one_bad_object_fails_the_review() {
    let w = webhooks();
    let mut bad = gadget_v1("b", "x");
    bad["spec"]["name"] = json!(42);
    let unknown =
        json!({"apiVersion": "example.com/v9", "kind": "Gadget", "metadata": {"name": "z"}});
    let other_kind =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    for (objects, expect) in [
        (vec![gadget_v1("a", "ok"), bad], "object 1 of the review"),
        (
            vec![unknown],
            "no conversion for apiVersion \"example.com/v9\"",
        ),
        (vec![other_kind], "is of kind \"Widget\", not Gadget"),
        (vec![json!("text")], "not a JSON object"),
    ] {
        let response = answer(&w, &conversion_review("example.com/v2", objects)).await;
        assert_eq!(response["result"]["status"], "Failure");
        let message = response["result"]["message"].as_str().unwrap();
        assert!(message.contains(expect), "{message}");
        assert_eq!(response["convertedObjects"], json!([]));
    }
    let response = answer(
        &w,
        &conversion_review("example.com/v3", vec![gadget_v1("a", "ok")]),
    )
    .await;
    assert_eq!(response["result"]["status"], "Failure");
}

mod renaming {
    //! The metadata changes of the hubs below.
    use super::super::support::v2;

    pub fn rename(mut g: v2::Gadget) -> v2::Gadget {
        g.metadata.name = Some("renamed".into());
        g
    }
    pub fn relabel(mut g: v2::Gadget) -> v2::Gadget {
        g.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("converted".into(), "yes".into());
        g.metadata.annotations = None;
        g
    }
    pub fn drop_uid(mut g: v2::Gadget) -> v2::Gadget {
        g.metadata.uid = None;
        g.metadata.generation = Some(99);
        g
    }
}

/// Hub and spoke types whose `From` changes metadata: only labels and annotations may change.
mod meta {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kinform_core::{HasMetadata, Resource, Scope};
    use serde::{Deserialize, Serialize};

    use super::super::support::v1;

    /// A v2 hub type whose conversion from v1 makes one change to the metadata.
    macro_rules! hub {
        ($name:ident, $change:path) => {
            #[derive(Clone, Debug, Default, Serialize, Deserialize)]
            pub struct $name {
                #[serde(default)]
                pub metadata: ObjectMeta,
                pub spec: crate::support::v2::GadgetSpec,
            }
            impl HasMetadata for $name {
                fn metadata(&self) -> &ObjectMeta {
                    &self.metadata
                }
                fn metadata_mut(&mut self) -> &mut ObjectMeta {
                    &mut self.metadata
                }
            }
            impl Resource for $name {
                const GROUP: &'static str = "example.com";
                const VERSION: &'static str = "v2";
                const API_VERSION: &'static str = "example.com/v2";
                const KIND: &'static str = "Gadget";
                const PLURAL: &'static str = "gadgets";
                const SCOPE: Scope = Scope::Namespaced;
            }
            impl From<v1::Gadget> for $name {
                fn from(g: v1::Gadget) -> Self {
                    let g = $change(crate::support::v2::Gadget::from(g));
                    Self {
                        metadata: g.metadata,
                        spec: g.spec,
                    }
                }
            }
            impl From<$name> for v1::Gadget {
                fn from(g: $name) -> Self {
                    crate::support::v2::Gadget {
                        metadata: g.metadata,
                        spec: g.spec,
                    }
                    .into()
                }
            }
        };
    }
    hub!(Renamed, super::renaming::rename);
    hub!(Relabelled, super::renaming::relabel);
    hub!(UidDropped, super::renaming::drop_uid);
}

#[tokio::test]
async fn only_labels_and_annotations_may_change() {
    let review = || {
        let mut g = gadget_v1("a", "n");
        g["metadata"]["annotations"] = json!({"note": "x"});
        conversion_review("example.com/v2", vec![g])
    };
    let renamed = Webhooks::new().convert(hub::<meta::Renamed>().spoke::<v1::Gadget>());
    let response = answer(&renamed, &review()).await;
    assert_eq!(response["result"]["status"], "Failure");
    let message = response["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("changed metadata.name; only labels and annotations may change"),
        "{message}"
    );

    let dropped = Webhooks::new().convert(hub::<meta::UidDropped>().spoke::<v1::Gadget>());
    let response = answer(&dropped, &review()).await;
    let message = response["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("metadata.generation, metadata.uid"),
        "{message}"
    );

    let relabelled = Webhooks::new().convert(hub::<meta::Relabelled>().spoke::<v1::Gadget>());
    let response = answer(&relabelled, &review()).await;
    assert_eq!(response["result"]["status"], "Success");
    let metadata = &response["convertedObjects"][0]["metadata"];
    assert_eq!(metadata["labels"], json!({"app": "g", "converted": "yes"}));
    assert!(
        metadata.get("annotations").is_none(),
        "removed annotations stay removed"
    );
    assert_eq!(metadata["resourceVersion"], "7");
}

#[tokio::test]
async fn malformed_conversion_reviews_are_refused() {
    let w = webhooks();
    for body in [
        &b"{"[..],
        br#"{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"example.com/v1"}}"#,
        br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#,
        br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u"}}"#,
    ] {
        let reply = w.respond(PATH, body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", String::from_utf8_lossy(body));
    }
}
