#[kinform::api_group(group = "example.com")]
pub mod api {
    use kinform::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kinform(group = "other.io", version = "v1", kind = "Foo", namespaced)]
    pub struct FooSpec {
        pub x: i32,
    }
}

fn main() {}
