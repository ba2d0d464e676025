#!/usr/bin/env bash
# A stand-in coding agent for the end-to-end test of dispatch: it does what the
# agent step of action/examples/navin-agent.yml asks of a real agent, without a
# model. It reads the brief, touches the files the brief's "Context paths" name,
# commits on the step's branch, pushes, and opens the pull request whose body
# carries `Navin-Step: <id>`. Prints the pull request's number.
set -euo pipefail
: "${NAVIN_STEP:?}" "${NAVIN_BRANCH:?}" "${NAVIN_BRIEF_FILE:?}"
: "${GIT_REMOTE:?}" "${API_URL:?}" "${REPOSITORY:?}" "${AGENT_TOKEN:?}"

if ! [[ "$NAVIN_STEP" =~ ^[A-Za-z0-9_.-]+$ ]]; then
  echo "script-agent: step id $NAVIN_STEP is not a plain name" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet "$GIT_REMOTE" "$work/repo"
cd "$work/repo"
git switch --quiet --create "$NAVIN_BRANCH"

# "- `path`" lines under "### Context paths", up to the next heading.
mapfile -t paths < <(awk '
  /^### Context paths/ { on = 1; next }
  /^### / { on = 0 }
  on && /^- `[^`]+`$/ { sub(/^- `/, ""); sub(/`$/, ""); print }
' "$NAVIN_BRIEF_FILE")
if [ "${#paths[@]}" -eq 0 ]; then
  echo "script-agent: the brief names no context path" >&2
  exit 1
fi
for path in "${paths[@]}"; do
  mkdir -p "$(dirname "$path")"
  printf '\n// %s: done by the script agent\n' "$NAVIN_STEP" >>"$path"
done
git add --all
git -c user.name=script-agent -c user.email=script-agent@example.invalid \
  commit --quiet --message "$NAVIN_STEP: work from the brief" --message "Navin-Step: $NAVIN_STEP"
git push --quiet origin "$NAVIN_BRANCH"

body="$(printf '{"title":"%s: work from the brief","head":"%s","base":"main","body":"Done by the script agent.\\n\\nNavin-Step: %s\\n"}' \
  "$NAVIN_STEP" "$NAVIN_BRANCH" "$NAVIN_STEP")"
response="$(curl --fail --silent --show-error --request POST \
  --header "Authorization: Bearer $AGENT_TOKEN" \
  --header "Accept: application/vnd.github+json" \
  --header "X-GitHub-Api-Version: 2022-11-28" \
  --data "$body" "$API_URL/repos/$REPOSITORY/pulls")"
python3 -c 'import json, sys; print(json.load(sys.stdin)["number"])' <<<"$response"
