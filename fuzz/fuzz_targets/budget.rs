//! Arbitrary paths, pins, summaries and budgets → `timeline::budget::plan`. It never panics; a plan
//! covers every position once in order, keeps every mandatory item, uses only usable summaries, costs
//! exactly its total, and that total is at most `max`; it fails iff the minimum (`required_tokens`)
//! exceeds `max`.
//!
//! Input: if the first byte is 0xA5, an explicit format (used by the seed corpus, see build_corpus.py):
//! `[0xA5][reserve u8][max u64 LE][n u8]` then n × `[tokens u32 LE][mandatory u8]`, then candidates
//! `[start u8][end u8][tokens u32 LE]` until the data ends; a token value of 0xFFFFFFFF means u64::MAX.
//! Otherwise the input is decoded with `arbitrary`.

#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use timeline::budget::{Candidate, Item, Segment, cost, plan, required_tokens};

#[derive(Debug, Arbitrary)]
struct Input {
    reserve: u8,
    max: u64,
    items: Vec<(u16, bool)>,
    candidates: Vec<(u8, u8, u16)>,
    huge: bool,
}

fn tokens32(v: u32) -> u64 {
    if v == u32::MAX {
        u64::MAX
    } else {
        u64::from(v)
    }
}

fn explicit(data: &[u8]) -> Option<(u64, u64, Vec<Item>, Vec<Candidate>)> {
    let reserve = u64::from(*data.get(1)?);
    let max = u64::from_le_bytes(data.get(2..10)?.try_into().ok()?);
    let n = usize::from(*data.get(10)?);
    let mut at = 11;
    let mut items = Vec::new();
    for _ in 0..n {
        let tokens = u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?);
        let mandatory = *data.get(at + 4)? != 0;
        items.push(Item {
            tokens: tokens32(tokens),
            mandatory,
        });
        at += 5;
    }
    let mut candidates = Vec::new();
    while let Some(chunk) = data.get(at..at + 6) {
        candidates.push(Candidate {
            start: usize::from(chunk[0]),
            end: usize::from(chunk[1]),
            tokens: tokens32(u32::from_le_bytes(chunk[2..6].try_into().ok()?)),
        });
        at += 6;
    }
    Some((reserve, max, items, candidates))
}

fn decode(data: &[u8]) -> Option<(u64, u64, Vec<Item>, Vec<Candidate>)> {
    if data.first() == Some(&0xA5) {
        return explicit(data);
    }
    let input = Input::arbitrary(&mut Unstructured::new(data)).ok()?;
    let scale = |t: u16| {
        if input.huge {
            u64::from(t) << 48
        } else {
            u64::from(t)
        }
    };
    let items = input
        .items
        .iter()
        .take(200)
        .map(|&(t, m)| Item {
            tokens: scale(t),
            mandatory: m,
        })
        .collect();
    let candidates = input
        .candidates
        .iter()
        .take(100)
        .map(|&(s, e, t)| Candidate {
            start: usize::from(s),
            end: usize::from(e),
            tokens: scale(t),
        })
        .collect();
    Some((u64::from(input.reserve), input.max, items, candidates))
}

fn usable(items: &[Item], c: &Candidate) -> bool {
    c.start <= c.end && c.end < items.len() && !items[c.start..=c.end].iter().any(|i| i.mandatory)
}

fuzz_target!(|data: &[u8]| {
    let Some((reserve, max, items, candidates)) = decode(data) else {
        return;
    };
    let required = required_tokens(&items, &candidates, reserve);
    match plan(&items, &candidates, reserve, max) {
        Err(infeasible) => {
            assert_eq!(infeasible.required_tokens, required);
            assert!(required > u128::from(max), "refused a feasible budget");
        }
        Ok(p) => {
            assert!(required <= u128::from(max), "accepted an infeasible budget");
            assert_eq!(p.required_tokens, required);
            assert!(p.total_tokens <= u128::from(max), "total over max");
            assert!(p.total_tokens >= required, "total below the minimum");
            assert_eq!(
                cost(&items, &candidates, reserve, &p.segments),
                p.total_tokens
            );
            let mut next = 0;
            let mut previous_gap = false;
            for segment in &p.segments {
                match *segment {
                    Segment::Keep(i) => {
                        assert_eq!(i, next);
                        next += 1;
                        previous_gap = false;
                    }
                    Segment::Summary(c) => {
                        let cand = candidates[c];
                        assert!(usable(&items, &cand), "unusable summary used");
                        assert_eq!(cand.start, next);
                        next = cand.end + 1;
                        previous_gap = false;
                    }
                    Segment::Gap { start, end } => {
                        assert!(
                            !previous_gap,
                            "two gaps in a row (one placeholder per maximal run)"
                        );
                        assert_eq!(start, next);
                        assert!(start <= end);
                        assert!(
                            !items[start..=end].iter().any(|i| i.mandatory),
                            "a mandatory item in a gap"
                        );
                        next = end + 1;
                        previous_gap = true;
                    }
                }
            }
            assert_eq!(next, items.len(), "the plan does not cover every position");
        }
    }
});
