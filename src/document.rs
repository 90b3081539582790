//! The records document: what `sync` fetches from another instance, what
//! `export` writes and what `seed` reads (docs/spec/decisions.md, "The upstream
//! document").
//!
//! Decoding is all or nothing: one bad record makes the whole document
//! invalid, and the error names the record index, its id and the field.

use serde::{Deserialize, Serialize};

use crate::model::validate::{validate_records, ValidationError};
use crate::model::{DataSource, Record, Timestamp};

/// The largest document read from a file or stdin (`seed FILE`, `convert
/// FILE`): a few hundred thousand records.
pub const DOCUMENT_CAP: crate::durable::Cap = crate::durable::Cap::mib(256);

/// A records document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordsDocument {
    /// When the document's data was generated.
    pub generated_at: Timestamp,
    /// The last successful monitor check; may be null or absent.
    #[serde(default)]
    pub last_successful_check_at: Option<Timestamp>,
    /// The records, each exactly as in section 2.1.
    pub records: Vec<Record>,
    /// The `meta.dataSource` the instance that wrote the document serves;
    /// `Some(None)` (`null`) when it serves none (it is standalone). Only
    /// the admin listener's `/export.json` writes it, and an instance that
    /// syncs from that export serves it in place of a `dataSource` of its
    /// own. Absent elsewhere (`export`, seed files, other upstreams).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data_source: Option<Option<DataSource>>,
}

/// Deserialises a member that is present (even as `null`) as `Some`, so
/// an absent member (`None`, by `default`) and `null` stay apart.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Why a document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON at all (or truncated).
    #[error("not valid JSON: {0}")]
    Syntax(String),
    /// A top-level field is missing or wrong.
    #[error("{field}: {problem}")]
    Document {
        /// The top-level field.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// One record cannot be decoded or breaks a rule.
    #[error(transparent)]
    Record(#[from] ValidationError),
}

impl DocumentError {
    /// The error as it may be published (`dataSource.lastError`): where in
    /// the document and what kind of problem, never a value from it (a
    /// hostile upstream could otherwise make a public API quote whatever a
    /// redirect fetched). The record is named by its index, not its id.
    pub fn public_text(&self) -> String {
        match self {
            DocumentError::Syntax(_) => "not valid JSON".into(),
            DocumentError::Document { field, problem } => {
                format!("{}: {}", public_field(field), kind_of_problem(problem))
            }
            DocumentError::Record(e) => format!(
                "record {}: {}: {}",
                e.index,
                public_field(&e.field),
                kind_of_problem(&e.problem)
            ),
        }
    }
}

/// A field path as published: the path characters of known field names
/// only, at most 80 of them.
fn public_field(field: &str) -> String {
    field
        .chars()
        .take(80)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.[]()".contains(c) {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// The kind of a problem without the values its text quotes. serde writes
/// `invalid value: string "…", expected …` and ``unknown variant `…`,
/// expected …``, where the value is not escaped, so the kind is the text
/// before the first quote, `: `, `, got` or parenthesis; the type's own
/// description after serde's last `, expected` is kept when it holds no
/// double or single quote (a value that imitates serde's wording always
/// brings its closing quote along).
fn kind_of_problem(problem: &str) -> String {
    let (head, expected) = match problem.rsplit_once(", expected ") {
        Some((head, expected)) if !expected.contains(['"', '\'']) => (head, Some(expected)),
        _ => (problem, None),
    };
    let end = [
        head.find(['"', '`', '\'', '(']),
        head.find(": "),
        head.find(", got"),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(head.len());
    let mut kind = head[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    if kind.is_empty() {
        kind = "invalid".to_owned();
    }
    if let Some(expected) = expected {
        kind.push_str(", expected ");
        kind.push_str(expected);
    }
    kind.chars().filter(|c| !c.is_control()).take(160).collect()
}

impl RecordsDocument {
    /// Decodes and validates a records document.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DocumentError> {
        let doc: Self = decode(bytes, "records")?;
        validate_records(&doc.records)?;
        Ok(doc)
    }
}

/// Decodes a seed file: a records document or a bare array of records.
pub fn parse_seed(bytes: &[u8]) -> Result<Vec<Record>, DocumentError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let records: Vec<Record> = decode(bytes, "")?;
        validate_records(&records)?;
        Ok(records)
    } else {
        Ok(RecordsDocument::from_slice(bytes)?.records)
    }
}

/// Decodes `T` from JSON; on failure, decodes again with path tracking so
/// the error names the record index, its id and the field. `records_key` is
/// the name of the record array in the document ("" for a bare array).
pub fn decode<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    records_key: &str,
) -> Result<T, DocumentError> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(_) => Err(explain(bytes, records_key)),
    }
}

