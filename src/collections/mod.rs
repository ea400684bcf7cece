//! Data structures that know nothing of timers: an intrusive list whose
//! links are slab keys, an indexed 8-ary min-heap, a generational arena,
//! and an integer hasher. Both layers of the crate build on them (Node's
//! duration lists and list heap; libuv's timer heap; every handle).
//!
//! Two of them, the arena and the duration map, have `unsafe` lookups
//! without bounds or occupancy checks, for the timers pass's hot path
//! (see [`arena`]'s module docs); the others forbid `unsafe` code.

pub(crate) mod arena;
pub(crate) mod durations;
pub(crate) mod hash;
pub(crate) mod list;
pub(crate) mod queue;
