//! The scanner against serde_json on generated and hand-written JSON.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

/// Strings with quotes, backslashes, control characters, unicode and escapes-looking text.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9./-]{0,12}",
        "\\PC{0,8}",
        prop::collection::vec(
            prop::sample::select(vec![
                "\"", "\\", "\n", "\u{1}", "é", "😀", "\\u0041", "]", "}", ",", ":", "a"
            ]),
            0..8
        )
        .prop_map(|v| v.concat()),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Floats that print and parse back exactly.
        any::<i32>().prop_map(|i| Value::from(f64::from(i) / 8.0)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn render(v: &Value, pretty: bool) -> Vec<u8> {
    if pretty {
        serde_json::to_vec_pretty(v).unwrap()
    } else {
        serde_json::to_vec(v).unwrap()
    }
}

proptest! {
    #[test]
    fn elements_match_serde(items in prop::collection::vec(value(), 0..8), pretty in any::<bool>()) {
        let b = render(&Value::Array(items.clone()), pretty);
        let (ranges, end) = elements(&b, 0).unwrap();
        prop_assert_eq!(end, b.len());
        prop_assert_eq!(ranges.len(), items.len());
        for (r, item) in ranges.iter().zip(&items) {
            let decoded: Value = serde_json::from_slice(&b[r.clone()]).unwrap();
            prop_assert_eq!(&decoded, item);
        }
    }

    #[test]
    fn skip_value_matches_serde(v in value(), pretty in any::<bool>()) {
        let mut b = render(&v, pretty);
        let len = b.len();
        b.extend_from_slice(b" ,");
        prop_assert_eq!(skip_value(&b, 0).unwrap(), len);
    }

    #[test]
    fn item_meta_matches_serde(
        name in text(),
        ns in prop::option::of(text()),
        rv in text(),
        mf in prop::option::of(value()),
        mf_at in 0usize..4,
        extra in prop::collection::vec(("[a-z]{1,6}", value()), 0..3),
        pretty in any::<bool>(),
    ) {
        let mut fields: Vec<(String, Value)> = vec![
            ("name".into(), json!(name)),
            ("resourceVersion".into(), json!(rv)),
        ];
        if let Some(ns) = &ns {
            fields.push(("namespace".into(), json!(ns)));
        }
        for (k, v) in &extra {
            if !["name", "namespace", "resourceVersion", "managedFields"].contains(&k.as_str()) {
                fields.push((k.clone(), v.clone()));
            }
        }
        if let Some(mf) = &mf {
            let at = mf_at.min(fields.len());
            fields.insert(at, ("managedFields".into(), mf.clone()));
        }
        // serde_json's Map keeps insertion order only with preserve_order; build the text.
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), String::from_utf8(render(v, pretty)).unwrap()))
            .collect();
        let text = format!("{{\"kind\":\"Pod\", \"metadata\" : {{ {} }} ,\"spec\":{{}}}}", body.join(" , "));
        let b = text.as_bytes();
        let m = item_meta(b, 0..b.len()).expect("an object with metadata");
        let get = |r: &Option<Range<usize>>| r.clone().map(|r| {
            let quoted = format!("\"{}\"", std::str::from_utf8(&b[r]).unwrap());
            serde_json::from_str::<String>(&quoted).unwrap()
        });
        prop_assert_eq!(get(&m.name), Some(name.clone()));
        prop_assert_eq!(get(&m.resource_version), Some(rv.clone()));
        prop_assert_eq!(get(&m.namespace), ns.clone());
        let has_escape = |s: &str| serde_json::to_string(s).unwrap().contains('\\');
        prop_assert_eq!(m.escaped, has_escape(&name) || has_escape(&rv) || ns.as_deref().is_some_and(has_escape));
    }

    #[test]
    fn scanner_never_panics(v in value(), cuts in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4)) {
        let mut b = render(&json!({"metadata": {"resourceVersion": "1"}, "items": [v.clone(), v]}), false);
        for (at, byte) in cuts {
            let i = at.index(b.len());
            b[i] = byte;
        }
        if let Ok(parts) = list_parts(&b)
            && let Some(items) = parts.items
            && let Ok((ranges, _)) = elements(&b, items.start)
        {
            for r in ranges {
                let _ = item_meta(&b, r);
            }
        }
    }
}

#[test]
fn list_parts_finds_members() {
    let b = br#" {"kind":"PodList","apiVersion":"v1","metadata":{"continue":"x"},"items":[{"a":1}, {"b":[2]}]} "#;
    let p = list_parts(b).unwrap();
    assert_eq!(&b[p.kind.clone().unwrap()], br#""PodList""#);
    assert_eq!(&b[p.metadata.clone().unwrap()], br#"{"continue":"x"}"#);
    let (items, _) = elements(b, p.items.unwrap().start).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(&b[items[1].clone()], br#"{"b":[2]}"#);
    assert_eq!(p.item_ranges, items);
    assert_eq!(p.others.len(), 1);
    let null = list_parts(br#"{"items":null}"#).unwrap();
    assert!(null.item_ranges.is_empty());
}

#[test]
fn malformed_bodies_are_errors() {
    for b in [
        &br#"{"items":[{"a":1} {"b":2}]}"#[..],
        br#"{"items":[{"a":1},]}"#,
        br#"{"items":[{"a":1}]"#,
        br#"{"items":[{"a":"x}]}"#,
        br#"{"items":[{"a":1]]}"#,
        br#"{"items":[1],"items":[2]}"#,
        br#"{"items":[1]} x"#,
        br#"{"items" [1]}"#,
        br#"["items"]"#,
        br#""#,
    ] {
        let r = list_parts(b).and_then(|p| elements(b, p.items.map_or(0, |r| r.start)));
        assert!(r.is_err(), "{}", String::from_utf8_lossy(b));
    }
}

#[test]
fn repeated_or_escaped_keys_take_no_shortcut() {
    for text in [
        r#"{"metadata":{"name":"a","name":"b"}}"#,
        r#"{"metadata":{"manag\u0065dFields":[]}}"#,
        r#"{"metadata":{},"metadata":{}}"#,
        r#"{"m\u0065tadata":{}}"#,
        r#"[1]"#,
    ] {
        let b = text.as_bytes();
        assert_eq!(item_meta(b, 0..b.len()), None, "{text}");
    }
}
