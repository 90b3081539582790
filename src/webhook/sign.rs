//! Standard Webhooks signing (<https://www.standardwebhooks.com/>, the
//! specification's "Signature scheme"), as its reference libraries do it:
//! the secret is `whsec_` + base64 of the key bytes; the signature is
//! `v1,` + base64(HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The prefix of a secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A secret that is not `whsec_` + base64.
#[derive(Debug, thiserror::Error)]
#[error("the endpoint secret is not whsec_ followed by base64")]
pub struct BadSecret;

/// A new secret: 24 random bytes (the reference libraries use 24 to 64).
pub fn generate_secret() -> String {
    format!(
        "{SECRET_PREFIX}{}",
        STANDARD.encode(crate::random::random_bytes(24))
    )
}

/// The key bytes of a secret.
pub fn secret_key(secret: &str) -> Result<Vec<u8>, BadSecret> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(encoded).map_err(|_| BadSecret)
}

/// The `webhook-signature` value for one attempt.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, BadSecret> {
    let key = secret_key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the specification's reference test suite
    /// (standard-webhooks `libraries/python/tests/test_webhooks.py`).
    #[test]
    fn matches_the_reference_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            sign(secret, id, 1614265330, body).unwrap(),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn generated_secrets_round_trip() {
        let secret = generate_secret();
        assert!(secret.starts_with(SECRET_PREFIX));
        assert_eq!(secret_key(&secret).unwrap().len(), 24);
    }
}
