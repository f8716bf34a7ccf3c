use kinform::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example.com", version = "v1", kind = "Foo", served = false, storage)]
pub struct FooSpec {
    pub x: i32,
}

fn main() {}
