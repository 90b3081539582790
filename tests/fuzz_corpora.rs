//! Every fuzz target's committed corpus replayed through the very function
//! the fuzzer calls (`fuzz/targets/`), on stable, as part of `make test`:
//! each input must keep the target's properties. Fuzzing itself (new
//! inputs, sanitizers, nightly) is `make fuzz`; docs/fuzzing.md.

use crate::util::repo_root;

#[path = "../fuzz/targets/client_key.rs"]
mod client_key;
#[path = "../fuzz/targets/feed.rs"]
mod feed;
#[path = "../fuzz/targets/ledger_line.rs"]
mod ledger_line;
#[path = "../fuzz/targets/mcp_body.rs"]
mod mcp_body;
#[path = "../fuzz/targets/operator_time.rs"]
mod operator_time;
#[path = "../fuzz/targets/query_string.rs"]
mod query_string;
#[path = "../fuzz/targets/records_document.rs"]
mod records_document;

/// A fuzz target's checks of one input.
type Target = fn(&[u8]);

/// Runs `target` on every file of `fuzz/corpus/NAME/`; there must be some.
fn replay(name: &str, target: Target) {
    let dir = repo_root().join("fuzz/corpus").join(name);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no corpus in {}", dir.display());
    for input in inputs {
        let data = std::fs::read(&input).unwrap();
        let run = std::panic::catch_unwind(|| target(&data));
        assert!(run.is_ok(), "{name}: {} breaks the target", input.display());
    }
}

#[test]
fn every_fuzz_target_keeps_its_properties_on_its_corpus() {
    let targets: [(&str, Target); 7] = [
        ("client_key", client_key::run),
        ("feed", feed::run),
        ("ledger_line", ledger_line::run),
        ("mcp_body", mcp_body::run),
        ("operator_time", operator_time::run),
        ("query_string", query_string::run),
        ("records_document", records_document::run),
    ];
    // Every target of fuzz/Cargo.toml is here.
    let manifest = std::fs::read_to_string(repo_root().join("fuzz/Cargo.toml")).unwrap();
    assert_eq!(manifest.matches("[[bin]]").count(), targets.len());
    for (name, target) in targets {
        replay(name, target);
    }
}
