//! Timer scripts (`.tl`): a tiny language of timer operations whose output
//! can be compared against real Node.js (see `/work/shared/timer-scripts.md`).

pub mod parse;
