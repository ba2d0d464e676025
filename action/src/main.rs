//! Navin as a GitHub Action: not built yet (issue 6).
fn main() {
    eprintln!("navin-action is not implemented yet");
    std::process::exit(2);
}
