//! The request formats an endpoint can take.

use serde::{Deserialize, Serialize};

/// How a change is turned into a request ([`crate::webhook::request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Standard Webhooks: signed JSON `{type, timestamp, data}`.
    #[default]
    Standard,
    /// ntfy: a message published to a topic URL.
    Ntfy,
    /// A Discord channel webhook.
    Discord,
    /// A Slack incoming webhook (also Mattermost and Rocket.Chat).
    Slack,
    /// Telegram Bot API `sendMessage` (the chat id is part of the target).
    Telegram,
    /// Bark (iOS push) for one device key.
    Bark,
    /// A Feishu (Lark) custom bot.
    Feishu,
    /// E-mail over SMTP with TLS ([`crate::webhook::email`]).
    Email,
}

impl Format {
    /// Every format, in the order help lists them.
    pub const ALL: [Format; 8] = [
        Format::Standard,
        Format::Ntfy,
        Format::Discord,
        Format::Slack,
        Format::Telegram,
        Format::Bark,
        Format::Feishu,
        Format::Email,
    ];

    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Standard => "standard",
            Format::Ntfy => "ntfy",
            Format::Discord => "discord",
            Format::Slack => "slack",
            Format::Telegram => "telegram",
            Format::Bark => "bark",
            Format::Feishu => "feishu",
            Format::Email => "email",
        }
    }

    /// Whether its messages are for people (every format but the
    /// standard one): a fulfilment told in its completion's message gets
    /// no message of its own there.
    pub fn is_for_people(self) -> bool {
        self != Format::Standard
    }

    /// Parses a name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == text)
    }
}
