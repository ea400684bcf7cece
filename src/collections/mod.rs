//! Data structures that know nothing of timers: an intrusive list whose
//! links are slab keys, and an indexed binary min-heap. Both layers of the
//! crate build on them (Node's duration lists and list heap; libuv's timer
//! heap).

pub mod hash;
pub mod list;
pub mod queue;
