//! Property test: random add/update/delete/replace/add_indexers sequences against a
//! reference model (a `BTreeMap` scanned on every query). After every step the store, its
//! namespace, label and custom indexes, and label-selector lists must agree with the model;
//! index values must never include an empty bucket.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_core::selector::LabelSelector;
use kinform_runtime::store::{IndexFn, LABEL_INDEX, NAMESPACE_INDEX, Store, StoreError};
use proptest::prelude::*;

const NAMESPACES: [Option<&str>; 3] = [None, Some("n1"), Some("n2")];
const LABEL_KEYS: [&str; 3] = ["app", "tier", "env"];
const LABEL_VALUES: [&str; 3] = ["a", "b", "c"];
const CUSTOM: &str = "label-values";

#[derive(Clone, Debug)]
struct Spec {
    ns: usize,
    name: u8,
    labels: Vec<(usize, usize)>,
}

#[derive(Clone, Debug)]
enum Op {
    Upsert(Spec),
    Delete { ns: usize, name: u8 },
    Replace(Vec<Spec>),
    AddIndexer,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..NAMESPACES.len(),
        0u8..6,
        prop::collection::vec((0..LABEL_KEYS.len(), 0..LABEL_VALUES.len()), 0..3),
    )
        .prop_map(|(ns, name, labels)| Spec { ns, name, labels })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => spec().prop_map(Op::Upsert),
        3 => (0..NAMESPACES.len(), 0u8..6).prop_map(|(ns, name)| Op::Delete { ns, name }),
        1 => prop::collection::vec(spec(), 0..8).prop_map(Op::Replace),
        1 => Just(Op::AddIndexer),
    ]
}

fn build(spec: &Spec, version: u64) -> Arc<ConfigMap> {
    let mut obj = ConfigMap::default();
    obj.metadata.namespace = NAMESPACES[spec.ns].map(str::to_owned);
    obj.metadata.name = Some(format!("o{}", spec.name));
    obj.metadata.resource_version = Some(version.to_string());
    let labels: BTreeMap<String, String> = spec
        .labels
        .iter()
        .map(|&(k, v)| (LABEL_KEYS[k].to_owned(), LABEL_VALUES[v].to_owned()))
        .collect();
    if !labels.is_empty() {
        obj.metadata.labels = Some(labels);
    }
    Arc::new(obj)
}

fn key_of(ns: usize, name: u8) -> String {
    match NAMESPACES[ns] {
        Some(n) => format!("{n}/o{name}"),
        None => format!("o{name}"),
    }
}

/// Multi-valued, with repeats (two labels with the same value give the value twice).
fn label_values() -> IndexFn<ConfigMap> {
    Arc::new(|cm: &ConfigMap| {
        cm.metadata
            .labels
            .iter()
            .flatten()
            .map(|(_, v)| v.clone())
            .collect()
    })
}

fn keys_of(objs: Vec<Arc<ConfigMap>>) -> BTreeSet<String> {
    objs.iter()
        .map(|o| {
            kinform_core::resource::object_key(
                o.metadata.namespace.as_deref(),
                o.metadata.name.as_deref().unwrap(),
            )
        })
        .collect()
}

struct Model {
    objects: BTreeMap<String, Arc<ConfigMap>>,
    custom: bool,
    rv: String,
}

