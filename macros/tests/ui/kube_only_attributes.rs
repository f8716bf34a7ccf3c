use kinform::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kinform(
    group = "example.com",
    version = "v1",
    kind = "Foo",
    attr = "derive(Default)",
    attr = "serde(rename_all = \"camelCase\")",
    derive = "JsonSchema",
    schema = "generated",
    cel,
    crates(serde_json = "::serde_json", kube_core = "::kube::core"),
    validation = Rule::new("self.x > 0").reason(Reason::Nonsense),
    label("only-a-key")
)]
pub struct FooSpec {
    pub x: i32,
}

fn main() {}
