//! Static documents compiled into the binary: the OpenAPI description, the
//! human docs page and the agent skill file.

/// The OpenAPI 3.1 document served at `/openapi/v1/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("assets/openapi.json");
/// The documentation page served at `/openapi/v1/docs` (and `/docs/en`).
pub const DOCS_HTML: &str = include_str!("assets/docs.html");
/// The same page in Chinese (`/openapi/v1/docs/zh`): its `<style>` and
/// `<script>` are the English page's, byte for byte, so [`DOCS_CSP`] holds
/// for both (tests/docs_page.rs checks them in chromium).
pub const DOCS_HTML_ZH: &str = include_str!("assets/docs.zh.html");
/// The Content-Security-Policy sent with the docs page. The page is
/// self-contained: nothing may load from anywhere, and only its one inline
/// `<style>` and its one inline `<script>` (which fills the address the page
/// was served from into the examples) apply, each pinned by its SHA-256. The
/// one image is the empty `data:` favicon, which spares the browser a request
/// for `/favicon.ico`.
/// Editing either block changes its hash: tests/docs_page.rs loads the page
/// in chromium and names the hash that belongs here.
pub const DOCS_CSP: &str = concat!(
    "default-src 'none'; ",
    "style-src 'sha256-tWML8QsR+Ex2KEhG1/3e9RYLz9RZ39zgJbG4xc5GIlQ='; ",
    "script-src 'sha256-y4ebRdctwHJvqoVHwxog+CgWV1IjCFh7fx1Qhxf9CaA='; ",
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
);
/// The agent skill file served at `/openapi/v1/skill.md`.
pub const SKILL_MD: &str = include_str!("assets/skill.md");
