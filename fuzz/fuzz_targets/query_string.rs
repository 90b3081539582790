//! libFuzzer entry of `fuzz/targets/query_string.rs` (what it checks is there).
#![no_main]

#[path = "../targets/query_string.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
