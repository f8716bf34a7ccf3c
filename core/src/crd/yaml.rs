//! A CRD as YAML, for `kubectl apply -f -`, without a YAML crate in the user's manifest.
//!
//! The text comes from serde-saphyr's serializer, the YAML crate kinform already builds for
//! kubeconfig files, which quotes strings such as `"yes"`, `"1.0"` or `"null"` as YAML
//! requires. Also considered: serde_yaml (unmaintained) and a hand-written emitter.
//!
//! The answer is always a document `kubectl` reads: serialising a CRD cannot fail in
//! practice (every map has string keys), and should the serializer refuse it all the same,
//! the same object is answered as indented JSON, which is YAML too.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// `crd` as a YAML document (`Foo::crd_yaml()` of derived types calls this; use it for the
/// result of [`merge_crds`](super::merge_crds)).
pub fn to_yaml(crd: &CustomResourceDefinition) -> String {
    match serde_saphyr::to_string(crd) {
        Ok(text) => text,
        Err(_) => serde_json::to_string_pretty(crd).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> CustomResourceDefinition {
        serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// Strings YAML would read as something else unless quoted, multi-line descriptions,
    /// CEL rules and patterns with YAML's indicator characters.
    #[test]
    fn tricky_strings_round_trip() {
        let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "foos.example.com", "annotations": {"a": "true", "b": "1.0", "c": "null", "d": "", "e": "~"}},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Foo", "plural": "foos", "shortNames": ["yes", "no", "on"]},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "description": "first line\nsecond: line\n  - indented\n# not a comment",
                        "x-kubernetes-validations": [{"rule": "self.a == 'x' || !has(self.b)", "message": "a: b"}],
                        "properties": {
                            "mode": {"type": "string", "enum": ["true", "false", "0x10", "012", "-", "*", "&a", "!t", "'q'", "\"d\"", "{}", "[]", "@", "%", "`"]},
                            "pattern": {"type": "string", "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?: #$"},
                            "size": {"type": "integer", "default": 3, "maximum": 1e3},
                            "ratio": {"type": "number", "minimum": -0.5},
                            "tabs": {"type": "string", "default": "a\tb \u{e9} \u{1F600} trailing "}
                        }
                    }}
                }]
            }
        }))
        .unwrap();
        let text = to_yaml(&crd);
        assert!(text.contains("kind: CustomResourceDefinition"), "{text}");
        assert!(
            !text.trim_start().starts_with('{'),
            "YAML, not the JSON fallback: {text}"
        );
        assert_eq!(parse(&text), crd);
    }

    /// Every CRD of the corpus (real projects' CRDs) survives to_yaml and back unchanged.
    #[test]
    fn corpus_crds_round_trip() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/crds");
        let mut files = vec![dir];
        let mut seen = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).unwrap() {
                    files.push(entry.unwrap().path());
                }
                continue;
            }
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
            for doc in docs {
                if doc.get("kind").and_then(|k| k.as_str()) != Some("CustomResourceDefinition") {
                    continue;
                }
                let crd: CustomResourceDefinition = serde_json::from_value(doc).unwrap();
                assert_eq!(parse(&to_yaml(&crd)), crd, "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen > 10, "only {seen} CRDs found in the corpus");
    }
}
