//! How k8s-openapi's structs are decoded in place: their fields (`Field`: every member read
//! as an `Option`, a required one taking its type's default when absent), the macros the
//! generated decoders (`k8s_1_35`, ...) invoke for each struct and for the root types, and
//! the entry point of a root type. Only those decoders use it, so it exists with them, at
//! the Kubernetes versions that have them (see the parent module).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{InPlace, Result, Scratch, Value};

/// A k8s-openapi struct field: an `Option` of an [`InPlace`] type, or such a type itself
/// when the field is required. k8s-openapi reads every member as an `Option`, so `null` is
/// the same as absent, and a required field absent holds its type's default
/// (`unwrap_or_default`).
pub(crate) trait Field {
    /// Makes `self` what the struct holds for member value `v`.
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result;

    /// Makes `self` what the struct holds when the member is absent (a [`Mismatch`] where
    /// k8s-openapi reports a missing field).
    fn reset(&mut self) -> Result;
}

impl<T: InPlace> Field for Option<T> {
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        match self {
            _ if v.is_null() => return self.reset(),
            Some(t) => t.decode_in_place(v, cx)?,
            None => *self = Some(T::decode_new(v, cx)?),
        }
        Ok(())
    }

    fn reset(&mut self) -> Result {
        // Most absent members were absent before: no call to drop a `None`.
        if self.is_some() {
            *self = None;
        }
        Ok(())
    }
}

impl<T: InPlace + Required> Field for T {
    fn decode_field<'i>(&mut self, v: Value<'_, 'i>, cx: &mut Scratch<'i>) -> Result {
        if v.is_null() {
            self.reset()
        } else {
            self.decode_in_place(v, cx)
        }
    }

    fn reset(&mut self) -> Result {
        self.clear_in_place()
    }
}

/// A type k8s-openapi has required fields of.
pub(crate) trait Required {
    /// Makes `self` what k8s-openapi holds for the absent member: `Self::default()`
    /// (`unwrap_or_default`), kept in the memory `self` has; a [`Mismatch`] for a type
    /// without a default (k8s-openapi's missing-field error).
    fn clear_in_place(&mut self) -> Result;
}

impl Required for String {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl<T> Required for Vec<T> {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl<T> Required for BTreeMap<String, T> {
    fn clear_in_place(&mut self) -> Result {
        self.clear();
        Ok(())
    }
}

impl Required for Quantity {
    fn clear_in_place(&mut self) -> Result {
        self.0.clear();
        Ok(())
    }
}

/// A k8s-openapi struct decoded member by member, as its `Deserialize` reads it: each
/// member's JSON name and the field it goes to. `resource` checks `apiVersion` and `kind`
/// (k8s-openapi's resource types have no fields for them); `no_default` is a struct without
/// `Default` (a required field's type has none), made afresh when there is no value to
/// decode into. The fields are listed in a pattern without `..`, so a struct with a field
/// the list lacks does not compile.
macro_rules! in_place_struct {
    (resource $ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::fields::in_place_struct!(@impl $ty { $($json => $field),* } {
            "apiVersion" => <$ty as k8s_openapi::Resource>::API_VERSION,
            "kind" => <$ty as k8s_openapi::Resource>::KIND,
        } $crate::decode::in_place::new_by_default);
        $crate::decode::in_place::fields::in_place_struct!(@clear $ty { $($field),* });
    };
    (no_default $ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::fields::in_place_struct!(@impl $ty { $($json => $field),* } {}
            $crate::decode::in_place::fresh);
        $crate::decode::in_place::fields::required_field!(no_default $ty);
    };
    ($ty:ty { $($json:literal => $field:ident),* $(,)? }) => {
        $crate::decode::in_place::fields::in_place_struct!(@impl $ty { $($json => $field),* } {}
            $crate::decode::in_place::new_by_default);
        $crate::decode::in_place::fields::in_place_struct!(@clear $ty { $($field),* });
    };
    (@impl $ty:ty { $($json:literal => $field:ident),* }
        { $($check:literal => $want:expr),* $(,)? } $new:path) => {
        impl $crate::decode::in_place::InPlace for $ty {
            fn decode_in_place<'i>(
                &mut self,
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result {
                use $crate::decode::in_place::fields::Field as _;
                let Self { $($field: _),* } = self;
                $(let mut $field = false;)*
                for member in v.members()? {
                    let (key, value) = member?;
                    match key {
                        $($json => {
                            self.$field.decode_field(value, cx)?;
                            $field = true;
                        })*
                        $($check => value.expect_str($want)?,)*
                        _ => {}
                    }
                }
                $(if !$field {
                    self.$field.reset()?;
                })*
                Ok(())
            }

            fn decode_new<'i>(
                v: $crate::decode::in_place::Value<'_, 'i>,
                cx: &mut $crate::decode::in_place::Scratch<'i>,
            ) -> $crate::decode::in_place::Result<Self> {
                $new(v, cx)
            }
        }
    };
    (@clear $ty:ty { $($field:ident),* }) => {
        impl $crate::decode::in_place::fields::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                use $crate::decode::in_place::fields::Field as _;
                $(self.$field.reset()?;)*
                Ok(())
            }
        }
    };
}
pub(crate) use in_place_struct;

