//! Names of the environment variables the external sources read, kept apart so error messages can cite them without importing the settings code that returns those errors.

/// Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1`.
pub const ENV_BASE_URL: &str = "NAVIN_LLM_BASE_URL";
/// Model name sent in every chat-completions request.
pub const ENV_MODEL: &str = "NAVIN_LLM_MODEL";
/// Bearer token; optional because local servers often need none.
pub const ENV_API_KEY: &str = "NAVIN_LLM_API_KEY";
/// Command line of a program that prints a plan (shell-words quoting, no shell).
pub const ENV_COMMAND: &str = "NAVIN_PLAN_COMMAND";
/// Seconds one HTTP request or one command run may take.
pub const ENV_TIMEOUT: &str = "NAVIN_PLAN_TIMEOUT_SECS";
/// Set for the command's second run: the validation error of its first plan.
pub const ENV_FEEDBACK: &str = "NAVIN_PLAN_FEEDBACK";
