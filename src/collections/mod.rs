//! Data structures that know nothing of timers: an intrusive list whose
//! links are slab keys, an indexed 4-ary min-heap, a generational arena,
//! and an integer hasher. Both layers of the crate build on them (Node's
//! duration lists and list heap; libuv's timer heap; every handle).
#![forbid(unsafe_code)]

pub(crate) mod arena;
pub(crate) mod durations;
pub(crate) mod hash;
pub(crate) mod list;
pub(crate) mod queue;
