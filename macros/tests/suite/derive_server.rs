//! A derived CRD on TestApiServer: the typed client does CRUD and status, the derived
//! informer (through the factory accessor) syncs the objects, the lister reads them.

use std::time::Duration;

use kinform::client::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kinform::informer::InformerFactory;
use kinform::testing::TestApiServer;
use kinform::{Client, Config, CustomResource, HasMetadata, LabelSelector};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Desired state of a Robot.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "robots.example.com",
    version = "v1",
    kind = "Robot",
    namespaced,
    status = "RobotStatus",
    shortname = "rb",
    printcolumn(name = "Arms", type = "integer", json_path = ".spec.arms")
)]
pub struct RobotSpec {
    /// Number of arms.
    pub arms: i32,
    /// Model name.
    pub model: String,
}

/// Observed state of a Robot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RobotStatus {
    /// Whether it is on.
    pub powered: bool,
}

/// A cluster-scoped resource.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "robots.example.com", version = "v1", kind = "Factory")]
pub struct FactorySpec {
    /// Where.
    pub city: String,
}

fn client(server: &TestApiServer) -> Client {
    let mut config = Config::new(server.url().parse().unwrap());
    config.default_namespace = "default".into();
    Client::new(config).unwrap()
}

/// Polls `cond` every 20 ms until it holds, for at most `limit`.
async fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

fn robot(name: &str, arms: i32) -> Robot {
    let mut r = Robot::new(
        name,
        RobotSpec {
            arms,
            model: "rx".into(),
        },
    );
    r.metadata.labels = Some([("arms".to_owned(), arms.to_string())].into());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derived_client_crud_and_status() {
    let server = TestApiServer::start().await.unwrap();
    server
        .register_crd(serde_json::to_value(Robot::crd()).unwrap())
        .unwrap();
    server
        .register_crd(serde_json::to_value(Factory::crd()).unwrap())
        .unwrap();
    let c = client(&server);
    let robots = RobotClient::new(c.clone(), "default");
    let pp = PostParams::default();

    let created = robots.create(&pp, &robot("r1", 2)).await.unwrap();
    assert_eq!(created.name(), "r1");
    assert_eq!(created.spec.arms, 2);
    assert!(!created.resource_version().is_empty());

    let mut got = robots.get("r1").await.unwrap();
    got.spec.arms = 4;
    let replaced = robots.replace("r1", &pp, &got).await.unwrap();
    assert_eq!(replaced.spec.arms, 4);

    let patched = robots
        .patch(
            "r1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "model": "ry" } })),
        )
        .await
        .unwrap();
    assert_eq!(patched.spec.model, "ry");

    // Status through the status subresource.
    let mut with_status = patched.clone();
    with_status.status = Some(RobotStatus { powered: true });
    let st = robots
        .replace_status("r1", &pp, &with_status)
        .await
        .unwrap();
    assert_eq!(st.status, Some(RobotStatus { powered: true }));
    let st = robots
        .patch_status(
            "r1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "powered": false } })),
        )
        .await
        .unwrap();
    assert_eq!(st.status, Some(RobotStatus { powered: false }));
    assert_eq!(
        robots.get_status("r1").await.unwrap().status,
        Some(RobotStatus { powered: false })
    );

    robots.create(&pp, &robot("r2", 1)).await.unwrap();
    let list = robots.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    robots.delete("r2", &DeleteParams::default()).await.unwrap();
    assert!(robots.get("r2").await.is_err());

    // Cluster-scoped.
    let factories = FactoryClient::new(c.clone());
    let f = factories
        .create(
            &pp,
            &Factory::new(
                "f1",
                FactorySpec {
                    city: "Oslo".into(),
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(f.namespace(), None);
    assert_eq!(factories.get("f1").await.unwrap().spec.city, "Oslo");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn derived_informer_syncs_through_the_factory_accessor() {
    let server = TestApiServer::start().await.unwrap();
    server
        .register_crd(serde_json::to_value(Robot::crd()).unwrap())
        .unwrap();
    server.create_namespace("lab").unwrap();
    let c = client(&server);
    let pp = PostParams::default();
    let robots = RobotClient::new(c.clone(), "default");
    for i in 0..5 {
        robots
            .create(&pp, &robot(&format!("r{i}"), i))
            .await
            .unwrap();
    }
    let lab = RobotClient::new(c.clone(), "lab");
    lab.create(&pp, &robot("l1", 7)).await.unwrap();

    let factory = InformerFactory::new(c.clone());
    let handle = factory.robots();
    let informer = handle.informer();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(informer.has_synced());
    let lister: RobotLister = handle.lister();
    assert_eq!(lister.list_all().len(), 6);
    assert_eq!(lister.get("lab", "l1").unwrap().spec.arms, 7);
    let three = LabelSelector::parse("arms=3").unwrap();
    assert_eq!(lister.list(&three)[0].name(), "r3");
    assert_eq!(lister.namespaced("lab").list_all().len(), 1);

    // Later writes reach the cache.
    robots.delete("r0", &DeleteParams::default()).await.unwrap();
    let mut r1 = robots.get("r1").await.unwrap();
    r1.spec.model = "new".into();
    robots.replace("r1", &pp, &r1).await.unwrap();
    let synced = eventually(Duration::from_secs(10), || {
        lister.get("default", "r0").is_none()
            && lister
                .get("default", "r1")
                .is_some_and(|r| r.spec.model == "new")
    })
    .await;
    assert!(synced, "the informer saw the delete and the update");
    factory.shutdown().await;
    server.shutdown().await;
}
