//! Schema descriptions as rustdoc Markdown: the lines of a generated item's docs.
//!
//! Descriptions in CRDs and the Kubernetes OpenAPI spec are written for `kubectl explain`
//! and web pages, not for rustdoc: they carry lists whose continuation lines are not
//! indented, YAML examples indented by four spaces, one-line code spans written with three
//! backticks, prose such as `<driver name>` or `[x]`, and bare URLs. Printed as they are, they
//! make clippy (`doc_lazy_continuation`, `doc_overindented_list_items`, `tabs_in_doc_comments`)
//! and rustdoc (`broken_intra_doc_links`, `invalid_html_tags`, `bare_urls`) warn, and indented
//! or unlabelled code becomes a doc test that `cargo test` compiles as Rust.
//!
//! [`doc_lines`] therefore rebuilds the block structure (CommonMark's rules for list items,
//! fenced and indented code, paragraphs and their lazy continuation lines) and re-emits it
//! with its own indentation, so the structure rustdoc parses is exactly the one computed here:
//!
//! - list items keep their nesting, and every continuation line is indented to its item's
//!   content (what was a lazy continuation stays in the same item, now explicitly);
//! - indented code becomes a fence labelled `text`, and a fence without a language (or with a
//!   Rust one) is labelled `text`: no description ever becomes a doc test;
//! - a line such as ```` ```kubectl get pods``` ```` is an inline code span, not a fence (a
//!   backtick fence's info string cannot contain a backtick);
//! - outside code spans, `<` is written `&lt;` (autolinks aside), bare URLs become autolinks,
//!   and `[`/`]` are escaped (inline links to URLs aside), so prose never becomes HTML or an
//!   intra-doc link; a line that would start a heading, a block quote or a list where the
//!   description has none gets its marker escaped.
//!
//! Written by hand: pulldown-cmark (which rustdoc uses) parses Markdown but does not write it
//! back, and the task here is to choose indentation, not to parse arbitrary Markdown.

/// One output line: indentation plus either prose (escaped per paragraph) or verbatim text.
struct Line {
    indent: usize,
    /// A list marker (`- `, `1. `) printed before the content.
    marker: String,
    content: String,
    /// The paragraph the line belongs to (`None`: code or a blank line, printed verbatim).
    para: Option<usize>,
}

/// An open list item.
struct Item {
    /// The content column in the description.
    orig: usize,
    /// The content column in the output.
    out: usize,
    /// The marker's column in the description, for ordered items.
    ordered_at: Option<usize>,
}

/// A list marker at the start of a line.
struct Marker {
    text: String,
    /// Spaces between the marker and the content.
    spaces: usize,
    number: Option<u64>,
    /// Whether anything follows the marker.
    has_content: bool,
}

/// The Markdown lines of a description (each without the leading space of `/// `).
pub fn doc_lines(docs: &str) -> Vec<String> {
    let text = docs.replace("\r\n", "\n").replace('\t', "    ");
    let raw: Vec<&str> = text.lines().map(str::trim_end).collect();
    let start = raw.iter().position(|l| !l.is_empty()).unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    let raw = &raw[start..end];
    let common = raw
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| indent_of(l))
        .min()
        .unwrap_or(0);
    let lines: Vec<(usize, &str)> = raw
        .iter()
        .map(|l| (indent_of(l).saturating_sub(common), l.trim_start()))
        .collect();
    let mut out = structure(&lines);
    escape_paragraphs(&mut out);
    out.into_iter()
        .map(|l| {
            if l.marker.is_empty() && l.content.is_empty() {
                String::new()
            } else {
                format!("{}{}{}", " ".repeat(l.indent), l.marker, l.content)
            }
        })
        .collect()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Computes the block structure of `lines` (indentation, trimmed text) and the output lines.
