use kinform::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(group = "example", version = "V1", kind = "Foo", plural = "Foos", status = "not a type")]
pub struct FooSpec {
    pub x: i32,
}

fn main() {}
