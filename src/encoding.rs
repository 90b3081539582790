//! Content codings of a response body (RFC 9110 section 8.4.1): which ones
//! the server makes (gzip, brotli, zstd), how hard it tries, which bodies
//! are too small to be worth it, and the entity tag of each coded form.
//! Pure: bytes in, bytes out; no HTTP, no clock. Which coding a request
//! gets is the API's negotiation (`api::representation`).

use std::io::Write;

/// A content coding the server can answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coding {
    /// No coding: the body as made.
    Identity,
    /// Brotli (RFC 7932), `br`.
    Brotli,
    /// Zstandard (RFC 8878), `zstd`.
    Zstd,
    /// gzip (RFC 1952), `gzip`.
    Gzip,
}

impl Coding {
    /// The codings besides identity, in the order a tie between equally
    /// preferred ones is broken (the smaller output first, as measured on
    /// this server's bodies: docs/benchmarks.md, "Compressed bodies").
    pub const COMPRESSED: [Coding; 3] = [Coding::Brotli, Coding::Zstd, Coding::Gzip];

    /// Its token in `Accept-Encoding` and `Content-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Identity => "identity",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
            Coding::Gzip => "gzip",
        }
    }

    /// Its place in [`Coding::COMPRESSED`] (`None` for identity).
    pub fn slot(self) -> Option<usize> {
        Self::COMPRESSED.iter().position(|&c| c == self)
    }

    /// The coding a token names (case-insensitive; `x-gzip` is gzip, RFC
    /// 9110 section 8.4.1.3); `None` for one this server does not make.
    pub fn from_token(token: &str) -> Option<Coding> {
        [Coding::Identity, Coding::Brotli, Coding::Zstd, Coding::Gzip]
            .into_iter()
            .find(|c| token.eq_ignore_ascii_case(c.token()))
            .or_else(|| token.eq_ignore_ascii_case("x-gzip").then_some(Coding::Gzip))
    }
}

/// Bodies shorter than this are answered as they are: below it, the coded
/// form plus its `Content-Encoding` line saves too little to be worth a
/// coded copy (docs/benchmarks.md, "Compressed bodies", measured on this
/// server's smallest answers).
pub const MIN_CODED_BYTES: usize = 512;

/// How hard the encoder tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// Each encoder's highest level (gzip 9, brotli 11, zstd 19): for
    /// bodies made once per published view, off the request path.
    Best,
    /// Levels that cost well under a millisecond on the largest body this
    /// server answers (gzip 6, brotli 5, zstd 3): for bodies made on the
    /// request that first needs them.
    Quick,
}

/// `body` in `coding` at `effort` (identity: a copy).
pub fn encode(coding: Coding, body: &[u8], effort: Effort) -> Vec<u8> {
    let best = effort == Effort::Best;
    match coding {
        Coding::Identity => body.to_vec(),
        Coding::Gzip => {
            let level = flate2::Compression::new(if best { 9 } else { 6 });
            // No name, no time, OS "unknown": the same bytes on every host.
            let mut out = flate2::GzBuilder::new().write(Vec::with_capacity(body.len() / 3), level);
            out.write_all(body).expect("writing to a Vec cannot fail");
            out.finish().expect("writing to a Vec cannot fail")
        }
        Coding::Brotli => {
            // The window no larger than the body (as brotli's own tool
            // chooses it); at the best effort also one size down, keeping
            // the smaller output (it often is: docs/benchmarks.md,
            // "Compressed bodies").
            let fits = (usize::BITS - body.len().saturating_sub(1).leading_zeros()).clamp(10, 22);
            let quality = if best { 11 } else { 5 };
            let mut out = brotli_at(body, quality, fits);
            if best && fits > 10 {
                let smaller = brotli_at(body, quality, fits - 1);
                if smaller.len() < out.len() {
                    out = smaller;
                }
            }
            out
        }
        Coding::Zstd => zstd::bulk::compress(body, if best { 19 } else { 3 })
            .expect("compressing to a Vec cannot fail"),
    }
}