/// Builds the precise error for a document that failed to decode.
fn explain(bytes: &[u8], records_key: &str) -> DocumentError {
    // Syntax first: a truncated or malformed document never gets as far as fields.
    let value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return DocumentError::Syntax(e.to_string()),
    };
    let deserializer = &mut serde_json::Deserializer::from_slice(bytes);
    let err = match serde_path_to_error::deserialize::<_, Probe>(deserializer) {
        Ok(_) => {
            return DocumentError::Document {
                field: "(document)".into(),
                problem: "does not match the expected shape".into(),
            }
        }
        Err(err) => err,
    };
    let path = err.path().to_string();
    let problem = err.inner().to_string();
    let problem = problem
        .split(" at line ")
        .next()
        .unwrap_or(&problem)
        .to_owned();
    // `path` looks like `records[3].scheduleWindow.startAt` (or `[3].kind` for a bare array).
    let prefix = if records_key.is_empty() {
        "[".to_owned()
    } else {
        format!("{records_key}[")
    };
    let Some(rest) = path.strip_prefix(&prefix) else {
        let field = if path == "." || path.is_empty() {
            missing_field(&problem).unwrap_or("(document)".into())
        } else {
            path
        };
        return DocumentError::Document { field, problem };
    };
    let (index_text, field) = rest.split_once(']').unwrap_or((rest, ""));
    let index: usize = index_text.parse().unwrap_or(0);
    let record = if records_key.is_empty() {
        value.get(index)
    } else {
        value.get(records_key).and_then(|r| r.get(index))
    };
    let id = record
        .and_then(|r| r.get("id"))
        .map(|id| {
            id.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| id.to_string())
        })
        .unwrap_or_else(|| "(none)".into());
    let mut field = field.trim_start_matches('.').to_owned();
    if let Some(missing) = missing_field(&problem) {
        field = if field.is_empty() {
            missing
        } else {
            format!("{field}.{missing}")
        };
    }
    if field.is_empty() {
        field = "(record)".into();
    }
    DocumentError::Record(ValidationError {
        index,
        id,
        field,
        problem,
    })
}

