use kinform::CustomResource;

#[derive(CustomResource)]
#[kinform(group = "example.com", version = "v1", kind = "Foo", scale(spec_replicas_path = ".spec.r"))]
pub enum FooSpec {
    A,
}

fn main() {}
