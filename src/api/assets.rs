//! Static documents compiled into the binary: the OpenAPI description, the
//! human docs page and the agent skill file.

/// The OpenAPI 3.1 document served at `/openapi/v1/openapi.json`.
pub const OPENAPI_JSON: &str = include_str!("assets/openapi.json");
/// The documentation page served at `/openapi/v1/docs` (and `/docs/en`).
pub const DOCS_HTML: &str = include_str!("assets/docs.html");
/// The same page in Chinese (`/openapi/v1/docs/zh`): its words are
/// `docs.zh.html`'s, and its `<style>` and `<script>` the English page's,
/// put in where that file marks them (made once), so the two pages share
/// one copy of each and [`DOCS_CSP`] holds for both.
pub fn docs_html_zh() -> &'static str {
    static PAGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PAGE.get_or_init(|| {
        include_str!("assets/docs.zh.html")
            .replacen(STYLE_MARK, block(DOCS_HTML, "<style>", "</style>"), 1)
            .replacen(SCRIPT_MARK, block(DOCS_HTML, "<script>", "</script>"), 1)
    })
}

/// Where `docs.zh.html` takes the English page's blocks.
const STYLE_MARK: &str = "<!-- <style>: the English page's, put in by src/api/assets.rs -->";
const SCRIPT_MARK: &str = "<!-- <script>: the English page's, put in by src/api/assets.rs -->";

/// `page`'s first block from `open` to `close`, both included.
fn block<'a>(page: &'a str, open: &str, close: &str) -> &'a str {
    let start = page
        .find(open)
        .expect("the English docs page has the block");
    let end = start + page[start..].find(close).expect("and closes it") + close.len();
    &page[start..end]
}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chinese_docs_page_takes_the_english_pages_style_and_script_once() {
        let zh = docs_html_zh();
        for (open, close, mark) in [
            ("<style>", "</style>", STYLE_MARK),
            ("<script>", "</script>", SCRIPT_MARK),
        ] {
            assert!(include_str!("assets/docs.zh.html").contains(mark));
            assert!(!zh.contains(mark));
            assert_eq!(block(zh, open, close), block(DOCS_HTML, open, close));
            assert_eq!(zh.matches(open).count(), 1);
        }
        assert!(zh.contains("<html lang=\"zh-Hans\">"));
    }
}
