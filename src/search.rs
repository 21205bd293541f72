//! Full-text search, shared by both storage engines: how texts and queries are cut into terms, when a
//! message matches, its BM25 score and the snippet shown for it.
//!
//! Both engines index exactly the terms [`terms`] produces, so they cannot disagree about what
//! matches: the JSON engine scans messages with [`Query::matches`], and the SQLite engine stores the
//! same terms, joined by spaces, in an FTS5 table whose `ascii` tokenizer splits on those spaces
//! only (every term is lower-case ASCII letters and digits or non-ASCII characters, so no other ASCII
//! character can split it). [`Query::fts5_all`] writes the query in FTS5 syntax, and
//! [`Scorer`] computes FTS5's `bm25()` formula on every engine (SQLite's counts come from FTS5 in
//! the same pass), so the scores agree too.
//!
//! Terms:
//! - **Words**: runs of letters and digits, lower-cased, with the accents of Latin letters removed
//!   (`Café` → `cafe`) and full-width ASCII folded (`ＡＢＣ` → `abc`); combining marks, variation
//!   selectors and joiners are dropped without splitting a word. A word is cut after
//!   [`MAX_TERM_CHARS`] characters.
//! - **Chinese, Japanese and Korean** text has no spaces between words, so each run of such
//!   characters is indexed as its overlapping pairs of characters followed by its last character
//!   alone (`今年预算` → `今年 年预 预算 算`). A query word of two or more such characters becomes the
//!   phrase of its pairs (`预算` → `预算`, `年预算` → `年预 预算`), which matches it anywhere inside a
//!   longer run; a single character matches every term that starts with it.
//! - **Emoji** are one term each.
//!
//! Queries: words, all of which must match (each word is a phrase of its terms, so `e-mail` matches
//! `e mail`); `"exact phrases"`; and `word*` or `"a phrase"*` for a prefix of the last term.

use std::sync::OnceLock;

/// Terms are cut after this many characters (in text and queries alike).
pub const MAX_TERM_CHARS: usize = 64;

/// At most this many terms in one query ([`Query::weight`]): a search reads the postings of every
/// term of the query, with their positions, in every message that holds it, and a prefix first
/// merges those of every term it starts. With terms every one of 100k messages holds, 8 words, 4
/// phrases of two words or 4 prefixes each took 70 to 95 ms on SQLite (2 cores), 5 phrases 105 ms.
pub const MAX_QUERY_TERMS: usize = 8;

/// The character that starts a marked match in a snippet, and the one that ends it.
pub const MARK_START: char = '«';
/// The character that ends a marked match in a snippet.
pub const MARK_END: char = '»';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Letters and digits of scripts that separate words.
    Word,
    /// Chinese, Japanese and Korean characters.
    Cjk,
    Emoji,
    /// Combining marks, variation selectors, skin tones and joiners: dropped, never splitting.
    Mark,
    Separator,
}

fn class(c: char) -> Class {
    let u = c as u32;
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Class::Word
        } else {
            Class::Separator
        };
    }
    match u {
        0x0300..=0x036f
        | 0x1ab0..=0x1aff
        | 0x1dc0..=0x1dff
        | 0x20d0..=0x20ff
        | 0xfe20..=0xfe2f
        | 0xfe00..=0xfe0f
        | 0x200c
        | 0x200d
        | 0x1f3fb..=0x1f3ff
        | 0xe0100..=0xe01ef => Class::Mark,
        0x1100..=0x11ff
        | 0x3005
        | 0x3040..=0x30ff
        | 0x3130..=0x318f
        | 0x31f0..=0x31ff
        | 0x3400..=0x4dbf
        | 0x4e00..=0x9fff
        | 0xa960..=0xa97f
        | 0xac00..=0xd7af
        | 0xd7b0..=0xd7ff
        | 0xf900..=0xfaff
        | 0xff66..=0xff9f
        | 0x20000..=0x3134f => Class::Cjk,
        0x2600..=0x27bf | 0x1f000..=0x1faff => Class::Emoji,
        _ if c.is_alphanumeric() => Class::Word,
        // Full-width ASCII letters and digits.
        0xff10..=0xff19 | 0xff21..=0xff3a | 0xff41..=0xff5a => Class::Word,
        _ => Class::Separator,
    }
}

