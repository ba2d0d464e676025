//! Who is a bot: comments by bots (the App itself included) never run commands.

/// Whether a comment's author is a bot, from the payload's `user.login` and `user.type` and
/// the App's slug.
///
/// GitHub marks App and legacy bot accounts with `type: "Bot"` and a `[bot]` login suffix;
/// either is enough. The App's own login, `<app_slug>[bot]`, is named explicitly so Navin
/// never answers itself even if a payload lacked both marks in some other form.
pub fn is_bot_author(login: &str, user_type: &str, app_slug: &str) -> bool {
    let own_login = !app_slug.is_empty()
        && login
            .strip_suffix("[bot]")
            .is_some_and(|name| name.eq_ignore_ascii_case(app_slug));
    user_type.eq_ignore_ascii_case("bot")
        || login.to_ascii_lowercase().ends_with("[bot]")
        || own_login
}
