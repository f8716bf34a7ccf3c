//! What goes over the wire, as k8s.io/apiserver's `endpoints/handlers/negotiation` and
//! `responsewriters`: request bodies (`body`, `protobuf`), the forms of an answer (`render`:
//! the object, `PartialObjectMetadata`, `Table`) and the columns of tables (`table`,
//! `printers`).

pub(crate) mod body;
pub(crate) mod printers;
pub(crate) mod protobuf;
pub(crate) mod render;
pub(crate) mod table;
