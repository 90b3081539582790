//! The page of a record id that is not published (a 404's body).

use super::*;

/// The page of a record id that is not published (a 404's body).
pub fn not_found_page(ctx: &PageContext, id: &str) -> String {
    let s = ctx.s();
    let page = html! {
        (DOCTYPE)
        html lang=(ctx.lang.tag()) {
            (head(ctx, s.record_not_found))
            body {
                (header(ctx, &format!("/{}/", ctx.lang.other().segment())))
                main {
                    h1 { (s.record_not_found) }
                    p { code { (id) } }
                    p { a href=(ctx.link(&format!("/{}/", ctx.lang.segment()))) { (s.back) } }
                }
                (footer(ctx))
            }
        }
    };
    page.into_string()
}
