//! The OpenAI-compatible chat-completions source: what a turn sends and gets back, and the client that carries it when the `llm` feature builds one.

mod turn;
pub(crate) use turn::ToolCall;

#[cfg(feature = "llm")]
mod client;
#[cfg(feature = "llm")]
pub(crate) use client::ChatClient;
#[cfg(not(feature = "llm"))]
mod off;
#[cfg(not(feature = "llm"))]
pub(crate) use off::ChatClient;

#[cfg(all(test, not(feature = "llm")))]
mod without_the_llm_feature {
    use super::super::{ExternalConfig, ExternalError, ExternalKind};
    use super::ChatClient;

    fn configured() -> ExternalConfig {
        ExternalConfig {
            base_url: Some("http://127.0.0.1:9/v1".to_owned()),
            model: Some("some-model".to_owned()),
            ..ExternalConfig::default()
        }
    }

    #[test]
    fn an_llm_plan_source_is_refused_before_any_work_naming_the_feature() {
        let err = configured()
            .check(ExternalKind::Http)
            .expect_err("no HTTP client is built in");
        assert!(matches!(err, ExternalError::NotBuilt), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("`llm`") && text.contains("NAVIN_PLAN_COMMAND"),
            "{text}"
        );
        assert!(matches!(
            ChatClient::new(&configured()),
            Err(ExternalError::NotBuilt)
        ));
    }

    #[test]
    fn a_missing_endpoint_is_still_named_first() {
        let err = ExternalConfig::default()
            .check(ExternalKind::Http)
            .expect_err("nothing configured");
        assert!(
            matches!(
                err,
                ExternalError::MissingConfig {
                    var: "NAVIN_LLM_BASE_URL"
                }
            ),
            "{err:?}"
        );
    }
}
