#!/usr/bin/env bash
# Runs the installed navin-action (NAVIN_ACTION_BIN, from install.sh) in the
# mode the `mode` input names. Inputs arrive as INPUT_* variables, never as
# expressions in a script.
set -euo pipefail
case "${INPUT_MODE:-}" in
  event | ready-matrix | summary | evidence | brief | progress | verify | contain) ;;
  *)
    echo "::error title=navin::input 'mode' must be one of event, ready-matrix, summary, evidence, brief, progress, verify, contain"
    exit 1
    ;;
esac
exec "$NAVIN_ACTION_BIN" --mode "$INPUT_MODE"
