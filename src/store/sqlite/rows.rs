//! Row mapping: Timeline's values to and from the rows and columns of the schema.

use super::tx::SqlTx;
use crate::error::{Error, Result};
use crate::model::file::ImportRecord;
use crate::model::{ArchivedBranch, Intent, Node, Role, Summary, SummaryKind};
use crate::store::{NodeRow, TimelineRow};
use rusqlite::{OptionalExtension, params};

/// SQLite stores signed 64-bit integers; Timeline's counters are unsigned. The bits are kept as they
/// are, so every u64 survives the round trip (nothing compares them in SQL beyond equality).
pub(super) fn sql(v: u64) -> i64 {
    v as i64
}

pub(super) fn unsql(v: i64) -> u64 {
    v as u64
}

impl SqlTx<'_> {
    pub(super) fn put_import_row(&self, record: &ImportRecord) -> Result<()> {
        let json = serde_json::to_string(record)
            .map_err(|e| Error::internal(e.to_string()).with_source(e))?;
        let timeline = crate::model::parse_timeline_id(&record.timeline).ok_or_else(|| {
            Error::internal(format!(
                "internal error: import record of an invalid timeline {:?}",
                record.timeline
            ))
        })?;
        self.exec(
            "INSERT INTO imports (format, source_key, digest, timeline, ts, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                record.format,
                record.source_key,
                record.digest,
                sql(timeline),
                sql(record.ts),
                json
            ],
        )?;
        Ok(())
    }

    pub(super) fn import_records(
        &self,
        sql_text: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<ImportRecord>> {
        let mut stmt = self
            .conn
            .prepare_cached(sql_text)
            .map_err(|e| self.fail(e))?;
        let rows: Vec<String> = stmt
            .query_map(params, |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        rows.iter()
            .map(|json| {
                serde_json::from_str(json).map_err(|e| {
                    Error::damaged(format!(
                        "the database {} has a damaged import record ({e})",
                        self.path.display()
                    ))
                })
            })
            .collect()
    }

    /// Insert one node row as it is (bulk loads, whose rows are in path order); its path columns
    /// come from the parent's row, read by key in the INSERT.
    pub(super) fn put_node(&self, tl: u64, row: &NodeRow) -> Result<()> {
        NodeWriter::new().put(self, tl, row, None)
    }

    /// The rows of a node's derived columns a child's path columns need (`jumps::PathRow`).
    pub(super) fn path_row(&self, tl: u64, n: u64) -> Result<Option<crate::store::jumps::PathRow>> {
        self.conn
            .prepare_cached(
                "SELECT depth, jump, path_min_tokens FROM nodes WHERE timeline = ?1 AND id = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n)], |r| {
                    Ok((unsql(r.get(0)?), unsql(r.get(1)?), unsql(r.get(2)?)))
                })
                .optional()
            })
            .map_err(|e| self.fail(e))
    }
}

/// The columns of a node row, `?1`..`?24`, in the order of `NodeWriter::put`'s parameters.
const INSERT_NODE: &str = "INSERT INTO nodes (timeline, id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, request_digest, cold, pinned, prefix_tokens, depth, cover_count, stale, superseded_by, created_at, provenance, jump, path_min_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ";

/// The statements that write node rows, each prepared once for a whole batch of rows (the cache's
/// lookup hashes and compares each statement's text on every use) and only when first used: a
/// `tl append` process, whose cache starts empty, would otherwise spend a sixth of its instructions
/// preparing the batch's INSERT it never runs.
pub(super) struct NodeWriter<'c> {
    /// The path columns from the parent's row (src/store/jumps.rs), read by key.
    derived: Option<rusqlite::CachedStatement<'c>>,
    /// The path columns given (`?25`, `?26`).
    given: Option<rusqlite::CachedStatement<'c>>,
    doc: Option<rusqlite::CachedStatement<'c>>,
    terms: Option<rusqlite::CachedStatement<'c>>,
    /// Whether the nodes wait for the search index (`pending`) instead of going in directly.
    defer: bool,
}

/// The statement in `slot`, prepared (or taken from the connection's cache) on first use.
fn prepared<'s, 'c>(
    slot: &'s mut Option<rusqlite::CachedStatement<'c>>,
    t: &SqlTx<'c>,
    text: impl FnOnce() -> String,
) -> Result<&'s mut rusqlite::CachedStatement<'c>> {
    if slot.is_none() {
        *slot = Some(t.conn.prepare_cached(&text()).map_err(|e| t.fail(e))?);
    }
    Ok(slot.as_mut().expect("prepared above"))
}

