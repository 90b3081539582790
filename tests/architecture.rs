//! The layout's promises, checked: no two modules of the library import
//! each other, even through others (tests/modgraph.py prints the graph's
//! strongly connected components; README, "Architecture").

use crate::util::repo_root;

#[test]
fn no_module_of_the_library_is_in_an_import_cycle() {
    let out = std::process::Command::new(crate::util::python())
        .arg(repo_root().join("tests/modgraph.py"))
        .arg(repo_root().join("src"))
        .output()
        .expect("run tests/modgraph.py");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !printed.contains("CYCLE"),
        "import cycles among src/'s modules:\n{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The graph is really read: the floor and its users are there.
    for module in ["model", "publish", "snapshot", "webhook", "query", "api"] {
        assert!(
            printed.lines().any(|l| l.trim() == module),
            "{module} missing from:\n{printed}"
        );
    }
}
