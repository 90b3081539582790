//! The container image of the release (`make dist`'s
//! `target/dist/resetctl-VERSION-oci.tar`, which
//! `deploy/image/build-image.sh` builds with podman from the static binary
//! and saves), tested without a container runtime (none can start a
//! container on these machines): the archive unpacked, its config read,
//! its layers unpacked into a root, and its entrypoint run there in
//! namespaces of its own (`unshare` + `chroot`, as the image's user): it
//! seeds the volume and answers the API on loopback.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::deployment_as_pasted::IMAGE;
use crate::util::{dist_dir, repo_root};

/// Runs `cmd`; panics naming `what` with its output unless it succeeds.
fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The blob `digest` (`sha256:HEX`) of the unpacked archive at `oci`.
fn blob(oci: &Path, digest: &str) -> PathBuf {
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    oci.join("blobs/sha256").join(hex)
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_image_holds_only_what_serve_needs_and_its_entrypoint_serves_the_volume() {
    let dir = tempfile::tempdir().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let archive = dist_dir().join(format!("resetctl-{version}-oci.tar"));
    assert!(
        archive.is_file(),
        "no image archive at {}: `make dist` makes it (`make test` runs it first)",
        archive.display()
    );
    let oci = dir.path().join("oci");
    std::fs::create_dir(&oci).unwrap();
    run(
        "unpack the archive",
        Command::new("tar")
            .arg("-xf")
            .arg(&archive)
            .arg("-C")
            .arg(&oci),
    );
    // podman loads it under the name the guide runs.
    let index = json(&oci.join("index.json"));
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        format!("localhost/resetctl:{version}")
    );

    // The config: user, entrypoint, command, port, volume.
    let manifest = json(&blob(
        &oci,
        index["manifests"][0]["digest"].as_str().unwrap(),
    ));
    let config = json(&blob(&oci, manifest["config"]["digest"].as_str().unwrap()));
    let c = &config["config"];
    assert_eq!(c["User"], "10001:10001", "{c}");
    assert_eq!(
        c["Entrypoint"],
        serde_json::json!(["/usr/bin/resetctl", "--data-dir", "/var/lib/resetctl"])
    );
    assert_eq!(
        c["Cmd"],
        serde_json::json!(["serve", "--listen", "0.0.0.0:8080"])
    );
    assert_eq!(c["ExposedPorts"], serde_json::json!({"8080/tcp": {}}));
    assert_eq!(c["Volumes"], serde_json::json!({"/var/lib/resetctl": {}}));

    // The layers, in order, into a root: nothing but what serve reads.
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    for layer in manifest["layers"].as_array().unwrap() {
        let path = blob(&oci, layer["digest"].as_str().unwrap());
        run(
            "unpack a layer",
            Command::new("tar")
                .arg("-xf")
                .arg(&path)
                .arg("-C")
                .arg(&root),
        );
    }
    let files: BTreeSet<String> = run(
        "list the root",
        Command::new("find")
            .arg(".")
            .args(["-not", "-type", "d"])
            .current_dir(&root),
    )
    .lines()
    .map(|l| l.trim_start_matches("./").to_owned())
    .collect();
    assert_eq!(
        files.iter().cloned().collect::<Vec<_>>(),
        [
            "etc/group",
            "etc/passwd",
            "etc/ssl/certs/ca-certificates.crt",
            "usr/bin/resetctl",
            "usr/share/doc/resetctl/LICENSE-APACHE",
            "usr/share/doc/resetctl/LICENSE-MIT",
            "usr/share/doc/resetctl/copyright",
        ],
        "the image's files: the static binary, the CA bundle, the user, the licences \
         (no C library, no shell, no package manager)"
    );
    // The CA bundle is the pinned one (deploy/image/requirements.txt).
    let bundle = run(
        "deploy/image/ca-bundle.sh",
        &mut Command::new(repo_root().join("deploy/image/ca-bundle.sh")),
    );
    assert!(
        std::fs::read(root.join("etc/ssl/certs/ca-certificates.crt")).unwrap()
            == std::fs::read(bundle.trim()).unwrap(),
        "the image's CA bundle is not certifi's pinned cacert.pem"
    );
    let data = run(
        "the data dir",
        Command::new("stat")
            .args(["-c", "%u:%g %a"])
            .arg(root.join("var/lib/resetctl")),
    );
    assert_eq!(data.trim(), "10001:10001 750");

    // The guide's `sh image` block, each `podman run` as the entrypoint in
    // the root, as the image's user, in namespaces of its own.
    let (script, health) = guide_block_as_script(c, &root, &dir.path().join("serve.log"));
    let answered = run(
        "the guide's image block in its own namespaces",
        Command::new("unshare")
            .args(["--mount", "--net", "--pid", "--fork", "--mount-proc", "--"])
            .args(["bash", "-c", &script]),
    );
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default();
    // The seed's line, the body curl printed (-f: a 200), the health check.
    let mut lines = answered.lines();
    let seeded = lines.next().unwrap_or_default();
    assert!(
        seeded.starts_with("seeded from bundled history: "),
        "{answered}\nserve's log:\n{log}"
    );
    let body: Value = serde_json::from_str(lines.next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {answered}\nserve's log:\n{log}"));
    assert!(
        body["ok"] == true && body["data"].is_object(),
        "the latest record: {body}"
    );
    assert!(answered.trim_end().ends_with("health: 0"), "{answered}");

    // The compose file runs the same image, port, volume and health check.
    let compose = crate::util::python_json(
        "yaml_to_json.py",
        "",
        &std::fs::read(repo_root().join("deploy/image/compose.yaml")).unwrap(),
    );
    let service = &compose["services"]["resetctl"];
    assert_eq!(
        service["image"],
        format!("localhost/resetctl:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(service["ports"], serde_json::json!(["8080:8080"]));
    assert_eq!(
        service["volumes"],
        serde_json::json!(["resetctl-data:/var/lib/resetctl"])
    );
    let mut test = service["healthcheck"]["test"].as_array().unwrap().clone();
    assert_eq!(test.remove(0), "CMD");
    assert_eq!(
        Value::from(test),
        health,
        "the guide's and compose's health checks"
    );
}

/// Words of a shell line: spaces split them, single quotes keep them whole.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut started) = (false, false);
    for ch in line.chars() {
        match ch {
            '\'' => (quoted, started) = (!quoted, true),
            ' ' if !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            _ => (word.push(ch), started = true).1,
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// The guide's `sh image` block as a bash script for the unpacked `root`:
/// `podman volume create` is the root's volume directory; each `podman
/// run [-d] [-p H:C] [-v NAME:PATH] [--health-cmd JSON] IMAGE ARGS…` runs
/// the entrypoint with ARGS (or the image's command) under `chroot` as the
/// image's user, checked against the config (its tag, port and volume);
/// other lines run as they are. Then the health check, printed as
/// `health: CODE`. Returns the script and the health command.
fn guide_block_as_script(c: &Value, root: &Path, log: &Path) -> (String, Value) {
    let block = crate::deployment::blocks()
        .into_iter()
        .find(|b| b.kind == "sh" && b.tags.iter().any(|t| t == IMAGE))
        .expect("the guide has an `sh image` block");
    let user = c["User"].as_str().unwrap();
    let chroot = format!("chroot --userspec={user} {}", root.display());
    let volume = c["Volumes"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut script = String::from("set -e\nip link set lo up\n");
    let mut health = None;
    for line in block.text.lines() {
        let w = words(line);
        if w.starts_with(&["podman".into(), "volume".into(), "create".into()]) {
            continue;
        }
        // The archive this test unpacked (make dist's), as a download names it.
        if w.starts_with(&["podman".into(), "load".into()]) {
            assert_eq!(
                w[2..],
                [
                    "-i".to_owned(),
                    format!("resetctl-{}-oci.tar", env!("CARGO_PKG_VERSION"))
                ],
                "{}: {line}: the image archive of this version",
                block.at()
            );
            continue;
        }
        if !w.starts_with(&["podman".into(), "run".into()]) {
            script.push_str(line);
            script.push('\n');
            continue;
        }
        let (mut detached, mut rest) = (false, &w[2..]);
        let mut port = None;
        while let Some(flag) = rest.first().filter(|f| f.starts_with('-')) {
            let value = rest.get(1).cloned().unwrap_or_default();
            match flag.as_str() {
                "--rm" => {}
                "-d" => detached = true,
                "--name" => {}
                "-p" => port = Some(value.rsplit(':').next().unwrap().to_owned()),
                "-v" => assert_eq!(
                    value.split_once(':').map(|(_, p)| p),
                    Some(volume.as_str()),
                    "{}: {line}: a volume at the image's",
                    block.at()
                ),
                "--health-cmd" => health = Some(serde_json::from_str::<Value>(&value).unwrap()),
                other => panic!(
                    "{}: {line}: a flag the test does not know: {other}",
                    block.at()
                ),
            }
            let takes_value = !matches!(flag.as_str(), "--rm" | "-d");
            rest = &rest[if takes_value { 2 } else { 1 }..];
        }
        assert_eq!(
            rest[0],
            format!("localhost/resetctl:{}", env!("CARGO_PKG_VERSION")),
            "{}: {line}: the image of this version",
            block.at()
        );
        let args: Vec<String> = match &rest[1..] {
            [] => c["Cmd"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect(),
            given => given.to_vec(),
        };
        let entry: Vec<String> = c["Entrypoint"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .chain(args)
            .collect();
        let command = format!("{chroot} {}", entry.join(" "));
        if detached {
            let port = port.expect("a detached run publishes a port");
            assert!(
                c["ExposedPorts"].get(format!("{port}/tcp")).is_some(),
                "{line}"
            );
            script.push_str(&format!(
                "{command} > {} 2>&1 &\nfor _ in $(seq 200); do (: < /dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.05; done\n",
                log.display()
            ));
        } else {
            script.push_str(&command);
            script.push('\n');
        }
    }
    let health = health.expect("the guide's run gives a --health-cmd");
    let health_words: Vec<&str> = health
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    script.push_str(&format!(
        "echo\n{chroot} {} > /dev/null && echo health: 0 || echo health: $?\n",
        health_words.join(" ")
    ));
    (script, health)
}
