//! The layout's promises, checked: no two modules of the library import
//! each other, even through others, and no two rooms of any folder either,
//! at any depth (tests/modgraph.py prints the graph's strongly connected
//! components; ARCHITECTURE.md).

use crate::util::repo_root;

/// The components modgraph.py prints for `args`, after asserting none is a cycle.
fn components_without_cycles(args: &[&str]) -> String {
    let mut command = std::process::Command::new(crate::util::python());
    command.arg(repo_root().join("tests/modgraph.py"));
    command.arg(repo_root().join("src"));
    command.args(args);
    let out = command.output().expect("run tests/modgraph.py");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && !printed.contains("CYCLE"),
        "import cycles ({args:?}):\n{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    printed
}

#[test]
fn no_module_of_the_library_is_in_an_import_cycle() {
    let printed = components_without_cycles(&[]);
    // The graph is really read: the floor and its users are there.
    for module in ["model", "publish", "snapshot", "webhook", "query", "api"] {
        assert!(
            printed.lines().any(|l| l.trim() == module),
            "{module} missing from:\n{printed}"
        );
    }
}

#[test]
fn no_room_of_the_api_is_in_an_import_cycle() {
    let printed = components_without_cycles(&["api"]);
    for room in [
        "transport",
        "admission",
        "conditional",
        "routes",
        "server",
        "site",
    ] {
        assert!(
            printed.lines().any(|l| l.trim() == room),
            "{room} missing from:\n{printed}"
        );
    }
}

/// src/api/mod.rs lists the rooms of the API from the floor up (and
/// ARCHITECTURE.md after it): each room uses only rooms listed before it.
#[test]
fn every_room_of_the_api_uses_only_rooms_listed_before_it() {
    let doc = std::fs::read_to_string(repo_root().join("src/api/mod.rs")).unwrap();
    let rooms_doc = doc
        .split("Rooms, from the floor up")
        .nth(1)
        .and_then(|rest| rest.split("No domain decision").next())
        .expect("src/api/mod.rs lists its rooms from the floor up");
    let out = std::process::Command::new(crate::util::python())
        .arg(repo_root().join("tests/modgraph.py"))
        .arg(repo_root().join("src"))
        .args(["api", "--edges"])
        .output()
        .expect("run tests/modgraph.py");
    let edges: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (from, to) = l.split_once(" -> ")?;
            Some((from.to_owned(), to.to_owned()))
        })
        .collect();
    assert!(edges.len() > 20, "edges of src/api/: {edges:?}");
    // The rooms in the order the list names them (`room`, [`room`]).
    let mut order: Vec<&str> = Vec::new();
    for name in rooms_doc.split('`').skip(1).step_by(2) {
        if !order.contains(&name) {
            order.push(name);
        }
    }
    let at = |room: &str| order.iter().position(|r| *r == room);
    let mut wrong = Vec::new();
    for (from, to) in &edges {
        match (at(from), at(to)) {
            _ if from == "tests" => {}
            (Some(a), Some(b)) if b < a => {}
            (None, _) => wrong.push(format!("{from} is not in the list")),
            (_, None) => wrong.push(format!("{to} is not in the list")),
            _ => wrong.push(format!("{from} uses {to}, listed after it")),
        }
    }
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "src/api/mod.rs's rooms, from the floor up:\n{}",
        wrong.join("\n")
    );
}

/// Every folder of the library and of the CLI, at any depth (a room:
/// `webhook`, `api/transport`, `limit/redis`, …, and any added later), is
/// checked as `api` is: no two of its files or folders import each other,
/// even through others.
#[test]
fn no_room_of_any_folder_at_any_depth_is_in_an_import_cycle() {
    for (crate_root, rooms) in [
        (
            "src",
            &[
                "api",
                "api/transport",
                "webhook/outbox",
                "limit/redis",
                "settings",
            ][..],
        ),
        ("cli/src", &["commands"][..]),
    ] {
        let out = std::process::Command::new(crate::util::python())
            .arg(repo_root().join("tests/modgraph.py"))
            .arg(repo_root().join(crate_root))
            .arg("--every")
            .output()
            .expect("run tests/modgraph.py");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !printed.contains("CYCLE"),
            "import cycles in {crate_root}:\n{printed}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every folder is really read, the nested ones too.
        for room in rooms {
            assert!(
                printed.lines().any(|l| l == format!("# {room}")),
                "{crate_root}/{room} missing from:\n{printed}"
            );
        }
    }
}