impl Model {
    fn select(&self, f: impl Fn(&ConfigMap) -> bool) -> BTreeSet<String> {
        self.objects
            .iter()
            .filter(|(_, o)| f(o))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn check(&self, store: &Store<ConfigMap>) -> Result<(), TestCaseError> {
        prop_assert_eq!(store.len(), self.objects.len());
        let keys: BTreeSet<String> = store.list_keys().into_iter().collect();
        prop_assert_eq!(
            &keys,
            &self.objects.keys().cloned().collect::<BTreeSet<_>>()
        );
        prop_assert_eq!(keys_of(store.list()), keys);
        prop_assert_eq!(store.last_sync_resource_version(), self.rv.clone());
        for (key, obj) in &self.objects {
            prop_assert!(Arc::ptr_eq(&store.get(key).unwrap(), obj));
            prop_assert!(Arc::ptr_eq(
                &store
                    .get_by_name(
                        obj.metadata.namespace.as_deref(),
                        obj.metadata.name.as_deref().unwrap()
                    )
                    .unwrap(),
                obj
            ));
        }

        // Namespace index.
        let namespaces: BTreeSet<String> = self
            .objects
            .values()
            .map(|o| o.metadata.namespace.clone().unwrap_or_default())
            .collect();
        let got: BTreeSet<String> = store
            .index_values(NAMESPACE_INDEX)
            .unwrap()
            .into_iter()
            .collect();
        prop_assert_eq!(got, namespaces);
        for ns in ["", "n1", "n2"] {
            let want = self.select(|o| o.metadata.namespace.as_deref().unwrap_or("") == ns);
            prop_assert_eq!(
                keys_of(store.by_index(NAMESPACE_INDEX, ns).unwrap()),
                want.clone()
            );
            let got: BTreeSet<String> = store
                .index_keys(NAMESPACE_INDEX, ns)
                .unwrap()
                .into_iter()
                .collect();
            prop_assert_eq!(got, want);
        }

        // Label index.
        let pairs: BTreeSet<String> = self
            .objects
            .values()
            .flat_map(|o| {
                o.metadata
                    .labels
                    .iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
            })
            .collect();
        let got: BTreeSet<String> = store
            .index_values(LABEL_INDEX)
            .unwrap()
            .into_iter()
            .collect();
        prop_assert_eq!(got, pairs);
        for k in LABEL_KEYS {
            for v in LABEL_VALUES {
                let want = self.select(|o| {
                    o.metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(k))
                        .map(String::as_str)
                        == Some(v)
                });
                prop_assert_eq!(
                    keys_of(store.by_index(LABEL_INDEX, &format!("{k}={v}")).unwrap()),
                    want
                );
            }
        }

        // Custom index.
        if self.custom {
            let values: BTreeSet<String> = self
                .objects
                .values()
                .flat_map(|o| o.metadata.labels.iter().flatten().map(|(_, v)| v.clone()))
                .collect();
            let got: BTreeSet<String> = store.index_values(CUSTOM).unwrap().into_iter().collect();
            prop_assert_eq!(got, values);
            for v in LABEL_VALUES {
                let want = self.select(|o| o.metadata.labels.iter().flatten().any(|(_, x)| x == v));
                prop_assert_eq!(keys_of(store.by_index(CUSTOM, v).unwrap()), want);
            }
        } else {
            prop_assert_eq!(
                store.index_values(CUSTOM),
                Err(StoreError::IndexNotFound {
                    index: CUSTOM.into()
                })
            );
        }

        // Label-selector lists, against a scan.
        for sel in [
            "",
            "app=a",
            "app in (a,b)",
            "app",
            "!app",
            "app!=a",
            "app=a,tier=b",
            "tier in (b,c),env",
            "env notin (a)",
            "app=a,app=b",
            "env=c,!tier",
        ] {
            let selector = LabelSelector::parse(sel).unwrap();
            for ns in [None, Some(""), Some("n1"), Some("n2")] {
                let want = self.select(|o| {
                    let in_ns = match ns {
                        None | Some("") => true,
                        Some(ns) => o.metadata.namespace.as_deref() == Some(ns),
                    };
                    in_ns && selector.matches(o.metadata.labels.as_ref())
                });
                let got = store.list_by_labels(ns, &selector);
                prop_assert_eq!(
                    got.len(),
                    want.len(),
                    "duplicates for {:?} in {:?}",
                    sel,
                    ns
                );
                prop_assert_eq!(keys_of(got), want, "selector {:?} in {:?}", sel, ns);
            }
        }
        Ok(())
    }
}

proptest! {

    #[test]
    fn store_and_indexes_match_the_model(ops in prop::collection::vec(op(), 1..40)) {
        let store: Store<ConfigMap> = Store::new();
        let mut model = Model { objects: BTreeMap::new(), custom: false, rv: String::new() };
        for (version, op) in ops.into_iter().enumerate() {
            let version = version as u64;
            match op {
                Op::Upsert(spec) => {
                    let obj = build(&spec, version);
                    model.objects.insert(key_of(spec.ns, spec.name), Arc::clone(&obj));
                    if version.is_multiple_of(2) { store.add(obj) } else { store.update(obj) }
                }
                Op::Delete { ns, name } => {
                    let key = key_of(ns, name);
                    let want = model.objects.remove(&key);
                    let got = store.delete(&key);
                    prop_assert_eq!(got.is_some(), want.is_some());
                    if let (Some(g), Some(w)) = (got, want) {
                        prop_assert!(Arc::ptr_eq(&g, &w));
                    }
                }
                Op::Replace(specs) => {
                    let objs: Vec<_> = specs.iter().map(|s| build(s, version)).collect();
                    model.objects = specs
                        .iter()
                        .zip(&objs)
                        .map(|(s, o)| (key_of(s.ns, s.name), Arc::clone(o)))
                        .collect();
                    model.rv = version.to_string();
                    store.replace(objs, version.to_string());
                }
                Op::AddIndexer => {
                    let res = store.add_indexers([(CUSTOM.to_string(), label_values())]);
                    if model.custom {
                        prop_assert_eq!(res, Err(StoreError::IndexConflict { index: CUSTOM.into() }));
                    } else {
                        prop_assert_eq!(res, Ok(()));
                        model.custom = true;
                    }
                }
            }
            model.check(&store)?;
        }
    }
}
