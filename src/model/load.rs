//! Loading and validating the file form of a database (`from_file`) and writing it (`to_file`).

use super::file::{
    ArchivedBranchFile, BranchFile, DatabaseFile, IntentFile, NodeFile, SummaryFile, TimelineFile,
};
use super::{
    ArchivedBranch, Branch, Database, Derived, Intent, Node, ROOT, Role, Summary, SummaryKind,
    Timeline, node_id, parse_prefixed,
};
use crate::error::{Error, Result};
use std::collections::{BTreeSet, HashMap};

impl Database {
    /// A database from its file form: checks the source data (format version 1 to
    /// `supported_version`) and rebuilds every index.
    pub fn from_file(file: DatabaseFile, supported_version: u64) -> Result<Database> {
        if !(1..=supported_version).contains(&file.format_version) {
            return Err(Error::database(format!(
                "unsupported format_version {} (this build reads versions 1 to {supported_version})",
                file.format_version
            )));
        }
        if file.format_version == 1 && file.timelines.iter().any(has_provenance) {
            return Err(Error::database(
                "a format_version 1 file cannot hold provenance, which came with format_version 2",
            ));
        }
        let mut timelines = Vec::new();
        let mut seen = BTreeSet::new();
        for tf in file.timelines {
            let timeline = load_timeline(tf)?;
            if !seen.insert(timeline.id) {
                return Err(Error::database(format!(
                    "timeline {} appears twice",
                    timeline.id_str()
                )));
            }
            if timeline.id >= file.next_timeline {
                return Err(Error::database(format!(
                    "timeline {} is not below next_timeline {}",
                    timeline.id_str(),
                    file.next_timeline
                )));
            }
            timelines.push(timeline);
        }
        timelines.sort_by_key(|t| t.id);
        for window in file.audit.windows(2) {
            if window[1].ts < window[0].ts {
                return Err(Error::database("audit timestamps decrease"));
            }
        }
        for record in &file.imports {
            let target = parse_prefixed(&record.timeline, "tl")
                .and_then(|id| timelines.binary_search_by_key(&id, |t| t.id).ok());
            let first = parse_prefixed(&record.first_node, "n");
            let fits = match (target, first) {
                (Some(t), Some(first)) => first
                    .checked_add(record.nodes)
                    .is_some_and(|end| first >= 1 && end <= timelines[t].nodes.len() as u64),
                _ => false,
            };
            if !fits {
                return Err(Error::database(format!(
                    "the import record of {} names nodes that do not exist",
                    record.timeline
                )));
            }
            if file.format_version == 1
                && let (Some(t), Some(first)) = (target, first)
            {
                // Version 1 kept an imported message's provenance in its intent note; only the
                // nodes this record says the import created are trusted to hold it (the same rule
                // as SQLite's migration 3 → 4).
                let end = (first + record.nodes) as usize;
                for node in &mut timelines[t].nodes[first as usize..end] {
                    adopt_provenance(node);
                }
            }
        }
        let mut db = Database {
            next_timeline: file.next_timeline,
            timelines,
            idempotency: file.idempotency,
            audit: file.audit,
            imports: file.imports,
            import_index: HashMap::new(),
        };
        db.index_imports();
        Ok(db)
    }

    /// The file form of the database, with format version `format_version`, for saving.
    pub fn to_file(&self, format_version: u64) -> DatabaseFile {
        DatabaseFile {
            format_version,
            next_timeline: self.next_timeline,
            timelines: self.timelines.iter().map(save_timeline).collect(),
            idempotency: self.idempotency.clone(),
            audit: self.audit.clone(),
            imports: self.imports.clone(),
        }
    }
}

fn has_provenance(t: &TimelineFile) -> bool {
    t.nodes
        .iter()
        .chain(&t.cold)
        .any(|n| n.provenance.is_some())
}

