//! The prelude (`src/prelude.js`) is one scope: two top-level function
//! declarations of the same name would make the later one serve both
//! callers, silently (this round's `addCatch` of EventEmitter shadowed
//! EventTarget's, and an EventTarget listener's rejection stopped being
//! an uncaught exception). Each top-level function is declared once.

use std::collections::HashMap;

#[test]
fn each_top_level_function_is_declared_once() {
    let prelude = include_str!("../src/prelude.js");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut twice = Vec::new();
    for (n, line) in prelude.lines().enumerate() {
        // The prelude's body is indented two spaces; deeper declarations
        // are block-scoped (the prelude is strict).
        let Some(rest) = line
            .strip_prefix("  function ")
            .or_else(|| line.strip_prefix("  async function "))
        else {
            continue;
        };
        let name: &str = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()
            .unwrap_or("");
        if name.is_empty() {
            continue;
        }
        if let Some(first) = seen.insert(name, n + 1) {
            twice.push(format!("{name}: lines {first} and {}", n + 1));
        }
    }
    assert!(
        twice.is_empty(),
        "declared twice in the prelude's scope: {twice:?}"
    );
    assert!(
        seen.len() > 100,
        "the scan found {} functions: is the prelude's indentation still two spaces?",
        seen.len()
    );
}
