//! The frame every page shares: header, navigation, the signed-in person and the CSRF token the script sends.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::dashboard::assets;

/// What the frame needs to know about the request.
#[derive(Debug, Clone, Copy)]
pub struct Chrome<'a> {
    /// The dashboard's path prefix (`""` at the root).
    pub base: &'a str,
    pub login: &'a str,
    pub csrf: &'a str,
    /// Shows the deliveries link to people who administer at least one repository.
    pub admin_somewhere: bool,
}

impl Chrome<'_> {
    pub fn path(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// A whole page around `body`.
pub fn page(chrome: &Chrome<'_>, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="csrf-token" content=(chrome.csrf);
                // No icon file: an empty data URL stops the browser asking for one.
                link rel="icon" href="data:,";
                title { (title) " · Navin" }
                link rel="stylesheet" href=(chrome.path(&format!("/assets/{}", assets::css_name())));
                script src=(chrome.path(&format!("/assets/{}", assets::js_name()))) defer {}
            }
            body {
                header.top {
                    a.brand href=(chrome.path("/missions")) { "Navin" }
                    nav {
                        a href=(chrome.path("/missions")) { "Missions" }
                        a href=(chrome.path("/plans")) { "Plans" }
                        @if chrome.admin_somewhere {
                            a href=(chrome.path("/deliveries")) { "Deliveries" }
                        }
                    }
                    div.who {
                        span { "@" (chrome.login) }
                        form.inline method="post" action=(chrome.path("/logout")) {
                            input type="hidden" name="csrf" value=(chrome.csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// A page for a failure, before or without a session: no script, no styles needed (an
/// error knows no path prefix to find the stylesheet under).
pub fn error_page(title: &str, message: &str) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; link rel="icon" href="data:,"; title { (title) " · Navin" } }
            body { main { h1 { (title) } p { (message) } } }
        }
    }
}

/// The sign-in page for people who are not signed in: what the dashboard is, and the
/// one button.
pub fn sign_in_page(base: &str, login_url: &str) -> Markup {
    bare(
        base,
        "Sign in",
        html! {
            section.card #welcome {
                h1 { "Navin" }
                p { "Missions and plans of the repositories you can read on GitHub: the step board, its evidence and history, plans to review, and the actions writers take on them." }
                p { a.button.primary #sign-in href=(login_url) { "Sign in with GitHub" } }
                p.muted { "Signing in tells Navin who you are on GitHub and which repositories you can read; every page and action is checked against that." }
            }
        },
    )
}

/// The frame for pages seen without a session: the header and stylesheet, no navigation.
fn bare(base: &str, title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href="data:,";
                title { (title) " · Navin" }
                link rel="stylesheet" href=(format!("{base}/assets/{}", assets::css_name()));
            }
            body {
                header.top { span.brand { "Navin" } }
                main { (body) }
            }
        }
    }
}

/// A status word as a coloured badge.
pub fn badge(word: &str) -> Markup {
    html! { span class=(format!("badge {word}")) { (word) } }
}

/// Trusted HTML (rendered markdown, the step graph) placed as is.
pub fn raw(html: String) -> PreEscaped<String> {
    PreEscaped(html)
}
