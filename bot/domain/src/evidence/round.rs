//! A completed CI round on a step's head, from its verdict and runs: the green and red required checks and the failure's fingerprint, for the progress ledger.

use navin_ledger::model::CiRound;

use super::fingerprint::fingerprint;
use super::observation::{CheckObservation, ConclusionClass};
use super::verdict::{EvidencePolicy, Verdict, OWN_CHECK_PREFIX};

/// The round `verdict` closes on `head`, or `None` while it is not complete (checks
/// pending) or CI does not apply. `runs` are the runs the verdict was made of: the red
/// ones' own output goes into the fingerprint.
pub fn ci_round(
    head: &str,
    verdict: &Verdict,
    runs: &[CheckObservation],
    policy: &EvidencePolicy,
) -> Option<CiRound> {
    let trusted_green = || {
        runs.iter()
            .filter(|r| policy.trusts(r.app_id))
            .filter(|r| r.head_sha.trim().eq_ignore_ascii_case(head.trim()))
            .filter(|r| r.conclusion().map(|c| c.class()) == Some(ConclusionClass::Green))
            .filter(|r| !r.name.starts_with(OWN_CHECK_PREFIX))
            .map(|r| r.name.clone())
    };
    match verdict {
        Verdict::Green { evidence } => Some(CiRound {
            head_sha: head.trim().to_owned(),
            green: evidence
                .iter()
                .filter_map(|e| e.name.clone())
                .chain(trusted_green())
                .collect(),
            red: Vec::new(),
            fingerprint: None,
            excerpt: String::new(),
            changed: Vec::new(),
        }),
        Verdict::Red { failed, .. } => {
            let red: Vec<String> = failed.iter().map(|f| f.name.clone()).collect();
            let outputs: Vec<(String, String)> = failed
                .iter()
                .map(|f| {
                    let output = runs
                        .iter()
                        .find(|r| r.id == f.run_id)
                        .map(|r| r.output.clone())
                        .unwrap_or_default();
                    (f.name.clone(), format!("{}\n{output}", f.conclusion))
                })
                .collect();
            Some(CiRound {
                head_sha: head.trim().to_owned(),
                green: trusted_green().filter(|n| !red.contains(n)).collect(),
                red,
                fingerprint: fingerprint(&outputs),
                excerpt: excerpt(&outputs),
                changed: Vec::new(),
            })
        }
        Verdict::Pending { .. } | Verdict::NotApplicable { .. } => None,
    }
}

/// The red checks' output as the next attempt's brief shows it: each check named, its
/// conclusion and text with blank runs squeezed, before any clipping (the ledger clips).
fn excerpt(outputs: &[(String, String)]) -> String {
    let mut out = String::new();
    for (name, text) in outputs {
        out.push_str(&format!("{name}: "));
        let mut blank = false;
        for line in text.lines().map(str::trim_end) {
            if line.trim().is_empty() {
                blank = true;
                continue;
            }
            if blank && !out.ends_with(": ") {
                out.push('\n');
            }
            blank = false;
            out.push_str(line);
            out.push('\n');
        }
    }
    out.trim_end().to_owned()
}