/// Latin letters with diacritics → their base letter, for U+00C0..U+024F and U+1E00..U+1EFF
/// (Unicode canonical decompositions; characters without one map to themselves).
const LATIN_1: &str = "AAAAAAÆCEEEEIIIIÐNOOOOO×ØUUUUYÞßaaaaaaæceeeeiiiiðnooooo÷øuuuuyþyAaAaAaCcCcCcCcDdĐđEeEeEeEeEeGgGgGgGgHhĦħIiIiIiIiIıĲĳJjKkĸLlLlLlĿŀŁłNnNnNnŉŊŋOoOoOoŒœRrRrRrSsSsSsSsTtTtŦŧUuUuUuUuUuUuWwYyYZzZzZzſƀƁƂƃƄƅƆƇƈƉƊƋƌƍƎƏƐƑƒƓƔƕƖƗƘƙƚƛƜƝƞƟOoƢƣƤƥƦƧƨƩƪƫƬƭƮUuƱƲƳƴƵƶƷƸƹƺƻƼƽƾƿǀǁǂǃǄǅǆǇǈǉǊǋǌAaIiOoUuUuUuUuUuǝAaAaǢǣǤǥGgKkOoOoǮǯjǱǲǳGgǶǷNnAaǼǽǾǿAaAaEeEeIiIiOoOoRrRrUuUuSsTtȜȝHhȠȡȢȣȤȥAaEeOoOoOoOoYyȴȵȶȷȸȹȺȻȼȽȾȿɀɁɂɃɄɅɆɇɈɉɊɋɌɍɎɏ";
const LATIN_2: &str = "AaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwyẚẛẜẝẞẟAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYyỺỻỼỽỾỿ";

fn latin_tables() -> &'static (Vec<char>, Vec<char>) {
    static TABLES: OnceLock<(Vec<char>, Vec<char>)> = OnceLock::new();
    TABLES.get_or_init(|| (LATIN_1.chars().collect(), LATIN_2.chars().collect()))
}

/// A word character as it is indexed: lower case, without diacritics, full-width folded.
fn fold(c: char, out: &mut String) {
    let u = c as u32;
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    let c = match u {
        0xff10..=0xff19 | 0xff21..=0xff3a | 0xff41..=0xff5a => {
            char::from_u32(u - 0xfee0).unwrap_or(c)
        }
        0x00c0..=0x024f => latin_tables().0[(u - 0xc0) as usize],
        0x1e00..=0x1eff => latin_tables().1[(u - 0x1e00) as usize],
        _ => c,
    };
    let c = match c {
        'Đ' | 'đ' => 'd',
        'Ø' | 'ø' => 'o',
        'Ł' | 'ł' => 'l',
        'ı' => 'i',
        c => c,
    };
    for lower in c.to_lowercase() {
        // Lower-casing can add a combining mark (İ → i + U+0307): drop it like any other.
        if class(lower) != Class::Mark {
            out.push(lower);
        }
    }
}

/// One term of a text, with the bytes of the original text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The term as indexed (folded for case, accents and width).
    pub text: String,
    /// The byte where it starts in the original text.
    pub start: usize,
    /// The byte just after it in the original text.
    pub end: usize,
}

/// How a run of CJK characters that ends a query word is cut (see the module comment).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Text,
    Query,
}

/// The terms of a message text, in order.
pub fn terms(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    cut(text, Mode::Text, &mut |term, start, end| {
        out.push(Term {
            text: term.to_string(),
            start,
            end,
        })
    });
    out
}

