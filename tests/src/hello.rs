//! The small repository the engine's scenarios run against, on a fresh fake GitHub: `octo-org/hello`, a Rust crate with one test, writers alice and maya, a reader bob, and the App installed.

use crate::FakeGitHub;

pub const OWNER: &str = "octo-org";
pub const REPO: &str = "hello";

/// A fake GitHub holding `octo-org/hello`, with writers (alice, who asks for plans, and
/// maya, who approves them), a reader (bob) and the App installed.
pub fn seeded() -> FakeGitHub {
    let fake = FakeGitHub::start();
    fake.create_repo(OWNER, REPO);
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "//! Greetings.\npub mod greet;\n\npub fn hello() -> String {\n    greet::greet(\"world\")\n}\n",
            ),
            (
                "src/greet.rs",
                "pub fn greet(name: &str) -> String {\n    format!(\"hello {name}\")\n}\n",
            ),
            (
                ".github/navin.yml",
                "evidence:\n  required_checks:\n    test: [ci/test]\n",
            ),
            (
                "tests/greet.rs",
                "#[test]\nfn greets() {\n    assert_eq!(hello::hello(), \"hello world\");\n}\n",
            ),
        ],
        "seed",
    );
    fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    fake.set_role(OWNER, REPO, "alice", "write");
    fake.set_role(OWNER, REPO, "bob", "read");
    fake.set_role(OWNER, REPO, "maya", "write");
    fake
}
