#!/usr/bin/env python3
"""Which pages a `timeline_append` writes (issue 24, item 5): a diagnosis tool, not a test.

Usage: scripts/wal-pages.py TL_MCP DB [APPENDS]

Copies DB, runs APPENDS (default 30) `timeline_append` calls on its first timeline in one `tl-mcp`
session, copies the file and its write-ahead log while the session still holds them (the log is
checkpointed only at 1,000 frames and at exit), and prints the frames of each commit and, per b-tree
(SQLite's `dbstat` table, through the `sqlite3` shell), the pages the appends wrote.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import Counter


def wal_commits(path):
    """The frames of each commit of the log's current generation, as lists of page numbers."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 32:
        return []
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    commits, current, at = [], [], 32
    while at + 24 + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[at : at + 8])
        if data[at + 8 : at + 16] != salts:
            break  # a frame of an earlier generation: the log's end
        current.append(page)
        if size_after:
            commits.append(current)
            current = []
        at += 24 + page_size
    return commits


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tl_mcp, source = sys.argv[1], sys.argv[2]
    appends = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    work = tempfile.mkdtemp(prefix="wal-pages-")
    db = os.path.join(work, "t.db")
    shutil.copyfile(source, db)
    tl = subprocess.run(
        ["sqlite3", db, "SELECT id FROM timelines ORDER BY id LIMIT 1"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    mcp = subprocess.Popen([tl_mcp, "--db", db], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)

    def call(method, params, ident):
        mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                    "params": params}) + "\n")
        mcp.stdin.flush()
        reply = json.loads(mcp.stdout.readline())
        if "error" in reply or reply.get("result", {}).get("isError"):
            sys.exit(f"{method} failed: {reply}")

    call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "wal-pages", "version": "0"}}, 0)
    mcp.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for i in range(appends):
        text = f"message {i} about the pages one append writes, words {i * 7919 % 5000} and more"
        call("tools/call", {"name": "timeline_append",
                            "arguments": {"timeline_id": f"tl{tl}", "role": "user", "text": text}},
             i + 1)
    snap = os.path.join(work, "snap.db")
    shutil.copyfile(db + "-wal", snap + "-wal")
    shutil.copyfile(db, snap)
    mcp.stdin.close()
    mcp.wait()
    commits = wal_commits(snap + "-wal")
    # Reading the snapshot brings its log in; dbstat then names every page's b-tree.
    rows = subprocess.run(["sqlite3", "-separator", "\t", snap,
                           "SELECT pageno, name, pagetype FROM dbstat"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    owner = {}
    for row in rows:
        page, name, kind = row.split("\t")
        owner[int(page)] = f"{name} ({kind})"
    # The commits that wrote more than the usual (FTS5 merges, a checkpoint's restart) show apart.
    sizes = sorted(len(c) for c in commits)
    print(f"{len(commits)} commits, frames per commit: median {sizes[len(sizes) // 2]}, "
          f"mean {sum(sizes) / len(sizes):.1f}, min {sizes[0]}, max {sizes[-1]}")
    median = sizes[len(sizes) // 2]
    for title, chosen in [("all commits", commits),
                          (f"the commits of at most {median} frames (no merge)",
                           [c for c in commits if len(c) <= median])]:
        per_tree = Counter()
        for c in chosen:
            for page in c:
                # A page dbstat does not list is free now (a merge released it).
                per_tree[owner.get(page, "(free)")] += 1
        print(f"frames per b-tree, {title} ({len(chosen)}), per commit:")
        for name, n in per_tree.most_common():
            print(f"  {n / len(chosen):6.2f}  {name}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
