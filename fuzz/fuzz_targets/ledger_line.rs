//! libFuzzer entry of `fuzz/targets/ledger_line.rs` (what it checks is there).
#![no_main]

#[path = "../targets/ledger_line.rs"]
mod target;

libfuzzer_sys::fuzz_target!(|data: &[u8]| target::run(data));
