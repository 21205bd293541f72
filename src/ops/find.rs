//! Reading history at scale: ranked search, the paged log of a branch, and the diff of two branches.
//! Each costs what it touches: search the messages that match (from the SQLite engine's full-text
//! index), log one page of a path, diff the two paths below their common ancestor.

use super::results::{self, Diff, DiffSide, Entry, EntrySummary, LogPage, SearchPage};
use super::{
    DiffArgs, LogArgs, SearchArgs, branch_named, existing, message, output_cap, timeline_of,
};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::model::{ROOT, Role, node_id, parse_node_id, timeline_id};
use crate::search::{Query, QueryError, rounded, snippet};
use crate::store::{NodeRow, SearchHit, SearchScope, TimelineRow, Tx};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// Hits per page when `limit` is not given.
const SEARCH_PAGE: u64 = 20;
/// Log messages per page when `limit` is not given.
const LOG_PAGE: u64 = 50;

pub fn search(tx: &mut dyn Tx, args: &SearchArgs) -> Result<SearchPage> {
    let query = Query::parse(&args.query).map_err(|e| match e {
        QueryError::NoWords => Error::invalid(
            Message::from("invalid argument ")
                .arg("query")
                .text(": it has no word to search for (only spaces, punctuation or *); give at least one word"),
        ),
        QueryError::TooManyTerms(n) => Error::invalid(
            Message::from("invalid argument ")
                .arg("query")
                .text(format!(
                    ": {n} search terms, more than the {} one query may hold: a word counts 1, a \"phrase\" 1 for each of its words (a Chinese, Japanese or Korean word 1 for each pair of characters), and a prefix* 1 more; drop the least telling words",
                    crate::search::MAX_QUERY_TERMS
                )),
        ),
    })?;
    let role = args.role.as_deref().and_then(Role::parse);
    let cold = match args.zone.as_deref() {
        Some("hot") => Some(false),
        Some("cold") => Some(true),
        _ => None,
    };
    let since = time_arg(args.since.as_deref(), "since")?;
    let until = time_arg(args.until.as_deref(), "until")?;
    let after = args
        .cursor
        .as_deref()
        .map(|c| SearchKey::decode(c).ok_or_else(|| bad_cursor("search")))
        .transpose()?;
    // A branch or subtree belongs to one timeline: the named one, else the default one (G5).
    let timeline = if args.timeline_id.is_some() || args.branch.is_some() || args.under.is_some() {
        Some(timeline_of(tx, args.timeline_id)?)
    } else {
        None
    };
    let on_branch: Option<HashSet<u64>> = match (&args.branch, &timeline) {
        (Some(name), Some(t)) => {
            let head = branch_named(tx, t, name)?.head;
            Some(super::walk::path(tx, t.id, head)?.into_iter().collect())
        }
        _ => None,
    };
    let mut under = match (args.under, &timeline) {
        (Some(n), Some(t)) => Some(Subtree::new(tx, t, n)?),
        _ => None,
    };
    let limit = usize::try_from(args.limit.unwrap_or(SEARCH_PAGE)).unwrap_or(usize::MAX);
    let mut hits = tx.search(
        &query,
        &SearchScope {
            timeline: timeline.as_ref().map(|t| t.id),
            role,
            cold,
        },
    )?;
    for hit in &mut hits {
        hit.score = rounded(hit.score);
    }
    // The next page starts after the previous page's last hit where it ranks now: scores drift as
    // messages are added (BM25 counts the whole database), and the hit itself never goes away.
    // Should it not be found (other filters), its ranking when the page was made is used.
    if let Some(key) = &after {
        let last = hits
            .iter()
            .find(|h| (h.timeline, h.node) == (key.timeline, key.node))
            .copied()
            .unwrap_or_else(|| key.hit());
        hits.retain(|h| rank(h, &last) == Ordering::Greater);
    }
    let (page, more) = best_first(&mut hits, limit, |hit| {
        let in_time = |bound: Option<u64>, ok: fn(u64, u64) -> bool| match bound {
            None => true,
            Some(bound) => hit.created_at.is_some_and(|t| ok(t, bound)),
        };
        if !in_time(since, |t, b| t >= b) || !in_time(until, |t, b| t <= b) {
            return Ok(false);
        }
        if on_branch
            .as_ref()
            .is_some_and(|set| !set.contains(&hit.node))
        {
            return Ok(false);
        }
        match &mut under {
            Some(subtree) => subtree.contains(tx, hit.node),
            None => Ok(true),
        }
    })?;
    let next_cursor = match (more, page.last()) {
        (true, Some(last)) => Some(SearchKey::of(last).encode()),
        _ => None,
    };
    let mut out = Vec::with_capacity(page.len());
    for hit in &page {
        let row = existing(tx, hit.timeline, hit.node)?;
        out.push(results::SearchHit {
            timeline_id: timeline_id(hit.timeline),
            node: node_id(hit.node),
            role: row.node.role.as_str().to_string(),
            created_at: hit.created_at,
            zone: zone(&row).to_string(),
            snippet: snippet(&row.node.text, &query),
            score: hit.score,
        });
    }
    Ok(SearchPage {
        hits: out,
        next_cursor,
    })
}

