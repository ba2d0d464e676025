//! Issues and comments through the real octocrab client.

use navin_e2e::fake::UserKind;
use octocrab::models::reactions::ReactionContent;

use crate::common::{message_of, setup, status_of, token_client, OWNER, REPO};

#[tokio::test]
async fn comments_paginate_with_link_headers_and_all_pages_collects_every_one() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "Plan the parser", "body", "alice");
    for i in 0..34 {
        fake.add_comment(OWNER, REPO, issue, "alice", &format!("comment {i}"));
    }
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let posted = gh
        .issues(OWNER, REPO)
        .create_comment(issue, "bot reply")
        .await
        .expect("create comment");
    assert_eq!(posted.body.as_deref(), Some("bot reply"));
    assert_eq!(posted.user.login, "navin[bot]");

    let first = gh
        .issues(OWNER, REPO)
        .list_comments(issue)
        .per_page(10)
        .send()
        .await
        .expect("page 1");
    assert_eq!(first.items.len(), 10);
    assert!(first.next.is_some(), "page 1 must link to page 2");
    let all = gh.all_pages(first).await.expect("all pages");
    assert_eq!(all.len(), 35);
    assert_eq!(
        all.last().and_then(|c| c.body.clone()).as_deref(),
        Some("bot reply")
    );

    let bot = fake.bot_comments();
    assert_eq!(
        bot.len(),
        1,
        "only the API-created comment counts as the bot's"
    );
    assert_eq!(bot[0].author, "navin[bot]");
    fake.assert_conformant();
}

#[tokio::test]
async fn comments_can_be_edited_and_deleted_and_edits_are_recorded() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let c = gh
        .issues(OWNER, REPO)
        .create_comment(issue, "v1")
        .await
        .expect("create");
    let edited = gh
        .issues(OWNER, REPO)
        .update_comment(c.id, "v2")
        .await
        .expect("update");
    assert_eq!(edited.body.as_deref(), Some("v2"));
    assert_eq!(fake.comment(c.id.0).map(|c| c.body), Some("v2".into()));
    assert_eq!(fake.bot_comment_edits().len(), 1);
    gh.issues(OWNER, REPO)
        .delete_comment(c.id)
        .await
        .expect("delete");
    assert!(fake.comment(c.id.0).is_none());
    let err = gh
        .issues(OWNER, REPO)
        .get_comment(c.id)
        .await
        .expect_err("deleted comment is gone");
    assert_eq!(status_of(&err), Some(404));
    fake.assert_conformant();
}

#[tokio::test]
async fn reactions_are_stored_once_per_user_and_content() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let comment = fake.add_comment(OWNER, REPO, issue, "alice", "/plan add a parser");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let r = gh
        .issues(OWNER, REPO)
        .create_comment_reaction(comment, ReactionContent::Eyes)
        .await
        .expect("react");
    assert_eq!(r.content, ReactionContent::Eyes);
    gh.issues(OWNER, REPO)
        .create_comment_reaction(comment, ReactionContent::Eyes)
        .await
        .expect("react again");
    gh.issues(OWNER, REPO)
        .create_comment_reaction(comment, ReactionContent::PlusOne)
        .await
        .expect("+1");
    assert_eq!(fake.reactions(comment), vec!["eyes", "+1"]);
    let statuses: Vec<u16> = fake
        .requests_to("POST", "/repos/*/*/issues/comments/*/reactions")
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses,
        vec![201, 200, 201],
        "a repeated reaction answers 200 with the existing one"
    );
    fake.assert_conformant();
}

#[tokio::test]
async fn issues_are_created_and_read_back_with_their_author() {
    let (fake, inst) = setup();
    fake.add_user("alice", UserKind::User);
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let created = gh
        .issues(OWNER, REPO)
        .create("Mission: ship it")
        .body("goal")
        .send()
        .await
        .expect("create issue");
    let read = gh
        .issues(OWNER, REPO)
        .get(created.number)
        .await
        .expect("get issue");
    assert_eq!(read.title, "Mission: ship it");
    assert_eq!(read.user.login, "navin[bot]");
    assert!(read.pull_request.is_none());
    fake.assert_conformant();
}

#[tokio::test]
async fn unknown_token_gets_githubs_401_json_error() {
    let (fake, _) = setup();
    let gh = token_client(&fake, "ghs_not_a_token_the_fake_issued");
    let err = gh
        .issues(OWNER, REPO)
        .get(1)
        .await
        .expect_err("must be refused");
    assert_eq!(status_of(&err), Some(401));
    assert_eq!(message_of(&err), "Bad credentials");
    fake.assert_conformant();
}

#[tokio::test]
async fn token_without_the_issues_grant_gets_403_and_repo_outside_it_404() {
    let (fake, _) = setup();
    fake.create_repo(OWNER, "other");
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let read_only = fake.actions_token(OWNER, REPO, &[("issues", "read")]);
    let gh = token_client(&fake, &read_only);
    let err = gh
        .issues(OWNER, REPO)
        .create_comment(issue, "x")
        .await
        .expect_err("read-only");
    assert_eq!(status_of(&err), Some(403));
    assert_eq!(message_of(&err), "Resource not accessible by integration");
    let err = gh
        .issues(OWNER, "other")
        .get(1)
        .await
        .expect_err("other repo");
    assert_eq!(status_of(&err), Some(404));
    fake.assert_conformant();
}