/// Move an import's record out of the intent note of a node that import created (format_version 1)
/// into its provenance. The tag stays: it names what the original was.
fn adopt_provenance(node: &mut Node) {
    let Some(intent) = &mut node.intent else {
        return;
    };
    let record = intent
        .note
        .as_deref()
        .filter(|note| note.starts_with("{\"import\":"))
        .and_then(|note| serde_json::from_str::<serde_json::Value>(note).ok())
        .filter(|v| v.get("import").is_some_and(serde_json::Value::is_string));
    if let Some(record) = record
        && node.provenance.is_none()
    {
        // In the form a version 2 file holds it, so that the database encodes and reloads equal.
        node.provenance = Some(record.to_string());
        intent.note = None;
    }
}

fn bad(timeline: &str, what: String) -> Error {
    Error::database(format!("timeline {timeline}: {what}"))
}

fn load_timeline(tf: TimelineFile) -> Result<Timeline> {
    let id = parse_prefixed(&tf.id, "tl")
        .ok_or_else(|| Error::database(format!("invalid timeline ID {:?}", tf.id)))?;
    let name = tf.id.clone();
    let count = usize::try_from(tf.next_node)
        .ok()
        .filter(|&c| c >= 1 && c <= tf.nodes.len() + tf.cold.len() + 1);
    let Some(count) = count.filter(|&c| c == tf.nodes.len() + tf.cold.len() + 1) else {
        return Err(bad(
            &name,
            format!(
                "next_node {} does not match the {} stored nodes",
                tf.next_node,
                tf.nodes.len() + tf.cold.len()
            ),
        ));
    };
    let mut slots: Vec<Option<Node>> = vec![None; count];
    for (cold, nf) in tf
        .nodes
        .into_iter()
        .map(|n| (false, n))
        .chain(tf.cold.into_iter().map(|n| (true, n)))
    {
        let n = parse_prefixed(&nf.id, "n")
            .filter(|&n| n >= 1 && (n as usize) < count)
            .ok_or_else(|| bad(&name, format!("invalid node ID {:?}", nf.id)))?;
        if slots[n as usize].is_some() {
            return Err(bad(
                &name,
                format!(
                    "node {} is stored twice (hot and cold zones must not overlap)",
                    nf.id
                ),
            ));
        }
        slots[n as usize] = Some(load_node(nf, cold, &name)?);
    }
    let mut nodes = Vec::with_capacity(count);
    nodes.push(Node::root());
    for (n, slot) in slots.into_iter().enumerate().skip(1) {
        nodes.push(
            slot.ok_or_else(|| bad(&name, format!("node {} is missing", node_id(n as u64))))?,
        );
    }
    let parse_node = |s: &str, what: &str| {
        parse_prefixed(s, "n")
            .filter(|&n| (n as usize) < count)
            .ok_or_else(|| {
                bad(
                    &name,
                    format!("{what} {s:?} is not a node of this timeline"),
                )
            })
    };
    let mut branches = Vec::new();
    let mut names = std::collections::HashSet::new();
    for bf in tf.branches {
        if bf.name.is_empty() || bf.name.contains('/') || !names.insert(bf.name.clone()) {
            return Err(bad(
                &name,
                format!("invalid or duplicate branch name {:?}", bf.name),
            ));
        }
        let head = parse_node(&bf.head, "branch head")?;
        let watermark = match &bf.watermark {
            Some(w) => parse_node(w, "watermark")?,
            None => ROOT,
        };
        branches.push(Branch {
            name: bf.name,
            head,
            watermark,
        });
    }
    if !branches.iter().any(|b| b.name == tf.current_branch) {
        return Err(bad(
            &name,
            format!("current branch {:?} does not exist", tf.current_branch),
        ));
    }
    let mut pins = BTreeSet::new();
    for p in &tf.pins {
        let n = parse_node(p, "pin")?;
        if n == ROOT || nodes[n as usize].cold {
            return Err(bad(
                &name,
                format!("pin {p} is the root or an archived node"),
            ));
        }
        pins.insert(n);
    }
    for (n, node) in nodes.iter().enumerate().skip(1) {
        if node.parent as usize >= count {
            return Err(bad(
                &name,
                format!("node {} has an unknown parent", node_id(n as u64)),
            ));
        }
    }
    if tf.title.as_deref().is_some_and(str::is_empty) {
        return Err(bad(&name, "the title is empty".into()));
    }
    let mut archived = Vec::new();
    for af in tf.archived_branches {
        if af.name.is_empty() || af.name.contains('/') {
            return Err(bad(
                &name,
                format!("invalid archived branch name {:?}", af.name),
            ));
        }
        let nodes = af
            .nodes
            .iter()
            .map(|n| {
                parse_node(n, "archived node").and_then(|n| match n {
                    ROOT => Err(bad(&name, "the root n0 cannot be archived".into())),
                    n => Ok(n),
                })
            })
            .collect::<Result<Vec<u64>>>()?;
        archived.push(ArchivedBranch {
            head: parse_node(&af.head, "archived branch head")?,
            watermark: parse_node(&af.watermark, "archived branch watermark")?,
            name: af.name,
            position: af.position,
            nodes,
        });
    }
    let mut timeline = Timeline {
        id,
        title: tf.title,
        created_at: tf.created_at,
        updated_at: tf.updated_at,
        nodes,
        branches,
        current_branch: tf.current_branch,
        pins,
        archived,
        derived: Derived::default(),
    };
    timeline.rebuild().map_err(|e| bad(&name, e.message))?;
    let (tin, tout) = timeline.euler_tour();
    // The first bare (neither pinned nor summarised) node on root→n, for every n: O(n).
    let mut first_bare: Vec<Option<u64>> = vec![None; timeline.nodes.len()];
    for n in 1..timeline.nodes.len() {
        let parent = timeline.nodes[n].parent as usize;
        first_bare[n] = first_bare[parent].or((!timeline.is_covered(n as u64)).then_some(n as u64));
    }
    timeline
        .check_archived()
        .map_err(|e| bad(&name, e.message))?;
    for b in &timeline.branches {
        let (w, h) = (b.watermark as usize, b.head as usize);
        if !(tin[w] <= tin[h] && tout[h] <= tout[w]) {
            return Err(bad(
                &name,
                format!("the watermark of branch {:?} is not on its path", b.name),
            ));
        }
        // W1: everything up to the watermark is covered; a watermark over a bare message would let
        // unpin and archival rely on coverage that does not exist.
        if let Some(bare) = first_bare[w] {
            return Err(bad(
                &name,
                format!(
                    "the watermark of branch {:?} ({}) covers {}, which is neither pinned nor summarised",
                    b.name,
                    node_id(b.watermark),
                    node_id(bare)
                ),
            ));
        }
        if timeline.nodes[b.head as usize].cold {
            return Err(bad(
                &name,
                format!("branch {:?} has an archived head", b.name),
            ));
        }
    }
    Ok(timeline)
}

