//! Static documents compiled into the binary: the OpenAPI description, the
//! human docs page and the agent skill file.

/// The OpenAPI 3.1 document served at `/openapi/v1/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("assets/openapi.json");
/// The documentation page served at `/openapi/v1/docs`.
pub const DOCS_HTML: &str = include_str!("assets/docs.html");
/// The agent skill file served at `/openapi/v1/skill.md`.
pub const SKILL_MD: &str = include_str!("assets/skill.md");
