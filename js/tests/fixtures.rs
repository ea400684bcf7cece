//! Every `fixtures/js/X.js` run by `tljs` prints exactly Node's stdout
//! (`X.out`, made by `fixtures/js/regen` from node 20), byte for byte (a
//! program may write bytes that are no UTF-8), and exits with Node's
//! status (`X.status`, absent for 0). Stderr is not compared: Node prints
//! the source line of an uncaught exception, tljs does not.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// `fixtures/js` and its files whose names end in `suffix`, sorted.
fn fixture_files(suffix: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/js");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/js")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    (dir, files)
}

#[test]
fn fixtures_match_node() {
    let (dir, scripts) = fixture_files(".js");
    assert!(scripts.len() >= 20, "only {} fixtures", scripts.len());
    let mut failures = Vec::new();
    for js in &scripts {
        let golden = std::fs::read(js.with_extension("out"))
            .unwrap_or_else(|e| panic!("{}: no golden: {e}", js.display()));
        let status: i32 = std::fs::read_to_string(js.with_extension("status"))
            .map_or(0, |s| s.trim().parse().expect("status file holds a number"));
        let run = || {
            Command::new(env!("CARGO_BIN_EXE_tljs"))
                .arg(js)
                .current_dir(&dir)
                .output()
                .expect("run tljs")
        };
        let same =
            |out: &std::process::Output| out.status.code() == Some(status) && out.stdout == golden;
        let out = common::run_on_real_clock(run, same);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let code = out.status.code().unwrap_or(-1);
        if !same(&out) {
            failures.push(format!(
                "{}: status {code} (node {status})\n--- tljs\n{stdout}--- node\n{}--- tljs stderr\n{}",
                js.display(),
                String::from_utf8_lossy(&golden),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ from Node:\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}

/// A fixture with an `X.file.out` golden (node with stdout a file and
/// stderr `/dev/null`) prints it on tljs run so too: Node's stdout stream for a file
/// takes no async id, where a pipe's takes one, so a program that reads
/// ids after its output tells the two apart.
#[test]
fn fixtures_with_stdout_a_file_match_node() {
    let (dir, goldens) = fixture_files(".file.out");
    assert!(!goldens.is_empty(), "no .file.out golden in fixtures/js");
    let out_dir = std::env::temp_dir().join(format!("tljs-file-out-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("a temporary folder");
    for golden_path in &goldens {
        let name = golden_path.file_name().expect("a name").to_string_lossy();
        let js = dir.join(name.replace(".file.out", ".js"));
        let golden = std::fs::read(golden_path).expect("golden");
        let target = out_dir.join(name.as_ref());
        let run = || {
            let file = std::fs::File::create(&target).expect("the output file");
            let status = Command::new(env!("CARGO_BIN_EXE_tljs"))
                .arg(&js)
                .current_dir(&dir)
                .stdout(file)
                .stderr(std::process::Stdio::null())
                .status()
                .expect("run tljs");
            (status, std::fs::read(&target).expect("the output"))
        };
        let (status, printed) = run();
        assert!(status.success(), "{}: {status}", js.display());
        assert!(
            printed == golden,
            "{} with stdout a file\n--- tljs\n{}--- node\n{}",
            js.display(),
            String::from_utf8_lossy(&printed),
            String::from_utf8_lossy(&golden)
        );
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}
