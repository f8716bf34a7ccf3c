//! Multi-document YAML streams -> JSON values, one per document, with the document's index
//! and first line, so errors can point at `file: document N, line L, column C`.
//!
//! `kubectl apply -f` accepts streams of documents separated by `---`, with comments,
//! empty documents (a trailing `---`) and `List` wrappers; we read the same. The stream is cut
//! at document markers (`---` at column 0, as YAML 1.2 defines them: a marker at column 0
//! cannot occur inside any scalar) and each document is parsed with serde-saphyr, so one
//! malformed document names its own index and its line in the whole file.
//!
//! A document may nest [`MAX_NESTING`] levels deep (mappings and sequences), as deep as
//! kube-apiserver reads a request body: its JSON decoder (sigs.k8s.io/json, a fork of
//! encoding/json) stops at `maxNestingDepth = 10000`, and go-yaml's scanner at the same
//! number. Deeper is an error naming the file, document, line and column. The documents are
//! read on a thread with a stack that deep nesting needs ([`super::stack`]).

use std::path::Path;

use serde_json::Value;

use super::crd_error::CrdError;

/// One document of a YAML stream.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlDocument {
    /// 0-based index in the stream (empty documents count).
    pub index: usize,
    /// 1-based line of the document's first line in the file.
    pub first_line: usize,
    /// The value; `None` for an empty (or `null`) document.
    pub value: Option<Value>,
}

/// The deepest nesting of mappings and sequences a document may have: kube-apiserver's (see
/// the module docs).
pub const MAX_NESTING: usize = 10_000;

/// Parses every document of `text` (read from `file`, used for errors only), on
/// [`super::stack`]'s deep stack. A value nested thousands of levels deep also needs a deep
/// stack to be dropped (serde_json drops it recursively): the readers of this crate drop
/// theirs there.
pub fn parse_stream(file: &Path, text: &str) -> Result<Vec<YamlDocument>, CrdError> {
    super::stack::deep(|| parse_stream_here(file, text))
}

fn parse_stream_here(file: &Path, text: &str) -> Result<Vec<YamlDocument>, CrdError> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_NESTING,
            // One more, so that the depth budget, not the scanner, names the error.
            flow_nesting_limit: MAX_NESTING + 1,
        },
    };
    let mut out = Vec::new();
    for (index, chunk) in split_documents(text).into_iter().enumerate() {
        let value = if chunk.has_content {
            match serde_saphyr::from_str_with_options::<Value>(chunk.text, options.clone()) {
                Ok(Value::Null) => None,
                Ok(v) => Some(v),
                Err(e) => {
                    let (line, column) = e
                        .location()
                        .map(|l| (l.line() + chunk.first_line as u64 - 1, l.column()))
                        .unwrap_or((chunk.first_line as u64, 0));
                    let text = e.to_string();
                    // The breach may come wrapped with the location: told by its text.
                    let message = if text.contains("budget breached: Depth") {
                        format!(
                            "nested deeper than {MAX_NESTING} levels (mappings and sequences), \
                             the most kube-apiserver reads"
                        )
                    } else {
                        first_line_of(&text)
                    };
                    return Err(CrdError::Yaml {
                        file: file.to_owned(),
                        document: index,
                        line,
                        column,
                        message,
                    });
                }
            }
        } else {
            None
        };
        out.push(YamlDocument {
            index,
            first_line: chunk.first_line,
            value,
        });
    }
    Ok(out)
}

fn first_line_of(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_owned()
}

struct Chunk<'a> {
    text: &'a str,
    first_line: usize,
    has_content: bool,
}