/// `body` in brotli at `quality` with a window of 2^`lgwin` bytes.
fn brotli_at(body: &[u8], quality: i32, lgwin: u32) -> Vec<u8> {
    let params = brotli::enc::BrotliEncoderParams {
        quality,
        lgwin: lgwin as i32,
        size_hint: body.len(),
        ..Default::default()
    };
    let mut out = Vec::with_capacity(body.len() / 3);
    brotli::BrotliCompress(&mut &body[..], &mut out, &params)
        .expect("writing to a Vec cannot fail");
    out
}

/// The entity tag of `body`'s form in `coding`, from the tag of its
/// identity form (`"0f3a…"`): identity keeps it, a coded form gets the
/// coding's suffix inside the quotes (`"0f3a…-br"`), so each representation
/// has a strong tag of its own and one base names them all.
pub fn coded_tag(identity_tag: &[u8], coding: Coding) -> bytes::Bytes {
    if coding == Coding::Identity {
        return bytes::Bytes::copy_from_slice(identity_tag);
    }
    let inner = identity_tag
        .strip_suffix(b"\"")
        .expect("entity tags are quoted");
    let mut tag = Vec::with_capacity(identity_tag.len() + 6);
    tag.extend_from_slice(inner);
    tag.push(b'-');
    tag.extend_from_slice(coding.token().as_bytes());
    tag.push(b'"');
    bytes::Bytes::from(tag)
}

/// The opaque part of the identity tag a representation's tag (without
/// quotes or `W/`) was made from by [`coded_tag`]: the tag itself when it
/// has no coding suffix.
pub fn base_of(opaque: &str) -> &str {
    Coding::COMPRESSED
        .iter()
        .find_map(|c| {
            opaque
                .strip_suffix(c.token())
                .and_then(|rest| rest.strip_suffix('-'))
        })
        .unwrap_or(opaque)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn decoded(coding: Coding, coded: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match coding {
            Coding::Identity => out.extend_from_slice(coded),
            Coding::Gzip => {
                flate2::read::GzDecoder::new(coded)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Brotli => {
                brotli::Decompressor::new(coded, 4096)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Zstd => out = zstd::stream::decode_all(coded).unwrap(),
        }
        out
    }

    #[test]
    fn every_coding_round_trips_at_both_efforts_and_is_deterministic() {
        let body = br#"{"ok":true,"data":{"items":[{"id":"1","text":"usage limits were reset"}]}}"#
            .repeat(40);
        for coding in Coding::COMPRESSED {
            for effort in [Effort::Best, Effort::Quick] {
                let coded = encode(coding, &body, effort);
                assert!(coded.len() < body.len() / 4, "{coding:?} {effort:?}");
                assert_eq!(decoded(coding, &coded), body, "{coding:?} {effort:?}");
                assert_eq!(coded, encode(coding, &body, effort), "{coding:?} twice");
            }
        }
    }

    #[test]
    fn tokens_are_read_case_insensitively_with_x_gzip() {
        assert_eq!(Coding::from_token("GZip"), Some(Coding::Gzip));
        assert_eq!(Coding::from_token("x-gzip"), Some(Coding::Gzip));
        assert_eq!(Coding::from_token("BR"), Some(Coding::Brotli));
        assert_eq!(Coding::from_token("zstd"), Some(Coding::Zstd));
        assert_eq!(Coding::from_token("Identity"), Some(Coding::Identity));
        assert_eq!(Coding::from_token("deflate"), None);
        assert_eq!(Coding::from_token("*"), None);
    }

    #[test]
    fn a_coded_tag_carries_its_coding_and_leads_back_to_its_base() {
        let tag = b"\"0f3a\"";
        assert_eq!(coded_tag(tag, Coding::Identity), &tag[..]);
        assert_eq!(coded_tag(tag, Coding::Brotli), &b"\"0f3a-br\""[..]);
        assert_eq!(coded_tag(tag, Coding::Zstd), &b"\"0f3a-zstd\""[..]);
        assert_eq!(coded_tag(tag, Coding::Gzip), &b"\"0f3a-gzip\""[..]);
        for opaque in ["0f3a", "0f3a-br", "0f3a-zstd", "0f3a-gzip"] {
            assert_eq!(base_of(opaque), "0f3a", "{opaque}");
        }
        assert_eq!(base_of("0f3a-deflate"), "0f3a-deflate");
        assert_eq!(base_of("br"), "br");
    }
}
