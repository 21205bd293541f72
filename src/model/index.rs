//! Upkeep of the derived indexes: prefix tokens, depth, coverage, stale flags and versions of a
//! timeline, and the index of import records by source key and digest.

use super::file::ImportRecord;
use super::{Database, Derived, Earlier, ROOT, Timeline, import_key, node_id};
use crate::error::{Error, Result};
use std::collections::BTreeSet;

impl Timeline {
    /// Record the lookup keys of summary `n` (its range start, request digest and sources). The
    /// effects on other nodes (coverage, versions, stale flags) are the caller's: `rebuild` derives
    /// them all at once, operations apply them one change at a time.
    pub(crate) fn index_summary_keys(&mut self, n: u64) {
        let node = &self.nodes[n as usize];
        let Some(summary) = &node.summary else {
            return;
        };
        self.derived
            .summaries_from
            .entry(summary.from)
            .or_default()
            .push(n);
        if let Some(digest) = node.request_digest() {
            self.derived.summary_requests.entry(digest).or_insert(n);
            for &source in &summary.derived_from {
                self.derived.dependents.entry(source).or_default().push(n);
            }
        }
    }

    fn index_summary(&mut self, n: u64) {
        self.index_summary_keys(n);
        if let Some(old) = self.nodes[n as usize]
            .summary
            .as_ref()
            .and_then(|s| s.supersedes)
        {
            self.derived.superseded_by.insert(old, n);
        }
    }

