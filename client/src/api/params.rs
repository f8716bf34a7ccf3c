//! Options of write requests (`metav1.CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`) and the patch kinds.

use serde::Serialize;

use super::query::Query;

/// Options of create and replace (`metav1.CreateOptions`/`UpdateOptions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostParams {
    /// `dryRun=All`: validate without persisting.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
}

impl PostParams {
    pub(crate) fn add_to(&self, q: &mut Query) {
        if self.dry_run {
            q.push("dryRun", "All");
        }
        if let Some(m) = &self.field_manager {
            q.push("fieldManager", m);
        }
    }
}

/// A patch and its content type.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Patch<T: Serialize> {
    /// JSON merge patch (RFC 7386), `application/merge-patch+json`.
    Merge(T),
    /// JSON patch (RFC 6902) operations, `application/json-patch+json`.
    Json(serde_json::Value),
    /// Strategic merge patch, `application/strategic-merge-patch+json` (built-in types only).
    Strategic(T),
    /// Server-side apply of a full intent, `application/apply-patch+yaml`; needs a field
    /// manager in [`PatchParams`].
    Apply(T),
}

impl<T: Serialize> Patch<T> {
    /// The `Content-Type` of the patch.
    pub fn content_type(&self) -> &'static str {
        match self {
            Patch::Merge(_) => "application/merge-patch+json",
            Patch::Json(_) => "application/json-patch+json",
            Patch::Strategic(_) => "application/strategic-merge-patch+json",
            Patch::Apply(_) => "application/apply-patch+yaml",
        }
    }

    /// The body (JSON; server-side apply accepts JSON as YAML).
    pub fn to_body(&self) -> Result<Vec<u8>, serde_json::Error> {
        match self {
            Patch::Merge(p) | Patch::Strategic(p) | Patch::Apply(p) => serde_json::to_vec(p),
            Patch::Json(p) => serde_json::to_vec(p),
        }
    }
}

/// Options of a patch (`metav1.PatchOptions`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct PatchParams {
    /// `fieldManager`; required by server-side apply.
    pub field_manager: Option<String>,
    /// `force=true`: take ownership of conflicting fields (server-side apply only).
    pub force: bool,
    /// `dryRun=All`.
    pub dry_run: bool,
}

impl PatchParams {
    /// Server-side apply as `manager`.
    pub fn apply(manager: &str) -> Self {
        Self {
            field_manager: Some(manager.to_owned()),
            ..Self::default()
        }
    }

    /// Forces the apply over conflicts.
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    pub(crate) fn add_to(&self, q: &mut Query) {
        if self.dry_run {
            q.push("dryRun", "All");
        }
        if let Some(m) = &self.field_manager {
            q.push("fieldManager", m);
        }
        if self.force {
            q.push("force", "true");
        }
    }
}

/// Options of a server-side apply ([`Api::apply`](crate::Api::apply)): the field manager is
/// required, and `force` is off unless asked for (as kubectl's `--force-conflicts`).
///
/// Without `force`, an apply that sets a field another manager owns with a different value
/// fails with `409 Conflict` (kube-apiserver's message names each field and its owner); with
/// it, the applying manager takes those fields over.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct ApplyParams {
    field_manager: String,
    force: bool,
    dry_run: bool,
}

impl ApplyParams {
    /// Apply as field manager `manager`, without forcing.
    pub fn new(manager: impl Into<String>) -> Self {
        Self {
            field_manager: manager.into(),
            force: false,
            dry_run: false,
        }
    }

    /// Takes ownership of conflicting fields (`force=true`).
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    /// Validates without persisting (`dryRun=All`).
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// The field manager.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// Whether conflicts are forced.
    pub fn is_forced(&self) -> bool {
        self.force
    }

    pub(crate) fn to_patch_params(&self) -> PatchParams {
        PatchParams {
            field_manager: Some(self.field_manager.clone()),
            force: self.force,
            dry_run: self.dry_run,
        }
    }
}

/// What happens to dependents of a deleted object (`metav1.DeletionPropagation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PropagationPolicy {
    /// Leave dependents alone.
    Orphan,
    /// Delete dependents in the background.
    Background,
    /// Delete dependents first (the owner waits with a `foregroundDeletion` finalizer).
    Foreground,
}

/// Conditions a delete must meet (`metav1.Preconditions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object's uid must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's resourceVersion must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// Options of delete and delete_collection (`metav1.DeleteOptions`, sent as the body).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteParams {
    /// `dryRun: ["All"]`.
    #[serde(serialize_with = "dry_run", skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// `gracePeriodSeconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<u32>,
    /// `propagationPolicy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagation_policy: Option<PropagationPolicy>,
    /// `preconditions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preconditions: Option<Preconditions>,
}

fn dry_run<S: serde::Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
    ["All"].serialize(s)
}

impl DeleteParams {
    /// Background propagation.
    pub fn background() -> Self {
        Self {
            propagation_policy: Some(PropagationPolicy::Background),
            ..Self::default()
        }
    }
    /// Foreground propagation.
    pub fn foreground() -> Self {
        Self {
            propagation_policy: Some(PropagationPolicy::Foreground),
            ..Self::default()
        }
    }
    /// Orphan dependents.
    pub fn orphan() -> Self {
        Self {
            propagation_policy: Some(PropagationPolicy::Orphan),
            ..Self::default()
        }
    }

    pub(crate) fn body(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct WithType<'a> {
            kind: &'static str,
            #[serde(rename = "apiVersion")]
            api_version: &'static str,
            #[serde(flatten)]
            params: &'a DeleteParams,
        }
        serde_json::to_vec(&WithType {
            kind: "DeleteOptions",
            api_version: "v1",
            params: self,
        })
        .unwrap_or_default()
    }
}

/// What a delete answers: the object while its deletion is pending, or the server's Status.
pub type DeleteResponse<T> = Either<T, k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>;

/// One of two answers; a delete answers with the object (still being deleted, e.g. held by
/// finalizers) or with a Status (deleted at once).
#[derive(Clone, Debug, PartialEq)]
pub enum Either<L, R> {
    /// The first kind of answer (the object).
    Left(L),
    /// The second kind of answer (a Status).
    Right(R),
}

impl<L, R> Either<L, R> {
    /// Whether it is `Left`.
    pub fn is_left(&self) -> bool {
        matches!(self, Either::Left(_))
    }
    /// Whether it is `Right`.
    pub fn is_right(&self) -> bool {
        matches!(self, Either::Right(_))
    }
    /// The left value.
    pub fn left(self) -> Option<L> {
        match self {
            Either::Left(l) => Some(l),
            Either::Right(_) => None,
        }
    }
    /// The right value.
    pub fn right(self) -> Option<R> {
        match self {
            Either::Left(_) => None,
            Either::Right(r) => Some(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_body() {
        let dp = DeleteParams {
            dry_run: true,
            grace_period_seconds: Some(0),
            propagation_policy: Some(PropagationPolicy::Foreground),
            preconditions: Some(Preconditions {
                uid: Some("u1".into()),
                resource_version: Some("7".into()),
            }),
        };
        let v: serde_json::Value = serde_json::from_slice(&dp.body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"],
                "gracePeriodSeconds":0,"propagationPolicy":"Foreground",
                "preconditions":{"uid":"u1","resourceVersion":"7"}})
        );
        let v: serde_json::Value = serde_json::from_slice(&DeleteParams::default().body()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"kind":"DeleteOptions","apiVersion":"v1"})
        );
    }
}