fn structure(lines: &[(usize, &str)]) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut stack: Vec<Item> = Vec::new();
    // At a block start (document start, after a blank line or a code block), as opposed to
    // inside a paragraph, where a line may be a lazy continuation.
    let mut block_start = true;
    let mut para = 0usize;
    let verbatim = |indent: usize, content: String| Line {
        indent,
        marker: String::new(),
        content,
        para: None,
    };
    let mut i = 0;
    while i < lines.len() {
        let (ind, text) = lines[i];
        if text.is_empty() {
            out.push(verbatim(0, String::new()));
            block_start = true;
            i += 1;
            continue;
        }
        if block_start {
            pop_to(&mut stack, ind);
            let base = stack.last().map_or(0, |it| it.orig);
            if ind >= base + 4 {
                i = indented_code(lines, i, base, &stack, &mut out);
                block_start = true;
                continue;
            }
        }
        if let Some((fence_char, fence_len, info)) = fence_open(text) {
            pop_to(&mut stack, ind);
            let base = stack.last().map_or(0, |it| it.out);
            let fence = fence_char.to_string().repeat(fence_len);
            out.push(verbatim(base, format!("{fence}{}", fence_info(info))));
            i += 1;
            while i < lines.len() {
                let (ci, ct) = lines[i];
                i += 1;
                if is_fence_close(ct, fence_char, fence_len) {
                    break;
                }
                if ct.is_empty() {
                    out.push(verbatim(0, String::new()));
                } else {
                    out.push(verbatim(base + ci.saturating_sub(ind), ct.to_owned()));
                }
            }
            out.push(verbatim(base, fence));
            block_start = true;
            continue;
        }
        let base = stack.last().map_or(0, |it| it.orig);
        if let Some(m) = list_marker(text)
            && m.has_content
            && (block_start || ind < base + 4)
            && (block_start
                || m.number.is_none_or(|n| n == 1)
                || stack.iter().any(|it| it.ordered_at == Some(ind)))
        {
            pop_to(&mut stack, ind);
            let out_ind = stack.last().map_or(0, |it| it.out);
            let spaces = if (1..=4).contains(&m.spaces) {
                m.spaces
            } else {
                1
            };
            stack.push(Item {
                orig: ind + m.text.chars().count() + spaces,
                out: out_ind + m.text.chars().count() + 1,
                ordered_at: m.number.map(|_| ind),
            });
            para += 1;
            out.push(Line {
                indent: out_ind,
                marker: format!("{} ", m.text),
                content: text[m.text.len()..].trim_start().to_owned(),
                para: Some(para),
            });
            block_start = false;
            i += 1;
            continue;
        }
        if block_start {
            para += 1;
        }
        out.push(Line {
            indent: stack.last().map_or(0, |it| it.out),
            marker: String::new(),
            content: text.to_owned(),
            para: Some(para),
        });
        block_start = false;
        i += 1;
    }
    out
}

/// Closes the list items that a line at column `ind` is not inside of.
fn pop_to(stack: &mut Vec<Item>, ind: usize) {
    while stack.last().is_some_and(|it| ind < it.orig) {
        stack.pop();
    }
}

/// Emits the indented code block starting at line `i` as a `text` fence; returns the index
/// of the first line after it.
fn indented_code(
    lines: &[(usize, &str)],
    mut i: usize,
    base: usize,
    stack: &[Item],
    out: &mut Vec<Line>,
) -> usize {
    let out_base = stack.last().map_or(0, |it| it.out);
    let mut end = i;
    let mut j = i;
    while j < lines.len() && (lines[j].1.is_empty() || lines[j].0 >= base + 4) {
        if !lines[j].1.is_empty() {
            end = j + 1;
        }
        j += 1;
    }
    let line = |indent, content: &str| Line {
        indent,
        marker: String::new(),
        content: content.to_owned(),
        para: None,
    };
    // Longer than any backtick run opening a content line, which would otherwise close it.
    let longest = lines[i..end]
        .iter()
        .map(|(_, t)| t.len() - t.trim_start_matches('`').len())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    out.push(line(out_base, &format!("{fence}text")));
    while i < end {
        let (ci, ct) = lines[i];
        if ct.is_empty() {
            out.push(line(0, ""));
        } else {
            out.push(line(out_base + ci - base - 4, ct));
        }
        i += 1;
    }
    out.push(line(out_base, &fence));
    end
}