impl<'c> NodeWriter<'c> {
    pub(super) fn new() -> NodeWriter<'c> {
        NodeWriter {
            derived: None,
            given: None,
            doc: None,
            terms: None,
            defer: false,
        }
    }

    /// A writer of one node, which waits for the search index (src/store/sqlite/pending.rs).
    pub(super) fn deferring() -> NodeWriter<'c> {
        NodeWriter {
            defer: true,
            ..NodeWriter::new()
        }
    }

    /// The INSERT that computes the path columns from the parent's row.
    fn derived_text() -> String {
        format!(
            "{INSERT_NODE}\
                 coalesce((SELECT CASE WHEN p.depth - jp.depth = jp.depth - jjp.depth THEN jp.jump ELSE p.id END \
                   FROM nodes p JOIN nodes jp ON jp.timeline = ?1 AND jp.id = p.jump \
                   JOIN nodes jjp ON jjp.timeline = ?1 AND jjp.id = jp.jump \
                   WHERE p.timeline = ?1 AND p.id = ?3 AND ?2 <> 0), 0), \
                 coalesce((SELECT CASE WHEN p.id = 0 THEN ?6 ELSE min(p.path_min_tokens, ?6) END \
                   FROM nodes p WHERE p.timeline = ?1 AND p.id = ?3 AND ?2 <> 0), 0))"
        )
    }

    /// Insert one node row as it is, with its summary sources and search terms; `path` gives its
    /// path columns (jump, path_min_tokens), else the INSERT computes them from the parent's row.
    pub(super) fn put(
        &mut self,
        t: &SqlTx<'c>,
        tl: u64,
        row: &NodeRow,
        path: Option<(u64, u64)>,
    ) -> Result<()> {
        let node = &row.node;
        let summary = node.summary.as_ref();
        let derived_from = node.derived_from_json();
        let digest = node.request_digest().map(|d| d.to_vec());
        let columns = params![
            sql(tl),
            sql(row.id),
            sql(node.parent),
            node.role.as_str(),
            node.text,
            sql(node.tokens),
            node.intent.as_ref().map(|i| i.tag.as_str()),
            node.intent.as_ref().and_then(|i| i.note.as_deref()),
            summary.map(|s| s.kind.as_str()),
            summary.map(|s| sql(s.from)),
            summary.map(|s| sql(s.to)),
            derived_from,
            summary.and_then(|s| s.supersedes).map(sql),
            summary.map(|s| sql(s.version)),
            digest,
            node.cold,
            row.pinned,
            sql(row.prefix_tokens),
            sql(row.depth),
            // (`cover_count` is no longer kept: coverage comes from the ranges, src/store/cover.rs.)
            0,
            row.stale,
            row.superseded_by.map(sql),
            node.created_at.map(sql),
            node.provenance,
        ];
        let done = match path {
            None => prepared(&mut self.derived, t, Self::derived_text)?.execute(columns),
            Some((jump, min)) => {
                let mut all: Vec<&dyn rusqlite::ToSql> = columns.to_vec();
                let (jump, min) = (sql(jump), sql(min));
                all.extend([&jump as &dyn rusqlite::ToSql, &min]);
                prepared(&mut self.given, t, || format!("{INSERT_NODE}?25, ?26)"))?.execute(&*all)
            }
        };
        done.map_err(|e| t.fail(e))?;
        if let Some(s) = summary {
            for &source in &s.derived_from {
                t.exec(
                    "INSERT OR IGNORE INTO summary_sources (timeline, summary, source) VALUES (?1, ?2, ?3)",
                    params![sql(tl), sql(row.id), sql(source)],
                )?;
            }
        }
        self.index(t, tl, row)
    }

    /// Add a searchable node to the search index (same transaction as the node itself), or note it
    /// for the index when this writer defers.
    fn index(&mut self, t: &SqlTx<'c>, tl: u64, row: &NodeRow) -> Result<()> {
        if !crate::store::searchable(row.id, &row.node) {
            return Ok(());
        }
        if self.defer {
            return t.defer_index(tl, row.id);
        }
        self.index_text(t, tl, row.id, row.node.created_at, &row.node.text)
    }

    /// Index the text of node `node` of timeline `tl` (nothing when it has no terms).
    pub(super) fn index_text(
        &mut self,
        t: &SqlTx<'c>,
        tl: u64,
        node: u64,
        created_at: Option<u64>,
        text: &str,
    ) -> Result<()> {
        let terms = crate::search::indexed_text(text);
        if terms.is_empty() {
            return Ok(());
        }
        prepared(&mut self.doc, t, || {
            "INSERT INTO search_docs (timeline, node, created_at) VALUES (?1, ?2, ?3)".into()
        })?
        .execute(params![sql(tl), sql(node), created_at.map(sql)])
        .map_err(|e| t.fail(e))?;
        let doc = t.conn.last_insert_rowid();
        prepared(&mut self.terms, t, || {
            "INSERT INTO search_index (rowid, terms) VALUES (?1, ?2)".into()
        })?
        .execute(params![doc, terms])
        .map_err(|e| t.fail(e))?;
        Ok(())
    }
}

