//! The raw layers and the merge: every key has a variable, lists and
//! switches read as operators write them, each key comes from its highest layer.

use std::collections::HashMap;

use crate::config::{env_variable, FileConfig, Source};

fn from(pairs: &[(&str, &str)]) -> Result<FileConfig, crate::config::EnvError> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    FileConfig::from_env(|name| map.get(name).cloned())
}

#[test]
fn every_key_is_read_from_its_variable() {
    // Every row, from its own variable (a value every kind reads: "1").
    let every: Vec<(String, &str)> = FileConfig::KEYS
        .iter()
        .map(|key| (env_variable(key), "1"))
        .collect();
    let pairs: Vec<(&str, &str)> = every.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let all = from(&pairs).unwrap();
    for key in FileConfig::KEYS {
        assert!(
            all.text_of(key).is_some(),
            "{key} is not read from its variable"
        );
    }
    assert_eq!(
        env_variable("rate_limit_store"),
        "RESETCTL_RATE_LIMIT_STORE"
    );
    let env = from(&[
        ("RESETCTL_TRUST_PROXY", "10.0.0.0/8, 192.168.0.0/16"),
        ("RESETCTL_UPSTREAM_HEADER", "Authorization: Bearer a,b"),
        ("RESETCTL_NO_SITE", "yes"),
        ("RESETCTL_KEEP", "7"),
        ("RESETCTL_OTHER", "ignored"),
    ])
    .unwrap();
    assert_eq!(
        env.trust_proxy.as_deref(),
        Some(&["10.0.0.0/8".to_owned(), "192.168.0.0/16".to_owned()][..])
    );
    assert_eq!(
        env.upstream_header.as_deref(),
        Some(&["Authorization: Bearer a,b".to_owned()][..])
    );
    assert_eq!(
        (env.no_site, env.keep, env.listen.as_deref()),
        (Some(true), Some(7), None)
    );
    let bad = from(&[("RESETCTL_NO_SITE", "maybe")]).unwrap_err();
    assert_eq!(
        bad.to_string(),
        "RESETCTL_NO_SITE=\"maybe\" is not true or false"
    );
}

#[test]
fn each_key_comes_from_its_highest_layer() {
    let flags = FileConfig {
        listen: Some("flag".into()),
        ..FileConfig::default()
    };
    let env = FileConfig {
        listen: Some("env".into()),
        keep: Some(2),
        ..FileConfig::default()
    };
    let file = FileConfig {
        keep: Some(3),
        watch: Some("poll".into()),
        ..FileConfig::default()
    };
    let merged = FileConfig::merge(&[
        (Source::Flag, &flags),
        (Source::Env, &env),
        (Source::File, &file),
    ]);
    assert_eq!(merged.values.listen.as_deref(), Some("flag"));
    assert_eq!(merged.values.keep, Some(2));
    assert_eq!(merged.values.watch.as_deref(), Some("poll"));
    assert_eq!(merged.source("listen"), Some(Source::Flag));
    assert_eq!(merged.source("keep"), Some(Source::Env));
    assert_eq!(merged.source("watch"), Some(Source::File));
    assert_eq!(merged.source("log"), None);
}
