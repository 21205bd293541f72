//! Freshness of the files under generated/: they are rendered from spec/timeline.json in memory and
//! compared with the checked-in copies. Locally a stale file is rewritten and the test fails once; under
//! CI=true it only fails, naming the command to run.

use std::path::Path;

#[test]
fn generated_files_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let mut stale = Vec::new();
    for (relative, expected) in timeline::spec::emit::render_all() {
        let path = root.join(relative);
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        if actual != expected {
            let first_difference = actual
                .lines()
                .zip(expected.lines())
                .enumerate()
                .find(|(_, (a, e))| a != e)
                .map(|(i, (a, e))| format!("line {}:\n  checked in: {a}\n  from spec:  {e}", i + 1))
                .unwrap_or_else(|| "the files differ in length".to_string());
            if !in_ci {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &expected).unwrap();
            }
            stale.push(format!("{relative} ({first_difference})"));
        }
    }
    assert!(
        stale.is_empty(),
        "generated files were stale: {}\n{}",
        stale.join("\n"),
        if in_ci {
            "Run `cargo test --test generated` locally and commit the regenerated files."
        } else {
            "They have been regenerated; review and commit them, then run the tests again."
        }
    );
}
