//! libFuzzer entry of `fuzz/targets/feed.rs` (what it checks is there).
#![no_main]

#[path = "../targets/feed.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
