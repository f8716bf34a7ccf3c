//! Thin adapters over [`super::format`] for the resource emitters: a formatting error names
//! the module it came from, and module docs become inner attributes.

use proc_macro2::TokenStream;
use quote::quote;

pub use super::format::GENERATED_HEADER as HEADER;

/// The emitted tokens did not parse as Rust (an emitter bug, reported instead of panicking).
#[derive(Debug, thiserror::Error)]
#[error("emitted code for `{module}` does not parse as Rust: {message}")]
pub struct FormatError {
    /// The module being formatted.
    pub module: String,
    /// The parser's message.
    pub message: String,
}

/// Formats a file's tokens with prettyplease, behind the `@generated` header.
pub fn format_file(module: &str, tokens: TokenStream) -> Result<String, FormatError> {
    super::format::format_file(tokens).map_err(|e| FormatError {
        module: module.to_owned(),
        message: e.message,
    })
}

/// `#[doc]` attributes for prose (see [`super::format::doc_attrs`]).
pub fn doc_attrs(docs: &str) -> TokenStream {
    super::format::doc_attrs(Some(docs))
}

/// Inner `#![doc]` attributes (module docs).
pub fn inner_doc_attrs(docs: &str) -> TokenStream {
    let mut out = TokenStream::new();
    for line in docs.trim().lines() {
        let line = line.trim();
        let text = if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        };
        out.extend(quote!(#![doc = #text]));
    }
    out
}
