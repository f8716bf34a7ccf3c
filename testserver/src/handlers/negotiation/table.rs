//! `meta.k8s.io/v1` Tables for `kubectl get`.
//!
//! The real server prints with per-type printers (`pkg/printers/internalversion`) and, for
//! custom resources, with the CRD's `additionalPrinterColumns`. Built-ins with a printer in
//! module `printers` get its columns (priority 1 for `-o wide`) after `NAME`, unless the
//! printer places the name itself (Events); the `scale` subresource gets the Scale printer
//! ([`scale_table`]); other resources get `NAME`, a CRD's printer columns whose `jsonPath`
//! is a plain field path (`.spec.replicas`; other paths print empty cells) and `AGE`.

use serde_json::{Value, json};

use crate::handlers::negotiation::render::{IncludeObject, metadata_object};
use crate::registry::ResourceInfo;

/// A Table of `objects`, with `list_meta` as its list metadata.
pub(crate) fn table(
    info: &ResourceInfo,
    objects: &[Value],
    include: IncludeObject,
    list_meta: Option<Value>,
) -> Value {
    let printer = crate::handlers::negotiation::printers::builtin(&info.group, &info.plural);
    // A printer that lists the name column itself places it (Events); the others start with it.
    let names_itself = printer.is_some_and(|(columns, _)| columns.iter().any(|c| c.name == "Name"));
    let mut defs = if names_itself {
        Vec::new()
    } else {
        vec![column("Name", "string", "name", 0)]
    };
    let has_age = info.printer_columns.iter().any(|(n, _, _)| n == "Age");
    match printer {
        Some((columns, _)) => defs.extend(columns_of(columns)),
        None => {
            for (name, ty, _) in &info.printer_columns {
                defs.push(column(name, ty, "", 0));
            }
            if !has_age {
                defs.push(column("Age", "string", "", 0));
            }
        }
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut cells = if names_itself {
                Vec::new()
            } else {
                vec![o["metadata"]["name"].clone()]
            };
            match printer {
                Some((_, print)) => cells.extend(print(o)),
                None => {
                    for (_, ty, path) in &info.printer_columns {
                        cells.push(printer_cell(o, ty, path));
                    }
                    if !has_age {
                        cells.push(json!(age(&o["metadata"]["creationTimestamp"])));
                    }
                }
            }
            row(cells, o, include)
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta.unwrap_or_else(|| json!({})),
        "columnDefinitions": defs,
        "rows": rows,
    })
}

/// The Table of a `scale` subresource's answer (an `autoscaling/v1` Scale), as
/// kube-apiserver's scale storage prints it: `NAME DESIRED AVAILABLE AGE`.
pub(crate) fn scale_table(scale: &Value, include: IncludeObject) -> Value {
    use crate::handlers::negotiation::printers;
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": scale["metadata"]["resourceVersion"]},
        "columnDefinitions": columns_of(printers::SCALE).collect::<Vec<_>>(),
        "rows": [row(printers::scale(scale), scale, include)],
    })
}

fn row(cells: Vec<Value>, o: &Value, include: IncludeObject) -> Value {
    let mut row = json!({ "cells": cells });
    match include {
        IncludeObject::None => {}
        IncludeObject::Metadata => row["object"] = metadata_object(o),
        IncludeObject::Object => row["object"] = o.clone(),
    }
    row
}

fn columns_of(
    columns: &[crate::handlers::negotiation::printers::Column],
) -> impl Iterator<Item = Value> + '_ {
    columns
        .iter()
        .map(|c| column(c.name, c.ty, c.format, c.priority))
}

fn column(name: &str, ty: &str, format: &str, priority: u32) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": "", "priority": priority})
}

fn printer_cell(obj: &Value, ty: &str, path: &str) -> Value {
    let plain = path.starts_with('.')
        && path[1..].split('.').all(|seg| {
            !seg.is_empty()
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
    if !plain {
        return json!("");
    }
    let v = path[1..].split('.').fold(obj, |v, seg| &v[seg]);
    match (ty, v) {
        (_, Value::Null) => Value::Null,
        ("date", Value::String(_)) => json!(age(v)),
        (_, Value::String(_) | Value::Number(_) | Value::Bool(_)) => v.clone(),
        (_, other) => json!(other.to_string()),
    }
}

/// Renders the time since an RFC 3339 timestamp as kubectl does (`5s`, `3m`, `2h`, `4d`).
pub(crate) fn age(ts: &Value) -> String {
    let Some(t) = ts.as_str().and_then(|s| s.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    let secs = (jiff::Timestamp::now().as_second() - t.as_second()).max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 3600 * 2 => format!("{}m", s / 60),
        s if s < 86400 * 2 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn pod_rows_have_kubectl_columns() {
        let reg = Registry::with_builtins();
        let info = reg.get("", "v1", "pods").unwrap();
        let pod = json!({"metadata": {"name": "web", "namespace": "default",
                          "creationTimestamp": "2020-01-01T00:00:00Z"},
                         "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
                         "status": {"phase": "Running", "containerStatuses": [
                             {"ready": true, "restartCount": 2}, {"ready": false, "restartCount": 1}]}});
        let t = table(&info, &[pod], IncludeObject::Metadata, None);
        let names: Vec<_> = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["priority"] == 0)
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Name", "Ready", "Status", "Restarts", "Age"]);
        let cells = &t["rows"][0]["cells"];
        assert_eq!(cells[1], "1/2");
        assert_eq!(cells[2], "Running");
        assert_eq!(cells[3], "3");
        assert!(cells[4].as_str().unwrap().ends_with('d'));
        assert_eq!(t["rows"][0]["object"]["metadata"]["namespace"], "default");
    }
}
