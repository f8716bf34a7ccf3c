#[kinform::api_group(group = "example.com")]
pub struct NotAModule;

#[kinform::api_group(group = "example.com")]
pub mod empty {
    pub struct Plain;
}

#[kinform::api_group(version = "v1")]
pub mod no_group {}

#[kinform::api_group(group = "nodot")]
pub mod bad_group {}

fn main() {}