fn load_node(nf: NodeFile, cold: bool, timeline: &str) -> Result<Node> {
    let role = Role::parse(&nf.role).ok_or_else(|| {
        bad(
            timeline,
            format!("node {} has an invalid role {:?}", nf.id, nf.role),
        )
    })?;
    let parent = parse_prefixed(&nf.parent, "n").ok_or_else(|| {
        bad(
            timeline,
            format!("node {} has an invalid parent {:?}", nf.id, nf.parent),
        )
    })?;
    if let Some(p) = &nf.provenance
        && !p.get("import").is_some_and(serde_json::Value::is_string)
    {
        return Err(bad(
            timeline,
            format!(
                "node {} has an invalid provenance: it must be an object whose \"import\" names the format",
                nf.id
            ),
        ));
    }
    let intent = match nf.intent {
        None => None,
        Some(i) if i.tag.is_empty() => {
            return Err(bad(
                timeline,
                format!(
                    "node {} has an invalid intent: the tag must be a non-empty string",
                    nf.id
                ),
            ));
        }
        Some(i) => Some(Intent {
            tag: i.tag,
            note: i.note,
        }),
    };
    if nf.text.len() > crate::spec::spec().constants.max_text_bytes {
        return Err(bad(
            timeline,
            format!("node {} has a text over the size limit", nf.id),
        ));
    }
    let summary = match nf.summary {
        None => None,
        Some(s) => {
            let kind = match s.kind.as_str() {
                "real" => SummaryKind::Real,
                "placeholder" => SummaryKind::Placeholder,
                other => {
                    return Err(bad(
                        timeline,
                        format!("node {} has an invalid summary kind {other:?}", nf.id),
                    ));
                }
            };
            let id = |v: &str| {
                parse_prefixed(v, "n").ok_or_else(|| {
                    bad(
                        timeline,
                        format!("node {} has an invalid node reference {v:?}", nf.id),
                    )
                })
            };
            let derived_from = s
                .derived_from
                .iter()
                .map(|d| id(d))
                .collect::<Result<Vec<_>>>()?;
            let supersedes = s.supersedes.as_deref().map(id).transpose()?;
            if role != Role::Summary || s.version == 0 {
                return Err(bad(
                    timeline,
                    format!("node {} has summary data but is not a valid summary", nf.id),
                ));
            }
            if kind == SummaryKind::Placeholder
                && (nf.tokens != crate::spec::spec().constants.reserve_tokens
                    || !derived_from.is_empty()
                    || supersedes.is_some())
            {
                return Err(bad(
                    timeline,
                    format!(
                        "placeholder {} must have exactly the reserve tokens and no versions",
                        nf.id
                    ),
                ));
            }
            Some(Summary {
                kind,
                from: id(&s.from)?,
                to: id(&s.to)?,
                derived_from,
                supersedes,
                version: s.version,
            })
        }
    };
    if cold && summary.is_some() {
        return Err(bad(
            timeline,
            format!(
                "summary {} is in the cold zone; summaries always stay hot",
                nf.id
            ),
        ));
    }
    Ok(Node {
        parent,
        role,
        text: nf.text,
        tokens: nf.tokens,
        created_at: nf.created_at,
        intent,
        provenance: nf.provenance.map(|p| p.to_string()),
        summary,
        cold,
    })
}

