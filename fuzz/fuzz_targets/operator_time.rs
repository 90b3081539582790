//! libFuzzer entry of `fuzz/targets/operator_time.rs` (what it checks is there).
#![no_main]

#[path = "../targets/operator_time.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