/// The first `limit` hits that `keep` keeps, in `rank` order, and whether another one follows.
///
/// Only the hits a page shows are put in order: the best `batch` are chosen (in time linear in the
/// hits) and sorted, then the next batch, twice as large, while `keep` leaves the page short. A
/// word in every message matches them all, and sorting 100k hits to show 20 took as long as
/// finding them.
fn best_first(
    hits: &mut [SearchHit],
    limit: usize,
    mut keep: impl FnMut(&SearchHit) -> Result<bool>,
) -> Result<(Vec<SearchHit>, bool)> {
    let mut page = Vec::new();
    let (mut done, mut batch) = (0, limit.saturating_add(1).max(16));
    while done < hits.len() {
        let end = done.saturating_add(batch).min(hits.len());
        if end < hits.len() {
            hits[done..].select_nth_unstable_by(end - done - 1, rank);
        }
        hits[done..end].sort_unstable_by(rank);
        for hit in &hits[done..end] {
            if !keep(hit)? {
                continue;
            }
            if page.len() == limit {
                return Ok((page, true));
            }
            page.push(*hit);
        }
        done = end;
        batch = batch.saturating_mul(2);
    }
    Ok((page, false))
}

/// The order of hits: higher score first, then newer (a known creation time before none), then the
/// later timeline and node.
fn rank(a: &SearchHit, b: &SearchHit) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| match (a.created_at, b.created_at) {
            (Some(x), Some(y)) => y.cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        })
        .then_with(|| b.timeline.cmp(&a.timeline))
        .then_with(|| b.node.cmp(&a.node))
}

/// Where the previous search page ended: its last hit's place in the order.
struct SearchKey {
    score: f64,
    created_at: Option<u64>,
    timeline: u64,
    node: u64,
}

impl SearchKey {
    fn of(hit: &SearchHit) -> SearchKey {
        SearchKey {
            score: hit.score,
            created_at: hit.created_at,
            timeline: hit.timeline,
            node: hit.node,
        }
    }

    fn hit(&self) -> SearchHit {
        SearchHit {
            timeline: self.timeline,
            node: self.node,
            score: self.score,
            created_at: self.created_at,
        }
    }

    fn encode(&self) -> String {
        let created = self.created_at.map_or("-".to_string(), |t| t.to_string());
        opaque(&format!(
            "s1:{:016x}:{created}:{}:{}",
            self.score.to_bits(),
            self.timeline,
            self.node
        ))
    }

    fn decode(cursor: &str) -> Option<SearchKey> {
        let text = unopaque(cursor)?;
        let mut parts = text.strip_prefix("s1:")?.split(':');
        let score = f64::from_bits(u64::from_str_radix(parts.next()?, 16).ok()?);
        let created_at = match parts.next()? {
            "-" => None,
            t => Some(t.parse().ok()?),
        };
        let key = SearchKey {
            score,
            created_at,
            timeline: parts.next()?.parse().ok()?,
            node: parts.next()?.parse().ok()?,
        };
        (parts.next().is_none() && score.is_finite()).then_some(key)
    }
}

/// A cursor as callers see it: the position written in hexadecimal, so nobody builds one by hand.
fn opaque(text: &str) -> String {
    super::hex(text.as_bytes())
}