fn save_timeline(t: &Timeline) -> TimelineFile {
    let mut hot = Vec::new();
    let mut cold = Vec::new();
    for (n, node) in t.nodes.iter().enumerate().skip(1) {
        let n = n as u64;
        let nf = NodeFile {
            id: node_id(n),
            parent: node_id(node.parent),
            role: node.role.as_str().to_string(),
            text: node.text.clone(),
            tokens: node.tokens,
            created_at: node.created_at,
            intent: node.intent.as_ref().map(|i| IntentFile {
                tag: i.tag.clone(),
                note: i.note.clone(),
            }),
            provenance: node
                .provenance
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok()),
            summary: node.summary.as_ref().map(|s| SummaryFile {
                kind: s.kind.as_str().into(),
                from: node_id(s.from),
                to: node_id(s.to),
                derived_from: s.derived_from.iter().map(|&d| node_id(d)).collect(),
                supersedes: s.supersedes.map(node_id),
                version: s.version,
            }),
            prefix_tokens: serde_json::json!(t.derived.prefix_tokens[n as usize]),
            stale: if node.is_real_summary() {
                serde_json::json!(t.derived.stale[n as usize])
            } else {
                serde_json::Value::Null
            },
        };
        if node.cold {
            cold.push(nf)
        } else {
            hot.push(nf)
        }
    }
    TimelineFile {
        id: t.id_str(),
        title: t.title.clone(),
        created_at: t.created_at,
        updated_at: t.updated_at,
        next_node: t.nodes.len() as u64,
        current_branch: t.current_branch.clone(),
        branches: t
            .branches
            .iter()
            .map(|b| BranchFile {
                name: b.name.clone(),
                head: node_id(b.head),
                watermark: Some(node_id(b.watermark)),
            })
            .collect(),
        pins: t.pins.iter().map(|&p| node_id(p)).collect(),
        nodes: hot,
        cold,
        archived_branches: t
            .archived
            .iter()
            .map(|a| ArchivedBranchFile {
                name: a.name.clone(),
                head: node_id(a.head),
                watermark: node_id(a.watermark),
                position: a.position,
                nodes: a.nodes.iter().map(|&n| node_id(n)).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_file(n: u64, parent: u64, role: &str) -> NodeFile {
        NodeFile {
            id: node_id(n),
            parent: node_id(parent),
            role: role.into(),
            text: String::new(),
            tokens: 1,
            created_at: None,
            intent: None,
            provenance: None,
            summary: None,
            prefix_tokens: serde_json::Value::Null,
            stale: serde_json::Value::Null,
        }
    }

    fn timeline_file(
        nodes: Vec<NodeFile>,
        branches: Vec<BranchFile>,
        pins: Vec<String>,
    ) -> TimelineFile {
        TimelineFile {
            id: "tl0".into(),
            title: None,
            created_at: None,
            updated_at: None,
            next_node: nodes.len() as u64 + 1,
            current_branch: "main".into(),
            branches,
            pins,
            nodes,
            cold: Vec::new(),
            archived_branches: Vec::new(),
        }
    }

    fn chain(len: u64) -> Vec<NodeFile> {
        (1..=len).map(|n| node_file(n, n - 1, "user")).collect()
    }

    fn branch(name: String, head: u64, watermark: u64) -> BranchFile {
        BranchFile {
            name,
            head: node_id(head),
            watermark: Some(node_id(watermark)),
        }
    }

    // Issue 12 item 5: shapes on which a load used to be quadratic. Each loads in linear or n log n
    // time now; a quadratic step would not finish in the lifetime of the test run.

    #[test]
    fn a_hundred_thousand_branches_load_without_pairwise_name_checks() {
        let branches = (0..100_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    10,
                    0,
                )
            })
            .collect();
        let t = load_timeline(timeline_file(chain(10), branches, Vec::new())).unwrap();
        assert_eq!(t.branches.len(), 100_000);
        // A duplicate name is still found.
        let mut names: Vec<BranchFile> = (0..50_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    1,
                    0,
                )
            })
            .collect();
        names.push(branch("b7".into(), 1, 0));
        let err = load_timeline(timeline_file(chain(1), names, Vec::new())).unwrap_err();
        assert!(
            err.message.contains("duplicate branch name \"b7\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn thousands_of_advanced_watermarks_on_a_long_chain_are_checked_once() {
        // 50k pinned messages, 5k branches whose watermarks are deep in the chain.
        let len = 50_000u64;
        let pins = (1..=len).map(node_id).collect();
        let branches = (0..5_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    len,
                    len - i,
                )
            })
            .collect();
        let t = load_timeline(timeline_file(chain(len), branches, pins)).unwrap();
        assert_eq!(t.branches[4_999].watermark, len - 4_999);
        // A watermark over a bare message is still refused, naming the first bare one.
        let mut pins: Vec<String> = (1..=len).map(node_id).collect();
        pins.remove(99);
        let err = load_timeline(timeline_file(
            chain(len),
            vec![branch("main".into(), len, len)],
            pins,
        ))
        .unwrap_err();
        assert!(
            err.message
                .contains("covers n100, which is neither pinned nor summarised"),
            "{}",
            err.message
        );
    }

    #[test]
    fn thousands_of_summaries_over_one_long_range_are_counted_once() {
        // 20k messages and 5k summaries of the whole range: 10^8 steps if each range were walked.
        let len = 20_000u64;
        let mut nodes = chain(len);
        for k in 0..5_000u64 {
            let mut s = node_file(len + 1 + k, 0, "summary");
            s.text = format!("summary {k}");
            s.summary = Some(SummaryFile {
                kind: "real".into(),
                from: node_id(1),
                to: node_id(len),
                derived_from: Vec::new(),
                supersedes: None,
                version: 1,
            });
            nodes.push(s);
        }
        let t = load_timeline(timeline_file(
            nodes,
            vec![branch("main".into(), len, 0)],
            Vec::new(),
        ))
        .unwrap();
        assert_eq!(t.derived.cover_count[1], 5_000);
        assert_eq!(t.derived.cover_count[len as usize], 5_000);
        assert_eq!(t.derived.cover_count[len as usize + 1], 0);
    }
}