/// Types of required fields decoded afresh: made their default when the member is absent,
/// or, `no_default`, a [`Mismatch`] (k8s-openapi's missing-field error).
macro_rules! required_field {
    (no_default $($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::fields::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                Err($crate::decode::in_place::Mismatch)
            }
        }
    )*};
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::decode::in_place::fields::Required for $ty {
            fn clear_in_place(&mut self) -> $crate::decode::in_place::Result {
                *self = <$ty>::default();
                Ok(())
            }
        }
    )*};
}
pub(crate) use required_field;

required_field!(
    bool,
    i32,
    i64,
    f64,
    serde_json::Value,
    k8s_openapi::ByteString
);

/// The root types: emits `roots(add)`, which registers each, and its lean form, with its
/// [`RootFn`], and each as `Option<T>`, the target of a new object, with its [`new_root`].
macro_rules! root_types {
    ($($ty:ty),* $(,)?) => {
        /// Registers every root type with its decoder.
        pub(super) fn roots(
            add: &mut dyn FnMut(std::any::TypeId, $crate::decode::in_place::RootFn),
        ) {
            $(
                add(std::any::TypeId::of::<$ty>(), $crate::decode::in_place::root::<$ty>);
                add(
                    std::any::TypeId::of::<Option<$ty>>(),
                    $crate::decode::in_place::new_root::<$ty>,
                );
                add(
                    std::any::TypeId::of::<kinform_core::Lean<$ty>>(),
                    $crate::decode::in_place::root::<kinform_core::Lean<$ty>>,
                );
            )*
        }
    };
}
pub(crate) use root_types;

/// Registers the built-in root types of the enabled version, and the dynamic lean
/// informer's objects (a lean object's body does not depend on its type).
pub(crate) fn builtin_roots(add: &mut dyn FnMut(std::any::TypeId, super::RootFn)) {
    super::generated::roots(add);
    add(
        std::any::TypeId::of::<kinform_core::Lean<crate::DynamicObject>>(),
        super::root::<kinform_core::Lean<crate::DynamicObject>>,
    );
}

/// The in-place decoder of a custom resource's lean form (see `custom::CustomRoots`).
pub(crate) const fn lean_root<K: 'static>() -> Option<super::RootFn> {
    Some(super::root::<kinform_core::Lean<K>>)
}

/// A custom resource's `metadata`, decoded in place (see `custom::decode_metadata`).
pub(crate) fn decode_metadata<'i>(
    meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    v: Value<'_, 'i>,
    cx: &mut Scratch<'i>,
) -> Result {
    meta.decode_in_place(v, cx)
}