/// Add the record of an archived branch after every other (`seq` orders the archivals).
pub(super) fn insert_archived(t: &SqlTx, tl: u64, archived: &ArchivedBranch) -> Result<()> {
    let nodes =
        serde_json::to_string(&archived.nodes).map_err(|e| Error::database(e.to_string()))?;
    t.exec(
        "INSERT INTO archived_branches (timeline, name, head, watermark, position, nodes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            sql(tl),
            archived.name,
            sql(archived.head),
            sql(archived.watermark),
            sql(archived.position),
            nodes
        ],
    )?;
    Ok(())
}

pub(super) const TIMELINE_COLUMNS: &str =
    "id, next_node, current_branch, title, created_at, updated_at";

pub(super) fn read_timeline(r: &rusqlite::Row) -> rusqlite::Result<TimelineRow> {
    Ok(TimelineRow {
        id: unsql(r.get(0)?),
        next_node: unsql(r.get(1)?),
        current_branch: r.get(2)?,
        title: r.get(3)?,
        created_at: r.get::<_, Option<i64>>(4)?.map(unsql),
        updated_at: r.get::<_, Option<i64>>(5)?.map(unsql),
    })
}

pub(super) const NODE_COLUMNS: &str = "id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, cold, pinned, prefix_tokens, depth, stale, superseded_by, created_at, provenance";

pub(super) fn read_node(r: &rusqlite::Row) -> rusqlite::Result<NodeRow> {
    let bad = |what: String| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::<dyn std::error::Error + Send + Sync>::from(what),
        )
    };
    let role: String = r.get(2)?;
    let role = Role::parse(&role)
        .or((role == "root").then_some(Role::Root))
        .ok_or_else(|| bad(format!("invalid role {role:?}")))?;
    let intent = r
        .get::<_, Option<String>>(5)?
        .map(|tag| Intent { tag, note: None });
    let intent = match (intent, r.get::<_, Option<String>>(6)?) {
        (Some(i), note) => Some(Intent { note, ..i }),
        (None, _) => None,
    };
    let summary = match r.get::<_, Option<String>>(7)? {
        None => None,
        Some(kind) => {
            let kind = match kind.as_str() {
                "real" => SummaryKind::Real,
                "placeholder" => SummaryKind::Placeholder,
                other => return Err(bad(format!("invalid summary kind {other:?}"))),
            };
            let derived_from: Vec<u64> = match r.get::<_, Option<String>>(10)? {
                None => Vec::new(),
                Some(json) => serde_json::from_str(&json)
                    .map_err(|e| bad(format!("invalid derived_from ({e})")))?,
            };
            Some(Summary {
                kind,
                from: unsql(r.get(8)?),
                to: unsql(r.get(9)?),
                derived_from,
                supersedes: r.get::<_, Option<i64>>(11)?.map(unsql),
                version: unsql(r.get(12)?),
            })
        }
    };
    Ok(NodeRow {
        id: unsql(r.get(0)?),
        node: Node {
            parent: unsql(r.get(1)?),
            role,
            text: r.get(3)?,
            tokens: unsql(r.get(4)?),
            created_at: r.get::<_, Option<i64>>(19)?.map(unsql),
            intent,
            provenance: r.get(20)?,
            summary,
            cold: r.get(13)?,
        },
        pinned: r.get(14)?,
        prefix_tokens: unsql(r.get(15)?),
        depth: unsql(r.get(16)?),
        stale: r.get(17)?,
        superseded_by: r.get::<_, Option<i64>>(18)?.map(unsql),
    })
}
