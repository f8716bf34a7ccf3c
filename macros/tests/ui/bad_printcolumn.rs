use kinform::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Foo",
    printcolumn(name = "X", type = "int", json_path = ".spec.x"),
    printcolumn(name = "Y", json_path = ".spec.y")
)]
pub struct FooSpec {
    pub x: i32,
}

fn main() {}
