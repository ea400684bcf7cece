//! Timer scripts (`.tl`): a tiny language of timer operations whose output
//! can be compared against real Node.js.
//!
//! [`parse`](mod@parse) turns a script into a tree, reporting
//! `FILE:LINE:COL: message` for malformed input; [`run`](mod@run) executes
//! it on an [`EventLoop`](crate::EventLoop) with the real or the virtual
//! clock. The same script runs on Node through the repository's Node
//! translator (`tl.js`, not part of this package), and the two outputs must
//! be identical.
//!
//! # Examples
//!
//! ```
//! use timerloop::script::{parse, run};
//! let script = parse::parse("tie.tl", "timeout a 2 { log a }\nimmediate i { log i }\n").unwrap();
//! assert_eq!(run::run_to_lines(&script, true).unwrap(), ["i", "a"]);
//! ```
#![forbid(unsafe_code)]

pub mod parse;
pub mod run;