fn unopaque(cursor: &str) -> Option<String> {
    if !cursor.len().is_multiple_of(2) {
        return None;
    }
    let bytes = (0..cursor.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(cursor.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

fn bad_cursor(op: &str) -> Error {
    Error::invalid(
        Message::from("invalid argument ")
            .arg("cursor")
            .text(format!(
                ": not a cursor of {op}; pass the next_cursor of the previous page unchanged, or leave it out for the first page"
            )),
    )
}

fn time_arg(value: Option<&str>, name: &str) -> Result<Option<u64>> {
    value
        .map(|text| {
            crate::time::parse(text).ok_or_else(|| {
                Error::invalid(Message::from("invalid argument ").arg(name).text(format!(
                    ": {:?} is not a time; give Unix seconds (1767225600) or RFC 3339 (2026-01-01T00:00:00Z or 2026-01-01)",
                    crate::spec::validate::shorten(text)
                )))
            })
        })
        .transpose()
}

/// Membership in the subtree of one node, remembering what each walk up the tree found.
struct Subtree {
    tl: u64,
    top: u64,
    top_depth: u64,
    known: HashMap<u64, bool>,
}

impl Subtree {
    fn new(tx: &mut dyn Tx, timeline: &TimelineRow, n: u64) -> Result<Subtree> {
        let top = message(tx, timeline, n)?;
        Ok(Subtree {
            tl: timeline.id,
            top: n,
            top_depth: top.depth,
            known: HashMap::from([(n, true)]),
        })
    }

    /// Whether `n` is the top node or one of its descendants: a walk up from `n` that stops at the
    /// top's depth or at a node already decided.
    fn contains(&mut self, tx: &mut dyn Tx, n: u64) -> Result<bool> {
        let mut seen = Vec::new();
        let mut at = n;
        let inside = loop {
            if let Some(&known) = self.known.get(&at) {
                break known;
            }
            let row = existing(tx, self.tl, at)?;
            seen.push(at);
            if row.depth <= self.top_depth || at == ROOT {
                break at == self.top;
            }
            at = row.node.parent;
        };
        for node in seen {
            self.known.insert(node, inside);
        }
        Ok(inside)
    }
}

fn zone(row: &NodeRow) -> &'static str {
    if row.node.cold { "cold" } else { "hot" }
}

/// The branches whose head each node is, in branch order.
fn heads_of(tx: &mut dyn Tx, tl: u64) -> Result<HashMap<u64, Vec<String>>> {
    let mut heads: HashMap<u64, Vec<String>> = HashMap::new();
    for branch in tx.branches(tl)? {
        heads.entry(branch.head).or_default().push(branch.name);
    }
    Ok(heads)
}

/// A message as `log` and `diff` show it.
fn entry(
    tx: &mut dyn Tx,
    tl: u64,
    row: &NodeRow,
    heads: &HashMap<u64, Vec<String>>,
) -> Result<Entry> {
    let node = &row.node;
    Ok(Entry {
        node: node_id(row.id),
        role: node.role.as_str().to_string(),
        text: node.text.clone(),
        tokens: node.tokens,
        intent_tag: node.intent.as_ref().map(|i| i.tag.clone()),
        created_at: tx.created_at(tl, row.id)?,
        zone: zone(row).to_string(),
        pinned: row.pinned,
        summary: node.summary.as_ref().map(|s| EntrySummary {
            kind: s.kind.as_str().to_string(),
            from: node_id(s.from),
            to: node_id(s.to),
            version: s.version,
        }),
        heads: heads.get(&row.id).cloned().unwrap_or_default(),
    })
}

pub fn log(tx: &mut dyn Tx, args: &LogArgs) -> Result<LogPage> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    if args.branch.is_some() && args.node.is_some() {
        return Err(Error::invalid(
            Message::from("invalid arguments ")
                .arg("branch")
                .text(" and ")
                .arg("node")
                .text(": give one of them (a branch's path, or the path up to a node), not both"),
        ));
    }
    let start = if let Some(cursor) = &args.cursor {
        let (cursor_tl, n) = decode_log_cursor(cursor).ok_or_else(|| bad_cursor("log"))?;
        if cursor_tl != tl {
            return Err(Error::invalid(
                Message::from("invalid argument ")
                    .arg("cursor")
                    .text(format!(
                        ": it continues a log of {}, not of {}",
                        timeline_id(cursor_tl),
                        timeline_id(tl)
                    )),
            ));
        }
        match tx.node(tl, n)? {
            Some(row) if n != ROOT => row.node.parent,
            _ => return Err(bad_cursor("log")),
        }
    } else if let Some(n) = args.node {
        message(tx, &timeline, n)?.id
    } else {
        let name = args
            .branch
            .clone()
            .unwrap_or_else(|| timeline.current_branch.clone());
        branch_named(tx, &timeline, &name)?.head
    };
    let limit = usize::try_from(args.limit.unwrap_or(LOG_PAGE)).unwrap_or(usize::MAX);
    let heads = heads_of(tx, tl)?;
    let mut messages = Vec::new();
    let mut at = start;
    let mut last = None;
    while at != ROOT && messages.len() < limit {
        let row = existing(tx, tl, at)?;
        messages.push(entry(tx, tl, &row, &heads)?);
        last = Some(row.id);
        at = row.node.parent;
    }
    let next_cursor = match last {
        Some(n) if at != ROOT => Some(opaque(&format!("l1:{tl}:{n}"))),
        _ => None,
    };
    Ok(LogPage {
        messages,
        next_cursor,
    })
}

fn decode_log_cursor(cursor: &str) -> Option<(u64, u64)> {
    let text = unopaque(cursor)?;
    let (tl, n) = text.strip_prefix("l1:")?.split_once(':')?;
    Some((tl.parse().ok()?, n.parse().ok()?))
}

pub fn diff(tx: &mut dyn Tx, args: &DiffArgs) -> Result<Diff> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let (left_name, left) = side(tx, &timeline, &args.left, "left")?;
    let (right_name, right) = side(tx, &timeline, &args.right, "right")?;
    let cap = crate::spec::spec().constants.max_output_messages;
    let mut a = existing(tx, tl, left)?;
    let mut b = existing(tx, tl, right)?;
    let mut left_rows = Vec::new();
    let mut right_rows = Vec::new();
    while a.id != b.id {
        if left_rows.len() + right_rows.len() > cap {
            output_cap(left_rows.len() + right_rows.len())?;
        }
        if a.depth >= b.depth {
            let parent = a.node.parent;
            left_rows.push(a);
            a = existing(tx, tl, parent)?;
        } else {
            let parent = b.node.parent;
            right_rows.push(b);
            b = existing(tx, tl, parent)?;
        }
    }
    output_cap(left_rows.len() + right_rows.len())?;
    let heads = heads_of(tx, tl)?;
    let mut sides = Vec::new();
    for (name, head, mut rows) in [
        (left_name, left, left_rows),
        (right_name, right, right_rows),
    ] {
        rows.reverse();
        let mut messages = Vec::with_capacity(rows.len());
        for row in &rows {
            messages.push(entry(tx, tl, row, &heads)?);
        }
        sides.push(DiffSide {
            name,
            head: node_id(head),
            messages,
        });
    }
    let (Some(right), Some(left)) = (sides.pop(), sides.pop()) else {
        return Err(Error::internal("internal error: a diff without two sides"));
    };
    Ok(Diff {
        timeline_id: timeline_id(tl),
        ancestor: node_id(a.id),
        left,
        right,
    })
}