/// Cuts `text` at document markers. A marker that follows only comments, blank lines or
/// directives belongs to the same document (`# license\n---\nkind: X` is one document).
fn split_documents(text: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0usize;
    let mut first_line = 1usize;
    let mut has_content = false;
    let mut has_marker = false;
    let mut offset = 0usize;
    for (line_no, line) in (1usize..).zip(text.split_inclusive('\n')) {
        let bare = line.trim_end_matches(['\n', '\r']);
        if is_marker(bare, "---") {
            if has_content || has_marker {
                chunks.push(Chunk {
                    text: &text[start..offset],
                    first_line,
                    has_content,
                });
                start = offset;
                first_line = line_no;
            }
            let rest = bare[3..].trim();
            has_content = !rest.is_empty() && !rest.starts_with('#');
            has_marker = true;
        } else if is_marker(bare, "...") {
            let next = offset + line.len();
            chunks.push(Chunk {
                text: &text[start..next],
                first_line,
                has_content,
            });
            start = next;
            first_line = line_no + 1;
            has_content = false;
            has_marker = false;
        } else {
            let t = bare.trim_start();
            let directive = bare.starts_with('%') && !has_content;
            if !t.is_empty() && !t.starts_with('#') && !directive {
                has_content = true;
            }
        }
        offset += line.len();
    }
    if start < text.len() || chunks.is_empty() {
        chunks.push(Chunk {
            text: &text[start..],
            first_line,
            has_content,
        });
    }
    chunks
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Vec<YamlDocument> {
        parse_stream(Path::new("t.yaml"), text).unwrap()
    }

    #[test]
    fn multi_document_streams() {
        let docs = parse("# license\n---\na: 1\n---\n---\nb: [x]\n---\n");
        let values: Vec<_> = docs.iter().map(|d| d.value.clone()).collect();
        assert_eq!(
            values,
            [Some(json!({"a": 1})), None, Some(json!({"b": ["x"]})), None]
        );
        assert_eq!(docs[2].first_line, 5);
        assert_eq!(docs[2].index, 2);
    }

    #[test]
    fn single_document_without_markers() {
        let docs = parse("a: 1\nb: two\n");
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].value, Some(json!({"a": 1, "b": "two"})));
        assert!(parse("").iter().all(|d| d.value.is_none()));
        assert!(
            parse("# only a comment\n")
                .iter()
                .all(|d| d.value.is_none())
        );
    }

    #[test]
    fn content_on_the_marker_line_and_document_end() {
        let docs = parse("--- {a: 1}\n...\nb: 2\n");
        let values: Vec<_> = docs.iter().filter_map(|d| d.value.clone()).collect();
        assert_eq!(values, [json!({"a": 1}), json!({"b": 2})]);
    }

    #[test]
    fn block_scalars_with_dashes_stay_in_their_document() {
        let docs = parse("a: |\n  --- not a marker\n  x\n");
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].value, Some(json!({"a": "--- not a marker\nx\n"})));
    }

    #[test]
    fn errors_name_document_line_and_column() {
        let err = parse_stream(Path::new("f.yaml"), "a: 1\n---\nb: 2\nc: [1, 2\n").unwrap_err();
        match err {
            CrdError::Yaml { document, line, .. } => {
                assert_eq!(document, 1);
                assert!(line >= 3, "line {line}");
            }
            other => panic!("unexpected {other}"),
        }
        let msg = parse_stream(Path::new("f.yaml"), "a: [\n")
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("f.yaml: document 0, line "), "{msg}");
    }

    /// A flow mapping nested `depth` levels deep: `{"a": {"a": ... 1}}`.
    fn nested(depth: usize) -> String {
        format!("{}1{}\n", "{\"a\": ".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn documents_nest_as_deep_as_the_api_server_reads() {
        // Dropped on the deep stack too: a value this deep drops recursively.
        let depth = crate::read::stack::deep(|| {
            let docs = parse(&nested(MAX_NESTING));
            let mut v = docs[0].value.as_ref().unwrap();
            let mut depth = 0;
            while let Some(inner) = v.get("a") {
                (v, depth) = (inner, depth + 1);
            }
            depth
        });
        assert_eq!(depth, MAX_NESTING);
        let err = parse_stream(
            Path::new("deep.json"),
            &format!("---\n{}", nested(MAX_NESTING + 1)),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("deep.json: document 0, line 2, column ")
                && err.ends_with("nested deeper than 10000 levels (mappings and sequences), the most kube-apiserver reads"),
            "{err}"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_stream(Path::new("d.yaml"), &deep).is_err());
        let deep_block: String = (0..300).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        assert!(parse_stream(Path::new("d.yaml"), &deep_block).is_ok());
    }
}
