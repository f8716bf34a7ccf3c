//! Property targets for the selector parsers (issue #19): printing a parsed selector and
//! parsing the text again gives back the same selector, for label and field selectors, over
//! arbitrary input from the grammar's alphabet (with Unicode spaces and odd bytes) and over
//! generated valid selectors; and a `matchLabels` map either converts to a selector that
//! round-trips or is refused.
//!
//! They run briefly in the test suite (proptest's default case count); at length with e.g.
//! `PROPTEST_CASES=2000000 cargo test --release -p kinform-core --test selector_roundtrip`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kinform_core::selector::{
    FieldOp, FieldRequirement, FieldSelector, LabelOp, LabelRequirement, LabelSelector,
};
use proptest::prelude::*;

/// Text from the label selector alphabet, with separators the lexer does and does not take.
fn label_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => "[a-c]{1,3}",
            1 => Just("in".to_owned()),
            1 => Just("notin".to_owned()),
            1 => "[0-9]{1,2}",
            1 => prop::sample::select(vec![
                "=", "==", "!=", "!", ",", "(", ")", "<", ">", " ", "\t", "\n", "\r", "\u{a0}",
                "\u{2003}", "\u{85}", "-", ".", "_", "/", "example.com/", "é", "\u{0}",
            ])
            .prop_map(str::to_owned),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

/// Text from the field selector alphabet.
fn field_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => "[a-c.]{1,4}",
            1 => prop::sample::select(vec![
                "=", "==", "!=", "!", ",", "\\", "\\,", "\\=", "\\\\", " ", "\u{a0}", "é",
            ])
            .prop_map(str::to_owned),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

fn label_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-zA-Z0-9]([a-zA-Z0-9._-]{0,8}[a-zA-Z0-9])?",
        Just("in".to_owned()),
        Just("notin".to_owned()),
    ]
}

fn label_key() -> impl Strategy<Value = String> {
    (
        prop::option::of("[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?(\\.[a-z]{1,4}){0,2}"),
        "[a-zA-Z0-9]([a-zA-Z0-9._-]{0,8}[a-zA-Z0-9])?",
    )
        .prop_map(|(prefix, name)| match prefix {
            Some(p) => format!("{p}/{name}"),
            None => name,
        })
}

fn label_requirement() -> impl Strategy<Value = LabelRequirement> {
    let values = || {
        proptest::collection::btree_set(label_value(), 1..4)
            .prop_map(|s| s.into_iter().collect::<Vec<_>>())
    };
    let op = prop_oneof![
        label_value().prop_map(LabelOp::Equals),
        label_value().prop_map(LabelOp::NotEquals),
        values().prop_map(LabelOp::In),
        values().prop_map(LabelOp::NotIn),
        Just(LabelOp::Exists),
        Just(LabelOp::DoesNotExist),
        (0i64..1_000_000).prop_map(LabelOp::GreaterThan),
        (0i64..1_000_000).prop_map(LabelOp::LessThan),
    ];
    (label_key(), op).prop_map(|(key, op)| LabelRequirement { key, op })
}

proptest! {
    #[test]
    fn parsed_label_selectors_print_and_parse_to_themselves(text in label_text()) {
        if let Ok(sel) = LabelSelector::parse(&text) {
            let printed = sel.to_string();
            let again = LabelSelector::parse(&printed);
            prop_assert_eq!(again.as_ref(), Ok(&sel), "{:?} printed as {:?}", text, printed);
        }
    }

    #[test]
    fn only_the_lexers_whitespace_separates(text in label_text()) {
        // A Unicode space or control byte is never dropped: it stays in a key or value,
        // which is then refused.
        if LabelSelector::parse(&text).is_ok() {
            prop_assert!(
                !text.contains(['\u{a0}', '\u{2003}', '\u{85}', '\u{0}', 'é']),
                "{:?} was accepted",
                text
            );
        }
    }

    #[test]
    fn valid_label_selectors_round_trip(reqs in proptest::collection::vec(label_requirement(), 0..5)) {
        let sel = reqs.into_iter().fold(LabelSelector::everything(), LabelSelector::with);
        let printed = sel.to_string();
        prop_assert_eq!(LabelSelector::parse(&printed), Ok(sel), "{:?}", printed);
    }

    #[test]
    fn match_labels_convert_to_what_they_say_or_are_refused(
        labels in proptest::collection::btree_map(label_text(), label_text(), 0..4),
    ) {
        let structured = metav1::LabelSelector {
            match_labels: Some(labels.clone()),
            match_expressions: None,
        };
        if let Ok(sel) = LabelSelector::try_from(&structured) {
            prop_assert_eq!(sel.requirements().len(), labels.len());
            let printed = sel.to_string();
            prop_assert_eq!(LabelSelector::parse(&printed), Ok(sel.clone()), "{:?}", printed);
            let back: BTreeMap<String, String> = sel
                .requirements()
                .iter()
                .map(|r| match &r.op {
                    LabelOp::Equals(v) => (r.key.clone(), v.clone()),
                    other => (r.key.clone(), format!("{other:?}")),
                })
                .collect();
            prop_assert_eq!(back, labels);
        }
    }

    #[test]
    fn parsed_field_selectors_print_and_parse_to_themselves(text in field_text()) {
        if let Ok(sel) = FieldSelector::parse(&text) {
            let printed = sel.to_string();
            let again = FieldSelector::parse(&printed);
            prop_assert_eq!(again.as_ref(), Ok(&sel), "{:?} printed as {:?}", text, printed);
        }
    }

    #[test]
    fn valid_field_selectors_round_trip(
        reqs in proptest::collection::vec(
            ("[a-z][a-z.!]{0,10}[a-z]", any::<bool>(), any::<String>()),
            0..5,
        ),
    ) {
        let requirements: Vec<_> = reqs
            .into_iter()
            .map(|(field, eq, value)| FieldRequirement {
                field,
                op: if eq { FieldOp::Equals } else { FieldOp::NotEquals },
                value,
            })
            .collect();
        let mut text = String::new();
        for r in &requirements {
            let one = FieldSelector::parse(&FieldSelector::equals(&r.field, &r.value).to_string());
            prop_assert!(one.is_ok());
            if !text.is_empty() {
                text.push(',');
            }
            let op = if r.op == FieldOp::Equals { "=" } else { "!=" };
            text.push_str(&r.field);
            text.push_str(op);
            text.push_str(&r.value.replace('\\', "\\\\").replace(',', "\\,").replace('=', "\\="));
        }
        let sel = FieldSelector::parse(&text).unwrap();
        prop_assert_eq!(sel.requirements(), &requirements[..]);
        prop_assert_eq!(sel.to_string(), text);
    }
}