/// A fence opening `text`: its character, length and info string.
fn fence_open(text: &str) -> Option<(char, usize, &str)> {
    let c = text.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = text.len() - text.trim_start_matches(c).len();
    let info = text[len..].trim();
    (len >= 3 && !(c == '`' && info.contains('`'))).then_some((c, len, info))
}

fn is_fence_close(text: &str, c: char, len: usize) -> bool {
    !text.is_empty() && text.chars().all(|x| x == c) && text.len() >= len
}

/// The info string a fence is written with: a Rust or unlabelled block becomes `text`, so it
/// is never compiled as a doc test.
fn fence_info(info: &str) -> String {
    const RUSTDOC_ATTRS: &[&str] = &[
        "rust",
        "ignore",
        "should_panic",
        "no_run",
        "compile_fail",
        "test_harness",
        "standalone_crate",
        "allow_fail",
    ];
    let tokens: Vec<&str> = info
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    let rusty = tokens.is_empty()
        || tokens.contains(&"rust")
        || tokens.iter().all(|t| {
            RUSTDOC_ATTRS.contains(t)
                || t.starts_with("edition")
                || t.starts_with("ignore-")
                || (t.starts_with('E') && t[1..].chars().all(|c| c.is_ascii_digit()))
        });
    if rusty {
        "text".to_owned()
    } else {
        info.to_owned()
    }
}

/// A list marker (`-`, `*`, `+`, `1.`, `1)`) at the start of `text`.
fn list_marker(text: &str) -> Option<Marker> {
    let (marker_len, number) = match text.chars().next()? {
        '-' | '*' | '+' => (1, None),
        c if c.is_ascii_digit() => {
            let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 9 || !text[digits..].starts_with(['.', ')']) {
                return None;
            }
            (digits + 1, text[..digits].parse().ok())
        }
        _ => return None,
    };
    let rest = &text[marker_len..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    Some(Marker {
        text: text[..marker_len].to_owned(),
        spaces,
        number,
        has_content: !rest.trim().is_empty(),
    })
}

/// Escapes every paragraph's text: inline escapes over the whole paragraph (code spans may
/// span lines), then the markers a line's content must not start with.
fn escape_paragraphs(out: &mut [Line]) {
    let mut i = 0;
    while i < out.len() {
        let Some(p) = out[i].para else {
            i += 1;
            continue;
        };
        let mut j = i;
        while j < out.len() && out[j].para == Some(p) {
            j += 1;
        }
        let joined = out[i..j]
            .iter()
            .map(|l| l.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let escaped = escape_inline(&joined);
        for (line, text) in out[i..j].iter_mut().zip(escaped.split('\n')) {
            line.content = escape_line_start(text);
        }
        i = j;
    }
}

/// Escapes a block marker at the start of a paragraph line's content: a heading, a block
/// quote, a list item, a thematic break or setext underline.
fn escape_line_start(text: &str) -> String {
    let starts_block = text.starts_with('>')
        || (text.starts_with('#') && {
            let rest = text.trim_start_matches('#');
            rest.is_empty() || rest.starts_with(' ')
        })
        || (text.starts_with(['=', '-', '*', '_', '+']) && {
            let c = text.chars().next().unwrap_or(' ');
            text.chars().all(|x| x == c || x == ' ')
        });
    if starts_block {
        return format!("\\{text}");
    }
    if let Some(m) = list_marker(text) {
        let at = m.text.len() - 1;
        return format!("{}\\{}", &text[..at], &text[at..]);
    }
    text.to_owned()
}

/// Inline escapes outside code spans: `<` (autolinks aside), bare URLs, `[` and `]` (inline
/// links to URLs aside).
fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let Some(c) = rest.chars().next() else { break };
        match c {
            '`' => {
                let run = rest.len() - rest.trim_start_matches('`').len();
                let end = code_span_end(text, i, run).unwrap_or(i + run);
                out.push_str(&text[i..end]);
                i = end;
                continue;
            }
            '\\' => {
                if let Some(next) = rest[1..].chars().next()
                    && next.is_ascii_punctuation()
                {
                    out.push_str(&rest[..2]);
                    i += 2;
                    continue;
                }
                out.push('\\');
            }
            '<' => {
                if let Some(len) = autolink_len(rest) {
                    out.push_str(&rest[..len]);
                    i += len;
                    continue;
                }
                out.push_str("&lt;");
            }
            'h' if bare_url_at(text, i) => {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let url = rest[..end].trim_end_matches(['.', ',', ';', ':', ')', '"', '\'']);
                let url = url.trim_end_matches(['[', ']', '<', '>', '`']);
                out.push('<');
                out.push_str(url);
                out.push('>');
                i += url.len();
                continue;
            }
            '[' => {
                if let Some(len) = inline_link_len(rest) {
                    out.push_str(&rest[..len]);
                    i += len;
                    continue;
                }
                out.push_str("\\[");
            }
            ']' => out.push_str("\\]"),
            _ => out.push(c),
        }
        i += c.len_utf8();
    }
    out
}

