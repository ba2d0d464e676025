//! Reading GitHub's answers: the next page's link, the error message worth showing, and
//! a transport failure's chain, none of them echoing request data.

use http::HeaderMap;

/// Extracts the `rel="next"` URL from a `Link` header.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::LINK)
        .iter()
        .find_map(|value| {
            value.to_str().ok()?.split(',').find_map(|part| {
                let (url, params) = part.split_once(';')?;
                let is_next = params
                    .split(';')
                    .any(|p| p.trim().eq_ignore_ascii_case("rel=\"next\""));
                is_next.then(|| {
                    url.trim()
                        .trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_owned()
                })
            })
        })
}

/// GitHub's `message` field, shortened; never the raw body (it may echo input).
pub(crate) fn github_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    serde_json::from_slice::<Message>(body)
        .map(|m| m.message.chars().take(300).collect())
        .unwrap_or_else(|_| "(no message)".to_owned())
}

/// octocrab's error chain, without anything request-specific.
pub(crate) fn transport_message(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_message_is_extracted_and_bounded() {
        assert_eq!(github_message(br#"{"message":"Not Found"}"#), "Not Found");
        assert_eq!(github_message(b"<html>"), "(no message)");
        let long = format!(r#"{{"message":"{}"}}"#, "x".repeat(1000));
        assert_eq!(github_message(long.as_bytes()).len(), 300);
    }
}
