//! `#[kinform::api_group]` on TestApiServer: two derived kinds of one group (one namespaced,
//! one cluster-scoped) and a second version, reached through the same accessors as generated
//! code: `client.example_com_v1().gadgets("ns")`, `factory.example_com().v1().gadgets()`.

use std::time::Duration;

use kinform::client::PostParams;
use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::{Client, Config, HasMetadata, Resource};

/// The example.com group.
#[kinform::api_group(group = "example.com")]
pub mod api {
    /// Version v1: two kinds.
    pub mod v1 {
        use kinform::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        /// Desired state of a Gadget.
        #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[kinform(version = "v1", kind = "Gadget", namespaced, status = "GadgetStatus")]
        pub struct GadgetSpec {
            /// Size.
            pub size: i32,
        }

        /// Observed state of a Gadget.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        pub struct GadgetStatus {
            /// Ready.
            pub ready: bool,
        }

        /// Desired state of a Workshop (cluster-scoped).
        #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[kinform(
            group = "example.com",
            version = "v1",
            kind = "Workshop",
            plural = "workshopz"
        )]
        pub struct WorkshopSpec {
            /// Where.
            pub city: String,
        }
    }

    /// An older version of Gadget, in a module of its own (not named after the version).
    pub mod old {
        use kinform::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        /// Desired state of a v1alpha1 Gadget.
        #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[kinform(version = "v1alpha1", kind = "Gadget", namespaced, served = false)]
        pub struct GadgetSpec {
            /// Size, as text.
            pub size: String,
        }
    }
}

use api::prelude::*;
use api::v1::{Gadget, GadgetInformerExt, GadgetSpec, GadgetStatus, Workshop, WorkshopSpec};

fn client(server: &TestApiServer) -> Client {
    let mut config = Config::new(server.url().parse().unwrap());
    config.default_namespace = "default".into();
    Client::new(config).unwrap()
}

#[test]
fn group_items_have_generated_names_and_paths() {
    // The same paths as kinform-gen's tree for this group.
    let _: fn(Client) -> api::v1::ExampleComV1Client = api::v1::ExampleComV1Client::new;
    let _: fn(Client, &str) -> api::v1::gadget_client::GadgetClient =
        api::v1::gadget_client::GadgetClient::new;
    let _: fn(Client) -> api::v1::workshop_client::WorkshopClient =
        api::v1::workshop_client::WorkshopClient::new;
    let _: fn(Client, &str) -> api::v1alpha1::gadget_client::GadgetClient =
        api::v1alpha1::gadget_client::GadgetClient::new;
    assert_eq!(<api::old::Gadget as Resource>::VERSION, "v1alpha1");
    assert_eq!(<Workshop as Resource>::GROUP, "example.com");
    // The group was given to the derive that left it out.
    assert_eq!(<Gadget as Resource>::GROUP, "example.com");
    assert_eq!(Gadget::crd().spec.group, "example.com");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_derived_kinds_through_the_group_accessors() {
    let server = TestApiServer::start().await.unwrap();
    for crd in [Gadget::crd(), Workshop::crd()] {
        server
            .register_crd(serde_json::to_value(crd).unwrap())
            .unwrap();
    }
    let c = client(&server);
    let pp = PostParams::default();

    // Clientset: client.example_com_v1().<plural>(..), as generated code.
    let gadgets = c.example_com_v1().gadgets("default");
    for i in 0..3 {
        gadgets
            .create(&pp, &Gadget::new(&format!("g{i}"), GadgetSpec { size: i }))
            .await
            .unwrap();
    }
    let mut g0 = gadgets.get("g0").await.unwrap();
    g0.status = Some(GadgetStatus { ready: true });
    gadgets.replace_status("g0", &pp, &g0).await.unwrap();
    c.example_com_v1()
        .workshopz()
        .create(
            &pp,
            &Workshop::new(
                "w1",
                WorkshopSpec {
                    city: "Oslo".into(),
                },
            ),
        )
        .await
        .unwrap();

    // Informers: factory.example_com().v1().<plural>(), as generated code.
    let factory = InformerFactory::new(c.clone());
    let gadget_informer = factory.example_com().v1().gadgets();
    let workshop_informer = factory.example_com().v1().workshopz();
    let (gi, wi) = (gadget_informer.informer(), workshop_informer.informer());
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(gi.has_synced() && wi.has_synced());

    let gadget_lister: api::v1::gadget_client::GadgetLister =
        factory.example_com().v1().gadgets().lister();
    assert_eq!(gadget_lister.list_all().len(), 3);
    let g0 = gadget_lister.get("default", "g0").unwrap();
    assert_eq!(g0.status, Some(GadgetStatus { ready: true }));
    assert_eq!(gadget_lister.get("default", "g2").unwrap().spec.size, 2);
    let workshops = factory.example_com().v1().workshopz().lister();
    assert_eq!(workshops.list_all().len(), 1);
    assert_eq!(workshops.list_all()[0].name(), "w1");
    // The group accessor and the derive's own accessor share one informer.
    assert!(std::sync::Arc::ptr_eq(&gi, &factory.gadgets().informer()));
    factory.shutdown().await;
    server.shutdown().await;
}
