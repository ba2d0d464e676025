//! The deliveries page: an administrator sees their repositories' failed deliveries with the stored error and attempts, and redelivers one through the App's deliveries API; the redelivery runs again instead of being dropped as a duplicate.

use std::time::{Duration, Instant};

use navin_bot::queue::EnqueueOutcome;

use crate::dashboard_browser::world_with_mission_and_plan;
use crate::dashboard_support::WebUser;
use crate::engine_support::{OWNER, REPO};
use crate::server_support::new_delivery;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_sees_a_failed_delivery_and_redelivers_it_once() {
    let (w, _) = world_with_mission_and_plan().await;
    w.fake().set_role(OWNER, REPO, "dave", "admin");
    let full = format!("{OWNER}/{REPO}");
    // A delivery the engine cannot take (its payload lacks the comment's issue): failed.
    let guid = "7f0c2a5e-5e1b-11f0-8000-000000000001";
    let now = chrono::Utc::now().timestamp_millis();
    let queued = w
        .server()
        .queue()
        .enqueue(new_delivery(guid, &full, now))
        .await
        .unwrap();
    assert_eq!(queued, EnqueueOutcome::Queued);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = w.server().queue().status(guid).await.unwrap().unwrap();
        if status.state == "failed" {
            break;
        }
        assert!(Instant::now() < deadline, "not failed: {status:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let attempt = w
        .fake()
        .record_delivery(guid, "issue_comment", Some("created"), 202);

    // A writer is not an administrator.
    let mut alice = WebUser::new(&w.dashboard_url(), "alice");
    alice.sign_in().await;
    assert_eq!(alice.get("/deliveries").await.status, 403);
    let csrf = WebUser::csrf_of(&alice.get("/missions").await.body);
    let refused = alice
        .post_form(&format!("/deliveries/{guid}/redeliver"), &[("csrf", &csrf)])
        .await;
    assert!(matches!(refused.status, 403 | 404), "{}", refused.body);

    let mut dave = WebUser::new(&w.dashboard_url(), "dave");
    dave.sign_in().await;
    let page = dave.get("/deliveries").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(guid), "{}", page.body);
    assert!(page.body.contains("failed"), "{}", page.body);
    assert!(page.body.contains("Redeliver"));
    let missions = dave.get("/missions").await.body;
    assert!(missions.contains("/deliveries"), "admins get the link");
    let csrf = WebUser::csrf_of(&page.body);
    let forged = dave
        .post_form(
            &format!("/deliveries/{guid}/redeliver"),
            &[("csrf", "forged")],
        )
        .await;
    assert_eq!(forged.status, 400);
    assert!(w.fake().with_state(|m| m.redelivery_requests.is_empty()));
    let asked = dave
        .post_form(&format!("/deliveries/{guid}/redeliver"), &[("csrf", &csrf)])
        .await;
    assert_eq!(asked.status, 303, "{}", asked.body);
    assert_eq!(
        asked.location(),
        Some(format!("/deliveries?redelivered={guid}").as_str())
    );
    assert_eq!(
        w.fake().with_state(|m| m.redelivery_requests.clone()),
        vec![attempt]
    );
    // GitHub sends it again with the same GUID: the queue runs it again.
    let again = w
        .server()
        .queue()
        .enqueue(new_delivery(guid, &full, now + 1))
        .await
        .unwrap();
    assert_eq!(again, EnqueueOutcome::Queued);
}