/// A side of a diff: the branch of that name (its name and head), else the node of that ID.
fn side(
    tx: &mut dyn Tx,
    timeline: &TimelineRow,
    text: &str,
    which: &str,
) -> Result<(Option<String>, u64)> {
    if let Some(branch) = tx.branch(timeline.id, text)? {
        return Ok((Some(branch.name), branch.head));
    }
    if let Some(n) = parse_node_id(text)
        && tx.node(timeline.id, n)?.is_some()
    {
        return Ok((None, n));
    }
    let tl = timeline_id(timeline.id);
    let names: Vec<String> = tx
        .branches(timeline.id)?
        .into_iter()
        .map(|b| b.name)
        .collect();
    let what = if parse_node_id(text).is_some() {
        format!(
            "no branch is named {text:?} and no such node exists in timeline {tl} (it has n0..n{})",
            timeline.next_node.saturating_sub(1)
        )
    } else {
        format!("no branch is named {text:?} in timeline {tl}")
    };
    Err(Error::new(
        ErrorKind::NotFound,
        Message::from("not found: ")
            .arg(which)
            .text(format!(
                ": {what} (branches: {}); list them with ",
                names.join(", ")
            ))
            .step(Step::new("branches").timeline(&tl)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `best_first` gives what ordering every hit and filtering gives, over batches (pages beyond
    /// the first batch, filters that drop most hits) and with scores and times that tie.
    #[test]
    fn best_first_is_the_full_sort_filtered() {
        let hit = (0u64..4, 0u64..500, 0u8..6, proptest::option::of(0u64..5)).prop_map(
            |(timeline, node, score, created_at)| SearchHit {
                timeline,
                node,
                score: f64::from(score) / 4.0,
                created_at,
            },
        );
        let hits = proptest::collection::vec(hit, 0..400).prop_map(|mut hits| {
            // (timeline, node) names one message.
            hits.sort_by_key(|h| (h.timeline, h.node));
            hits.dedup_by_key(|h| (h.timeline, h.node));
            hits
        });
        proptest!(|(mut hits in hits, limit in 1usize..60, modulus in 1u64..9)| {
            let keep = |h: &SearchHit| (h.node * 7 + h.timeline).is_multiple_of(modulus);
            let mut sorted = hits.clone();
            sorted.sort_by(rank);
            let kept: Vec<SearchHit> = sorted.into_iter().filter(|h| keep(h)).collect();
            let (page, more) = best_first(&mut hits, limit, |h| Ok(keep(h))).unwrap();
            prop_assert_eq!(&page[..], &kept[..kept.len().min(limit)]);
            prop_assert_eq!(more, kept.len() > limit);
        });
    }
}
