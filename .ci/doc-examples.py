#!/usr/bin/env python3
"""Public items whose rustdoc has no example.

Reads the rustdoc JSON of a crate (built with
`RUSTC_BOOTSTRAP=1 cargo rustdoc -p CRATE --lib -- -Z unstable-options
--output-format json`) and walks what the crate exports from its root:
modules, re-exports, structs, enums, traits, functions, constants, statics,
type aliases and macros, and the methods and associated items of their
inherent impls and of the crate's own traits. An item has an example when
its docs hold a code block that rustdoc runs or compiles (a fence without a
language, or `rust`, `no_run`, `should_panic`, `compile_fail`, `ignore` is
not enough: it must compile). Enum variants and struct fields need docs
(missing_docs) but not examples; methods of trait impls inherit the trait's
docs.

Usage: doc-examples.py [--allow LIST] FILE.json...
  Exit 1, with a list, when an item lacks an example and is not named in
  LIST (lines as this script prints them after "no example: "; `#` starts
  a comment). An item named in LIST that has an example by now is reported
  too, so the list only shrinks.
"""

import json
import re
import sys

FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([^\n`]*)$", re.M)
COMPILED = {"", "rust", "no_run", "should_panic", "compile_fail", "edition2024", "edition2021"}


def has_example(docs):
    if not docs:
        return False
    inside = False
    for m in FENCE.finditer(docs):
        if inside:
            inside = False
            continue
        inside = True
        attrs = {a.strip() for a in m.group(2).split(",")}
        if attrs <= COMPILED:
            return True
    return False


def check(path):
    doc = json.load(open(path))
    index = doc["index"]
    root = doc["root"]
    crate = index[str(root)]["name"]
    missing = {}
    seen = set()

    def local(item_id):
        return str(item_id) in index and index[str(item_id)].get("crate_id", 0) == 0

    def need(item, where):
        # One entry per item, under the shortest path it is reachable by
        # (a re-export at the root is how readers find it).
        if not has_example(item.get("docs")):
            key = item["id"]
            if key not in missing or len(where) < len(missing[key]):
                missing[key] = where

    def walk(item_id, prefix, name=None):
        if item_id is None or not local(item_id):
            return
        key = (str(item_id), prefix)
        if key in seen:
            return
        seen.add(key)
        item = index[str(item_id)]
        kind, inner = next(iter(item["inner"].items()))
        name = name or item.get("name")
        path = f"{prefix}::{name}" if name else prefix
        if kind == "use":
            if inner.get("is_glob"):
                target = index.get(str(inner.get("id")))
                if target and "module" in target["inner"]:
                    for child in target["inner"]["module"]["items"]:
                        if index.get(str(child), {}).get("visibility") == "public":
                            walk(child, prefix)
                return
            # A re-export: the target's own docs are what readers see.
            walk(inner.get("id"), prefix, inner.get("name"))
            return
        if kind == "module":
            if item_id != root:
                need(item, f"mod {path}")
            for child in inner["items"]:
                c = index.get(str(child))
                if c and c.get("visibility") == "public":
                    walk(child, path if item_id != root else crate)
            return
        if kind in ("struct", "enum", "union"):
            need(item, f"{kind} {path}")
            for impl_id in inner.get("impls", []):
                impl = index.get(str(impl_id))
                if not impl:
                    continue
                imp = impl["inner"]["impl"]
                if imp.get("trait") is not None or imp.get("is_synthetic") or imp.get("blanket_impl"):
                    continue
                for m in imp["items"]:
                    mi = index.get(str(m))
                    if mi and mi.get("visibility") == "public":
                        mkind = next(iter(mi["inner"]))
                        need(mi, f"{mkind} {path}::{mi['name']}")
            return
        if kind == "trait":
            need(item, f"trait {path}")
            for m in inner["items"]:
                mi = index.get(str(m))
                if mi:
                    mkind = next(iter(mi["inner"]))
                    need(mi, f"{mkind} {path}::{mi['name']}")
            return
        if kind in ("function", "constant", "static", "type_alias", "macro", "proc_macro"):
            need(item, f"{kind} {path}")
            return

    walk(root, crate)
    return crate, sorted(set(missing.values()))


def main():
    args = sys.argv[1:]
    allowed = set()
    if len(args) >= 2 and args[0] == "--allow":
        for line in open(args[1]):
            line = line.split("#", 1)[0].strip()
            if line:
                allowed.add(line)
        args = args[2:]
    bad = 0
    found = set()
    for path in args:
        crate, missing = check(path)
        new = [m for m in missing if m not in allowed]
        found.update(missing)
        for m in new:
            print(f"{crate}: no example: {m}")
        bad += len(new)
        print(f"{crate}: {len(missing)} public item(s) without an example, {len(new)} not in the allowed list")
    for m in sorted(allowed - found):
        print(f"has an example now (or is gone): remove from the allowed list: {m}")
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
