//! The test layout (docs/contributing.md): every `.rs` file under `tests/` is a module of one of the
//! two test binaries, `tests/suite/main.rs` and `tests/properties/main.rs`. A file that no `mod` line
//! reaches compiles into nothing and its tests never run, and a new top-level `tests/*.rs` would be a
//! binary of its own, so both fail here, naming the file and what to do.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The two binaries' root files, relative to `tests/`.
const ROOTS: [&str; 2] = ["suite/main.rs", "properties/main.rs"];

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every `.rs` file under `dir`, except in `tests/fixtures/`, `interop/` and `golden/` (test data,
/// not test code).
fn rust_files(tests: &Path, dir: &Path, found: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if dir != tests || !matches!(name.as_str(), "fixtures" | "interop" | "golden") {
                rust_files(tests, &path, found);
            }
        } else if name.ends_with(".rs") {
            found.insert(path);
        }
    }
}

/// The files `file`'s `mod name;` lines declare, resolved as rustc does: `#[path = "p"]` relative
/// to the file's directory, otherwise `name.rs` (or `name/mod.rs`) beside a `main.rs` or `mod.rs`,
/// and under the directory named after any other file.
fn declared_modules(file: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let own_dir = if matches!(stem.as_ref(), "main" | "mod") {
        dir.to_path_buf()
    } else {
        dir.join(stem.as_ref())
    };
    let mut path_attribute = None;
    let mut modules = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attribute = rest.strip_suffix("\"]").map(str::to_string);
            continue;
        }
        let declaration = line.strip_prefix("pub ").unwrap_or(line);
        if let Some(name) = declaration
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            modules.push(match path_attribute.take() {
                Some(path) => dir.join(path),
                None if own_dir.join(format!("{name}.rs")).exists() => {
                    own_dir.join(format!("{name}.rs"))
                }
                None => own_dir.join(name).join("mod.rs"),
            });
        } else if !line.starts_with("#[") {
            path_attribute = None;
        }
    }
    modules
}

/// Normalise `a/b/../c` to `a/c` (the files exist, but canonicalize would resolve links as well).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What is wrong with the layout of `tests` (a `tests/` directory), one line per file.
fn problems(tests: &Path) -> Vec<String> {
    let mut reached = BTreeSet::new();
    let mut problems = Vec::new();
    // (a file, the file that declares it)
    let mut queue: Vec<(PathBuf, PathBuf)> = ROOTS
        .iter()
        .map(|root| (tests.join(root), tests.join(root)))
        .collect();
    let shown = |file: &Path| {
        format!(
            "tests/{}",
            file.strip_prefix(tests).unwrap_or(file).display()
        )
    };
    while let Some((file, declared_by)) = queue.pop() {
        let file = normalise(&file);
        if !file.exists() {
            problems.push(format!(
                "{} declares a module whose file {} does not exist",
                shown(&declared_by),
                shown(&file)
            ));
        } else if reached.insert(file.clone()) {
            queue.extend(
                declared_modules(&file)
                    .into_iter()
                    .map(|m| (m, file.clone())),
            );
        }
    }
    let mut all = BTreeSet::new();
    rust_files(tests, tests, &mut all);
    for file in all.difference(&reached) {
        let relative = file.strip_prefix(tests).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy();
        problems.push(if relative.components().count() == 1 {
            format!(
                "tests/{} would be a test binary of its own: move it to tests/suite/{stem}.rs \
                 (or tests/properties/ for proptest suites) and add `mod {stem};` to that main.rs",
                relative.display()
            )
        } else {
            format!(
                "tests/{} is not declared as a module, so its tests never run: add `mod {stem};` \
                 to the main.rs of its directory (or to the file of its parent module)",
                relative.display()
            )
        });
    }
    problems
}

#[test]
fn every_test_file_is_a_module_of_one_of_the_two_binaries() {
    let problems = problems(&tests_dir());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check itself: a copy of the layout with a stray top-level file and an undeclared one.
#[test]
fn a_forgotten_or_stray_test_file_is_named() {
    let dir = crate::common::TempDir::new();
    let tests = dir.path();
    let write = |relative: &str, text: &str| {
        let path = tests.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("common/mod.rs", "");
    write(
        "suite/main.rs",
        "#[path = \"../common/mod.rs\"]\nmod common;\nmod area;\n",
    );
    write("suite/area.rs", "mod part;\n");
    write("suite/area/part.rs", "");
    write("properties/main.rs", "mod common;\n");
    write("fixtures/data.rs", "");
    assert_eq!(
        problems(tests),
        [
            "tests/properties/main.rs declares a module whose file tests/properties/common/mod.rs does not exist"
        ]
    );
    write("properties/main.rs", "// mod old;\n");
    assert!(problems(tests).is_empty(), "{:?}", problems(tests));
    write("suite/area/forgotten.rs", "");
    write("stray.rs", "");
    assert_eq!(
        problems(tests),
        [
            "tests/stray.rs would be a test binary of its own: move it to tests/suite/stray.rs \
             (or tests/properties/ for proptest suites) and add `mod stray;` to that main.rs",
            "tests/suite/area/forgotten.rs is not declared as a module, so its tests never run: add \
             `mod forgotten;` to the main.rs of its directory (or to the file of its parent module)",
        ]
    );
}

#[test]
fn the_check_resolves_modules_as_rustc_does() {
    let tests = tests_dir();
    let export = tests.join("suite/export.rs");
    // export.rs declares `#[path = "export/html.rs"] mod html;`, html.rs `mod webdriver` beside it.
    assert_eq!(
        declared_modules(&export),
        [tests.join("suite/export/html.rs")]
    );
    assert_eq!(
        declared_modules(&tests.join("suite/export/html.rs")),
        [tests.join("suite/export/webdriver.rs")]
    );
    let main = declared_modules(&tests.join("properties/main.rs"));
    assert_eq!(
        main.iter().map(|p| normalise(p)).collect::<Vec<_>>(),
        [
            tests.join("common/mod.rs"),
            tests.join("properties/properties.rs"),
            tests.join("properties/sessions.rs"),
            tests.join("properties/state_machine.rs"),
        ]
    );
}
