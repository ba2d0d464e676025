//! Chaos: `navin serve` under a stream of signed deliveries while GitHub fails (5xx and
//! 429 storms), the git remote goes down, the data directory fills to the last byte (a
//! real tmpfs) and the process is SIGKILLed, some of these at once. Whatever was not
//! acknowledged is sent again, as GitHub's redelivery does. At the end every delivery
//! has applied exactly once and in order (read from the ledger's commits), every reply
//! is posted once, and nobody was told to try again. A shorter run does the same on two
//! replicas sharing a PostgreSQL queue, each on its own small disk.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use navin_e2e::disk::SmallDisk;
use navin_e2e::fake::FaultId;
use navin_e2e::postgres::PgServer;
use navin_e2e::{FakeGitHub, Fault, Scenario, WebhookSender};

use crate::server_support::serve::{facts_in_commit_order, ServeProcess};

const OWNER: &str = "chaos-org";
const SECRET: &str = "chaos-secret";
/// Room for the queue, the clones and their ledger commits many times over.
const DISK_BYTES: u64 = 48 << 20;

/// One fault the driver injects, and when: after `at` acknowledged deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chaos {
    /// Every REST call answers 500 for a while.
    ApiStorm,
    /// Every REST call answers 429 with Retry-After for a while.
    RateLimitStorm,
    /// Every git request answers 503 for a while.
    GitDown,
    /// The data directory's disk is full for a while.
    DiskFull,
    /// SIGKILL, then a start on the same data directory.
    Kill,
    /// SIGKILL while the disk is full; the space returns before the next start.
    KillOnFullDisk,
    /// SIGKILL in the middle of a 5xx storm.
    KillInStorm,
}

impl Chaos {
    fn name(self) -> &'static str {
        match self {
            Chaos::ApiStorm => "API 5xx storm",
            Chaos::RateLimitStorm => "API 429 storm (Retry-After)",
            Chaos::GitDown => "git remote down",
            Chaos::DiskFull => "data directory full",
            Chaos::Kill => "SIGKILL",
            Chaos::KillOnFullDisk => "SIGKILL on a full disk",
            Chaos::KillInStorm => "SIGKILL in a 5xx storm",
        }
    }
}

/// The servers under test, the disks under them, and what the driver did to them.
struct Rig {
    fake: FakeGitHub,
    servers: Vec<Arc<Mutex<ServeProcess>>>,
    disks: Vec<SmallDisk>,
    repos: Vec<String>,
    done: Mutex<Vec<String>>,
}

impl Rig {
    fn fault_everything(&self, fault: impl Fn(&str) -> Fault) -> Vec<FaultId> {
        vec![
            self.fake.inject(fault("/repos/**")),
            self.fake.inject(fault("/app/installations/**")),
        ]
    }

    fn git_down(&self) -> Vec<FaultId> {
        self.repos
            .iter()
            .map(|repo| {
                self.fake
                    .inject(Fault::on("*", &format!("/{OWNER}/{repo}.git/**")).status(503))
            })
            .collect()
    }

