//! Three `navin serve` processes on one PostgreSQL queue, no load balancer: 1,000
//! `/update fact` deliveries over 20 repositories are sent round-robin to the replicas,
//! and the one running the reconciler is SIGKILLed mid-way. Every acknowledged delivery
//! must take effect exactly once, each repository's facts must land on its ledger branch
//! in the order they were sent (read from the commit log), and the reconciler must move
//! to exactly one survivor.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use navin_bot::queue::{DeliveryQueue, PgOptions};
use navin_e2e::postgres::PgServer;
use navin_e2e::{FakeGitHub, Scenario, WebhookSender};

use crate::server_support::serve::{facts_in_commit_order, ServeProcess};

const OWNER: &str = "octo-org";
const REPOS: usize = 20;
const PER_REPO: usize = 50;
const SECRET: &str = "replica-secret";
const KILL_AFTER: usize = 400;
const LEADER_LINE: &str = "this replica reconciles missed deliveries";

fn spawn_replica(fake: &FakeGitHub, dir: &Path, n: usize, database: &str) -> ServeProcess {
    ServeProcess::spawn(
        fake,
        SECRET,
        &dir.join(format!("data{n}")),
        &dir.join(format!("replica{n}.log")),
        &[
            ("NAVIN_DATABASE_URL", database),
            ("NAVIN_QUEUE_LEASE_SECS", "3"),
            ("NAVIN_WORKERS", "4"),
            ("NAVIN_RECONCILE_INTERVAL_SECS", "1"),
        ],
    )
}

fn leads(replica: &ServeProcess) -> bool {
    replica.log_text().contains(LEADER_LINE)
}

fn repo_name(r: usize) -> String {
    format!("r{r:02}")
}

