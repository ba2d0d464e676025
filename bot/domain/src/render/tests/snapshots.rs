//! What users see, as they see it: inline snapshots of the mission panel, the plan comment, a dispatched step's brief and the help text, so a reviewer reads every change to them in the diff.

use navin_ledger::model::Validation;
use navin_ledger::ops::Operation;

use super::fixture::*;
use crate::command::help_text;
use crate::render::{
    mission_panel, plan_comment, step_brief, PlanCommentInfo, PlanStatus, RepoRef,
};

fn repo() -> RepoRef {
    RepoRef::new("octo/widgets", "https://github.com")
}

#[test]
fn the_mission_panel_of_a_small_mission() {
    insta::assert_snapshot!(mission_panel(&small(), &ctx()), @r#"
    <!-- navin:panel v=1 -->
    ### 🧭 Navin mission

    **Goal:** Ship the YAML config loader

    `v6` · 🟢 **running** · 🐢 stall 0/3 · 🔧 replans 0/5

    > Last change: v6 by `human:alice` at 2026-11-30 12:00 UTC: evidence for S2: check\_run red (check run lint failure)

    **Progress** `▓▓▓▓▓░░░░░░░░░░░░░░░` 1/4 steps done · 🔄 1 in progress

    **Ready:** `S4` · **current step:** `S2` · **up next:** the coding agent

    **What failed last:** step `S2` on `8f14e45`: [lint](https://github.com/octo/widgets/runs/9) (failure)

    **🛟 Checkpoints** (`/rollback v<N>`): `v1` mission start

    #### Steps

    | Step | Title | Status | Depends on | Validation | Attempts | Evidence |
    | --- | --- | --- | --- | --- | --- | --- |
    | `S1` | Write the loader | ✅ done | — | test | 0/3 | [test](https://github.com/octo/widgets/runs/7) ✅ |
    | `S2` | Wire it into start-up | 🔄 in progress | `S1` | test | 0/3 | [#12](https://github.com/octo/widgets/pull/12) · head `8f14e45` · [lint](https://github.com/octo/widgets/runs/9) ❌ failure |
    | `S3` | Document the keys | ⬜ planned | `S2` | none | 0/3 | — |
    | `S4` | Remove the INI reader | 🟦 ready | — | lint | 0/3 | — |

    #### Step graph

    ```mermaid
    graph TD
      s0["S1: Write the loader"]:::done
      s1["S2: Wire it into start-up"]:::in_progress
      s2["S3: Document the keys"]:::planned
      s3["S4: Remove the INI reader"]:::ready
      s0 --> s1
      s1 --> s2
      classDef done fill:#dafbe1,stroke:#1a7f37,color:#1f2328
      classDef in_progress fill:#ddf4ff,stroke:#0969da,color:#1f2328
      classDef failed fill:#ffebe9,stroke:#cf222e,color:#1f2328
      classDef ready fill:#fff8c5,stroke:#9a6700,color:#1f2328
      classDef planned fill:#f6f8fa,stroke:#8c959f,color:#1f2328
    ```

    <sub>[ledger branch](https://github.com/octo/widgets/tree/navin/ledger/.navin/board) · commands: `/status` `/next` `/done <step>` `/pause` `/resume` `/help`</sub>
    "#);
}

#[test]
fn the_plan_comment_of_a_pending_plan_on_a_pull_request_from_the_llm_planner() {
    let doc = plan(2, 40);
    let info = PlanCommentInfo {
        plan_id: "pr-12".into(),
        source: "http:openai/gpt-4.1".into(),
        status: PlanStatus::Pending { stale: None },
        diff: None,
        repo: Some(repo()),
        run: Some(navin_ledger::plan::record::PlannerRun {
            source: "llm:openai/gpt-4.1".into(),
            commit: "4f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49".into(),
            turns: 4,
            tokens: 21_400,
            attempts: 1,
            tool_calls: (0..9)
                .map(|i| navin_ledger::plan::record::ToolCallRecord {
                    turn: 1 + i / 3,
                    tool: "read_file".into(),
                    arguments: format!("{{\"path\":\"bot/src/config/part_{i}.rs\"}}"),
                    bytes: 900,
                    error: None,
                })
                .collect(),
            fallback: None,
            owners: vec![],
        }),
        owner_notes: Vec::new(),
    };
    insta::assert_snapshot!(plan_comment(&doc, &info), @r#"
    <!-- navin:plan id=pr-12 hash=sha256:6d253b56ccd9ee657643c7ac3872c31234133399ef4f274c94ca90cdc3220d1b -->
    **📋 Navin plan `pr-12`** · source: http:openai/gpt-4.1 · planned at `4f2a9c1` with 9 read-only tool calls · ⏳ **pending approval**

    ### Load the config from YAML

    Load `.navin/config.yaml` at start-up. Unknown keys fail with their name. Ask @<!-- -->octocat if unsure.

    **Files to change** (2)

    | File | | Change |
    | --- | --- | --- |
    | `bot/src/config/part_0.rs` | edit | Rewrite the parsing loop so errors carry the line number. |
    | `bot/src/config/part_1.rs` | edit | Rewrite the parsing loop so errors carry the line number. |

    **Risks**
    - Existing INI configs stop loading.
    - YAML anchors allow huge documents.
    - Errors might echo secret values.

    **Open questions** (answer them in `/plan edit`; unanswered ones take their default)
    1. Keep INI for one release? · default: No.

    **To approve:** approve this pull request in a review (GitHub's review rules apply) or click “Approve plan” on its `navin/plan` check; either way a writer other than its author. To change it: `/plan edit` with the edited plan, or `/reject <feedback>` for a new one.

    <details><summary>📄 The full plan (85 lines)</summary>

    ## System Persona

    Operating as a Read-Only Software Architect. No file writes, dependency installs, migrations, service mutations, git mutations, or destructive commands were performed.

    ## Goal

    Load `.navin/config.yaml` at start-up. Unknown keys fail with their name. Ask @<!-- -->octocat if unsure.

    ## Repository Architecture

    One workspace.

    ```text
    @not-a-mention stays in code
    ```

    ## Functional Capabilities

    Parses commands and keeps the ledger.

    ## Data Flow

    Webhook -> queue -> engine -> ledger branch.

    ## Target State

    A `Config` struct read once.

    ## Impact Isolation

    Only the config module changes.

    ## Proposed Changes

    ### File: bot/src/config/part_0.rs

    - **Operation:** edit
    - **Change:** Rewrite the parsing loop so errors carry the line number.
    - **Rationale:** Typos must fail loudly.

    ### File: bot/src/config/part_1.rs

    - **Operation:** edit
    - **Change:** Rewrite the parsing loop so errors carry the line number.
    - **Rationale:** Typos must fail loudly.

    ## New dependencies

    None.

    ## Risks

    - Existing INI configs stop loading.
    - YAML anchors allow huge documents.
    - Errors might echo secret values.

    ## Actionable Next Steps

    1. [ ] Write the loader and its tests.

    ## Risks And Assumptions

    <!-- To answer a question, write after "Answer:". An empty answer keeps the default. -->

    1. Keep INI for one release?
       - **Default:** No.
       - **Answer:**

    ## Optional Goal Handoff Contract

    - **Objective:** Config is read from YAML and typos are rejected.
    - **Completion criteria:**
      - Loader tests pass.
    - **Budgets:**
      - max_retries: 3
      - max_replans: 5
      - max_stalls: 3
    - **Allowed tools:**
      - read_file
    - **Scope:**
      - bot/src/config/
    - **Verification commands:**
      - `cargo test -p navin-bot config`

    </details>
    "#);
}

#[test]
fn the_plan_comment_of_an_approved_plan() {
    let doc = plan(2, 40);
    let info = approved_plan_info(&doc);
    insta::assert_snapshot!(plan_comment(&doc, &info), @r#"
    <!-- navin:plan id=issue-7 hash=sha256:6d253b56ccd9ee657643c7ac3872c31234133399ef4f274c94ca90cdc3220d1b -->
    **📋 Navin plan `issue-7`** · source: built-in planner · ✅ **approved** by `bob` (review 81) at 2026-11-30 12:00 UTC for `sha256:6d253b56ccd9…`

    ### Load the config from YAML

    Load `.navin/config.yaml` at start-up. Unknown keys fail with their name. Ask @<!-- -->octocat if unsure.

    **Files to change** (2)

    | File | | Change |
    | --- | --- | --- |
    | `bot/src/config/part_0.rs` | edit | Rewrite the parsing loop so errors carry the line number. |
    | `bot/src/config/part_1.rs` | edit | Rewrite the parsing loop so errors carry the line number. |

    **Risks**
    - Existing INI configs stop loading.
    - YAML anchors allow huge documents.
    - Errors might echo secret values.

    **Open questions** (answer them in `/plan edit`; unanswered ones take their default)
    1. Keep INI for one release? · default: No.

    <details><summary>📄 The full plan (85 lines)</summary>

    ## System Persona

    Operating as a Read-Only Software Architect. No file writes, dependency installs, migrations, service mutations, git mutations, or destructive commands were performed.

    ## Goal

    Load `.navin/config.yaml` at start-up. Unknown keys fail with their name. Ask @<!-- -->octocat if unsure.

    ## Repository Architecture

    One workspace.

    ```text
    @not-a-mention stays in code
    ```

    ## Functional Capabilities

    Parses commands and keeps the ledger.

    ## Data Flow

    Webhook -> queue -> engine -> ledger branch.

    ## Target State

    A `Config` struct read once.

    ## Impact Isolation

    Only the config module changes.

    ## Proposed Changes

    ### File: bot/src/config/part_0.rs

    - **Operation:** edit
    - **Change:** Rewrite the parsing loop so errors carry the line number.
    - **Rationale:** Typos must fail loudly.

    ### File: bot/src/config/part_1.rs

    - **Operation:** edit
    - **Change:** Rewrite the parsing loop so errors carry the line number.
    - **Rationale:** Typos must fail loudly.

    ## New dependencies

    None.

    ## Risks

    - Existing INI configs stop loading.
    - YAML anchors allow huge documents.
    - Errors might echo secret values.

    ## Actionable Next Steps

    1. [ ] Write the loader and its tests.

    ## Risks And Assumptions

    <!-- To answer a question, write after "Answer:". An empty answer keeps the default. -->

    1. Keep INI for one release?
       - **Default:** No.
       - **Answer:**

    ## Optional Goal Handoff Contract

    - **Objective:** Config is read from YAML and typos are rejected.
    - **Completion criteria:**
      - Loader tests pass.
    - **Budgets:**
      - max_retries: 3
      - max_replans: 5
      - max_stalls: 3
    - **Allowed tools:**
      - read_file
    - **Scope:**
      - bot/src/config/
    - **Verification commands:**
      - `cargo test -p navin-bot config`

    </details>

    ---

    #### 🚀 Draft mission

    **Objective:** Config is read from YAML and typos are rejected.

    **Completion criteria:**
    - Loader tests pass.

    **Budgets:** retries 3 · replans 5 · stalls 3

    **Scope:**
    - `bot/src/config/`

    **Verification:**
    - `cargo test -p navin-bot config`

    **Allowed tools:**
    - `read_file`

    Start it with `/mission`.
    "#);
}

#[test]
fn the_brief_of_a_dispatched_step() {
    let ledger = run(
        Some(&small()),
        Operation::AddSteps(vec![task(
            "S9",
            "Document the widget API",
            &[],
            Validation::Test,
        )]),
    );
    let task = ledger.board.task("S9").expect("S9").clone();
    let checks = ["ci/test".to_owned()];
    let options = crate::render::BriefOptions {
        required_checks: &checks,
        ..Default::default()
    };
    let (title, body) = step_brief(&ledger, &task, &repo(), options);
    insta::assert_snapshot!(format!("{title}\n\n{body}"), @r#"
    [navin S9] Document the widget API

    <!-- navin:step S9 mission 1796040000 -->
    Step `S9` of the mission **Ship the YAML config loader** (v7). This issue is the whole brief: it does not assume you saw the conversation that planned the mission.

    ### Role
    Implementer of one step in `octo/widgets`: change the code for this step only, in one pull request.

    ### Goal
    Document the widget API

    ### Context paths
    - None named by the plan: start from the files the goal mentions.

    ### Constraints
    - At most 3 attempts: each failed required check counts one (this step has used 0).

    ### Done when
    - A pull request with the line `Navin-Step: S9` in its body (or a branch named `navin/S9-…`) is open.
    - Validation `test`: `ci/test` green on the pull request's latest head commit. Navin marks the step done itself when they pass.

    ### Do not
    - Do not work on other steps or widen the scope; ask on this issue instead.
    - Do not write to the ledger branch `navin/ledger` or claim the step done in a comment: only green checks prove it.
    - Do not invent facts: when information is missing, say what on this issue and wait.

    ### Validation
    - `navin board verify S9` runs the repository's `validation.commands.test` and records the run.

    ### Report back
    - Work on the branch `navin/S9-document-the-widget-api` and open one pull request whose body has the line `Navin-Step: S9`.
    - With Navin's MCP server (`navin mcp`): `board_start`, then `ledger_progress` each turn (real_progress, fingerprint, tokens, cost), `board_done` once the run is green, `board_fail` or `ledger_pause` when stuck. You never hand in evidence: Navin looks it up.

    ### Mission digest

        Mission v7 [running]: Ship the YAML config loader
        Steps: 1/5 done; current: S2; ready: S4, S9
        Stall 0/3; loop no; replans 0/5; tokens 0; cost $0.00
        Last change: added S9 "Document the widget API"
        Protocol:
        1. Read ledger_get and board_next; never guess the queue.
        2. Choose one ready step (all independent ready steps in /cruise and /mission).
        3. Act on that step only.
        4. Verify as its validation says (test, lint, verify, manual, none).
        5. Report with ledger_progress (real_progress, fingerprint, tokens, cost).
        6. Decide: next, retry (within max_retries), ledger_replan, or ledger_pause.
        7. Never mark done without a recorded green run when validation is test, lint or verify.
    "#);
}

#[test]
fn the_help_text() {
    insta::assert_snapshot!(help_text(), @r#"
    ### Navin commands

    Write each command at the start of its own line.

    | Command | What it does | Needs write access |
    |---|---|---|
    | `` /plan <request> `` | Map the repository read-only and post a plan for the request. | yes |
    | `` /plan edit + a ```markdown block below it `` | Replace the plan with the block's text, merged with edits made since you wrote it; approvals of the old text go stale. | yes |
    | `` /approve `` | Approve the current plan (on issues; on PRs, an approving review does it). | yes |
    | `` /reject [feedback] `` | Reject the current plan; the feedback shapes the next one. | yes |
    | `` /mission [--replace] [goal] `` | Start a mission (from the approved plan or task list when no goal is given). | yes |
    | `` /cruise [--replace] [goal] `` | Start a single-stage mission: every step is handed out at once. | yes |
    | `` /mission close [done\|failed] [reason] `` | End the mission. | yes |
    | `` /status `` | Refresh and show the mission panel. | no |
    | `` /next `` | Show the steps ready to start. | no |
    | `` /pause [reason] `` | Pause the mission until `/resume`. | yes |
    | `` /resume `` | Resume a paused mission. | yes |
    | `` /continue [note] `` | Release the next stage once every step of the current one is done. | yes |
    | `` /done <step> [evidence] `` | Mark a step done (steps validated by checks still need a green run). | yes |
    | `` /retry <step> `` | Retry a failed step. | yes |
    | `` /replan <step> [reason] `` | Replan the mission around a step. | yes |
    | `` /step add <ID> <title> [--after ID,ID] [--validation test\|lint\|verify\|manual\|none] [--acceptance "text"] `` | Add a step to the mission. | yes |
    | `` /update <goal\|fact\|constraint\|missing> <text> `` | Edit the task ledger: a new goal, or add a fact, constraint or missing info. | yes |
    | `` /rollback v<N> `` | Restore version N of the ledger as a new version. | yes |
    | `` /answer <n> <text> `` | Answer open question n of the mission's missing info. | yes |
    | `` /help `` | Show this list. | no |

    Commands inside code, quotes, links or HTML are ignored. Quote values with spaces (`--acceptance "docs build"`). Start a request or goal with `--` when its first word is `edit` or `close` (`/plan -- edit the README`).
    "#);
}
