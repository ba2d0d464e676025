#!/usr/bin/env bash
# A stand-in for the GitHub CLI on the test runner: the subcommands the shipped
# workflows call, over the fake GitHub's REST API (GITHUB_API_URL), with GH_TOKEN
# (or GITHUB_TOKEN) as gh reads it. Anything else fails loudly.
set -euo pipefail
token="${GH_TOKEN:-${GITHUB_TOKEN:-}}"
api="${GITHUB_API_URL:?}"
repo="${GH_REPO:-${GITHUB_REPOSITORY:?}}"

need_token() {
  if [ -z "$token" ]; then
    echo "gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable." >&2
    exit 4
  fi
}

call() { # method path [body]
  local out status
  out="$(mktemp)"
  status="$(curl --silent --show-error --output "$out" --write-out '%{http_code}' \
    --request "$1" --header "Authorization: Bearer $token" \
    --header "Accept: application/vnd.github+json" \
    --header "X-GitHub-Api-Version: 2022-11-28" \
    ${3:+--data "$3"} "$api$2")"
  if [ "${status:0:1}" != 2 ]; then
    echo "gh: HTTP $status: $(cat "$out") ($1 $2)" >&2
    rm -f "$out"
    exit 1
  fi
  cat "$out"
  rm -f "$out"
}

case "${1:-} ${2:-}" in
  "auth setup-git")
    need_token
    host="${GITHUB_SERVER_URL:?}"
    git config --global "credential.$host.helper" ""
    git config --global --add "credential.$host.helper" "!$0 auth git-credential"
    ;;
  "auth git-credential")
    if [ "${3:-}" = get ]; then
      need_token
      echo "protocol=http"
      echo "username=x-access-token"
      echo "password=$token"
    fi
    ;;
  "pr list")
    need_token
    shift 2
    head="" state=open fields="number" jq_filter="."
    while [ $# -gt 0 ]; do
      case "$1" in
        --head) head="$2"; shift 2 ;;
        --state) state="$2"; shift 2 ;;
        --json) fields="$2"; shift 2 ;;
        --jq) jq_filter="$2"; shift 2 ;;
        *) echo "gh stand-in: pr list does not take $1" >&2; exit 2 ;;
      esac
    done
    query="state=$state&per_page=100"
    [ -n "$head" ] && query="$query&head=${repo%%/*}:$head"
    call GET "/repos/$repo/pulls?$query" | jq "[.[] | {$(printf '%s' "$fields")}]" | jq -r "$jq_filter"
    ;;
  "pr create")
    need_token
    shift 2
    head="" title="" body="" base=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --head|-H) head="$2"; shift 2 ;;
        --title|-t) title="$2"; shift 2 ;;
        --body|-b) body="$2"; shift 2 ;;
        --base|-B) base="$2"; shift 2 ;;
        *) echo "gh stand-in: pr create does not take $1" >&2; exit 2 ;;
      esac
    done
    if [ -z "$base" ]; then
      base="$(call GET "/repos/$repo" | jq -r .default_branch)"
    fi
    payload="$(jq -n --arg t "$title" --arg h "$head" --arg b "$base" --arg body "$body" \
      '{title: $t, head: $h, base: $b, body: $body}')"
    call POST "/repos/$repo/pulls" "$payload" | jq -r .html_url
    ;;
  *)
    echo "gh stand-in: \`gh $*\` is not one of the subcommands the runner serves" >&2
    exit 2
    ;;
esac
