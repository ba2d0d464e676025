//! The content hash that binds approvals to a plan's text while ignoring how that text is spaced.

use sha2::{Digest, Sha256};

/// `sha256:<hex>` of the text's words joined by single spaces. Changing the
/// amount or kind of whitespace (trailing spaces, blank lines, CRLF, indents,
/// re-wrapped paragraphs) keeps the hash; changing, adding or removing any
/// other character, or splitting or joining words, changes it. An approval
/// stored with this hash therefore goes stale only on a real edit.
pub fn content_hash(text: &str) -> String {
    // Words are gathered into a buffer so the hasher sees large blocks.
    const FLUSH_AT: usize = 8 * 1024;
    let mut hasher = Sha256::new();
    let mut buffer: Vec<u8> = Vec::with_capacity(FLUSH_AT);
    let mut first = true;
    for word in text.split_whitespace() {
        if !first {
            buffer.push(b' ');
        }
        first = false;
        buffer.extend_from_slice(word.as_bytes());
        if buffer.len() >= FLUSH_AT {
            hasher.update(&buffer);
            buffer.clear();
        }
    }
    hasher.update(&buffer);
    format!("sha256:{}", hex::encode(hasher.finalize()))
}
