#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| timerloop_fuzz::io_target(data));
