//! Set-up for the dashboard's tests: the server started with its dashboard on a known port, and a person at an HTTP client who signs in through the fake GitHub's real sign-in flow and uses the pages as a browser would (cookies, forms, CSRF tokens).

use std::collections::HashMap;
use std::path::Path;

use navin_bot::config::ServeArgs;
use navin_e2e::FakeGitHub;
use reqwest::header::{HeaderMap, COOKIE, LOCATION, SET_COOKIE};

/// Serves the dashboard at `http://localhost:<port>` with the fake's App credentials,
/// and registers its callback with the fake.
pub fn enable(fake: &FakeGitHub, args: &mut ServeArgs, dir: &Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    args.listen = format!("127.0.0.1:{port}").parse().unwrap();
    let url = format!("http://localhost:{port}");
    let secret = dir.join("client-secret");
    std::fs::write(&secret, format!("{}\n", fake.client_secret())).unwrap();
    args.dashboard_url = Some(url.clone());
    args.client_id = Some(fake.client_id());
    args.client_secret_file = Some(secret);
    args.github_web_url = fake.base_url().to_owned();
    fake.add_callback_url(&format!("{url}/auth/callback"));
}

/// One person using the dashboard without a browser.
pub struct WebUser {
    pub login: String,
    base: String,
    http: reqwest::Client,
    cookies: HashMap<String, String>,
}

/// What a request answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn location(&self) -> Option<&str> {
        self.headers.get(LOCATION).and_then(|v| v.to_str().ok())
    }
}

impl WebUser {
    pub fn new(dashboard_url: &str, login: &str) -> Self {
        let http = navin_e2e::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            login: login.to_owned(),
            base: dashboard_url.trim_end_matches('/').to_owned(),
            http,
            cookies: HashMap::new(),
        }
    }

    fn remember(&mut self, headers: &HeaderMap) {
        for value in headers.get_all(SET_COOKIE) {
            let text = value.to_str().unwrap();
            let (pair, attributes) = text.split_once(';').unwrap_or((text, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if attributes.contains("Max-Age=0") || value.is_empty() {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    pub fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        }
    }

    async fn finish(&mut self, response: reqwest::Response) -> Answer {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        self.remember(&headers);
        let body = response.text().await.unwrap();
        Answer {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&mut self, path: &str) -> Answer {
        let response = self
            .http
            .get(self.url(path))
            .header(COOKIE, self.cookie_header())
            .send()
            .await
            .unwrap();
        self.finish(response).await
    }

    pub async fn post_form(&mut self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let response = self
            .http
            .post(self.url(path))
            .header(COOKIE, self.cookie_header())
            .form(fields)
            .send()
            .await
            .unwrap();
        self.finish(response).await
    }

    pub async fn post_json(&mut self, path: &str, csrf: &str, body: serde_json::Value) -> Answer {
        let response = self
            .http
            .post(self.url(path))
            .header(COOKIE, self.cookie_header())
            .header("x-csrf-token", csrf)
            .json(&body)
            .send()
            .await
            .unwrap();
        self.finish(response).await
    }

    pub fn set_cookie(&mut self, name: &str, value: &str) {
        self.cookies.insert(name.to_owned(), value.to_owned());
    }

    /// Signs in through the dashboard's `/login` and the fake GitHub's authorize and
    /// token endpoints, as `self.login` (the `login=` hint GitHub also accepts).
    pub async fn sign_in(&mut self) {
        self.sign_in_via("/login").await;
    }

    /// Signs in starting at `login_path`; returns where the dashboard sends the browser
    /// afterwards.
    pub async fn sign_in_via(&mut self, login_path: &str) -> String {
        let start = self.get(login_path).await;
        assert_eq!(start.status, 303, "{}", start.body);
        let authorize = format!("{}&login={}", start.location().unwrap(), self.login);
        let github = self.http.get(&authorize).send().await.unwrap();
        assert_eq!(github.status().as_u16(), 302, "{:?}", github.text().await);
        let callback = github.headers()[LOCATION].to_str().unwrap().to_owned();
        assert!(callback.contains("code="), "{callback}");
        let back = self.get(&callback).await;
        assert_eq!(back.status, 303, "{}", back.body);
        assert!(
            self.cookies.contains_key("navin_session"),
            "no session cookie: {:?}",
            back.headers
        );
        back.location().unwrap().to_owned()
    }

    /// The CSRF token of a page this person loaded.
    pub fn csrf_of(page: &str) -> String {
        attr_after(page, "name=\"csrf-token\" content=\"").unwrap()
    }

    /// The signed key of the form `act-<form>` on `page`, as the page wrote it.
    pub fn act_id_of(page: &str, form: &str) -> String {
        let from = page
            .find(&format!("id=\"act-{form}\""))
            .unwrap_or_else(|| panic!("no form act-{form} on the page"));
        attr_after(&page[from..], "name=\"act_id\" value=\"").unwrap()
    }
}

/// The editor page's form, as loaded.
#[derive(Debug, Clone)]
pub struct EditorForm {
    pub csrf: String,
    pub base_hash: String,
    pub edit_id: String,
    pub text: String,
}

impl EditorForm {
    pub fn parse(page: &str) -> EditorForm {
        let text_start = page.find("<textarea").unwrap();
        let open_end = text_start + page[text_start..].find('>').unwrap() + 1;
        let close = open_end + page[open_end..].find("</textarea>").unwrap();
        EditorForm {
            csrf: WebUser::csrf_of(page),
            base_hash: attr_after(page, "name=\"base_hash\" value=\"").unwrap(),
            edit_id: attr_after(page, "name=\"edit_id\" value=\"").unwrap(),
            text: unescape(&page[open_end..close]),
        }
    }

    pub fn fields<'a>(&'a self, text: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("csrf", self.csrf.as_str()),
            ("base_hash", self.base_hash.as_str()),
            ("edit_id", self.edit_id.as_str()),
            ("text", text),
        ]
    }
}

fn attr_after(page: &str, marker: &str) -> Option<String> {
    let start = page.find(marker)? + marker.len();
    let end = start + page[start..].find('"')?;
    Some(unescape(&page[start..end]))
}

/// Undoes maud's escaping (`&amp;`, `&lt;`, `&gt;`, `&quot;`).
pub fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
