//! Statements and rows: the prepared-statement cache of a connection, Timeline's values to and from
//! the columns of the schema, and the writes several `Tx` methods share (a node with its search
//! terms, an import record, an archived branch).

use super::tx::PgTx;
use crate::error::{Error, Result};
use crate::model::file::ImportRecord;
use crate::model::{ArchivedBranch, Intent, Node, Role, Summary, SummaryKind};
use crate::store::{NodeRow, TimelineRow};
use postgres::Row;
use postgres::types::ToSql;

/// Parameters of one statement.
pub(super) type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// PostgreSQL has signed 64-bit integers; Timeline's counters are unsigned. The bits are kept as they
/// are (as in the SQLite engine), so every u64 survives the round trip.
pub(super) fn sql(v: u64) -> i64 {
    v as i64
}

pub(super) fn unsql(v: i64) -> u64 {
    v as u64
}

/// PostgreSQL's `text` cannot hold U+0000, which the file engines store (a message may contain
/// it). Free text (a message's text, an intent note, a title) is stored with U+0000 written as
/// U+FDD0 '0' and U+FDD0 itself doubled; U+FDD0 is a Unicode noncharacter, reserved for such
/// internal use, so other texts are stored as they are.
pub(super) fn to_pg_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => out.extend([ESCAPE, '0']),
            ESCAPE => out.extend([ESCAPE, ESCAPE]),
            c => out.push(c),
        }
    }
    out.into()
}