/// The end of the code span opened by a run of `run` backticks at `start`: just after the next
/// run of exactly `run` backticks, if any.
fn code_span_end(text: &str, start: usize, run: usize) -> Option<usize> {
    let mut j = start + run;
    while j < text.len() {
        let rest = &text[j..];
        let off = rest.find('`')?;
        let at = j + off;
        let len = text[at..].len() - text[at..].trim_start_matches('`').len();
        if len == run {
            return Some(at + len);
        }
        j = at + len;
    }
    None
}

/// Whether a bare `http(s)://` URL starts at `i` (not already inside `<...>`, `(...)` or a
/// word).
fn bare_url_at(text: &str, i: usize) -> bool {
    let rest = &text[i..];
    (rest.starts_with("http://") || rest.starts_with("https://"))
        && rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())]
            .trim_end_matches(['.', ',', ';', ':', ')', '"', '\''])
            .len()
            > "https://".len()
        && text[..i]
            .chars()
            .next_back()
            .is_none_or(|p| p.is_whitespace() || matches!(p, '"' | '\'' | '('))
}

/// The length of an autolink such as `<https://example.com>` at the start of `rest`.
fn autolink_len(rest: &str) -> Option<usize> {
    let body = &rest[1..];
    if !(body.starts_with("http://") || body.starts_with("https://")) {
        return None;
    }
    let end = body.find('>')?;
    (!body[..end].contains(char::is_whitespace) && !body[..end].contains('<')).then_some(end + 2)
}

