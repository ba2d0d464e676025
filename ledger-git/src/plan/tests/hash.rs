//! The content hash ignores spacing and nothing else.

use super::fixture::sample_text;
use crate::plan::content_hash;

#[test]
fn hash_is_sha256_hex_with_prefix() {
    let hash = content_hash(&sample_text());
    let hex = hash.strip_prefix("sha256:").expect("prefixed");
    assert_eq!(hex.len(), 64);
    assert!(hex
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[test]
fn hash_of_known_text_is_the_sha256_of_its_words_joined_by_spaces() {
    // sha256("a b") computed independently (printf 'a b' | sha256sum).
    assert_eq!(
        content_hash("  a\r\n\n\tb  \n"),
        "sha256:c8687a08aa5d6ed2044328fa6a697ab8e96dc34291e8c2034ae8c38e6fcc6d65"
    );
}

#[test]
fn whitespace_only_edits_keep_the_hash() {
    let text = sample_text();
    let original = content_hash(&text);
    let crlf = text.replace('\n', "\r\n");
    let trailing: String = text.lines().map(|l| format!("{l}  \t\n")).collect();
    let blank_lines = text.replace("\n\n", "\n\n\n\n");
    let rewrapped = text.replace(
        "Unknown keys are rejected with the key's name.",
        "Unknown keys are\n  rejected with the\n  key's name.",
    );
    let reindented = text.replace("   - **Default:**", "\t- **Default:**");
    for edited in [crlf, trailing, blank_lines, rewrapped, reindented] {
        assert_ne!(edited, text);
        assert_eq!(content_hash(&edited), original);
    }
}

#[test]
fn real_edits_change_the_hash() {
    let text = sample_text();
    let original = content_hash(&text);
    for (from, to) in [
        ("edit", "delete"),
        ("Typos", "typos"),
        ("serde_yaml 0.9", "serde_yaml 0.8"),
        ("key's name", "keysname"),
        ("loader.", "loader!"),
    ] {
        let edited = text.replacen(from, to, 1);
        assert_ne!(content_hash(&edited), original, "{from} -> {to}");
    }
}
