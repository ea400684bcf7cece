//! `tljs fixtures/node/tl.js X.tl` prints X.out for every timer script of
//! `fixtures/scripts`: Node's own runner, unchanged, on this host, gives
//! the goldens Node gave.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read fixtures") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            scripts(&p, out);
        } else if p.extension().is_some_and(|e| e == "tl") {
            out.push(p);
        }
    }
}

#[test]
fn tl_js_runs_every_script_as_node_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let runner = root.join("fixtures/node/tl.js");
    let mut all = Vec::new();
    scripts(&root.join("fixtures/scripts"), &mut all);
    all.sort();
    assert!(all.len() >= 200, "only {} scripts", all.len());
    let mut failures = Vec::new();
    for tl in &all {
        let golden = std::fs::read_to_string(tl.with_extension("out")).expect("golden");
        let run = || {
            Command::new(env!("CARGO_BIN_EXE_tljs"))
                .arg(&runner)
                .arg(tl.file_name().expect("file name"))
                .current_dir(tl.parent().expect("dir"))
                .output()
                .expect("run tljs")
        };
        let same = |out: &std::process::Output| {
            out.status.success() && String::from_utf8_lossy(&out.stdout) == golden
        };
        let out = common::run_on_real_clock(run, same);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !same(&out) {
            failures.push(format!(
                "{} ({})\n--- tljs\n{stdout}--- node\n{golden}--- stderr\n{}",
                tl.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
