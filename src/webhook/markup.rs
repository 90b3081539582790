//! Text safety of the ready-made chat formats: one escaping function per
//! service, applied to every line of a message (the record's text and plan
//! ids come from an upstream or an operator), so no text can mention a
//! whole channel, ping a user or hide a link behind other words.
//!
//! Links are not escaped here: they are rendered by each format from a
//! [`Link`](crate::model::Link), which only an `http(s)` URL becomes.
//!
//! | service | what it parses in text | neutralised by |
//! |---|---|---|
//! | Discord | `@everyone`, `@here`, `<@id>`, `<@&role>`, Markdown, masked links | `allowed_mentions: {parse: []}` in the payload, and `\` before every ASCII punctuation character (Discord's Markdown escape) |
//! | Slack | `<!channel>`, `<!here>`, `<@U…>`, `<url\|text>` | `&` `<` `>` as `&amp;` `&lt;` `&gt;` (Slack's documented escaping) |
//! | Mattermost (Slack format) | `@channel`, `@all`, `@here`, `@user`, Markdown links | the same, a zero-width space after every `@`, and between `]` and `(` |
//! | Telegram | `@user` (no parse mode is sent, so no Markdown or HTML) | a zero-width space after every `@` |
//! | Feishu | `<at user_id="all">` in `text` messages | the `post` message type, whose `text` elements are literal, and a zero-width space after every `<` |
//! | ntfy, Bark | plain text unless asked for Markdown (never) | nothing to escape; links only in their link fields |

/// A line of a message as every format and e-mail sends it (a record's
/// text, a handle, a name), with each bidirectional control neutralised
/// ([`crate::model::without_bidi_controls`]) before any format's own
/// escaping, so no text reorders what a person reads.
pub fn neutralise(text: &mut String) {
    if let std::borrow::Cow::Owned(safe) = crate::model::without_bidi_controls(text) {
        *text = safe;
    }
}

/// The zero-width space: invisible, and it ends a mention's word.
const ZWSP: char = '\u{200B}';

/// Discord: a backslash before every ASCII punctuation character, which
/// Discord's Markdown shows as the character itself.
pub fn discord(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for c in text.chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Slack and the services that take its format (Mattermost, Rocket.Chat):
/// `&`, `<` and `>` as entities; a zero-width space after `@` (Mattermost
/// mentions plain `@channel`) and between `]` and `(` (Markdown links).
pub fn slack(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut previous = '\0';
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '(' if previous == ']' => {
                out.push(ZWSP);
                out.push('(');
            }
            '@' => {
                out.push('@');
                out.push(ZWSP);
            }
            c => out.push(c),
        }
        previous = c;
    }
    out
}

/// Telegram (no parse mode): a zero-width space after every `@`.
pub fn telegram(text: &str) -> String {
    break_after(text, '@')
}

/// Feishu `post` text elements: a zero-width space after every `<`, so no
/// `<at …>` tag can form even where a client parses one.
pub fn feishu(text: &str) -> String {
    break_after(text, '<')
}

fn break_after(text: &str, mark: char) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        out.push(c);
        if c == mark {
            out.push(ZWSP);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str =
        r#"@everyone @here <!channel> <@U1> <at user_id="all">all</at> [x](https://evil) a&b"#;

    #[test]
    fn no_mention_or_link_syntax_survives() {
        let discord = discord(HOSTILE);
        assert!(
            discord.starts_with(r"\@everyone \@here \<\!channel\> \<\@U1\>"),
            "{discord}"
        );
        assert!(discord.contains(r"\[x\]\(https\:\/\/evil\)"), "{discord}");
        assert_eq!(
            slack(HOSTILE),
            "@\u{200B}everyone @\u{200B}here &lt;!channel&gt; &lt;@\u{200B}U1&gt; &lt;at user_id=\"all\"&gt;all&lt;/at&gt; [x]\u{200B}(https://evil) a&amp;b"
        );
        assert!(!telegram(HOSTILE).contains("@everyone"));
        let feishu = feishu(HOSTILE);
        assert!(!feishu.contains("<at"), "{feishu}");
        assert!(feishu.contains("<\u{200B}at user_id"), "{feishu}");
    }

    #[test]
    fn ordinary_text_reads_the_same() {
        let text = "global reset, plans: plus, pro";
        assert_eq!(slack(text), text);
        assert_eq!(telegram(text), text);
        assert_eq!(feishu(text), text);
        assert_eq!(discord(text), r"global reset\, plans\: plus\, pro");
    }
}
