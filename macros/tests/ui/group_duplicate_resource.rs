#[kinform::api_group(group = "example.com")]
pub mod api {
    pub mod a {
        use kinform::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kinform(version = "v1", kind = "Foo", namespaced)]
        pub struct FooSpec {
            pub x: i32,
        }
    }
    pub mod b {
        use kinform::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kinform(version = "v1", kind = "Fooo", plural = "foos")]
        pub struct FoooSpec {
            pub y: i32,
        }
    }
}

fn main() {}
