use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(kinform::InPlace, Deserialize)]
pub struct Flattened {
    pub name: String,
    #[serde(flatten)]
    pub rest: BTreeMap<String, String>,
}

#[derive(kinform::InPlace, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strict {
    pub name: String,
}

#[derive(kinform::InPlace, Deserialize)]
pub enum Mode {
    Fast,
}

#[derive(kinform::InPlace, Deserialize)]
#[kinform(group = "example.com")]
pub struct Misplaced {
    pub name: String,
}

fn main() {}
