//! Unit tests of every transition of the reflector's state machine, and of the driver over a
//! scripted in-memory ListerWatcher on tokio's paused clock.

mod driver;
mod support;
mod transitions;