/// Cut `text` into terms, handing each to `emit` (its text, and the bytes of `text` it came from).
/// In `Query` mode a CJK run at the very end keeps only its pairs (a one-character run keeps that
/// character); the result says whether the last term came from such a one-character run, which
/// then matches as a prefix. A sink rather than a list: indexing every imported message joins the
/// terms into one string without a string per term.
fn cut(text: &str, mode: Mode, emit: &mut dyn FnMut(&str, usize, usize)) -> bool {
    let mut word = String::new();
    let mut word_chars = 0;
    let mut word_span: Option<(usize, usize)> = None;
    let mut run: Vec<(usize, usize)> = Vec::new();
    let mut single_at_end = false;
    let flush_word = |emit: &mut dyn FnMut(&str, usize, usize),
                      word: &mut String,
                      word_chars: &mut usize,
                      span: &mut Option<(usize, usize)>| {
        if let Some((start, end)) = span.take()
            && !word.is_empty()
        {
            emit(word, start, end);
        }
        word.clear();
        *word_chars = 0;
    };
    let flush_run =
        |emit: &mut dyn FnMut(&str, usize, usize), run: &mut Vec<(usize, usize)>, last: bool| {
            for pair in run.windows(2) {
                emit(&text[pair[0].0..pair[1].1], pair[0].0, pair[1].1);
            }
            if let Some(&(start, end)) = run.last()
                && (!last || run.len() == 1)
            {
                emit(&text[start..end], start, end);
            }
            run.clear();
        };
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        match class(c) {
            Class::Mark => {
                if let Some(span) = &mut word_span {
                    span.1 = end;
                }
            }
            Class::Word => {
                if !run.is_empty() {
                    flush_run(emit, &mut run, false);
                }
                if word_chars < MAX_TERM_CHARS {
                    let before = word.len();
                    fold(c, &mut word);
                    if word.len() > before {
                        word_chars += 1;
                    }
                }
                match &mut word_span {
                    Some(span) => span.1 = end,
                    None => word_span = Some((at, end)),
                }
            }
            Class::Cjk => {
                flush_word(emit, &mut word, &mut word_chars, &mut word_span);
                run.push((at, end));
            }
            Class::Emoji => {
                flush_word(emit, &mut word, &mut word_chars, &mut word_span);
                if !run.is_empty() {
                    flush_run(emit, &mut run, false);
                }
                emit(&text[at..end], at, end);
            }
            Class::Separator => {
                flush_word(emit, &mut word, &mut word_chars, &mut word_span);
                if !run.is_empty() {
                    // In a query, a run ends the word only if nothing follows it.
                    let last = mode == Mode::Query && !has_term_after(&text[end..]);
                    single_at_end = last && run.len() == 1;
                    flush_run(emit, &mut run, last);
                }
            }
        }
    }
    flush_word(emit, &mut word, &mut word_chars, &mut word_span);
    if !run.is_empty() {
        single_at_end = mode == Mode::Query && run.len() == 1;
        flush_run(emit, &mut run, mode == Mode::Query);
    }
    single_at_end
}

fn has_term_after(rest: &str) -> bool {
    rest.chars()
        .any(|c| !matches!(class(c), Class::Separator | Class::Mark))
}

/// One word or phrase of a query: its terms in order, the last one a prefix when `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    /// Its terms, in order.
    pub terms: Vec<String>,
    /// The last term matches any term it starts (`word*`).
    pub prefix: bool,
}

impl Phrase {
    /// The phrase in FTS5 syntax over the stored terms: quoted (terms never contain a quote), with
    /// `*` after a prefix.
    pub fn fts5(&self) -> String {
        format!(
            "\"{}\"{}",
            self.terms.join(" "),
            if self.prefix { "*" } else { "" }
        )
    }
}

/// A parsed query: every phrase must match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The words and phrases, each of which must match.
    pub phrases: Vec<Phrase>,
}

/// Why a query cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// Only punctuation, spaces or `*`.
    NoWords,
    /// More terms than `MAX_QUERY_TERMS` (the query's weight, given).
    TooManyTerms(usize),
}