async fn wait_done(queue: &DeliveryQueue, guids: &[String], limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let mut pending = Vec::new();
        for g in guids {
            match queue.status(g).await.unwrap() {
                Some(s) if s.state == "done" => {}
                Some(s) if s.state == "failed" => panic!("delivery {g} failed: {:?}", s.last_error),
                _ => pending.push(g.clone()),
            }
        }
        if pending.is_empty() || Instant::now() > deadline {
            return pending;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_on_postgres_lose_nothing_apply_nothing_twice_and_keep_order_when_one_is_killed(
) {
    let pg = PgServer::start().unwrap();
    let database = pg.database("replicas").unwrap();
    let fake = FakeGitHub::start();
    let names: Vec<String> = (0..REPOS).map(repo_name).collect();
    let full: Vec<String> = names.iter().map(|n| format!("{OWNER}/{n}")).collect();
    let mut issues = Vec::new();
    for name in &names {
        fake.create_repo(OWNER, name);
        fake.commit_files(
            OWNER,
            name,
            "main",
            &[("README.md", "# replica test\n")],
            "seed",
        );
        fake.set_role(OWNER, name, "alice", "write");
        issues.push(fake.create_issue(OWNER, name, "Mission", "", "alice"));
    }
    fake.create_installation(OWNER, &full.iter().map(String::as_str).collect::<Vec<_>>());
    let dir = tempfile::tempdir().unwrap();
    let replicas: Arc<Mutex<Vec<ServeProcess>>> = Arc::new(Mutex::new(
        (0..3)
            .map(|n| spawn_replica(&fake, dir.path(), n, &database))
            .collect(),
    ));
    let senders: Vec<WebhookSender> = replicas
        .lock()
        .unwrap()
        .iter()
        .map(|r| WebhookSender::new(format!("http://{}/webhook", r.addr), SECRET))
        .collect();
    let builder = Scenario::new(fake.clone(), senders[0].clone()).without_conformance_check();
    let observer = DeliveryQueue::connect(&database, &PgOptions::default())
        .await
        .unwrap();

    // Each repository gets its mission first.
    let mut starts = Vec::new();
    for (r, name) in names.iter().enumerate() {
        let (_, d) = builder
            .comment(OWNER, name, issues[r], "alice", "/mission replica test")
            .await;
        assert_eq!(d.status, 202);
        starts.push(d.guid);
    }
    builder.dismiss();
    let left = wait_done(&observer, &starts, Duration::from_secs(120)).await;
    assert!(left.is_empty(), "missions not started: {left:?}");
    let leaders: Vec<usize> = {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let l: Vec<usize> = replicas
                .lock()
                .unwrap()
                .iter()
                .enumerate()
                .filter(|(_, r)| leads(r))
                .map(|(i, _)| i)
                .collect();
            if !l.is_empty() || Instant::now() > deadline {
                break l;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    assert_eq!(
        leaders.len(),
        1,
        "exactly one replica reconciles: {leaders:?}"
    );
    let leader = leaders[0];

    // 1,000 deliveries: repositories in parallel, each repository's in order (the next
    // is sent once the previous is acknowledged), replicas round-robin. A replica that
    // is gone gets the same delivery id sent to the next one, as a redelivery would.
    let started = Instant::now();
    let resent = Arc::new(AtomicUsize::new(0));
    let acked = Arc::new(AtomicUsize::new(0));
    let guids: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for (r, name) in names.iter().enumerate() {
        let (builder_fake, senders, acked, guids, resent) = (
            fake.clone(),
            senders.clone(),
            acked.clone(),
            guids.clone(),
            resent.clone(),
        );
        let (name, issue) = (name.clone(), issues[r]);
        tasks.push(tokio::spawn(async move {
            let builder =
                Scenario::new(builder_fake.clone(), senders[0].clone()).without_conformance_check();
            for k in 0..PER_REPO {
                let body = format!("/update fact {name} n={k:02}");
                let id = builder_fake.add_comment(OWNER, &name, issue, "alice", &body);
                let payload = builder.comment_payload(OWNER, &name, issue, "alice", &body, id);
                let guid = format!("replica-{r:02}-{k:02}-{:08x}", rand::random::<u32>());
                let mut target = (r * PER_REPO + k) % senders.len();
                let mut tries = 0;
                loop {
                    let sent = senders[target]
                        .send_with_guid(payload.event(), payload.json(), &guid)
                        .await;
                    if matches!(&sent, Ok(d) if d.status == 202) {
                        break;
                    }
                    tries += 1;
                    resent.fetch_add(1, Ordering::SeqCst);
                    assert!(tries < 30, "no replica acknowledged {guid}: {sent:?}");
                    target = (target + 1) % senders.len();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                guids.lock().unwrap().push(guid);
                acked.fetch_add(1, Ordering::SeqCst);
            }
            builder.dismiss();
        }));
    }
    let killer = {
        let (acked, replicas) = (acked.clone(), replicas.clone());
        tokio::spawn(async move {
            while acked.load(Ordering::SeqCst) < KILL_AFTER {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            replicas.lock().unwrap()[leader].kill();
        })
    };
    for t in tasks {
        t.await.unwrap();
    }
    killer.await.unwrap();
    let guids = guids.lock().unwrap().clone();
    assert_eq!(guids.len(), REPOS * PER_REPO);
    let left = wait_done(&observer, &guids, Duration::from_secs(300)).await;
    assert!(
        left.is_empty(),
        "{} acknowledged deliveries never ran",
        left.len()
    );
    let taken_over: usize = replicas
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.log_text().matches("taking over deliveries").count())
        .sum();
    println!(
        "replicas: {} deliveries over {REPOS} repositories handled in {:.1} s; replica {leader} \
         killed after {KILL_AFTER} acks; {} sends refused and sent to another replica; \
         {taken_over} lease takeovers",
        guids.len(),
        started.elapsed().as_secs_f64(),
        resent.load(Ordering::SeqCst),
    );

    for name in &names {
        let expected: Vec<String> = (0..PER_REPO).map(|k| format!("{name} n={k:02}")).collect();
        assert_eq!(
            facts_in_commit_order(&fake, OWNER, name),
            expected,
            "{name}: every fact once, in the order sent"
        );
    }
    let stats = observer.stats().await.unwrap();
    assert_eq!(stats.done, (REPOS * (PER_REPO + 1)) as u64);
    assert_eq!((stats.queued, stats.running, stats.failed), (0, 0, 0));

    // The reconciler moved to exactly one survivor.
    let deadline = Instant::now() + Duration::from_secs(20);
    let survivors = loop {
        let now_leading: Vec<usize> = replicas
            .lock()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(i, r)| *i != leader && leads(r))
            .map(|(i, _)| i)
            .collect();
        if !now_leading.is_empty() || Instant::now() > deadline {
            break now_leading;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        survivors.len(),
        1,
        "one survivor took over reconciling: {survivors:?}"
    );
    let logs: BTreeMap<usize, String> = replicas
        .lock()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r.log_text()))
        .collect();
    for (i, log) in &logs {
        assert!(!log.contains("panicked"), "replica {i} panicked:\n{log}");
    }
}