#[test]
fn every_owner_in_the_architecture_document_is_where_it_says() {
    let readme = std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).unwrap();
    let table = readme
        .split("### Who decides what")
        .nth(1)
        .expect("ARCHITECTURE.md has a table of owners");
    let mut rows = 0;
    for line in table
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains('`'))
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (decision, file, function) = (cells[1], cells[2], cells[3]);
        let file = file.trim_matches('`');
        let function = function.trim_matches('`');
        let text = std::fs::read_to_string(repo_root().join(file))
            .unwrap_or_else(|e| panic!("{decision}: {file}: {e}"));
        // A function, a type, or a table (a macro's invocation, `name!`).
        let defined = match function.strip_suffix('!') {
            Some(table) => text.lines().any(|l| l.starts_with(&format!("{table}! {{"))),
            None => ["fn ", "struct ", "enum "].iter().any(|item| {
                text.match_indices(&format!("{item}{function}"))
                    .any(|(at, found)| text[at + found.len()..].starts_with(['(', '<', ' ']))
            }),
        };
        assert!(defined, "{decision}: no {function} in {file}");
        rows += 1;
    }
    assert!(rows >= 20, "the table of owners has {rows} rows");
}

#[test]
fn the_release_binary_carries_no_debug_info() {
    // What `make run` and the operator's manual install (docs/benchmarks.md,
    // "Binary size"): 103 MB with line tables, 23 MiB without.
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let release: Vec<&str> = manifest
        .split("\n[profile.release]\n")
        .nth(1)
        .expect("a [profile.release] section")
        .split("\n[")
        .next()
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert!(release.contains(&"debug = false"), "{release:?}");
    assert!(release.contains(&"strip = \"debuginfo\""), "{release:?}");
}

/// CONTRIBUTING.md's paragraph on `make test-deps` names every Debian
/// package of the Makefile's `TEST_TOOLS` and every npm package of the
/// browser tests' pin file: the Makefile and the pin file decide, the
/// document reports.
#[test]
fn contributing_names_everything_make_test_installs() {
    let readme = std::fs::read_to_string(repo_root().join("CONTRIBUTING.md")).unwrap();
    let paragraph = readme
        .split("\n\n")
        .find(|p| p.starts_with("`make test` first runs `make test-deps`"))
        .expect("CONTRIBUTING.md has a paragraph on what `make test-deps` installs");
    let makefile = std::fs::read_to_string(repo_root().join("Makefile")).unwrap();
    let tools = makefile
        .split("TEST_TOOLS :=")
        .nth(1)
        .expect("the Makefile has TEST_TOOLS")
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .take_while(|l| !l.starts_with("test-deps:"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut packages: Vec<String> = tools
        .split_whitespace()
        .filter_map(|pair| pair.split_once(':').map(|(_, pkg)| pkg.to_owned()))
        .collect();
    let browser: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("tests/browser/package.json")).unwrap(),
    )
    .unwrap();
    packages.extend(
        browser["dependencies"]
            .as_object()
            .expect("tests/browser/package.json has dependencies")
            .keys()
            .cloned(),
    );
    assert!(packages.len() >= 12, "packages: {packages:?}");
    let missing: Vec<&String> = packages
        .iter()
        .filter(|p| !paragraph.contains(&format!("`{p}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md's `make test-deps` paragraph does not name {missing:?}:\n{paragraph}"
    );
}

/// The `.rs` files of the library and the CLI outside their tests
/// (`tests.rs`, a `tests/` folder, and what follows `#[cfg(test)]`),
/// with the code lines of each (comment lines left out).
fn code_lines() -> Vec<(std::path::PathBuf, Vec<(usize, String)>)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo_root().join("src"), &mut files);
    walk(&repo_root().join("cli/src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("\n#[cfg(test)]").next().unwrap_or("");
            let lines = code
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim_start().starts_with("//"))
                .map(|(n, l)| (n + 1, l.to_owned()))
                .collect();
            (path, lines)
        })
        .collect()
}

/// The string literals of a line of code (escapes kept as written).
fn literals(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut start = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (start, c) {
            (None, '"') => start = Some(i + 1),
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(s), '"') if !escaped => {
                found.push(&line[s..i]);
                start = None;
            }
            _ => {}
        }
        escaped = false;
    }
    found
}

