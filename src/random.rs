//! Randomness, made in one place: the operating system's generator
//! (`getrandom`), for secrets (signing keys), ids (endpoints, messages,
//! outboxes, operator sources, a quota store's check ids) and jitter
//! (webhook retries, sync back-off and intervals). It imports nothing of
//! the crate.

/// Fills `buf` from the operating system's generator, or says why it
/// cannot (a caller that can refuse to start, rather than panic).
pub fn fill(buf: &mut [u8]) -> Result<(), getrandom::Error> {
    getrandom::fill(buf)
}

/// `n` random bytes from the operating system's generator (secrets and ids).
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    fill(&mut buf).expect("the operating system's random generator");
    buf
}

/// `bytes` random bytes from the operating system, as lowercase hex.
pub fn random_token(bytes: usize) -> String {
    random_bytes(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A random `u64` (jitter).
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    fill(&mut buf).expect("the operating system's random generator");
    u64::from_be_bytes(buf)
}

/// A random number in [0, 1) (jitter).
pub fn random_unit() -> f64 {
    let bits = random_u64() >> 11; // 53 random bits
    bits as f64 / (1u64 << 53) as f64
}