/// The length of an inline link to a URL or anchor, `[text](https://...)`, at the start of
/// `rest` (links to anything else could be read as intra-doc links, so they are escaped).
fn inline_link_len(rest: &str) -> Option<usize> {
    let close = rest.find(']')?;
    let label = &rest[1..close];
    if label.contains(['[', '`', '<']) || !rest[close + 1..].starts_with('(') {
        return None;
    }
    let target_start = close + 2;
    let target_len = rest[target_start..].find(')')?;
    let target = &rest[target_start..target_start + target_len];
    let external = target.starts_with("http://")
        || target.starts_with("https://")
        || (target.starts_with('#') && target.len() > 1);
    (external && !target.contains(char::is_whitespace) && !target.contains(['<', '>', '(']))
        .then_some(target_start + target_len + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(s: &str) -> String {
        doc_lines(s).join("\n")
    }

    #[test]
    fn lazy_list_continuations_are_indented() {
        assert_eq!(
            md("Values:\n- a is\nthe first\n  - nested\ncontinued\n- b"),
            "Values:\n- a is\n  the first\n  - nested\n    continued\n- b"
        );
        assert_eq!(
            md("Steps:\n 1. one\n 2. two\n    more"),
            "Steps:\n1. one\n2. two\n   more"
        );
    }

    #[test]
    fn paragraphs_after_a_list_leave_it() {
        assert_eq!(
            md("- a\n\n  inside\n\noutside"),
            "- a\n\n  inside\n\noutside"
        );
    }

    #[test]
    fn an_ordered_number_inside_a_sentence_is_not_a_list() {
        assert_eq!(md("Up to\n2. Then"), "Up to\n2\\. Then");
    }

    #[test]
    fn indented_code_becomes_a_text_fence() {
        assert_eq!(
            md("Example:\n\n    kind: Foo\n      spec: {}\n\nAfter."),
            "Example:\n\n```text\nkind: Foo\n  spec: {}\n```\n\nAfter."
        );
    }

    #[test]
    fn fences_are_labelled_and_one_line_fences_are_code_spans() {
        assert_eq!(md("```\nx\n```"), "```text\nx\n```");
        // Indented code holding a fence line gets a longer fence.
        assert_eq!(md("a\n\n    ```\n    x"), "a\n\n````text\n```\nx\n````");
        assert_eq!(md("```rust\nx"), "```text\nx\n```");
        assert_eq!(md("```yaml\na: [b]\n```"), "```yaml\na: [b]\n```");
        assert_eq!(
            md("Run ```kubectl get [x]``` now\n```kubectl get pods```"),
            "Run ```kubectl get [x]``` now\n```kubectl get pods```"
        );
    }

    #[test]
    fn brackets_html_and_urls_are_escaped_outside_code() {
        assert_eq!(
            md("Set [x] or `[y]`, see [docs](https://k8s.io/d) and [Foo](Bar)."),
            "Set \\[x\\] or `[y]`, see [docs](https://k8s.io/d) and \\[Foo\\](Bar)."
        );
        assert_eq!(
            md("The <driver name> label, `a<b>` and <https://k8s.io/x>."),
            "The &lt;driver name> label, `a<b>` and <https://k8s.io/x>."
        );
        assert_eq!(
            md("More info: https://k8s.io/a. See (https://k8s.io/b)"),
            "More info: <https://k8s.io/a>. See (<https://k8s.io/b>)"
        );
        assert_eq!(md("a `b\nc` [d]"), "a `b\nc` \\[d\\]");
        assert_eq!(md("unmatched ` then [x]"), "unmatched ` then \\[x\\]");
    }

    #[test]
    fn block_markers_in_prose_are_escaped() {
        assert_eq!(
            md("value\n> 0 means\n# of pods"),
            "value\n\\> 0 means\n\\# of pods"
        );
        assert_eq!(md("---"), "\\---");
    }

    proptest::proptest! {
        /// Any text renders without panicking, and every code fence it opens is closed and
        /// labelled (never a doc test).
        #[test]
        fn any_text_renders_to_closed_labelled_fences(
            text in "([ \t]{0,6}([-*+>#]|[0-9]{1,3}[.)]|```|~~~|    )?[ a-z\\[\\]()<>`:/.h]{0,20}\n){0,12}"
        ) {
            // (fence char, length, indentation) of the open fence.
            let mut fence: Option<(char, usize, usize)> = None;
            for line in doc_lines(&text) {
                let t = line.trim_start();
                let indent = line.len() - t.len();
                let c = t.chars().next().unwrap_or(' ');
                let run = t.len() - t.trim_start_matches(c).len();
                let fence_char = c == '`' || c == '~';
                match fence {
                    Some((fc, len, at))
                        if c == fc && run >= len && t[run..].trim().is_empty() && indent <= at + 3 =>
                    {
                        fence = None;
                    }
                    Some(_) => {}
                    None if fence_char && run >= 3 && !(c == '`' && t[run..].contains('`')) => {
                        proptest::prop_assert!(!t[run..].trim().is_empty(), "{line:?} in {text:?}");
                        fence = Some((c, run, indent));
                    }
                    None => {}
                }
            }
            proptest::prop_assert!(fence.is_none(), "unclosed fence in {:?}", doc_lines(&text));
        }
    }

    #[test]
    fn tabs_and_common_indentation_go() {
        assert_eq!(md("  a\n  b\n\n\t\tc"), "a\nb\n\n```text\n  c\n```");
        assert!(doc_lines(" \n ").is_empty());
    }
}