/// The text `to_pg_text` stored.
pub(super) fn from_pg_text(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut out = String::with_capacity(stored.len());
    let mut chars = stored.chars();
    while let Some(c) = chars.next() {
        match (c, c == ESCAPE) {
            (_, true) => match chars.next() {
                Some('0') => out.push('\0'),
                // U+FDD0 doubled; a lone one (written by something else) is kept.
                Some(ESCAPE) | None => out.push(ESCAPE),
                Some(other) => out.extend([ESCAPE, other]),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

const ESCAPE: char = '\u{FDD0}';

impl PgTx<'_, '_> {
    /// Every statement of a transaction goes to the server through here: one round trip, counted
    /// (`TIMELINE_COUNT_READS=1`), its error named.
    pub(super) fn round_trip<T>(
        &mut self,
        send: impl FnOnce(&mut postgres::Transaction<'_>) -> std::result::Result<T, postgres::Error>,
    ) -> Result<T> {
        self.sent.one();
        send(self.tx).map_err(|e| self.fail(e))
    }

    /// The statement prepared once per connection (one round trip the first time, none after).
    fn statement(&mut self, text: &str) -> Result<postgres::Statement> {
        if let Some(s) = self.cache.get(text) {
            return Ok(s.clone());
        }
        let s = self.round_trip(|tx| tx.prepare(text))?;
        self.cache.insert(text.to_string(), s.clone());
        Ok(s)
    }

    pub(super) fn query(&mut self, text: &str, params: Params) -> Result<Vec<Row>> {
        let s = self.statement(text)?;
        self.round_trip(|tx| tx.query(&s, params))
    }

    pub(super) fn query_opt(&mut self, text: &str, params: Params) -> Result<Option<Row>> {
        let s = self.statement(text)?;
        self.round_trip(|tx| tx.query_opt(&s, params))
    }

    pub(super) fn exec(&mut self, text: &str, params: Params) -> Result<u64> {
        let s = self.statement(text)?;
        self.round_trip(|tx| tx.execute(&s, params))
    }

    /// The first column of every row, as IDs.
    pub(super) fn ids(&mut self, text: &str, params: Params) -> Result<Vec<u64>> {
        let rows = self.query(text, params)?;
        rows.iter()
            .map(|r| get::<i64>(r, 0).map(unsql))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| self.fail(e))
    }

    /// A value stored as JSON text, or an error that names what is damaged.
    pub(super) fn json<T: serde::de::DeserializeOwned>(&self, what: &str, text: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|e| {
            Error::damaged(format!(
                "the database {} has a damaged {what} ({e})",
                self.name
            ))
        })
    }

    /// Insert one node row as it is, with its summary sources and search terms.
    pub(super) fn put_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        let node = &row.node;
        let summary = node.summary.as_ref();
        let derived_from = node.derived_from_json();
        let digest = node.request_digest().map(|d| d.to_vec());
        // The path columns (src/store/jumps.rs) come from the parent's row, read by key.
        self.exec(
            "INSERT INTO nodes (timeline, id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, request_digest, cold, pinned, prefix_tokens, depth, cover_count, stale, superseded_by, created_at, provenance, jump, path_min_tokens) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, \
               coalesce((SELECT CASE WHEN p.depth - jp.depth = jp.depth - jjp.depth THEN jp.jump ELSE p.id END \
                 FROM nodes p JOIN nodes jp ON jp.timeline = $1 AND jp.id = p.jump \
                 JOIN nodes jjp ON jjp.timeline = $1 AND jjp.id = jp.jump \
                 WHERE p.timeline = $1::bigint AND p.id = $3::bigint AND $2::bigint <> 0), 0), \
               coalesce((SELECT CASE WHEN p.id = 0 THEN $6::bigint ELSE least(p.path_min_tokens, $6::bigint) END \
                 FROM nodes p WHERE p.timeline = $1::bigint AND p.id = $3::bigint AND $2::bigint <> 0), 0))",
            &[
                &sql(tl),
                &sql(row.id),
                &sql(node.parent),
                &node.role.as_str(),
                &to_pg_text(&node.text),
                &sql(node.tokens),
                &node.intent.as_ref().map(|i| i.tag.as_str()),
                &node.intent.as_ref().and_then(|i| i.note.as_deref()).map(to_pg_text),
                &summary.map(|s| s.kind.as_str()),
                &summary.map(|s| sql(s.from)),
                &summary.map(|s| sql(s.to)),
                &derived_from,
                &summary.and_then(|s| s.supersedes).map(sql),
                &summary.map(|s| sql(s.version)),
                &digest,
                &node.cold,
                &row.pinned,
                &sql(row.prefix_tokens),
                &sql(row.depth),
                // (`cover_count` is no longer kept: coverage comes from the ranges, src/store/cover.rs.)
                &0i64,
                &row.stale,
                &row.superseded_by.map(sql),
                &node.created_at.map(sql),
                &node.provenance,
            ],
        )?;
        self.put_sources(tl, row)?;
        self.index_nodes(tl, std::slice::from_ref(row))
    }

    /// Insert a batch of node rows with their summary sources and search terms: one statement for
    /// the nodes and two for the search tables, whatever the batch's length (an import writes up
    /// to `BATCH_ROWS` at once). `paths` gives each row's path columns (jump, path_min_tokens),
    /// computed by `jumps::Batch`, since one INSERT cannot read the parents it inserts itself.
    pub(super) fn put_nodes(
        &mut self,
        tl: u64,
        rows: &[NodeRow],
        paths: &[(u64, u64)],
    ) -> Result<()> {
        debug_assert_eq!(rows.len(), paths.len());
        let mut ids = Vec::with_capacity(rows.len());
        let mut parents = Vec::with_capacity(rows.len());
        let mut roles = Vec::with_capacity(rows.len());
        let mut texts = Vec::with_capacity(rows.len());
        let mut tokens = Vec::with_capacity(rows.len());
        let mut intent_tags = Vec::with_capacity(rows.len());
        let mut intent_notes = Vec::with_capacity(rows.len());
        let mut summary_kinds = Vec::with_capacity(rows.len());
        let mut summary_froms = Vec::with_capacity(rows.len());
        let mut summary_tos = Vec::with_capacity(rows.len());
        let mut derived_froms = Vec::with_capacity(rows.len());
        let mut supersedes = Vec::with_capacity(rows.len());
        let mut versions = Vec::with_capacity(rows.len());
        let mut digests = Vec::with_capacity(rows.len());
        let mut colds = Vec::with_capacity(rows.len());
        let mut pinneds = Vec::with_capacity(rows.len());
        let mut prefix_tokens = Vec::with_capacity(rows.len());
        let mut depths = Vec::with_capacity(rows.len());
        let mut stales = Vec::with_capacity(rows.len());
        let mut superseded_bys = Vec::with_capacity(rows.len());
        let mut created_ats = Vec::with_capacity(rows.len());
        let mut provenances = Vec::with_capacity(rows.len());
        let mut jumps = Vec::with_capacity(rows.len());
        let mut path_mins = Vec::with_capacity(rows.len());
        for (row, &(jump, path_min)) in rows.iter().zip(paths) {
            let node = &row.node;
            let summary = node.summary.as_ref();
            ids.push(sql(row.id));
            parents.push(sql(node.parent));
            roles.push(node.role.as_str());
            texts.push(to_pg_text(&node.text));
            tokens.push(sql(node.tokens));
            intent_tags.push(node.intent.as_ref().map(|i| i.tag.as_str()));
            intent_notes.push(
                node.intent
                    .as_ref()
                    .and_then(|i| i.note.as_deref())
                    .map(to_pg_text),
            );
            summary_kinds.push(summary.map(|s| s.kind.as_str()));
            summary_froms.push(summary.map(|s| sql(s.from)));
            summary_tos.push(summary.map(|s| sql(s.to)));
            derived_froms.push(node.derived_from_json());
            supersedes.push(summary.and_then(|s| s.supersedes).map(sql));
            versions.push(summary.map(|s| sql(s.version)));
            digests.push(node.request_digest().map(|d| d.to_vec()));
            colds.push(node.cold);
            pinneds.push(row.pinned);
            prefix_tokens.push(sql(row.prefix_tokens));
            depths.push(sql(row.depth));
            stales.push(row.stale);
            superseded_bys.push(row.superseded_by.map(sql));
            created_ats.push(node.created_at.map(sql));
            provenances.push(node.provenance.as_deref());
            jumps.push(sql(jump));
            path_mins.push(sql(path_min));
        }
        // (`cover_count` is no longer kept: coverage comes from the ranges, src/store/cover.rs.)
        self.exec(
            "INSERT INTO nodes (timeline, id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, request_digest, cold, pinned, prefix_tokens, depth, cover_count, stale, superseded_by, created_at, provenance, jump, path_min_tokens) \
             SELECT $1, r.id, r.parent, r.role, r.text, r.tokens, r.intent_tag, r.intent_note, r.summary_kind, r.summary_from, r.summary_to, r.derived_from, r.supersedes, r.version, r.request_digest, r.cold, r.pinned, r.prefix_tokens, r.depth, 0, r.stale, r.superseded_by, r.created_at, r.provenance, r.jump, r.path_min_tokens \
             FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], $13::bigint[], $14::bigint[], $15::bytea[], $16::boolean[], $17::boolean[], $18::bigint[], $19::bigint[], $20::boolean[], $21::bigint[], $22::bigint[], $23::text[], $24::bigint[], $25::bigint[]) \
               AS r (id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, request_digest, cold, pinned, prefix_tokens, depth, stale, superseded_by, created_at, provenance, jump, path_min_tokens)",
            &[
                &sql(tl),
                &ids,
                &parents,
                &roles,
                &texts,
                &tokens,
                &intent_tags,
                &intent_notes,
                &summary_kinds,
                &summary_froms,
                &summary_tos,
                &derived_froms,
                &supersedes,
                &versions,
                &digests,
                &colds,
                &pinneds,
                &prefix_tokens,
                &depths,
                &stales,
                &superseded_bys,
                &created_ats,
                &provenances,
                &jumps,
                &path_mins,
            ],
        )?;
        for row in rows {
            self.put_sources(tl, row)?;
        }
        self.index_nodes(tl, rows)
    }

    /// The sources a summary row was derived from, if it has any.
    fn put_sources(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        let Some(s) = row.node.summary.as_ref() else {
            return Ok(());
        };
        if s.derived_from.is_empty() {
            return Ok(());
        }
        let sources: Vec<i64> = s.derived_from.iter().map(|&n| sql(n)).collect();
        self.exec(
            "INSERT INTO summary_sources (timeline, summary, source) SELECT $1, $2, s FROM unnest($3::bigint[]) AS s ON CONFLICT DO NOTHING",
            &[&sql(tl), &sql(row.id), &sources],
        )?;
        Ok(())
    }

    /// The columns of a stored node a child's path columns need (`jumps::PathRow`).
    pub(super) fn path_row(
        &mut self,
        tl: u64,
        n: u64,
    ) -> Result<Option<crate::store::jumps::PathRow>> {
        let row = self.query_opt(
            "SELECT depth, jump, path_min_tokens FROM nodes WHERE timeline = $1 AND id = $2",
            &[&sql(tl), &sql(n)],
        )?;
        row.map(|r| -> std::result::Result<_, postgres::Error> {
            Ok((unsql(get(&r, 0)?), unsql(get(&r, 1)?), unsql(get(&r, 2)?)))
        })
        .transpose()
        .map_err(|e| self.fail(e))
    }

    /// The search terms of searchable nodes: their terms as `crate::search` cuts them, each distinct
    /// term once per node in the postings, and the timeline's share of BM25's statistics. Two
    /// statements whatever the number of nodes and the length of their texts.
    fn index_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()> {
        let (mut doc_nodes, mut doc_terms) = (Vec::new(), Vec::new());
        let (mut posting_terms, mut posting_nodes) = (Vec::new(), Vec::new());
        let mut term_count = 0i64;
        for row in rows {
            if !crate::store::searchable(row.id, &row.node) {
                continue;
            }
            let terms: Vec<String> = crate::search::terms(&row.node.text)
                .into_iter()
                .map(|t| t.text)
                .collect();
            if terms.is_empty() {
                continue;
            }
            term_count += terms.len() as i64;
            doc_nodes.push(sql(row.id));
            doc_terms.push(terms.join(" "));
            let mut distinct = terms;
            distinct.sort_unstable();
            distinct.dedup();
            posting_nodes.extend(std::iter::repeat_n(sql(row.id), distinct.len()));
            posting_terms.extend(distinct);
        }
        if doc_nodes.is_empty() {
            return Ok(());
        }
        self.exec(
            "INSERT INTO search_docs (timeline, node, terms) SELECT $1, d.node, d.terms FROM unnest($2::bigint[], $3::text[]) AS d (node, terms)",
            &[&sql(tl), &doc_nodes, &doc_terms],
        )?;
        self.exec(
            "INSERT INTO search_postings (term, timeline, node) SELECT p.term, $1, p.node FROM unnest($2::text[], $3::bigint[]) AS p (term, node)",
            &[&sql(tl), &posting_terms, &posting_nodes],
        )?;
        let pending = self.pending.entry(tl).or_default();
        pending.search_docs += doc_nodes.len() as i64;
        pending.search_terms += term_count;
        Ok(())
    }

    /// Add a searchable node's terms to the search tables (same transaction as the node itself).
    pub(super) fn index_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        self.index_nodes(tl, std::slice::from_ref(row))
    }

    /// Write the counters gathered in `pending`: one update per timeline. Before commit, and
    /// before a statement that reads them from the rows (counts, lists, search statistics).
    pub(super) fn flush(&mut self) -> Result<()> {
        for (tl, p) in std::mem::take(&mut self.pending) {
            self.exec(
                "UPDATE timelines SET next_node = next_node + $2, cold_nodes = cold_nodes + $3, search_docs = search_docs + $4, search_terms = search_terms + $5 WHERE id = $1",
                &[&sql(tl), &p.nodes, &p.cold, &p.search_docs, &p.search_terms],
            )?;
        }
        Ok(())
    }

    pub(super) fn put_import_row(&mut self, record: &ImportRecord) -> Result<()> {
        let json = serde_json::to_string(record)
            .map_err(|e| Error::internal(e.to_string()).with_source(e))?;
        let timeline = crate::model::parse_timeline_id(&record.timeline).ok_or_else(|| {
            Error::internal(format!(
                "internal error: import record of an invalid timeline {:?}",
                record.timeline
            ))
        })?;
        self.exec(
            "INSERT INTO imports (format, source_key, digest, timeline, ts, title, record) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &record.format,
                &record.source_key,
                &record.digest,
                &sql(timeline),
                &sql(record.ts),
                &record.title.as_deref().map(to_pg_text),
                &json,
            ],
        )?;
        Ok(())
    }

    pub(super) fn import_records(
        &mut self,
        text: &str,
        params: Params,
    ) -> Result<Vec<ImportRecord>> {
        let rows = self.query(text, params)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let json: String = get(r, 0).map_err(|e| self.fail(e))?;
            out.push(self.json("import record", &json)?);
        }
        Ok(out)
    }

    /// Add the record of an archived branch after every other (`seq` orders the archivals).
    pub(super) fn insert_archived(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        let nodes =
            serde_json::to_string(&archived.nodes).map_err(|e| Error::database(e.to_string()))?;
        self.exec(
            "INSERT INTO archived_branches (timeline, name, head, watermark, position, nodes) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &sql(tl),
                &archived.name,
                &sql(archived.head),
                &sql(archived.watermark),
                &sql(archived.position),
                &nodes,
            ],
        )?;
        Ok(())
    }
}