    /// Entry and exit times of a depth-first walk from the root: `a` is `b` or one of its ancestors
    /// exactly when `tin[a] <= tin[b] && tout[b] <= tout[a]`. O(n), so checks over many branches or
    /// summaries cost O(1) each instead of a walk up the tree.
    pub fn euler_tour(&self) -> (Vec<u32>, Vec<u32>) {
        let count = self.nodes.len();
        let (mut tin, mut tout) = (vec![0u32; count], vec![0u32; count]);
        let mut clock = 0u32;
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        tin[0] = 0;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = self.derived.children[node].get(*next) {
                *next += 1;
                clock += 1;
                tin[child as usize] = clock;
                stack.push((child as usize, 0));
            } else {
                tout[node] = clock;
                stack.pop();
            }
        }
        (tin, tout)
    }

    /// Mark stale every summary whose derived_from reaches a superseded or stale summary.
    fn propagate_stale(&mut self) {
        let mut stale = vec![false; self.nodes.len()];
        let mut queue: Vec<u64> = self.derived.superseded_by.keys().copied().collect();
        let mut seen: BTreeSet<u64> = BTreeSet::new();
        while let Some(source) = queue.pop() {
            if !seen.insert(source) {
                continue;
            }
            if let Some(users) = self.derived.dependents.get(&source) {
                for &user in users {
                    stale[user as usize] = true;
                    queue.push(user);
                }
            }
        }
        self.derived.stale = stale;
    }

    /// The records of archived branches must let restore-branch bring back a valid branch: the
    /// watermark on the head's path with everything above it covered (coverage never shrinks, so
    /// this held when the branch was archived and still holds), archived nodes on that path and not
    /// summaries. Both engines check it when they load a timeline.
    pub fn check_archived(&self) -> Result<()> {
        for a in &self.archived {
            if !self.is_ancestor_or_self(a.watermark, a.head) {
                return Err(Error::database(format!(
                    "the watermark of archived branch {:?} is not on its path",
                    a.name
                )));
            }
            if let Some(bare) = self
                .path(a.watermark)
                .into_iter()
                .find(|&n| !self.is_covered(n))
            {
                return Err(Error::database(format!(
                    "the watermark of archived branch {:?} ({}) covers {}, which is neither pinned nor summarised",
                    a.name,
                    node_id(a.watermark),
                    node_id(bare)
                )));
            }
            for &n in &a.nodes {
                if self.nodes[n as usize].summary.is_some() || !self.is_ancestor_or_self(n, a.head)
                {
                    return Err(Error::database(format!(
                        "archived branch {:?} lists {}, which is a summary or not on its path",
                        a.name,
                        node_id(n)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Rebuild every derived index from the source data, checking it as it goes.
    pub fn rebuild(&mut self) -> Result<()> {
        let count = self.nodes.len();
        self.derived = Derived {
            prefix_tokens: vec![0; count],
            depth: vec![0; count],
            children: vec![Vec::new(); count],
            cover_count: vec![0; count],
            stale: vec![false; count],
            ..Derived::default()
        };
        for n in 1..count {
            let parent = self.nodes[n].parent as usize;
            // Parents are always older than their children, which also rules out cycles.
            if parent >= n {
                return Err(Error::database(format!(
                    "node {} has parent {} that is not older than it",
                    node_id(n as u64),
                    node_id(parent as u64)
                )));
            }
            self.derived.prefix_tokens[n] = self.derived.prefix_tokens[parent]
                .checked_add(self.nodes[n].tokens)
                .ok_or_else(|| {
                    Error::database(format!(
                        "the token counts on the path to {} add up to more than fits in 64 bits",
                        node_id(n as u64)
                    ))
                })?;
            self.derived.depth[n] = self.derived.depth[parent] + 1;
            self.derived.children[parent].push(n as u64);
        }
        let (tin, tout) = self.euler_tour();
        let contains = |a: u64, b: u64| {
            tin[a as usize] <= tin[b as usize] && tout[b as usize] <= tout[a as usize]
        };
        // Coverage by difference: +1 at the end of each range, -1 above its start; a node's count is
        // the sum over its subtree (O(n + summaries) instead of a walk over every range).
        let mut cover_delta = vec![0i64; count];
        for n in 1..count as u64 {
            if let Some(summary) = &self.nodes[n as usize].summary {
                let (from, to) = (summary.from, summary.to);
                // A summary is written after the messages it stands for, so its range is older than it.
                if from == ROOT || from >= n || to >= n || !contains(from, to) {
                    return Err(Error::database(format!(
                        "summary {} has an invalid range {}..{}",
                        node_id(n),
                        node_id(from),
                        node_id(to)
                    )));
                }
                if self.nodes[n as usize].parent != self.nodes[from as usize].parent {
                    return Err(Error::database(format!(
                        "summary {} must be a sibling of {} (the start of its range)",
                        node_id(n),
                        node_id(from)
                    )));
                }
                for &source in summary.derived_from.iter().chain(summary.supersedes.iter()) {
                    // Sources always exist before the summaries built from them.
                    if source >= n || !self.nodes[source as usize].is_real_summary() {
                        return Err(Error::database(format!(
                            "summary {} refers to {} which is not an older summary",
                            node_id(n),
                            node_id(source)
                        )));
                    }
                }
                let expected_version = match summary.supersedes {
                    None => Some(1),
                    Some(old) => self.nodes[old as usize]
                        .summary
                        .as_ref()
                        .and_then(|s| s.version.checked_add(1)),
                };
                if expected_version != Some(summary.version) {
                    return Err(Error::database(format!(
                        "summary {} has version {}, which does not follow its supersede chain",
                        node_id(n),
                        summary.version
                    )));
                }
                if let Some(old) = summary.supersedes
                    && let Some(&other) = self.derived.superseded_by.get(&old)
                {
                    return Err(Error::database(format!(
                        "summary {} is superseded twice (by {} and {})",
                        node_id(old),
                        node_id(other),
                        node_id(n)
                    )));
                }
                cover_delta[to as usize] += 1;
                cover_delta[self.nodes[from as usize].parent as usize] -= 1;
                self.index_summary(n);
            }
        }
        for n in (1..count).rev() {
            let parent = self.nodes[n].parent as usize;
            cover_delta[parent] += cover_delta[n];
            self.derived.cover_count[n] = u32::try_from(cover_delta[n]).unwrap_or(u32::MAX);
        }
        self.propagate_stale();
        Ok(())
    }
}

impl Database {
    /// Record an import and index it.
    pub fn add_import(&mut self, record: ImportRecord) {
        self.index_import(&record, self.imports.len());
        self.imports.push(record);
    }

    fn index_import(&mut self, record: &ImportRecord, at: usize) {
        for digest in [None, Some(record.digest.as_str())] {
            self.import_index
                .entry(import_key(&record.format, &record.source_key, digest))
                .or_default()
                .push(at);
        }
    }

    /// The earlier imports of one conversation (same format and source key): the first with this
    /// digest, and the latest; each found through the index, whatever the number of records.
    pub fn earlier_imports(&self, format: &str, source_key: &str, digest: &str) -> Earlier {
        let first = |digest: Option<&str>, last: bool| {
            let at = self
                .import_index
                .get(&import_key(format, source_key, digest))?;
            let i = if last { at.last() } else { at.first() }?;
            Some(self.imports[*i].clone())
        };
        Earlier {
            same: first(Some(digest), false),
            latest: first(None, true),
        }
    }

    /// Every import of one conversation (same format and source key), oldest first.
    pub fn imports_of(&self, format: &str, source_key: &str) -> Vec<ImportRecord> {
        self.import_index
            .get(&import_key(format, source_key, None))
            .map(|at| at.iter().map(|&i| self.imports[i].clone()).collect())
            .unwrap_or_default()
    }

    /// Rebuild `import_index` from `imports`.
    pub fn index_imports(&mut self) {
        self.import_index.clear();
        let imports = std::mem::take(&mut self.imports);
        for (i, record) in imports.iter().enumerate() {
            self.index_import(record, i);
        }
        self.imports = imports;
    }
}
