#!/usr/bin/env bash
# Plans a few requests on each given checkout with the built-in planner and
# validates every plan: `scripts/plan-checkouts.sh PATH...` (build navin first).
set -u
navin=${NAVIN:-target/release/navin}
requests=(
  "add retry with exponential backoff to network requests"
  "improve the error message for invalid configuration"
  "add tests for command-line argument parsing"
)
total=0 valid=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for dir in "$@"; do
  for request in "${requests[@]}"; do
    total=$((total + 1))
    start=$(date +%s%N)
    if "$navin" --repo "$dir" plan --out "$out/plan.md" "$request" 2>/dev/null &&
      "$navin" plan validate "$out/plan.md" >/dev/null; then
      valid=$((valid + 1))
      ms=$((($(date +%s%N) - start) / 1000000))
      files=$(grep -c '^### File:' "$out/plan.md")
      echo "ok    $(basename "$dir")  ${ms} ms  ${files} files  | $request"
    else
      echo "FAIL  $(basename "$dir")  | $request"
    fi
  done
done
echo "valid plans: $valid/$total"
[ "$valid" = "$total" ]
