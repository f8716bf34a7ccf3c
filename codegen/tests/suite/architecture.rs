//! ARCHITECTURE.md's "Entry points" resolve: every `` `path`: `Item` `` pair in that section
//! names a file of the repository that defines the item (a `fn`, `struct`, `enum`, `trait`,
//! `type` or `mod` of that name), so the map cannot point at code that moved or went.

use std::fs;
use std::path::Path;

/// The `(file, item)` pairs of one table cell: `` `a/b.rs`: `X`, `Y` `` or `` `a/b.rs`: `X` ``,
/// several separated by `;`. Parenthesised asides are left out.
fn pairs(cell: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let plain: String = cell
        .chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    for part in plain.split(';') {
        let Some((file, items)) = part.split_once(':') else {
            continue;
        };
        let file = file.trim().trim_matches('`');
        for item in items.split(',') {
            let item = item.trim().trim_matches('`');
            if !file.is_empty() && !item.is_empty() {
                out.push((file.to_string(), item.to_string()));
            }
        }
    }
    out
}

fn defines(text: &str, item: &str) -> bool {
    ["fn", "struct", "enum", "trait", "type", "mod"]
        .iter()
        .any(|kw| {
            text.match_indices(&format!("{kw} {item}")).any(|(i, m)| {
                let after = text[i + m.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
}

#[test]
fn every_entry_point_names_an_item_its_file_defines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = doc
        .find("## Entry points")
        .expect("an Entry points section");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut checked = 0;
    let mut broken = Vec::new();
    for row in section.lines().filter(|l| l.starts_with('|')) {
        let Some(cell) = row.trim_matches('|').split('|').nth(1) else {
            continue;
        };
        for (file, item) in pairs(cell) {
            checked += 1;
            match fs::read_to_string(root.join(&file)) {
                Ok(text) if defines(&text, &item) => {}
                Ok(_) => broken.push(format!("{file} defines no `{item}`")),
                Err(e) => broken.push(format!("{file}: {e}")),
            }
        }
    }
    assert!(checked >= 10, "read the entry points: {checked} pairs");
    assert!(
        broken.is_empty(),
        "stale entry points:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_reader_splits_cells_and_finds_definitions() {
    assert_eq!(
        pairs("`a.rs`: `X`, `Y` (see `b.rs`: `Z`); `c.rs`: `W`"),
        [("a.rs", "X"), ("a.rs", "Y"), ("c.rs", "W")].map(|(f, i)| (f.into(), i.into()))
    );
    assert!(defines("pub struct Machine<K> {", "Machine"));
    assert!(!defines("pub struct MachineState {", "Machine"));
}
