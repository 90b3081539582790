//! libFuzzer entry of `fuzz/targets/mcp_body.rs` (what it checks is there).
#![no_main]

#[path = "../targets/mcp_body.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
