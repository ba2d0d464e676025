"""Conformance of `navin mcp` with the official MCP Python SDK (PyPI `mcp`), a client
nobody on this project wrote.

Run by the Rust test `mcp_conformance` with: python conformance.py NAVIN_BIN REPO.
REPO holds a git checkout with a mission whose board has S1 (validation test) and S2
(after S1); its default branch's .github/navin.yml sets validation.commands.test. Every check prints one line; the first failure exits non-zero naming it.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

NAVIN, REPO = sys.argv[1], sys.argv[2]
READ_TOOLS = {"ledger_get", "board_digest", "ledger_digest", "board_next", "board_brief", "plan_get"}
WRITE_TOOLS = {
    "board_start", "ledger_progress", "board_done", "board_fail", "board_retry", "ledger_replan",
    "ledger_pause", "ledger_resume", "ledger_update", "ledger_init", "ask_user",
}


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def error_code(result):
    sc = result.structured_content or {}
    return (sc.get("error") or {}).get("code")


def navin(*args, actor=None, stdin=""):
    env = dict(os.environ)
    if actor:
        env["NAVIN_ACTOR"] = actor
    return subprocess.run([NAVIN, "--repo", REPO, *args], env=env, input=stdin, capture_output=True, text=True)


async def session(mode, client_name, body):
    params = StdioServerParameters(command=NAVIN, args=["--repo", REPO, "mcp", "--mode", mode], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, client_info=Implementation(name=client_name, version="1.0")) as s:
            init = await s.initialize()
            check(init.server_info.name == "navin", f"{mode}: initialize names the server navin")
            await body(s)


async def plan_mode(s):
    tools = {t.name: t for t in (await s.list_tools()).tools}
    check(set(tools) == READ_TOOLS, f"plan mode lists exactly the read tools: {sorted(tools)}")
    check(all(t.input_schema.get("type") == "object" for t in tools.values()), "every input schema is an object schema")
    got = await s.call_tool("ledger_get", {})
    check(not got.is_error and got.structured_content["mission"]["goal"] == "Ship the parser", "ledger_get returns the mission")
    check(len(got.structured_content["board"]["tasks"]) == 2, "ledger_get returns the board")
    digest = await s.call_tool("board_digest", {})
    check("Mission v" in digest.structured_content["text"] and "Protocol:" in digest.content[0].text, "board_digest has the mission line and the protocol")
    alias = await s.call_tool("ledger_digest", {})
    check(alias.structured_content["text"] == digest.structured_content["text"], "ledger_digest is board_digest's alias")
    nxt = await s.call_tool("board_next", {})
    ready = [t["id"] for t in nxt.structured_content["ready"]]
    check(ready == ["S1"], f"board_next lists S1 only: {ready}")
    brief = await s.call_tool("board_brief", {"step": "S1"})
    body = brief.structured_content["brief"]
    check(all(h in body for h in ["### Role", "### Goal", "### Done when", "### Do not"]), "board_brief carries the seed's brief fields")
    refused = await s.call_tool("board_start", {"step": "S1"})
    check(refused.is_error and error_code(refused) == "plan_mode", "a write tool in plan mode is a structured error with code plan_mode")
    check("plan mode" in refused.content[0].text, "the refusal says why in a sentence")
    res = await s.read_resource("navin://digest")
    check("Mission v" in res.contents[0].text, "the digest is also a resource")


async def agent_mode(s):
    tools = {t.name for t in (await s.list_tools()).tools}
    check(tools == READ_TOOLS | WRITE_TOOLS, "agent mode lists all seventeen tools")
    before = (await s.call_tool("ledger_get", {})).structured_content["mission"]["version"]
    bad = await s.call_tool("ledger_progress", {"step": "S1", "real_progress": "yes"})
    check(bad.is_error and error_code(bad) == "invalid_input" and "real_progress" in bad.content[0].text, "wrong types name the field")
    unknown = await s.call_tool("board_start", {"step": "S9"})
    check(unknown.is_error and error_code(unknown) == "unknown_step", "an unknown step is a structured error")
    after = (await s.call_tool("ledger_get", {})).structured_content["mission"]["version"]
    check(before == after, "refused calls leave the ledger unchanged")

    started = await s.call_tool("board_start", {"step": "S1"})
    check(not started.is_error, "board_start S1")
    once = await s.call_tool("ledger_progress", {"step": "S1", "real_progress": True, "tokens": 100, "op_id": "turn-1"})
    twice = await s.call_tool("ledger_progress", {"step": "S1", "real_progress": True, "tokens": 100, "op_id": "turn-1"})
    check(not once.is_error and twice.structured_content.get("already_applied") is True, "a retried write (same op_id) applies once")
    reordered = await s.call_tool("ledger_progress", {"tokens": 100, "op_id": "turn-1", "real_progress": True, "step": "S1"})
    check(reordered.structured_content.get("already_applied") is True, "the same call with its arguments in another order is the same retry")
    other = await s.call_tool("ledger_progress", {"step": "S1", "real_progress": True, "tokens": 5000, "op_id": "turn-1"})
    check(other.is_error and error_code(other) == "op_id_reused", "the same op_id on a different call is an error, not already applied")
    other_tool = await s.call_tool("board_fail", {"step": "S1", "reason": "x", "op_id": "turn-1"})
    check(other_tool.is_error and error_code(other_tool) == "op_id_reused", "the same op_id on another tool is an error")
    tokens = (await s.call_tool("ledger_get", {})).structured_content["mission"]["progress"]["tokens_used"]
    check(tokens == 100, f"tokens debited once: {tokens}")

    forged = await s.call_tool("board_done", {"step": "S1", "evidence": {"kind": "test_run", "ok": True, "summary": "trust me"}})
    check(forged.is_error and error_code(forged) == "invalid_input" and "evidence" in forged.content[0].text, "board_done takes no evidence from an agent")
    early = await s.call_tool("board_done", {"step": "S1"})
    check(early.is_error and error_code(early) == "evidence_required", "board_done without a recorded run is refused")
    check("navin board verify" in early.content[0].text, "the refusal says to run navin board verify")
    typed = navin("board", "done", "S1", "--evidence-json", "-", actor="subagent:conformance-agent",
                  stdin='{"kind": "test_run", "ok": true, "summary": "all green, trust me"}')
    check(typed.returncode == 1 and "cannot hand in evidence" in typed.stderr, "the CLI refuses an agent's typed evidence too")

    chosen = navin("board", "verify", "S1", "--", "true", actor="subagent:conformance-agent")
    check(chosen.returncode == 1 and "not ones of its choosing" in chosen.stderr, "an agent cannot choose the command that proves its step")
    run = navin("board", "verify", "S1", actor="subagent:conformance-agent")
    check(run.returncode == 0, f"navin board verify S1 records a green run: {run.stderr}")
    unchanged = await s.call_tool("board_done", {"step": "S1"})
    check(unchanged.is_error and error_code(unchanged) == "no_change", "a green run of the tree the step was handed does not close it")
    # The step's work, committed; verified again on its own commit.
    with open(os.path.join(REPO, "WORK.md"), "w") as f:
        f.write("the step's change\n")
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "a@example.com",
               "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "a@example.com"}
    subprocess.run(["git", "-C", REPO, "add", "WORK.md"], env=git_env, check=True)
    subprocess.run(["git", "-C", REPO, "commit", "-qm", "the work"], env=git_env, check=True)
    run = navin("board", "verify", "S1", actor="subagent:conformance-agent")
    check(run.returncode == 0, f"navin board verify S1 records a green run on the work: {run.stderr}")
    done = await s.call_tool("board_done", {"step": "S1"})
    check(not done.is_error, "board_done S1 after a green recorded run" + (": " + done.content[0].text if done.is_error else ""))
    check(any("S2" in line for line in done.structured_content["effects"]), "S2 becomes ready")
    last = (await s.call_tool("ledger_get", {})).structured_content["mission"]["progress"]["last_evidence"]
    check(last["kind"] == "test_run" and last["run"]["command"] == ["git", "--version"], "the done step shows the recorded run")

    paused = await s.call_tool("ledger_pause", {"reason": "need a decision"})
    check(not paused.is_error, "an agent pauses (reason manual)")
    digest = await s.call_tool("ledger_digest", {})
    check(digest.structured_content["text"].startswith("PAUSED"), "the digest leads with the pause")
    blocked = await s.call_tool("board_start", {"step": "S2"})
    check(blocked.is_error and error_code(blocked) == "paused", "a paused mission refuses work")
    resumed = await s.call_tool("ledger_resume", {})
    check(not resumed.is_error, "the agent resumes its own manual pause")
    human = navin("ledger", "pause", "--reason", "review", actor="human:maintainer")
    check(human.returncode == 0, "a human pauses from the CLI")
    denied = await s.call_tool("ledger_resume", {})
    check(denied.is_error and error_code(denied) == "resume_needs_human", "an agent cannot resume a human's pause")

    fact = await s.call_tool("ledger_update", {"add_facts": ["the parser is LL(1)"], "reason": "I think so"})
    check(fact.is_error and error_code(fact) == "agent_update" and "only a person" in fact.content[0].text, "an agent's fact is refused, naming the rule")
    asked = await s.call_tool("ask_user", {"question": "Must S2 keep the old grammar?", "step": "S2"})
    check(not asked.is_error, "ask_user records a question")
    mission = (await s.call_tool("ledger_get", {})).structured_content["mission"]
    check("Must S2 keep the old grammar?" in mission["missing_info"], "the question is missing info")
    answered = navin("ledger", "answer", "1", "yes, both grammars", actor="human:maintainer")
    check(answered.returncode == 0, f"a person answers from the CLI: {answered.stderr}")
    mission = (await s.call_tool("ledger_get", {})).structured_content["mission"]
    check(any("yes, both grammars" in f for f in mission["facts"]) and not mission["missing_info"], "the answer is a fact")
    digest = (await s.call_tool("board_digest", {})).structured_content["text"]
    check("yes, both grammars" in digest, "the answer reaches the digest")

    # A failed attempt, retried over MCP: the step is ready again and its brief says why.
    resumed = navin("ledger", "resume", "--reason", "reviewed", actor="human:maintainer")
    check(resumed.returncode == 0, f"the human resumes their pause: {resumed.stderr}")
    started = await s.call_tool("board_start", {"step": "S2"})
    check(not started.is_error, "board_start S2" + (": " + started.content[0].text if started.is_error else ""))
    failed = await s.call_tool("board_fail", {"step": "S2", "reason": "the grammar test hangs"})
    check(not failed.is_error, "board_fail S2")
    retried = await s.call_tool("board_retry", {"step": "S2"})
    check(not retried.is_error, "board_retry S2" + (": " + retried.content[0].text if retried.is_error else ""))
    ready = (await s.call_tool("board_next", {})).structured_content["ready"]
    check(any(t.get("id") == "S2" for t in ready), f"S2 is ready again: {ready}")
    again = await s.call_tool("board_retry", {"step": "S2"})
    check(again.is_error and error_code(again) == "invalid_transition", "a step that has not failed is not retried")
    brief = (await s.call_tool("board_brief", {"step": "S2"})).structured_content["brief"]
    check("This is attempt 2" in brief and "the grammar test hangs" in brief, "the brief names the failed attempt")
    check("yes, both grammars" in brief, "the answer reaches the brief")

    live = await s.call_tool("ledger_init", {"goal": "Something else"})
    check(live.is_error and error_code(live) == "mission_live", "ledger_init refuses to replace a live mission")


async def main():
    await session("plan", "conformance-planner", plan_mode)
    await session("agent", "conformance-agent", agent_mode)
    print("conformance: all checks passed")


asyncio.run(main())