/// One column of a row; a type that does not match is an error, never a panic.
pub(super) fn get<'r, T: postgres::types::FromSql<'r>>(
    row: &'r Row,
    i: usize,
) -> std::result::Result<T, postgres::Error> {
    row.try_get(i)
}

pub(super) const TIMELINE_COLUMNS: &str =
    "id, next_node, current_branch, title, created_at, updated_at";

pub(super) fn read_timeline(r: &Row) -> std::result::Result<TimelineRow, postgres::Error> {
    Ok(TimelineRow {
        id: unsql(get(r, 0)?),
        next_node: unsql(get(r, 1)?),
        current_branch: get(r, 2)?,
        title: get::<Option<String>>(r, 3)?.map(from_pg_text),
        created_at: get::<Option<i64>>(r, 4)?.map(unsql),
        updated_at: get::<Option<i64>>(r, 5)?.map(unsql),
    })
}

pub(super) const NODE_COLUMNS: &str = "nodes.id, nodes.parent, nodes.role, nodes.text, nodes.tokens, nodes.intent_tag, nodes.intent_note, nodes.summary_kind, nodes.summary_from, nodes.summary_to, nodes.derived_from, nodes.supersedes, nodes.version, nodes.cold, nodes.pinned, nodes.prefix_tokens, nodes.depth, nodes.stale, nodes.superseded_by, nodes.created_at, nodes.provenance";

