//! kinform-webhook's integration tests: admission and conversion answers, the configuration
//! objects, and the server over real TLS (HTTP/2 and HTTP/1.1).

mod admission;
mod conversion;
mod hostile;
mod registration;
mod server;
mod support;
