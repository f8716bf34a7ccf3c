//! kinform-codegen: schema readers -> one model -> Rust emitters.
//!
//! Readers ([`read`]: CRD YAML, OpenAPI v2/v3, derive input) produce one [`model::ApiModel`]
//! plus a type graph; the emitters (private) only print the model, formatted with
//! prettyplease and marked `@generated`. Every Rust name is chosen by [`naming`]. The model
//! and the readers never import the emitters.
//!
//! Front ends, each with its own narrow entry point:
//!
//! - [`Generator`]: the builder for `build.rs` and the `kinform-gen` binary (CRD files or an
//!   OpenAPI spec in, a module tree or one `include!`able file out). The binary needs the
//!   `cli` feature (`cargo install kinform-codegen --features cli`), so that neither a build
//!   script nor the derive macro builds its clap.
//! - [`derive`](mod@derive): the surface kinform-macros expands through (`#[derive(CustomResource)]`,
//!   `#[kinform::api_group]`).
//! - [`emit_crd_types`] / [`emit_type_module`]: the CRD type emitter alone, for tools that want
//!   the Rust types of CRDs without clients; [`emit_crd_types`] includes each kind's apply
//!   configurations (`<kind>::apply`).
//!
//! Every generated struct `Foo` comes with `FooApply`, its apply configuration for typed
//! server-side apply (client-go's `applyconfigurations`): every property optional and
//! serialized only when set, builders, `extract`/`extract_status` on the root, keyed list
//! items' `new(keys)`, and `From<&Foo>`. The corpus round trip holds it to its contract: a
//! typed object converted into its apply configuration serializes to the same JSON and,
//! applied, is stored as a create stores it.
//!
//! What the generator guarantees, and the tests that hold it to it:
//!
//! - Nothing is left out in silence: documents that are not CRDs, files that are not read,
//!   unserved versions and filters that match nothing come back as [`Warning`]s
//!   ([`Generator::generate_report`]; `kinform-gen` prints them), and a run that leaves
//!   nothing to generate fails ([`GenerateError::Empty`]).
//! - Generated docs are clean: schema descriptions keep their lists and code, never become
//!   doc tests, intra-doc links or HTML; the output for the whole corpus passes
//!   `cargo clippy -- -D warnings` and `RUSTDOCFLAGS=-D warnings cargo doc`
//!   (tests/generated_docs.rs).
//! - Hostile input never panics the generator nor makes it emit code that does not parse:
//!   names the API server would reject (a plural `ü`, a path segment `}`, a `$ref` to
//!   `io.k8s.api.core.v1.Wid)get`) are errors naming the document and the path of the value.
//!   Property tests over mutated real inputs (tests/hostile_inputs.rs, tests/crd_proptest.rs)
//!   run 32 cases per property in CI; run them at length with
//!   `PROPTEST_CASES=100000 cargo test -p kinform-codegen --release --test suite hostile_inputs::`.
//!
//! # Decoding and defaulting
//!
//! Generated CRD types decode what the bytes say: for a document valid against the schema,
//! deserialize then serialize gives the same JSON value. No schema default is filled in on
//! decode (a property with a default is an `Option`, its default shown in its docs), no
//! `status` or `metadata` is invented, an explicit `null` stays where the schema allows it,
//! and unknown enum values are kept. Defaulting is the API server's job, and client-go's
//! typed clients do not default either (the reasons: `kinform::defaulting`'s docs). The
//! explicit operation is each root type's `apply_schema_defaults()`: apiextensions-apiserver's
//! structural defaulting (`PruneNonNullableNullsWithoutDefaults`, then `Default`, nested
//! objects, list items and map values included), run by `kinform::defaulting`, the code
//! `TestApiServer` applies to stored custom resources.
//!
//! Values keep their form:
//!
//! - a quantity is a `kinform::value::Quantity` (a number stays a number; k8s-openapi's
//!   `Quantity` would write `2` as `"2"`);
//! - a `date-time` is a `kinform::value::Timestamp` (the text with its fraction and offset,
//!   `parse()` for the instant; k8s-openapi's `Time` keeps whole seconds in UTC);
//! - a `number` is a `serde_json::Number` (`3` stays `3`; an `f64` writes `3.0`);
//! - int-or-string is k8s-openapi's `IntOrString` and `byte` its `ByteString` (both exact).

pub mod derive;
mod emit;
pub mod generator;
pub mod model;
pub mod naming;
pub mod read;

pub use emit::format::FormatError;
pub use emit::in_place::{InPlaceError, emit_file as emit_in_place_decoders};
pub use emit::modules::{GeneratedFile, Layout};
pub use emit::runtime::PathError;
pub use emit::types::{TypesConfig, emit_crd_types, emit_type_module};
pub use generator::{GenerateError, Generator, Report, Warning};
