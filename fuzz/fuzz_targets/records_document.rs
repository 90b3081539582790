//! libFuzzer entry of `fuzz/targets/records_document.rs` (what it checks is there).
#![no_main]

#[path = "../targets/records_document.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