impl Query {
    /// Parse a query: whitespace-separated words, `"quoted phrases"` (an unclosed quote runs to the
    /// end), and a `*` right after a word or closing quote for a prefix.
    pub fn parse(query: &str) -> Result<Query, QueryError> {
        let mut phrases = Vec::new();
        let mut rest = query;
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            let (body, after, quoted) = if let Some(inner) = rest.strip_prefix('"') {
                match inner.find('"') {
                    Some(close) => (&inner[..close], &inner[close + 1..], true),
                    None => (inner, "", true),
                }
            } else {
                let end = rest
                    .find(|c: char| c.is_whitespace() || c == '"')
                    .unwrap_or(rest.len());
                (&rest[..end], &rest[end..], false)
            };
            let (body, mut prefix) = match body.strip_suffix('*') {
                Some(stripped) if !quoted => (stripped, true),
                _ => (body, false),
            };
            let after = match after.strip_prefix('*') {
                Some(stripped) if quoted => {
                    prefix = true;
                    stripped
                }
                _ => after,
            };
            let mut terms = Vec::new();
            let single_at_end = cut(body, Mode::Query, &mut |term, _, _| {
                terms.push(term.to_string())
            });
            if !terms.is_empty() {
                phrases.push(Phrase {
                    terms,
                    prefix: prefix || single_at_end,
                });
            }
            rest = after;
        }
        if phrases.is_empty() {
            return Err(QueryError::NoWords);
        }
        let query = Query { phrases };
        match query.weight() {
            weight if weight > MAX_QUERY_TERMS => Err(QueryError::TooManyTerms(weight)),
            _ => Ok(query),
        }
    }

    /// The terms the query counts against [`MAX_QUERY_TERMS`]: each term of each phrase (a word is
    /// one; a phrase, or a word of Chinese, Japanese or Korean characters, one for each term it is
    /// cut into), and one more for a prefix, which reads the postings of every term it starts.
    pub fn weight(&self) -> usize {
        self.phrases
            .iter()
            .map(|p| p.terms.len() + usize::from(p.prefix))
            .sum()
    }

    /// The query in FTS5 syntax over the stored terms, matching every message that holds all of its
    /// phrases (joined by spaces: AND).
    pub fn fts5_all(&self) -> String {
        self.fts5_joined(" ")
    }

    /// The query in FTS5 syntax matching every message that holds any of its phrases (joined by
    /// OR): the SQLite engine counts each phrase's messages and keeps those holding all of them in
    /// one pass.
    pub fn fts5_any(&self) -> String {
        self.fts5_joined(" OR ")
    }

    fn fts5_joined(&self, separator: &str) -> String {
        self.phrases
            .iter()
            .map(Phrase::fts5)
            .collect::<Vec<_>>()
            .join(separator)
    }

    /// Where each phrase occurs in `terms`: for phrase `i`, the index of the first term of every
    /// occurrence (overlapping occurrences count, as in FTS5).
    pub fn occurrences<S: AsRef<str>>(&self, terms: &[S]) -> Vec<Vec<usize>> {
        self.phrases
            .iter()
            .map(|phrase| {
                let k = phrase.terms.len();
                if terms.len() < k {
                    return Vec::new();
                }
                (0..=terms.len() - k)
                    .filter(|&i| {
                        phrase.terms.iter().enumerate().all(|(j, want)| {
                            let have = terms[i + j].as_ref();
                            if phrase.prefix && j == k - 1 {
                                have.starts_with(want.as_str())
                            } else {
                                have == want
                            }
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// Whether every phrase occurs in `terms`.
    pub fn matches<S: AsRef<str>>(&self, terms: &[S]) -> bool {
        self.occurrences(terms).iter().all(|o| !o.is_empty())
    }
}

/// The text of a message's terms as the SQLite engine stores it: terms joined by single spaces.
pub fn indexed_text(text: &str) -> String {
    // Most texts index to about their own length; a long word indexes to 64 characters only.
    let mut out = String::with_capacity(text.len().min(4096));
    if text.is_ascii() {
        // What `cut` gives an ASCII text (its words are the runs of letters and digits, lower-cased
        // and cut at MAX_TERM_CHARS), without its per-character classes: most texts are ASCII.
        for word in text.as_bytes().split(|b| !b.is_ascii_alphanumeric()) {
            if word.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.extend(
                word.iter()
                    .take(MAX_TERM_CHARS)
                    .map(|b| b.to_ascii_lowercase() as char),
            );
        }
        return out;
    }
    cut(text, Mode::Text, &mut |term, _, _| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(term);
    });
    out
}

/// BM25's statistics gathered by a scan of messages, as FTS5 keeps them for its index: how many
/// searchable messages, their terms in all, and how many hold each phrase of the query. The JSON
/// engine scans every message; the SQLite engine scans the messages waiting for its index on top
/// of the index's own statistics.
#[derive(Debug, Clone)]
pub struct Tally {
    pub rows: u64,
    pub tokens: u64,
    pub hits: Vec<u64>,
}

impl Tally {
    /// Count the message of `text` (searchable): its length in terms and each phrase's
    /// occurrences when it holds every phrase of `query` (a match), else `None`. A text without
    /// terms is not counted, as FTS5 indexes nothing for it.
    pub fn add(&mut self, query: &Query, text: &str) -> Option<(usize, Vec<usize>)> {
        let terms = terms(text);
        if terms.is_empty() {
            return None;
        }
        let words: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        self.rows += 1;
        self.tokens += words.len() as u64;
        let found = query.occurrences(&words);
        for (hit, at) in self.hits.iter_mut().zip(&found) {
            *hit += u64::from(!at.is_empty());
        }
        found
            .iter()
            .all(|at| !at.is_empty())
            .then(|| (words.len(), found.iter().map(Vec::len).collect()))
    }
}

/// FTS5's `bm25()` with its constants (k1 = 1.2, b = 0.75), computed the same way: over every indexed
/// message of the database, `rows` of them holding `tokens` terms in all, `hits[i]` containing phrase
/// `i`. Higher is better (FTS5 returns the negative).
#[derive(Debug, Clone)]
pub struct Scorer {
    idf: Vec<f64>,
    avgdl: f64,
}

impl Scorer {
    /// A scorer for `rows` searchable messages holding `tokens` terms in all, where `hits[i]` of
    /// them match phrase `i`.
    pub fn new(rows: u64, tokens: u64, hits: &[u64]) -> Scorer {
        let rows_i = rows as i64;
        let idf = hits
            .iter()
            .map(|&hit| {
                let hit = hit as i64;
                let idf = (((rows_i - hit) as f64 + 0.5) / (hit as f64 + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        Scorer {
            idf,
            avgdl: tokens as f64 / rows as f64,
        }
    }

    /// The score of a message of `length` terms with `freq[i]` occurrences of phrase `i`.
    pub fn score(&self, length: usize, freq: &[usize]) -> f64 {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let d = length as f64;
        let mut score = 0.0;
        for (idf, &f) in self.idf.iter().zip(freq) {
            let f = f as f64;
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / self.avgdl)));
        }
        score
    }
}

/// A score as results show it and as hits are ordered: rounded to 6 decimal places, so that the last
/// bits of floating-point arithmetic (which may differ between SQLite's C and Rust on some
/// processors) never change an order or a result.
pub fn rounded(score: f64) -> f64 {
    (score * 1e6).round() / 1e6
}

/// How many characters of context a snippet shows before the first match, and in all.
const SNIPPET_BEFORE: usize = 40;
const SNIPPET_CHARS: usize = 160;

/// A short extract of `text` around the first match of `query`, with every match inside it between
/// [`MARK_START`] and [`MARK_END`], line breaks and runs of white space shown as one space, and `…`
/// where the text was cut.
pub fn snippet(text: &str, query: &Query) -> String {
    let terms = terms(text);
    let words: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (phrase, starts) in query.phrases.iter().zip(query.occurrences(&words)) {
        for i in starts {
            let last = i + phrase.terms.len() - 1;
            spans.push((terms[i].start, terms[last].end));
        }
    }
    spans.sort_unstable();
    // Overlapping or touching matches are marked as one.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let first = merged.first().map_or(0, |s| s.0);
    // Start up to SNIPPET_BEFORE characters before the first match, at the start of a term.
    let mut start = text[..first]
        .char_indices()
        .rev()
        .nth(SNIPPET_BEFORE - 1)
        .map_or(0, |(i, _)| i);
    if start > 0
        && let Some(t) = terms.iter().find(|t| t.start >= start && t.start <= first)
    {
        start = t.start;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut shown = 0;
    let mut space = false;
    let mut open: Option<usize> = None;
    let mut next_span = merged.iter().peekable();
    for (at, c) in text[start..].char_indices() {
        let at = at + start;
        if open.is_none_or(|end| at >= end) {
            if open.is_some() {
                out.push(MARK_END);
                open = None;
            }
            while next_span.peek().is_some_and(|s| s.1 <= at) {
                next_span.next();
            }
            if shown >= SNIPPET_CHARS {
                if !text[at..].trim().is_empty() {
                    out.push('…');
                }
                return out;
            }
            if let Some(&&(s, e)) = next_span.peek()
                && s == at
            {
                if space {
                    out.push(' ');
                    space = false;
                }
                out.push(MARK_START);
                open = Some(e);
                next_span.next();
            }
        }
        if c.is_whitespace() {
            space = !out.is_empty() && !out.ends_with('…') && !out.ends_with(MARK_START);
            continue;
        }
        if space {
            out.push(' ');
            shown += 1;
            space = false;
        }
        out.push(c);
        shown += 1;
    }
    if open.is_some() {
        out.push(MARK_END);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        terms(text).into_iter().map(|t| t.text).collect()
    }

    fn q(text: &str) -> Query {
        Query::parse(text).unwrap()
    }

    /// The ASCII path of `indexed_text` gives what the terms of the text joined give.
    #[test]
    fn indexed_ascii_text_is_its_terms_joined() {
        let long = "x".repeat(70);
        let texts = [
            String::new(),
            " ".into(),
            "Message 12: timeline branch, CONTEXT-budget!".into(),
            "  a_b  c\td\n\re.f/g  ".into(),
            format!("{long} Y{long}"),
            "(--)  ,,".into(),
            "tab\tend 9".into(),
        ];
        for text in texts {
            assert_eq!(indexed_text(&text), words(&text).join(" "), "{text:?}");
        }
    }

    #[test]
    fn words_fold_case_accents_and_width() {
        assert_eq!(
            words("Café CRÈME brûlée, naïve—Ｆｕｌｌ ２０２４"),
            ["cafe", "creme", "brulee", "naive", "full", "2024"]
        );
        // A combining accent does not split the word and is dropped.
        assert_eq!(words("cafe\u{301} ok"), ["cafe", "ok"]);
        assert_eq!(words("Đồng Tiếng Việt"), ["dong", "tieng", "viet"]);
        assert_eq!(words("İstanbul"), ["istanbul"]);
        assert_eq!(words("Привет, мир"), ["привет", "мир"]);
        assert_eq!(words("don't e-mail"), ["don", "t", "e", "mail"]);
        let long = "x".repeat(100);
        assert_eq!(words(&long), ["x".repeat(MAX_TERM_CHARS)]);
        assert_eq!(terms(&long)[0].end, 100);
    }

    #[test]
    fn cjk_runs_are_pairs_then_the_last_character() {
        assert_eq!(
            words("今年预算很紧"),
            ["今年", "年预", "预算", "算很", "很紧", "紧"]
        );
        assert_eq!(words("预"), ["预"]);
        assert_eq!(words("预算2024年"), ["预算", "算", "2024", "年"]);
        assert_eq!(words("会議の予算"), ["会議", "議の", "の予", "予算", "算"]);
        assert_eq!(words("예산 회의"), ["예산", "산", "회의", "의"]);
        assert_eq!(words("iPhone预算"), ["iphone", "预算", "算"]);
    }

    #[test]
    fn emoji_are_terms_of_their_own() {
        assert_eq!(words("ship it🚀🎉!"), ["ship", "it", "🚀", "🎉"]);
        // Skin tones, joiners and variation selectors are dropped.
        assert_eq!(words("👍🏽 👨\u{200d}👩 ❤\u{fe0f}"), ["👍", "👨", "👩", "❤"]);
    }

    #[test]
    fn queries() {
        assert_eq!(
            q("budget \"exact phrase\" deci* \"a b\"*").fts5_all(),
            "\"budget\" \"exact phrase\" \"deci\"* \"a b\"*"
        );
        assert_eq!(
            q("budget \"exact phrase\" deci*").fts5_any(),
            "\"budget\" OR \"exact phrase\" OR \"deci\"*"
        );
        assert_eq!(q("预算").fts5_all(), "\"预算\"");
        assert_eq!(q("年预算").fts5_all(), "\"年预 预算\"");
        assert_eq!(q("预").fts5_all(), "\"预\"*");
        assert_eq!(q("预!").fts5_all(), "\"预\"*");
        assert_eq!(q("预算abc").fts5_all(), "\"预算 算 abc\"");
        assert_eq!(q("\"unclosed phrase").fts5_all(), "\"unclosed phrase\"");
        assert_eq!(q("Café").fts5_all(), "\"cafe\"");
        assert_eq!(Query::parse("  * -- !! "), Err(QueryError::NoWords));
        assert_eq!(Query::parse(""), Err(QueryError::NoWords));
        let many = "w ".repeat(MAX_QUERY_TERMS + 1);
        assert_eq!(
            Query::parse(&many),
            Err(QueryError::TooManyTerms(MAX_QUERY_TERMS + 1))
        );
        // A phrase and a CJK word count their terms, a prefix one more: 2 + 2 + 2 + 2 + 1.
        assert_eq!(
            Query::parse("\"a b\" c* 年预算 e-mail x"),
            Err(QueryError::TooManyTerms(9))
        );
        assert_eq!(q("\"a b\" c* 年预算 e-mail").weight(), 8);
        assert_eq!(q("预").weight(), 2);
        assert_eq!(q("\"a b c\"*").weight(), 4);
    }

    #[test]
    fn the_spec_states_the_limits() {
        let spec = crate::spec::spec();
        let text = &spec.types["search_query"].description;
        let limits = format!("At most {MAX_QUERY_TERMS} search terms");
        assert!(text.contains(&limits), "{text}");
    }

    #[test]
    fn matching() {
        let doc = words("今年的预算很紧, the Budget was decided by café staff 🎉");
        for hit in [
            "预算",
            "预",
            "紧",
            "的预算很",
            "budget",
            "BUDGET decided",
            "\"budget was decided\"",
            "deci*",
            "cafe",
            "café",
            "🎉",
            "\"预算很紧 the\"",
            "bud* staff",
        ] {
            assert!(q(hit).matches(&doc), "{hit}");
        }
        for miss in [
            "算预",
            "预算案",
            "\"decided budget\"",
            "budgets",
            "🚀",
            "budget rocket",
            "xbud*",
        ] {
            assert!(!q(miss).matches(&doc), "{miss}");
        }
        // Overlapping occurrences count.
        assert_eq!(q("\"a a\"").occurrences(&words("a a a")), [vec![0, 1]]);
    }

    #[test]
    fn the_indexed_text_is_the_terms_joined() {
        for text in [
            "",
            "  ",
            "Café ＡＢＣ e-mail",
            "今年的预算很紧 and 预算",
            "a🎉b 👍🏽 x\u{0301}y",
            &"long".repeat(40),
            "İstanbul ǅ",
        ] {
            let joined = terms(text)
                .into_iter()
                .map(|t| t.text)
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(indexed_text(text), joined, "{text:?}");
        }
    }

    #[test]
    fn scores_follow_bm25() {
        let scorer = Scorer::new(10, 100, &[1, 9]);
        // A rare phrase weighs more than a common one; more occurrences score higher; longer
        // messages lower.
        assert!(scorer.score(10, &[1, 0]) > scorer.score(10, &[0, 1]));
        assert!(scorer.score(10, &[2, 0]) > scorer.score(10, &[1, 0]));
        assert!(scorer.score(10, &[1, 0]) > scorer.score(40, &[1, 0]));
        // FTS5 floors a negative IDF at 1e-6.
        assert!(scorer.idf[1] == 1e-6);
        assert_eq!(rounded(1.23456789), 1.234568);
    }

    #[test]
    fn snippets() {
        assert_eq!(
            snippet("We decided the budget.", &q("budget")),
            "We decided the «budget»."
        );
        assert_eq!(
            snippet("Budget, budget\nand more budget", &q("budget")),
            "«Budget», «budget» and more «budget»"
        );
        assert_eq!(snippet("今年的预算很紧", &q("预算")), "今年的«预算»很紧");
        assert_eq!(snippet("e-mail me", &q("e-mail")), "«e-mail» me");
        let long = format!("{} target {}", "word ".repeat(40), "tail ".repeat(60));
        let s = snippet(&long, &q("target"));
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("«target»"), "{s}");
        assert!(s.chars().count() < 200, "{s}");
        assert_eq!(snippet("the café", &q("cafe")), "the «café»");
    }
}
