//! No crate of the workspace has an import circle between its top-level modules
//! (ARCHITECTURE.md, "Invariants"): within a crate, the modules declared in `lib.rs` or
//! `main.rs` form a graph that only runs one way, as the crates themselves do.
//!
//! The test reads every member's `src/` as text: a file belongs to the top-level module of its
//! first path component, and it imports another top-level module where it names
//! `crate::<module>` (also inside `crate::{...}` groups) or reaches it through enough
//! `super::`s. Comments are skipped. A circle found is printed with the files behind each of
//! its edges, so the message says where to cut.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace members, read from the root manifest's `members = [...]`.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let start = manifest.find("members = [").expect("a members list") + "members = [".len();
    let end = start
        + manifest[start..]
            .find(']')
            .expect("the members list closes");
    manifest[start..end]
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect()
}

/// Every `.rs` file below `dir`, depth first (the layering test reads the same way).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a file without `//` and `/* */` comments (string literals are left as they
/// are: a `crate::` in a string is rare enough to be fixed by hand if it ever misleads).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .map(|line| line.find("//").map_or(line, |i| &line[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules one file names, given its module path inside the crate.
fn imports(code: &str, module: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut inline = 0usize;
    for line in code.lines() {
        let trimmed = line.trim_start();
        if line == trimmed
            && (trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod "))
            && trimmed.ends_with('{')
        {
            inline = 1;
        }
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    found.insert(ident_at(item.trim()).to_string());
                }
            } else {
                found.insert(ident_at(rest).to_string());
            }
        }
        let mut rest = line;
        while let Some(i) = rest.find("super::") {
            let mut ups = 0;
            let mut tail = &rest[i..];
            while let Some(t) = tail.strip_prefix("super::") {
                ups += 1;
                tail = t;
            }
            rest = tail;
            let depth = module.len() + inline;
            if ups == depth && ups > 0 {
                if let Some(group) = tail.strip_prefix('{') {
                    let inner = &group[..group.find('}').unwrap_or(group.len())];
                    for item in inner.split(',') {
                        found.insert(ident_at(item.trim()).to_string());
                    }
                } else {
                    found.insert(ident_at(tail).to_string());
                }
            }
        }
    }
    found
}

/// The edges between top-level modules of one crate, with the files behind each.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let tops: BTreeSet<String> = fs::read_dir(src)
        .expect("src dir")
        .map(|e| e.expect("entry").path())
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .filter(|n| n != "lib" && n != "main")
        .collect();
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let mut parts: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let last = parts.pop().expect("a file name");
        let stem = last.trim_end_matches(".rs");
        if parts.is_empty() && (stem == "lib" || stem == "main") {
            continue;
        }
        if stem != "mod" {
            parts.push(stem.to_string());
        }
        let top = parts[0].clone();
        let text = fs::read_to_string(&file).expect("readable source");
        for target in imports(&code_of(&text), &parts) {
            if target != top && tops.contains(&target) {
                graph
                    .entry(top.clone())
                    .or_default()
                    .entry(target)
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    graph
}

/// The circles of a graph: its strongly connected components of more than one module.
fn circles(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = graph
        .keys()
        .chain(graph.values().flat_map(|e| e.keys()))
        .collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in &nodes {
        if done.contains(*n) || !reached[n].contains(*n) {
            continue;
        }
        let component: Vec<String> = nodes
            .iter()
            .filter(|m| reached[n].contains(**m) && reached[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        done.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

#[test]
fn no_crate_has_a_circle_between_its_top_level_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let members = members(&root);
    assert!(members.len() > 8, "found the members: {members:?}");
    let mut report = Vec::new();
    for member in members {
        let src = member.join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = module_graph(&src);
        for circle in circles(&graph) {
            report.push(format!("{}: {}", member.display(), circle.join(" <-> ")));
            for from in &circle {
                for (to, files) in &graph[from] {
                    if circle.contains(to) {
                        let files: Vec<&str> = files.iter().map(String::as_str).collect();
                        report.push(format!("  {from} -> {to}: {}", files.join(", ")));
                    }
                }
            }
        }
    }
    assert!(report.is_empty(), "import circles:\n{}", report.join("\n"));
}

/// The reader sees the edges this test relies on, so a passing run is not a blind one.
#[test]
fn the_reader_finds_imports_through_crate_groups_and_supers() {
    let module = vec!["a".to_string(), "b".to_string()];
    let code = "use crate::{x, y::Z};\nuse super::super::w::V;\nfn f() { crate::q::r(); }\n\
                mod tests {\n    use super::super::super::t;\n}\n";
    let found = imports(code, &module);
    let want: BTreeSet<String> = ["x", "y", "w", "q", "t"].map(String::from).into();
    assert_eq!(found, want);
    let mut graph = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph
            .entry(a.to_string())
            .or_insert_with(BTreeMap::new)
            .insert(b.to_string(), BTreeSet::new());
    }
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
}