/// Every string literal of the code outside `owner` that spells one of
/// `names` where `spelt(literal, at, name)` says the occurrence counts.
fn copies_of(
    owner: &std::path::Path,
    names: &[String],
    spelt: impl Fn(&str, usize, &str) -> bool,
) -> Vec<String> {
    let mut copies = Vec::new();
    for (path, lines) in code_lines() {
        if path == owner {
            continue;
        }
        for (n, line) in &lines {
            for literal in literals(line) {
                for name in names {
                    if literal
                        .match_indices(name.as_str())
                        .any(|(at, _)| spelt(literal, at, name))
                    {
                        copies.push(format!("{}:{n}: {name} in \"{literal}\"", path.display()));
                    }
                }
            }
        }
    }
    copies
}

#[test]
fn no_code_spells_out_a_route_path_but_its_owner() {
    let owner = repo_root().join("src/paths.rs");
    let names: Vec<String> = std::fs::read_to_string(&owner)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("pub const "))
        .filter_map(|l| Some(l.split('"').nth(1)?.to_owned()))
        .collect();
    assert!(names.len() >= 12, "src/paths.rs names {names:?}");
    // A path of ours, not one below another host (the upstream's URL, an
    // example URL in help text).
    let copies = copies_of(&owner, &names, |literal, at, _| {
        literal[..at]
            .chars()
            .next_back()
            .is_none_or(|c| " (`=".contains(c))
    });
    assert!(
        copies.is_empty(),
        "route paths are named in src/paths.rs only; copies:\n{}",
        copies.join("\n")
    );
}

/// Files that are tables (one entry per line, nothing to split by job),
/// with what they list: the size limit does not apply.
const TABLES: &[(&str, &str)] = &[
    (
        "src/site/i18n.rs",
        "every string of the pages in both languages",
    ),
    (
        "cli/src/args.rs",
        "clap's declaration of every command and flag",
    ),
];

/// About 500 lines of code a file (blank and comment lines not counted;
/// tests and tables aside). A function's limit, 100 lines, is clippy's
/// `too_many_lines` (clippy.toml), which `make lint` runs.
#[test]
fn no_file_outgrows_its_job() {
    const FILE_LINES: usize = 500;
    let root = repo_root();
    let mut over = Vec::new();
    for (path, lines) in code_lines() {
        let name = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = lines.iter().filter(|(_, l)| !l.trim().is_empty()).count();
        if code > FILE_LINES && !TABLES.iter().any(|(t, _)| *t == name) {
            over.push(format!("{name}: {code} lines of code"));
        }
    }
    assert!(
        over.is_empty(),
        "split these by job (or, if one is a table, list it in TABLES):\n{}",
        over.join("\n")
    );
}

#[test]
fn no_code_spells_out_a_data_dir_file_name_but_its_owner() {
    let owner = repo_root().join("src/data_dir.rs");
    // The file names (with a dot, or the pointer's); the directories'
    // names (`snapshots`, `webhooks`, `state`) are words used elsewhere too.
    let names: Vec<String> = std::fs::read_to_string(&owner)
        .unwrap()
        .lines()
        .filter(|l| l.trim_start().starts_with("const ") || l.starts_with("pub const "))
        .filter_map(|l| Some(l.split('"').nth(1)?.to_owned()))
        .filter(|name| name.contains('.') || name.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    assert!(names.len() >= 11, "src/data_dir.rs names {names:?}");
    let copies = copies_of(&owner, &names, |literal, at, name| {
        let before = literal[..at].chars().next_back();
        let after = literal[at + name.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric() && c != '-' && c != '_')
            && after.is_none_or(|c| !c.is_alphanumeric())
    });
    assert!(
        copies.is_empty(),
        "data-dir file names are named in src/data_dir.rs only; copies:\n{}",
        copies.join("\n")
    );
}

/// Every exit code is decided in cli/src/exit.rs: the other files of the
/// CLI make their errors through its mappings (`From` each library error,
/// or a named kind such as `CliError::io`), never with a code of their own.
#[test]
fn no_exit_code_is_decided_outside_exit_rs() {
    let owner = repo_root().join("cli/src/exit.rs");
    let mut found = Vec::new();
    for (path, lines) in code_lines() {
        if path == owner || !path.starts_with(repo_root().join("cli/src")) {
            continue;
        }
        for (n, line) in &lines {
            // `Code::…` (not `ExitCode::SUCCESS`, the standard library's).
            let code = line
                .match_indices("Code::")
                .any(|(at, _)| !line[..at].ends_with(|c: char| c.is_alphanumeric()));
            if code || line.contains("CliError::new(") {
                found.push(format!("{}:{n}: {}", path.display(), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "exit codes decided outside cli/src/exit.rs:\n{}",
        found.join("\n")
    );
}
