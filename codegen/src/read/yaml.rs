//! Multi-document YAML streams -> JSON values, one per document, with the document's index
//! and first line, so errors can point at `file: document N, line L, column C`.
//!
//! `kubectl apply -f` accepts streams of documents separated by `---`, with comments,
//! empty documents (a trailing `---`) and `List` wrappers; we read the same. The stream is cut
//! at document markers (`---` at column 0, as YAML 1.2 defines them: a marker at column 0
//! cannot occur inside any scalar) and each document is parsed with serde-saphyr, so one
//! malformed document names its own index and its line in the whole file.

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

/// Parses every document of `text` (read from `file`, used for errors only).
pub fn parse_stream(file: &Path, text: &str) -> Result<Vec<YamlDocument>, CrdError> {
    let mut out = Vec::new();
    for (index, chunk) in split_documents(text).into_iter().enumerate() {
        let value = if chunk.has_content {
            match serde_saphyr::from_str::<Value>(chunk.text) {
                Ok(Value::Null) => None,
                Ok(v) => Some(v),
                Err(e) => {
                    let (line, column) = e
                        .location()
                        .map(|l| (l.line() + chunk.first_line as u64 - 1, l.column()))
                        .unwrap_or((chunk.first_line as u64, 0));
                    return Err(CrdError::Yaml {
                        file: file.to_owned(),
                        document: index,
                        line,
                        column,
                        message: first_line_of(&e.to_string()),
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

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_stream(Path::new("d.yaml"), &deep).is_err());
        let deep_block: String = (0..5_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let _ = parse_stream(Path::new("d.yaml"), &deep_block);
    }
}
