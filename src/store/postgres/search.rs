//! Search on PostgreSQL: the messages holding each phrase's first term are read in one statement
//! (a range of the postings for a prefix), then the phrases are matched and BM25 computed here with
//! `crate::search`'s rules, as the JSON engine does, over statistics of the whole database (as
//! FTS5's `bm25()`), so the hits and their order are SQLite's.

use super::rows::{get, unsql};
use super::tx::PgTx;
use crate::error::Result;
use crate::model::Role;
use crate::search::{Query, Scorer};
use crate::store::{SearchHit, SearchScope};

pub(super) fn search(t: &mut PgTx, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
    // The messages holding each phrase's first term (a range of the postings for a prefix),
    // read once; the phrases are matched and BM25 computed here with crate::search's rules, as
    // the JSON engine does, over statistics of the whole database (as FTS5's bm25()).
    let (mut exact, mut low, mut high) = (Vec::new(), Vec::new(), Vec::new());
    for phrase in &query.phrases {
        let first = &phrase.terms[0];
        if phrase.prefix && phrase.terms.len() == 1 {
            low.push(first.clone());
            high.push(prefix_end(first));
        } else {
            exact.push(first.clone());
        }
    }
    t.flush()?;
    let stats = t.query_opt(
        "SELECT coalesce(sum(search_docs), 0)::bigint, coalesce(sum(search_terms), 0)::bigint FROM timelines",
        &[],
    )?;
    let (rows, tokens) = match &stats {
        Some(r) => (
            get::<i64>(r, 0).map_err(|e| t.fail(e))?,
            get::<i64>(r, 1).map_err(|e| t.fail(e))?,
        ),
        None => (0, 0),
    };

    let found = t.query(
        "SELECT d.timeline, d.node, d.terms, n.role, n.cold, n.created_at FROM search_docs d \
         JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node \
         WHERE (d.timeline, d.node) IN ( \
           SELECT p.timeline, p.node FROM unnest($1::text[]) AS e(t) \
             JOIN search_postings p ON p.term = e.t COLLATE \"C\" \
           UNION SELECT p.timeline, p.node FROM unnest($2::text[], $3::text[]) AS r(lo, hi) \
             JOIN search_postings p ON p.term >= r.lo COLLATE \"C\" \
               AND (r.hi = '' OR p.term < r.hi COLLATE \"C\"))",
        &[&exact, &low, &high],
    )?;
    let mut hits = vec![0u64; query.phrases.len()];
    let mut matched = Vec::new();
    for r in &found {
        let read = || -> std::result::Result<_, postgres::Error> {
            Ok((
                unsql(get::<i64>(r, 0)?),
                unsql(get::<i64>(r, 1)?),
                get::<&str>(r, 2)?,
                get::<&str>(r, 3)?,
                get::<bool>(r, 4)?,
                get::<Option<i64>>(r, 5)?.map(unsql),
            ))
        };
        let (timeline, node, terms, role, cold, created_at) = read().map_err(|e| t.fail(e))?;
        let words: Vec<&str> = terms.split(' ').collect();
        let at = query.occurrences(&words);
        for (hit, at) in hits.iter_mut().zip(&at) {
            *hit += u64::from(!at.is_empty());
        }
        if scope.admits(timeline, Role::parse(role), cold) && at.iter().all(|o| !o.is_empty()) {
            let freq: Vec<usize> = at.iter().map(Vec::len).collect();
            matched.push((timeline, node, words.len(), freq, created_at));
        }
    }
    let scorer = Scorer::new(unsql(rows), unsql(tokens), &hits);
    Ok(matched
        .into_iter()
        .map(|(timeline, node, length, freq, created_at)| SearchHit {
            timeline,
            node,
            score: scorer.score(length, &freq),
            created_at,
        })
        .collect())
}

/// The smallest text after every text that starts with `prefix`, in byte order (COLLATE "C"): the
/// prefix with its last character raised by one. Empty (no upper bound) when no character can be.
fn prefix_end(prefix: &str) -> String {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let mut next = last as u32 + 1;
        // Skip the surrogate range, which holds no characters.
        if (0xD800..0xE000).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            chars.push(c);
            return chars.into_iter().collect();
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_prefix_ends_at_its_last_character_raised() {
        assert_eq!(super::prefix_end("ab"), "ac");
        assert_eq!(super::prefix_end("日"), "旦");
        assert_eq!(super::prefix_end("a\u{10FFFF}"), "b");
        assert_eq!(super::prefix_end("\u{D7FF}"), "\u{E000}");
        assert_eq!(super::prefix_end("\u{10FFFF}"), "");
    }
}
