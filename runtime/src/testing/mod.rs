//! TestApiServer: an in-process API server speaking the real wire protocol.