/// A node row, or what is wrong with it.
pub(super) fn read_node(r: &Row) -> std::result::Result<NodeRow, String> {
    let e = |e: postgres::Error| e.to_string();
    let role: String = get(r, 2).map_err(e)?;
    let role = Role::parse(&role)
        .or((role == "root").then_some(Role::Root))
        .ok_or_else(|| format!("invalid role {role:?}"))?;
    let intent = get::<Option<String>>(r, 5)
        .map_err(e)?
        .map(|tag| Intent { tag, note: None });
    let intent = match (intent, get::<Option<String>>(r, 6).map_err(e)?) {
        (Some(i), note) => Some(Intent {
            note: note.map(from_pg_text),
            ..i
        }),
        (None, _) => None,
    };
    let summary = match get::<Option<String>>(r, 7).map_err(e)? {
        None => None,
        Some(kind) => {
            let kind = match kind.as_str() {
                "real" => SummaryKind::Real,
                "placeholder" => SummaryKind::Placeholder,
                other => return Err(format!("invalid summary kind {other:?}")),
            };
            let derived_from: Vec<u64> = match get::<Option<String>>(r, 10).map_err(e)? {
                None => Vec::new(),
                Some(json) => serde_json::from_str(&json)
                    .map_err(|err| format!("invalid derived_from ({err})"))?,
            };
            Some(Summary {
                kind,
                from: unsql(get::<Option<i64>>(r, 8).map_err(e)?.unwrap_or(0)),
                to: unsql(get::<Option<i64>>(r, 9).map_err(e)?.unwrap_or(0)),
                derived_from,
                supersedes: get::<Option<i64>>(r, 11).map_err(e)?.map(unsql),
                version: unsql(get::<Option<i64>>(r, 12).map_err(e)?.unwrap_or(0)),
            })
        }
    };
    Ok(NodeRow {
        id: unsql(get(r, 0).map_err(e)?),
        node: Node {
            parent: unsql(get(r, 1).map_err(e)?),
            role,
            text: from_pg_text(get(r, 3).map_err(e)?),
            tokens: unsql(get(r, 4).map_err(e)?),
            created_at: get::<Option<i64>>(r, 19).map_err(e)?.map(unsql),
            intent,
            provenance: get(r, 20).map_err(e)?,
            summary,
            cold: get(r, 13).map_err(e)?,
        },
        pinned: get(r, 14).map_err(e)?,
        prefix_tokens: unsql(get(r, 15).map_err(e)?),
        depth: unsql(get(r, 16).map_err(e)?),
        stale: get(r, 17).map_err(e)?,
        superseded_by: get::<Option<i64>>(r, 18).map_err(e)?.map(unsql),
    })
}

#[cfg(test)]
mod tests {
    use super::{from_pg_text, to_pg_text};

    #[test]
    fn texts_with_nul_and_the_escape_survive_the_round_trip() {
        for text in [
            "plain",
            "",
            "a\0b",
            "\0",
            "\u{FDD0}",
            "\u{FDD0}0",
            "x\u{FDD0}\0\u{FDD0}\u{FDD0}y",
        ] {
            let stored = to_pg_text(text);
            assert!(!stored.contains('\0'), "{stored:?}");
            assert_eq!(from_pg_text(stored.into_owned()), text);
        }
        assert!(matches!(to_pg_text("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
