//! The bodies of the fuzz targets `parse`, `ops`, `tasks`, `semaphore` and
//! `io`, called by the libFuzzer binaries in `fuzz_targets/` (run with
//! cargo-fuzz on stable Rust; see `README.md`). Saved crash
//! inputs (`regressions/`) are replayed on every `cargo test` of the main
//! crate by `tests/hostile.rs` (`fuzz_regressions_replay`), through the same
//! model file as `ops` and the parser, not through this crate.

#![forbid(unsafe_code)]

/// The reference model of `tests/properties.rs`, compiled here too.
#[path = "../../tests/support/model.rs"]
pub mod model;

/// The executor's reference model (`tests/executor_model.rs`).
#[path = "../../tests/support/exec_model.rs"]
pub mod exec_model;

/// The semaphore's reference model (`tests/semaphore_model.rs`).
#[path = "../../tests/support/sem_model.rs"]
pub mod sem_model;

/// The I/O API's reference model (`tests/io_model.rs`).
#[path = "../../tests/support/io_model.rs"]
pub mod io_model;

use timerloop::script::parse::{Body, parse};

/// Target `parse`: the script parser never panics on any input; an error
/// points inside the source (line >= 1, col >= 1, at most one past the end
/// of its line) and displays as `FILE:LINE:COL: message`; a parsed script
/// names only names it lists.
pub fn parse_target(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    match parse("fuzz.tl", &src) {
        Ok(script) => check_names(&script.body, script.names.len()),
        Err(e) => {
            assert!(e.line >= 1 && e.col >= 1, "position {}:{}", e.line, e.col);
            let lines: Vec<&str> = src.split('\n').collect();
            assert!(e.line <= lines.len(), "line {} of {}", e.line, lines.len());
            let width = lines[e.line - 1].chars().count();
            assert!(e.col <= width + 1, "col {} on a line of {width}", e.col);
            assert_eq!(e.file, "fuzz.tl");
            assert!(!e.message.is_empty(), "empty message");
            let shown = e.to_string();
            let prefix = format!("fuzz.tl:{}:{}: ", e.line, e.col);
            assert!(shown.starts_with(&prefix), "{shown:?}");
        }
    }
}

fn check_names(body: &Body, n: usize) {
    for s in body.iter() {
        if let Some(name) = s.name() {
            assert!(name < n);
        }
        if let Some(b) = s.body() {
            check_names(b, n);
        }
    }
}

/// Target `ops`: the bytes are decoded into a sequence of loop operations
/// (`model::decode`) and run on a virtual-clock loop against the reference
/// model (`model::exec`); any panic or model violation is a crash.
pub fn ops_target(data: &[u8]) {
    let ops = model::decode(data);
    if let Err(violations) = model::exec(&ops) {
        panic!("model violated by {ops:?}:\n{violations}");
    }
}

/// Target `tasks`: the bytes are decoded into spawns, wakes (here and from
/// another thread), finishes, sleep resets, timer drops, aborts, handle
/// drops and run steps (`exec_model::decode`), run on a virtual-clock loop
/// against the executor model (`exec_model::exec`); any panic or model
/// violation is a crash.
pub fn tasks_target(data: &[u8]) {
    let ops = exec_model::decode(data);
    if let Err(violations) = exec_model::exec(&ops) {
        panic!("executor model violated:\n{violations}");
    }
}

/// Target `semaphore`: the first byte is the size, the rest acquires of
/// random weights, polls (here and on another thread), cancels,
/// `try_acquire`, permit drops, `forget`, `release` (`sem_model::decode`),
/// checked after every operation by the semaphore model
/// (`sem_model::exec`).
pub fn semaphore_target(data: &[u8]) {
    let (size, ops) = sem_model::decode(data);
    if let Err(violations) = sem_model::exec(size, &ops) {
        panic!("semaphore model violated:\n{violations}");
    }
}

/// Target `io`: the bytes are decoded into operations of the I/O API on
/// Unix socket pairs, with timers (`io_model::decode`), checked by the I/O
/// model (`io_model::exec`): no callback for a closed source, typed errors
/// for stale handles, nothing left unread, the loop exits once everything
/// is closed or unrefed.
pub fn io_target(data: &[u8]) {
    let (ops, end) = io_model::decode(data);
    if let Err(violations) = io_model::exec(&ops, end) {
        panic!("I/O model violated:\n{violations}");
    }
}
