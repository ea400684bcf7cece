//! A short, seeded batch of the differential fuzzer (`examples/difffuzz/`):
//! generated timer scripts must print on this crate's loop (virtual clock)
//! exactly what they print on real Node, for every script whose Node output
//! is the same in all of 5 runs (the others are timing-sensitive on this
//! machine and are skipped).
//!
//! Ignored by default (it needs `node`, and takes some seconds); `.ci/run`
//! runs it with `cargo test --release --test difffuzz -- --ignored`. Without
//! `node` it passes, saying it skipped.
//!
//! The generator and the shrinker are the example's own files, compiled
//! here too; their unit tests run with every `cargo test`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use timerloop::script::{parse::parse, run::run_to_lines};

use scriptgen::generate;

#[path = "../examples/difffuzz/scriptgen.rs"]
mod scriptgen;
#[path = "../examples/difffuzz/shrink.rs"]
mod shrink;

const SEED: u64 = 5_000_000;
const COUNT: u64 = 30;
const SIZE: usize = 30;
const RUNS: usize = 5;

fn translator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/node/tl.js")
}

/// Node's stdout for `src`, run from `dir`; `None` if the run failed.
fn node(dir: &Path, src: &str) -> Option<String> {
    std::fs::write(dir.join("s.tl"), src).expect("temporary script is written");
    let out = Command::new("node")
        // Loading a CA bundle costs ~100 ms per start; tl.js uses no TLS.
        .env_remove("NODE_EXTRA_CA_CERTS")
        .arg(translator())
        .arg("s.tl")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
#[ignore = "needs node; run by .ci/run"]
fn generated_scripts_match_node() {
    if !Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("node not found: skipping the differential batch");
        return;
    }
    let dir = std::env::temp_dir().join(format!("difffuzz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = String::new();
    let mut unstable = 0;
    for seed in SEED..SEED + COUNT {
        let src = generate(seed, SIZE);
        let script = parse("s.tl", &src).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let ours = run_to_lines(&script, true).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let first = node(&dir, &src).unwrap_or_else(|| panic!("node failed on seed {seed}"));
        if (1..RUNS).any(|_| node(&dir, &src).as_ref() != Some(&first)) {
            unstable += 1;
            continue;
        }
        let want: Vec<&str> = first.lines().collect();
        if ours != want {
            let _ = write!(
                failures,
                "\nseed {seed} (`cargo run --release --example difffuzz -- --print --seed {seed} \
                 --size {SIZE}`):\n{src}--- node:\n{first}--- ours:\n{}\n",
                ours.join("\n")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{COUNT} scripts, {unstable} unstable on node (skipped)");
    assert!(
        unstable < COUNT / 2,
        "{unstable} of {COUNT} scripts unstable on node: machine too busy?"
    );
    assert!(
        failures.is_empty(),
        "generated scripts differ from Node:{failures}"
    );
}
