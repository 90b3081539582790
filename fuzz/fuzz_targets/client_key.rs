//! libFuzzer entry of `fuzz/targets/client_key.rs` (what it checks is there).
#![no_main]

#[path = "../targets/client_key.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
