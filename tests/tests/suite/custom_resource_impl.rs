//! A downstream crate can implement `HasMetadata` and `Resource` for its own types beside the
//! blanket impls for k8s-openapi types (the coherence rule generated and derived code relies on).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kinform::{HasMetadata, Resource, Scope};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Foo {
    metadata: ObjectMeta,
}

impl HasMetadata for Foo {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Resource for Foo {
    const GROUP: &'static str = "example.com";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "example.com/v1";
    const KIND: &'static str = "Foo";
    const PLURAL: &'static str = "foos";
    const SCOPE: Scope = Scope::Namespaced;
}

#[test]
fn local_types_implement_resource() {
    let mut foo = Foo::default();
    foo.metadata_mut().name = Some("a".into());
    foo.metadata_mut().namespace = Some("ns".into());
    assert_eq!(foo.key(), "ns/a");
    assert_eq!(
        Foo::api_resource().collection_path(Some("ns")),
        "/apis/example.com/v1/namespaces/ns/foos"
    );
}
