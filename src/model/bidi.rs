//! Bidirectional-control characters in text an upstream or an operator
//! wrote: the one rule of which characters they are and what a reader is
//! shown instead, which every human output's escaping helper applies (the
//! pages, the feeds, the chat formats and e-mail, the terminal). The JSON
//! API and the signed webhook payload carry the text as given: they are
//! data, not something a person reads as it is rendered.
//!
//! The embeddings and overrides (U+202A–U+202E) and the isolates
//! (U+2066–U+2069) reorder what is shown after them, so a record's text or
//! a handle could make a page, a feed entry or a message read otherwise
//! than it is written ("Trojan Source", CVE-2021-42574). The marks U+200E,
//! U+200F and U+061C only set a direction and are left alone.

use std::borrow::Cow;

/// Whether `c` is a bidirectional embedding, override, isolate or pop.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every bidirectional-control character replaced by U+FFFD
/// (the replacement character: something was there, and it reorders
/// nothing); borrowed when there is none.
pub fn without_bidi_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_bidi_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if is_bidi_control(c) { '\u{FFFD}' } else { c })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedding_override_and_isolate_is_replaced_and_nothing_else() {
        let hostile: String = ('\u{202A}'..='\u{202E}')
            .chain('\u{2066}'..='\u{2069}')
            .collect();
        assert_eq!(without_bidi_controls(&hostile), "\u{FFFD}".repeat(9));
        let ordinary = "reset \u{200F}שלום 重置 \u{200E}@handle";
        assert!(matches!(without_bidi_controls(ordinary), Cow::Borrowed(_)));
    }
}
