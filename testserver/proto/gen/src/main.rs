//! Generates the two files TestApiServer decodes Kubernetes protobuf bodies with:
//!
//! - `k8s-1.35.fds.gz`: a gzip-compressed `FileDescriptorSet` of every `generated.proto` under
//!   the given root (compiled with protox, without source info);
//! - `go-json.txt.gz`: what the Go types add to the protos for their JSON form, one line per
//!   proto field whose JSON differs from the default ("JSON name = proto name, a zero value is
//!   left out"): `<package>.<Message>.<field> [json=<name>] [inline] [zero] [omitzero] [skip]`.
//!   `json=` is the Go JSON name when it differs, `inline` an embedded struct whose fields JSON
//!   flattens into its parent (`json:",inline"`), `zero` a scalar whose zero value Go's JSON
//!   still writes (a pointer field, or one without `omitempty`), `omitzero` a message field
//!   left out when zero, `skip` a field JSON never writes (`json:"-"`).
//!
//! Usage: `cargo run --release -- <root> <out-dir>`, `<root>` holding `k8s.io/api/...`,
//! `k8s.io/apimachinery/...` and `k8s.io/apiextensions-apiserver/...` with the `.proto` files
//! and the Go files next to them (see ../SOURCE.md).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn gzip(path: &Path, data: &[u8]) {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(data).unwrap();
    std::fs::write(path, enc.finish().unwrap()).unwrap();
}

/// `key:"value"` out of a Go struct tag.
fn tag<'a>(tags: &'a str, key: &str) -> Option<&'a str> {
    let start = tags.find(&format!("{key}:\""))? + key.len() + 2;
    let len = tags[start..].find('"')?;
    Some(&tags[start..start + len])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(&args[1]);
    let out = PathBuf::from(&args[2]);
    let mut all = Vec::new();
    walk(&root, &mut all);
    let protos: Vec<String> = all
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "generated.proto"))
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let fds = protox::Compiler::new([&root])
        .unwrap()
        .include_imports(true)
        .include_source_info(false)
        .open_files(&protos)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .file_descriptor_set();
    gzip(&out.join("k8s-1.35.fds.gz"), &fds.encode_to_vec());

    // Proto package of each directory; fields of each message.
    let mut package_of_dir = BTreeMap::new();
    let mut fields: BTreeMap<String, BTreeMap<String, (Type, Label)>> = BTreeMap::new();
    for f in &fds.file {
        let dir = Path::new(f.name()).parent().unwrap().to_path_buf();
        package_of_dir.insert(dir, f.package().to_owned());
        for m in &f.message_type {
            let map = fields
                .entry(format!("{}.{}", f.package(), m.name()))
                .or_default();
            for fd in &m.field {
                map.insert(fd.name().to_owned(), (fd.r#type(), fd.label()));
            }
        }
    }

    let mut lines = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for path in &all {
        let name = path.file_name().unwrap().to_string_lossy();
        if !name.ends_with(".go") || name.ends_with("_test.go") || name == "generated.pb.go" {
            continue;
        }
        let dir = path.parent().unwrap().strip_prefix(&root).unwrap();
        let Some(package) = package_of_dir.get(dir) else {
            continue;
        };
        let text = std::fs::read_to_string(path).unwrap();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("type ")
                && let Some(n) = rest.strip_suffix(" struct {")
            {
                current = Some(n.trim().to_owned());
                continue;
            }
            if line.starts_with('}') {
                current = None;
                continue;
            }
            let Some(msg) = &current else { continue };
            let t = line.trim();
            if t.starts_with("//") {
                continue;
            }
            let Some(tick) = t.find('`') else { continue };
            let tags = &t[tick..];
            let Some(pb) = tag(tags, "protobuf") else {
                continue;
            };
            let decl: Vec<&str> = t[..tick].split_whitespace().collect();
            let go_type = decl.last().copied().unwrap_or_default();
            // An embedded struct's tag may leave the name out: go-to-protobuf then names the
            // field after the type, first letter lowered.
            let embedded_name = {
                let ty = go_type.trim_start_matches('*');
                let ty = ty.rsplit('.').next().unwrap_or(ty);
                let mut c = ty.chars();
                c.next()
                    .map(|f| f.to_lowercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            };
            let proto_name = pb
                .split(',')
                .find_map(|p| p.strip_prefix("name="))
                .unwrap_or(if decl.len() == 1 { &embedded_name } else { "" });
            let full = format!("{package}.{msg}");
            let Some(&(ty, label)) = fields.get(&full).and_then(|m| m.get(proto_name)) else {
                continue;
            };
            seen.insert(format!("{full}.{proto_name}"));
            let pointer = go_type.starts_with('*');
            let json = tag(tags, "json").unwrap_or("");
            let mut parts = json.split(',');
            let json_name = parts.next().unwrap_or_default();
            let opts: Vec<&str> = parts.collect();
            let mut attrs = Vec::new();
            if json == "-" {
                attrs.push("skip".to_owned());
            } else if json_name.is_empty() && opts.contains(&"inline") {
                attrs.push("inline".to_owned());
            } else {
                if !json_name.is_empty() && json_name != proto_name {
                    attrs.push(format!("json={json_name}"));
                }
                let scalar = !matches!(ty, Type::Message | Type::Group | Type::Bytes);
                let omit = opts.contains(&"omitempty") || opts.contains(&"omitzero");
                if scalar && label != Label::Repeated && (pointer || !omit) {
                    attrs.push("zero".to_owned());
                }
                if ty == Type::Message && opts.contains(&"omitzero") {
                    attrs.push("omitzero".to_owned());
                }
            }
            if !attrs.is_empty() {
                lines.insert(format!("{full}.{proto_name} {}", attrs.join(" ")));
            }
        }
    }
    let mut missing = 0;
    for (msg, fs) in &fields {
        for f in fs.keys() {
            if !seen.contains(&format!("{msg}.{f}")) {
                missing += 1;
                eprintln!("no Go field for {msg}.{f}");
            }
        }
    }
    let mut text = String::from(
        "# Generated by testserver/proto/gen from the Go types of k8s.io/api, apimachinery and\n\
         # apiextensions-apiserver v0.35.7 (see SOURCE.md). <field> [json=<name>] [inline] [zero] [omitzero] [skip]\n",
    );
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    gzip(&out.join("go-json.txt.gz"), text.as_bytes());
    eprintln!(
        "{} files, {} annotated fields, {missing} proto fields without a Go field",
        fds.file.len(),
        lines.len()
    );
}