/// The name inside serde's "missing field `name`" message.
fn missing_field(problem: &str) -> Option<String> {
    let rest = problem.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

/// What `explain` decodes: the document or a bare array, whichever the bytes are.
struct Probe;

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Probe;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a records document (object) or an array of records")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Probe, A::Error> {
                Vec::<Record>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
                Ok(Probe)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Probe, A::Error> {
                RecordsDocument::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Probe)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with(record: &str) -> String {
        let ok = r#"{"id":"1","kind":"reset_completed","resetType":"global","announcedAt":null,"effectiveAt":null,"text":null,"confidence":null,"scope":null,"source":{"origin":"x","postId":"1","handle":null,"url":null},"schedulePrecision":null,"scheduleBasis":null,"scheduleWindow":null,"scheduleState":null,"completedAt":null,"completionRecordId":null,"fulfillmentOrigin":null,"relatedRecordIds":[]}"#;
        format!(r#"{{"generatedAt":"2026-11-20T10:00:00.000Z","records":[{ok},{record}]}}"#)
    }

    fn error_of(record: &str) -> String {
        RecordsDocument::from_slice(doc_with(record).as_bytes())
            .unwrap_err()
            .to_string()
    }

    fn valid_second() -> serde_json::Value {
        let doc: serde_json::Value =
            serde_json::from_str(&doc_with("{}").replace(",{}]", "]")).unwrap();
        let mut r = doc["records"][0].clone();
        r["id"] = "2".into();
        r["source"]["postId"] = "2".into();
        r
    }

    fn error_with(pointer: &str, value: serde_json::Value) -> String {
        let mut r = valid_second();
        *r.pointer_mut(pointer).unwrap() = value;
        error_of(&r.to_string())
    }

    #[test]
    fn decode_errors_name_index_id_and_field() {
        assert_eq!(
            error_with("/kind", "reset_maybe".into()),
            "record 1 (id \"2\"): kind: unknown variant `reset_maybe`, expected `reset_scheduled` or `reset_completed`"
        );
        assert_eq!(
            error_with("/resetType", "partial".into()),
            "record 1 (id \"2\"): resetType: unknown variant `partial`, expected one of `global`, `banked`, `global_and_banked`"
        );
        assert_eq!(
            error_with("/announcedAt", "2026-11-20T10:00:00Z".into()),
            "record 1 (id \"2\"): announcedAt: expected a UTC timestamp of the form YYYY-MM-DDTHH:MM:SS.mmmZ, got \"2026-11-20T10:00:00Z\""
        );
        assert_eq!(
            error_with("/relatedRecordIds", "1".into()),
            "record 1 (id \"2\"): relatedRecordIds: invalid type: string \"1\", expected a sequence"
        );
        assert_eq!(
            error_with("/confidence", "high".into()),
            "record 1 (id \"2\"): confidence: invalid type: string \"high\", expected f64"
        );
        assert_eq!(
            error_with("/source/origin", "mastodon".into()),
            "record 1 (id \"2\"): source.origin: unknown variant `mastodon`, expected one of `x`, `operator`, `rss`, `github`"
        );
        let mut missing = valid_second();
        missing.as_object_mut().unwrap().remove("effectiveAt");
        assert_eq!(
            error_of(&missing.to_string()),
            "record 1 (id \"2\"): effectiveAt: missing field `effectiveAt`"
        );
        let mut missing_inner = valid_second();
        missing_inner["source"]
            .as_object_mut()
            .unwrap()
            .remove("url");
        assert_eq!(
            error_of(&missing_inner.to_string()),
            "record 1 (id \"2\"): source.url: missing field `url`"
        );
    }

    #[test]
    fn unknown_fields_are_ignored_and_null_check_at_may_be_absent() {
        let mut r = valid_second();
        r["futureField"] = 1.into();
        let doc = RecordsDocument::from_slice(
            doc_with(&r.to_string())
                .replace("{\"generatedAt\"", "{\"extra\":true,\"generatedAt\"")
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(doc.records.len(), 2);
        assert_eq!(doc.last_successful_check_at, None);
    }

    #[test]
    fn a_data_source_member_is_told_apart_when_absent_null_or_an_object() {
        let doc = |extra: &str| {
            RecordsDocument::from_slice(
                format!(r#"{{"generatedAt":"2026-11-20T10:00:00.000Z","records":[]{extra}}}"#)
                    .as_bytes(),
            )
        };
        assert_eq!(doc("").unwrap().data_source, None);
        assert_eq!(
            doc(r#","dataSource":null"#).unwrap().data_source,
            Some(None)
        );
        let error = doc(r#","dataSource":{"type":"upstream"}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "dataSource: missing field `mode`",
            "a malformed dataSource is named"
        );
        // Absent is not written; null is.
        let mut written = doc("").unwrap();
        assert!(!serde_json::to_string(&written)
            .unwrap()
            .contains("dataSource"));
        written.data_source = Some(None);
        assert!(serde_json::to_string(&written)
            .unwrap()
            .ends_with(r#""dataSource":null}"#));
    }

    #[test]
    fn public_texts_quote_no_value_of_the_document() {
        let secret = "INTERNAL-SECRET-4f2a";
        for (pointer, value) in [
            ("/kind", serde_json::json!(secret)),
            ("/id", serde_json::json!(secret)),
            ("/confidence", serde_json::json!(secret)),
            ("/announcedAt", serde_json::json!(secret)),
            ("/source/url", serde_json::json!(7)),
        ] {
            let mut record = valid_second();
            *record.pointer_mut(pointer).unwrap() = value;
            let doc =
                format!(r#"{{"generatedAt":"2026-11-20T10:00:00.000Z","records":[{record}]}}"#);
            let err = RecordsDocument::from_slice(doc.as_bytes()).unwrap_err();
            let public = err.public_text();
            assert!(!public.contains("INTERNAL"), "{pointer}: {public}");
            assert!(public.starts_with("record 0: "), "{pointer}: {public}");
            assert!(
                err.to_string().contains(secret) || pointer == "/source/url",
                "{err}"
            );
        }
        let generated = RecordsDocument::from_slice(b"{\"generatedAt\": \"INTERNAL\"}")
            .unwrap_err()
            .public_text();
        assert!(
            generated.starts_with("generatedAt: ") && !generated.contains("INTERNAL"),
            "{generated}"
        );
        // A value that imitates serde's own wording gains nothing.
        assert_eq!(
            kind_of_problem(
                "invalid value: string \"x, expected INTERNAL\", expected a UTC timestamp"
            ),
            "invalid value, expected a UTC timestamp"
        );
        assert_eq!(
            kind_of_problem("must be between 0 and 1, got 7"),
            "must be between 0 and 1"
        );
        assert_eq!(
            kind_of_problem("must equal the numeric id \"123\" of a source-post record"),
            "must equal the numeric id"
        );
        // A value that closes serde's quote itself is cut at the first quote.
        assert_eq!(
            kind_of_problem("unknown variant `a` INTERNAL-SECRET `b`, expected one of `x`, `y`"),
            "unknown variant, expected one of `x`, `y`"
        );
        assert_eq!(
            kind_of_problem("expected a UTC timestamp, got \"x, expected INTERNAL\""),
            "expected a UTC timestamp"
        );
        assert_eq!(
            DocumentError::Syntax("expected value at line 1".into()).public_text(),
            "not valid JSON"
        );
    }

    #[test]
    fn document_level_errors() {
        assert_eq!(
            RecordsDocument::from_slice(br#"{"records":[]}"#)
                .unwrap_err()
                .to_string(),
            "generatedAt: missing field `generatedAt`"
        );
        assert!(RecordsDocument::from_slice(b"{\"generatedAt\":")
            .unwrap_err()
            .to_string()
            .starts_with("not valid JSON: "));
        assert_eq!(
            RecordsDocument::from_slice(
                br#"{"generatedAt":"2026-11-20T10:00:00.000Z","records":{}}"#
            )
            .unwrap_err()
            .to_string(),
            "records: invalid type: map, expected a sequence"
        );
    }

    #[test]
    fn every_record_shape_round_trips_byte_for_byte() {
        // The golden file is written by hand in serde_json's pretty layout;
        // decoding and re-encoding must reproduce it exactly (field order,
        // nulls written, no extra fields).
        let golden = include_str!("../tests/fixtures/records/every-shape.json");
        let records: Vec<Record> = decode(golden.as_bytes(), "").unwrap();
        validate_records(&records).unwrap();
        assert!(records.len() >= 8);
        assert_eq!(
            serde_json::to_string_pretty(&records).unwrap() + "\n",
            golden
        );
    }
}