    /// Runs one fault to its end; `victim` is the server (and disk) it strikes.
    async fn strike(&self, chaos: Chaos, victim: usize) {
        let server = &self.servers[victim];
        let disk = &self.disks[victim];
        let hold = Duration::from_secs(3);
        let mut faults = Vec::new();
        match chaos {
            Chaos::ApiStorm => {
                faults = self.fault_everything(|p| Fault::on("*", p).server_error());
                tokio::time::sleep(hold).await;
            }
            Chaos::RateLimitStorm => {
                faults =
                    self.fault_everything(|p| Fault::on("*", p).secondary_rate_limited(429, 1));
                tokio::time::sleep(hold).await;
            }
            Chaos::GitDown => {
                faults = self.git_down();
                tokio::time::sleep(hold).await;
            }
            Chaos::DiskFull => {
                disk.fill();
                tokio::time::sleep(Duration::from_secs(5)).await;
                disk.free();
            }
            Chaos::Kill => {
                server.lock().unwrap().kill();
                tokio::time::sleep(Duration::from_millis(500)).await;
                server.lock().unwrap().start();
            }
            Chaos::KillOnFullDisk => {
                disk.fill();
                tokio::time::sleep(Duration::from_secs(2)).await;
                server.lock().unwrap().kill();
                disk.free();
                server.lock().unwrap().start();
            }
            Chaos::KillInStorm => {
                faults = self.fault_everything(|p| Fault::on("*", p).server_error());
                tokio::time::sleep(Duration::from_secs(1)).await;
                server.lock().unwrap().kill();
                server.lock().unwrap().start();
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
        self.fake.clear_faults();
        let hits: u32 = faults.iter().map(|f| self.fake.fault_hits(*f)).sum();
        // Storms and outages strike GitHub, which every server shares; the rest strike one.
        let what = if faults.is_empty() {
            format!("{} (server {victim})", chaos.name())
        } else {
            format!("{} ({hits} requests failed)", chaos.name())
        };
        assert!(
            faults.is_empty() || hits > 0,
            "{what}: the fault struck nothing"
        );
        self.done.lock().unwrap().push(what);
    }
}

/// Repositories with a writer, an issue and a mission each, started before the chaos.
async fn missions(
    fake: &FakeGitHub,
    sender: &WebhookSender,
    repos: usize,
) -> (Vec<String>, Vec<u64>) {
    let names: Vec<String> = (0..repos).map(|r| format!("c{r}")).collect();
    let full: Vec<String> = names.iter().map(|n| format!("{OWNER}/{n}")).collect();
    let mut issues = Vec::new();
    for name in &names {
        fake.create_repo(OWNER, name);
        fake.commit_files(OWNER, name, "main", &[("README.md", "# chaos\n")], "seed");
        fake.set_role(OWNER, name, "alice", "write");
        issues.push(fake.create_issue(OWNER, name, "Mission", "", "alice"));
    }
    fake.create_installation(OWNER, &full.iter().map(String::as_str).collect::<Vec<_>>());
    let builder = Scenario::new(fake.clone(), sender.clone()).without_conformance_check();
    for (name, issue) in names.iter().zip(&issues) {
        let (_, d) = builder
            .comment(OWNER, name, *issue, "alice", "/mission chaos test")
            .await;
        assert_eq!(d.status, 202);
    }
    builder.dismiss();
    (names, issues)
}

/// What the stream sent and how often a send was not acknowledged.
struct Sent {
    /// Per repository, its deliveries' ids in the order sent.
    guids: BTreeMap<String, Vec<String>>,
    unacknowledged: usize,
    wall: Duration,
}

/// `per_repo` comments per repository, each `/update fact` and `/next` (a write and a
/// reply), one every `pace` per repository and in order (the next once the previous is
/// acknowledged), repositories in parallel, servers round-robin; meanwhile `plan`
/// strikes, each once `at` deliveries are acknowledged. The pace spreads the stream over
/// the faults, so they meet acknowledgements as well as work in progress.
async fn stream(
    rig: Arc<Rig>,
    issues: &[u64],
    per_repo: usize,
    pace: Duration,
    plan: &[(usize, Chaos, usize)],
) -> Sent {
    let senders: Vec<WebhookSender> = rig
        .servers
        .iter()
        .map(|s| WebhookSender::new(format!("http://{}/webhook", s.lock().unwrap().addr), SECRET))
        .collect();
    let started = Instant::now();
    let acked = Arc::new(AtomicUsize::new(0));
    let unacknowledged = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (r, name) in rig.repos.iter().enumerate() {
        let (fake, senders, acked, unacknowledged) = (
            rig.fake.clone(),
            senders.clone(),
            acked.clone(),
            unacknowledged.clone(),
        );
        let (name, issue) = (name.clone(), issues[r]);
        tasks.push(tokio::spawn(async move {
            let builder =
                Scenario::new(fake.clone(), senders[0].clone()).without_conformance_check();
            let mut guids = Vec::new();
            for k in 0..per_repo {
                tokio::time::sleep(pace).await;
                let body = format!("/update fact {name} n={k:02}\n/next");
                let id = fake.add_comment(OWNER, &name, issue, "alice", &body);
                let payload = builder.comment_payload(OWNER, &name, issue, "alice", &body, id);
                let guid = format!("chaos-{name}-{k:02}-{:08x}", rand::random::<u32>());
                let mut target = (r + k) % senders.len();
                let deadline = Instant::now() + Duration::from_secs(120);
                loop {
                    let sent = senders[target]
                        .send_with_guid(payload.event(), payload.json(), &guid)
                        .await;
                    if matches!(&sent, Ok(d) if d.status == 202) {
                        break;
                    }
                    unacknowledged.fetch_add(1, Ordering::SeqCst);
                    assert!(
                        Instant::now() < deadline,
                        "{guid} never acknowledged: {sent:?}"
                    );
                    target = (target + 1) % senders.len();
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                guids.push(guid);
                acked.fetch_add(1, Ordering::SeqCst);
            }
            builder.dismiss();
            (name, guids)
        }));
    }
    let driver = {
        let (rig, acked, plan) = (rig.clone(), acked.clone(), plan.to_vec());
        tokio::spawn(async move {
            for (at, chaos, victim) in plan {
                while acked.load(Ordering::SeqCst) < at {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                rig.strike(chaos, victim).await;
            }
        })
    };
    let mut guids = BTreeMap::new();
    for t in tasks {
        let (name, g) = t.await.unwrap();
        guids.insert(name, g);
    }
    driver.await.unwrap();
    Sent {
        guids,
        unacknowledged: unacknowledged.load(Ordering::SeqCst),
        wall: started.elapsed(),
    }
}

/// Attempts the server retried because the data directory could not be written (its
/// delivery log names them `storage:`).
fn storage_retries(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("delivery handled") && l.contains("\"error\":\"storage:"))
        .count()
}

/// Per delivery, how many replies carry its answer's op tag; and how many comments told
/// someone their command was given up.
fn replies(fake: &FakeGitHub, repo: &str, issue: u64, guids: &[String]) -> (Vec<usize>, usize) {
    let comments = fake.comments(OWNER, repo, issue);
    let counts = guids
        .iter()
        .map(|g| {
            let tag = format!("<!-- navin:op {g}#answers -->");
            comments.iter().filter(|c| c.body.contains(&tag)).count()
        })
        .collect();
    let given_up = comments
        .iter()
        .filter(|c| c.body.contains("#given-up -->"))
        .count();
    (counts, given_up)
}

/// Waits until every repository shows every fact and every reply, or the deadline; then
/// asserts exactly once, in order. Returns (applied, doubled, lost) over all deliveries.
async fn settle(
    fake: &FakeGitHub,
    issues: &[u64],
    sent: &Sent,
    limit: Duration,
) -> (usize, usize, usize) {
    let expected = |name: &str, n: usize| -> Vec<String> {
        (0..n).map(|k| format!("{name} n={k:02}")).collect()
    };
    let deadline = Instant::now() + limit;
    loop {
        let complete = sent.guids.iter().zip(issues).all(|((name, guids), issue)| {
            facts_in_commit_order(fake, OWNER, name).len() >= guids.len()
                && replies(fake, name, *issue, guids).0.iter().all(|c| *c >= 1)
        });
        if complete || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Let a doubled effect, if any were coming, land before counting.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (mut applied, mut doubled, mut lost) = (0, 0, 0);
    for ((name, guids), issue) in sent.guids.iter().zip(issues) {
        let facts = facts_in_commit_order(fake, OWNER, name);
        let want = expected(name, guids.len());
        for fact in &want {
            match facts.iter().filter(|f| *f == fact).count() {
                0 => lost += 1,
                1 => applied += 1,
                _ => doubled += 1,
            }
        }
        let (counts, given_up) = replies(fake, name, *issue, guids);
        lost += counts.iter().filter(|c| **c == 0).count();
        doubled += counts.iter().filter(|c| **c > 1).count();
        assert_eq!(facts, want, "{name}: every fact once, in the order sent");
        assert!(
            counts.iter().all(|c| *c == 1),
            "{name}: one reply per delivery, got {counts:?}"
        );
        assert_eq!(given_up, 0, "{name}: nobody is told to try again");
    }
    (applied, doubled, lost)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_server_through_storms_outages_a_full_disk_and_sigkills_applies_every_delivery_once() {
    const REPOS: usize = 4;
    const PER_REPO: usize = 24;
    const PACE: Duration = Duration::from_millis(1500);
    let fake = FakeGitHub::start();
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&dir.path().join("disk"), DISK_BYTES);
    let data = disk.path().join("data");
    let server = ServeProcess::spawn(
        &fake,
        SECRET,
        &data,
        &dir.path().join("serve.log"),
        &[("NAVIN_WORKERS", "4")],
    );
    let sender = WebhookSender::new(format!("http://{}/webhook", server.addr), SECRET);
    let (repos, issues) = missions(&fake, &sender, REPOS).await;
    let rig = Arc::new(Rig {
        fake: fake.clone(),
        servers: vec![Arc::new(Mutex::new(server))],
        disks: vec![disk],
        repos,
        done: Mutex::default(),
    });
    let total = REPOS * PER_REPO;
    let step = total / 8;
    let plan = [
        (step, Chaos::ApiStorm, 0),
        (2 * step, Chaos::Kill, 0),
        (3 * step, Chaos::RateLimitStorm, 0),
        (4 * step, Chaos::GitDown, 0),
        (5 * step, Chaos::DiskFull, 0),
        (6 * step, Chaos::KillOnFullDisk, 0),
        (7 * step, Chaos::KillInStorm, 0),
    ];
    let sent = stream(rig.clone(), &issues, PER_REPO, PACE, &plan).await;
    let (applied, doubled, lost) = settle(&fake, &issues, &sent, Duration::from_secs(240)).await;

    // The queue agrees: nothing failed for good, nothing left behind.
    let (log, starts) = {
        let mut server = rig.servers[0].lock().unwrap();
        server.kill();
        (server.log_text(), server.starts())
    };
    let (queue, _) =
        navin_bot::queue::DeliveryQueue::open(&data.join("deliveries.sqlite3")).unwrap();
    let stats = queue.stats().await.unwrap();
    assert_eq!(stats.failed, 0, "no delivery failed for good: {stats:?}");
    assert_eq!(stats.queued + stats.running, 0, "{stats:?}");
    assert!(!log.contains("panicked"), "the server panicked:\n{log}");
    let storage = storage_retries(&log);
    assert!(
        storage > 0,
        "the full disk met a delivery's write (else the test proves nothing about it)"
    );
    println!(
        "chaos: {total} deliveries over {REPOS} repositories in {:.1} s; {} sends not \
         acknowledged and sent again; {} starts; {storage} attempts met the full disk and \
         were retried; faults: {}; applied {applied}, doubled \
         {doubled}, lost {lost}",
        sent.wall.as_secs_f64(),
        sent.unacknowledged,
        starts,
        rig.done.lock().unwrap().join(", "),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgres_replicas_through_storms_a_full_disk_and_a_sigkill_apply_every_delivery_once()
{
    const REPOS: usize = 3;
    const PER_REPO: usize = 12;
    const PACE: Duration = Duration::from_millis(1500);
    let pg = PgServer::start().unwrap();
    let database = pg.database("chaos").unwrap();
    let fake = FakeGitHub::start();
    let dir = tempfile::tempdir().unwrap();
    let mut servers = Vec::new();
    let mut disks = Vec::new();
    for n in 0..2 {
        let disk = SmallDisk::mount(&dir.path().join(format!("disk{n}")), DISK_BYTES);
        servers.push(ServeProcess::spawn(
            &fake,
            SECRET,
            &disk.path().join("data"),
            &dir.path().join(format!("replica{n}.log")),
            &[
                ("NAVIN_DATABASE_URL", database.as_str()),
                ("NAVIN_QUEUE_LEASE_SECS", "3"),
                ("NAVIN_WORKERS", "4"),
            ],
        ));
        disks.push(disk);
    }
    let sender = WebhookSender::new(format!("http://{}/webhook", servers[0].addr), SECRET);
    let (repos, issues) = missions(&fake, &sender, REPOS).await;
    let rig = Arc::new(Rig {
        fake: fake.clone(),
        servers: servers
            .into_iter()
            .map(|s| Arc::new(Mutex::new(s)))
            .collect(),
        disks,
        repos,
        done: Mutex::default(),
    });
    let total = REPOS * PER_REPO;
    let step = total / 5;
    let plan = [
        (step, Chaos::DiskFull, 1),
        (2 * step, Chaos::Kill, 0),
        (3 * step, Chaos::ApiStorm, 0),
        (4 * step, Chaos::GitDown, 1),
    ];
    let sent = stream(rig.clone(), &issues, PER_REPO, PACE, &plan).await;
    let (applied, doubled, lost) = settle(&fake, &issues, &sent, Duration::from_secs(240)).await;

    let observer = navin_bot::queue::DeliveryQueue::connect(
        &database,
        &navin_bot::queue::PgOptions::default(),
    )
    .await
    .unwrap();
    let stats = observer.stats().await.unwrap();
    assert_eq!(stats.failed, 0, "no delivery failed for good: {stats:?}");
    assert_eq!(stats.queued + stats.running, 0, "{stats:?}");
    let mut storage = 0;
    for server in &rig.servers {
        let log = server.lock().unwrap().log_text();
        assert!(!log.contains("panicked"), "a replica panicked:\n{log}");
        storage += storage_retries(&log);
    }
    assert!(
        storage > 0,
        "replica 1's full disk met a delivery's write (else the test proves nothing about it)"
    );
    println!(
        "chaos, two replicas on PostgreSQL: {total} deliveries over {REPOS} repositories in \
         {:.1} s; {} sends not acknowledged and sent again; {storage} attempts met the full disk and \
         were retried; faults: {}; applied {applied}, doubled {doubled}, lost {lost}",
        sent.wall.as_secs_f64(),
        sent.unacknowledged,
        rig.done.lock().unwrap().join(", "),
    );
}

/// The disk helper itself: a fill meets ENOSPC, and a free gives the space back.
#[test]
fn a_small_disk_fills_to_enospc_and_frees() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&dir.path().join("d"), 1 << 20);
    let taken = disk.fill();
    assert!(taken > 900_000 && taken <= 1 << 20, "{taken}");
    let err = std::fs::write(disk.path().join("x"), vec![0u8; 4096]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "{err}");
    disk.free();
    std::fs::write(disk.path().join("x"), vec![0u8; 4096]).unwrap();
}

/// Item 1 on its own, as an operator sees it: the data directory fills while the queue
/// (PostgreSQL) still acknowledges. The command waits, `/readyz` says why, the metric
/// counts it, nobody is told to try again; once space returns it applies once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_data_directory_is_reported_waited_out_and_applied_once_when_space_returns() {
    use crate::server_support::http_get;
    let pg = PgServer::start().unwrap();
    let database = pg.database("full").unwrap();
    let fake = FakeGitHub::start();
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&dir.path().join("disk"), DISK_BYTES);
    let server = ServeProcess::spawn(
        &fake,
        SECRET,
        &disk.path().join("data"),
        &dir.path().join("serve.log"),
        &[("NAVIN_DATABASE_URL", database.as_str())],
    );
    let sender = WebhookSender::new(format!("http://{}/webhook", server.addr), SECRET);
    let (repos, issues) = missions(&fake, &sender, 1).await;
    let (repo, issue) = (&repos[0], issues[0]);
    assert_eq!(http_get(server.addr, "/readyz").await.0, 200);

    disk.fill();
    let builder = Scenario::new(fake.clone(), sender.clone()).without_conformance_check();
    let body = "/update fact written after the disk filled\n/next";
    let id = fake.add_comment(OWNER, repo, issue, "alice", body);
    let payload = builder.comment_payload(OWNER, repo, issue, "alice", body, id);
    let guid = "full-disk-1";
    let sent = sender
        .send_with_guid(payload.event(), payload.json(), guid)
        .await
        .unwrap();
    assert_eq!(sent.status, 202, "the queue is elsewhere: acknowledged");
    builder.dismiss();

    // The attempt meets the disk: readiness says so, and names what to do.
    let deadline = Instant::now() + Duration::from_secs(30);
    let readyz = loop {
        let (status, text) = http_get(server.addr, "/readyz").await;
        if status == 503 || Instant::now() > deadline {
            break (status, text);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(readyz.0, 503, "{}", readyz.1);
    assert!(readyz.1.contains("storage"), "{}", readyz.1);
    let metrics = http_get(server.addr, "/metrics").await.1;
    let counted = metrics
        .lines()
        .find(|l| l.starts_with("navin_storage_errors_total"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(counted >= 1.0, "{metrics}");
    // A second attempt (5 s later) meets it too, and still nothing is given up.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let observer = navin_bot::queue::DeliveryQueue::connect(
        &database,
        &navin_bot::queue::PgOptions::default(),
    )
    .await
    .unwrap();
    let waiting = observer.status(guid).await.unwrap().unwrap();
    assert_ne!(waiting.state, "failed", "{waiting:?}");
    assert!(facts_in_commit_order(&fake, OWNER, repo).is_empty());
    let (_, given_up) = replies(&fake, repo, issue, &[guid.to_owned()]);
    assert_eq!(given_up, 0);

    disk.free();
    let deadline = Instant::now() + Duration::from_secs(60);
    while observer.status(guid).await.unwrap().unwrap().state != "done" {
        assert!(
            Instant::now() < deadline,
            "never applied: {}",
            server.log_text()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        facts_in_commit_order(&fake, OWNER, repo),
        ["written after the disk filled"]
    );
    let (counts, given_up) = replies(&fake, repo, issue, &[guid.to_owned()]);
    assert_eq!(
        (counts, given_up),
        (vec![1], 0),
        "one reply, no 'try again'"
    );
    assert_eq!(http_get(server.addr, "/readyz").await.0, 200, "ready again");
}
