//! The budget planner: a pure function from a path, its pins and its usable summaries to a layout.
//!
//! No I/O and no database types, so property tests and the fuzzer call it directly.
//!
//! A layout gives every path position one of three states: kept verbatim, inside a real summary that
//! stands for exactly its range, or inside a gap. Each maximal run of gap positions costs one
//! placeholder of `reserve` tokens. The cost of a layout is exact: kept tokens + summary tokens +
//! `reserve` × number of gap runs.
//!
//! 1. `required_tokens`: a dynamic programme over the path with two states (the previous position is a
//!    gap or not) finds the cheapest layout that keeps every mandatory position. O(m + Σ range lengths).
//! 2. If that minimum exceeds `max`, the request is infeasible.
//! 3. Otherwise start from the cheapest layout and improve it by priority, accepting a step only when
//!    the exact new cost still fits: first real summaries (newest range first), each replacing the kept
//!    messages and gaps of its range, then messages from newest to oldest into the remaining gaps: a
//!    message is kept alone when that fits, else together with the older part of its gap run (so a
//!    budget that holds the whole path keeps the whole path). A summary's cost change is computed over
//!    its range, a message's in O(1) from precomputed run starts and prefix sums, so the whole plan is
//!    O(m log m + Σ range lengths). The result never exceeds `max`.
//!
//! Every step that gives a position its final state also records why (`Reason`), as it decides: the
//! cheapest layout, the summary step, or the message step (with the totals it compared against
//! `max`). `budget --explain` words these reasons; it never recomputes them.

/// One message of the path, oldest first. The last one is the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// Its token count.
    pub tokens: u64,
    /// The target and pinned messages: always kept verbatim.
    pub mandatory: bool,
}

/// A usable real summary standing for path positions `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// First path position the summary covers.
    pub start: usize,
    /// Last path position the summary covers.
    pub end: usize,
    /// The summary's own token count.
    pub tokens: u64,
}

/// One piece of a layout, in path order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// Keep path position `i` verbatim.
    Keep(usize),
    /// Use candidate `c` for its whole range.
    Summary(usize),
    /// One placeholder for positions `start..=end`.
    Gap {
        /// First position of the run.
        start: usize,
        /// Last position of the run.
        end: usize,
    },
}

/// Why a path position ended up in its state, recorded by the step of the planner that put it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A mandatory position (the target or a pin): always kept verbatim.
    Mandatory,
    /// Kept by the cheapest layout: leaving it out would cost at least as much.
    Cheapest,
    /// Inside a summary that the cheapest layout uses.
    SummaryCheapest,
    /// In a gap of the cheapest layout. Only an infeasible request reports it: a plan's message step
    /// tries every gap position and records `DidNotFit` for those it leaves there.
    GapCheapest,
    /// Inside a summary that the summary step put in (summaries come before messages); `total` is the
    /// plan's total right after that step.
    SummaryFirst {
        /// The plan's total right after the summary step.
        total: u128,
    },
    /// Kept alone by the message step (newest first); `total` is the plan's total right after it.
    Newest {
        /// The plan's total right after the step.
        total: u128,
    },
    /// Kept by the message step together with the whole run `first..=last` of its gap, because keeping
    /// `last` (the position the step was for) alone did not fit; `total` is the total right after it.
    Run {
        /// First position of the gap run kept with it.
        first: usize,
        /// Last position of that run: the one the step was for.
        last: usize,
        /// The plan's total right after the step.
        total: u128,
    },
    /// Left in a gap by the message step: the cheaper way to keep it would have made the total
    /// `total`, over `max`.
    DidNotFit {
        /// The total keeping it would have given.
        total: u128,
    },
}

/// A feasible layout and why each position is where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Segments in path order, covering every position exactly once.
    pub segments: Vec<Segment>,
    /// One per path position: why it is where `segments` puts it.
    pub reasons: Vec<Reason>,
    /// What the layout costs: kept tokens + summary tokens + one reserve per gap.
    pub total_tokens: u128,
    /// What the cheapest layout that keeps every mandatory position costs.
    pub required_tokens: u128,
}

/// The request cannot fit: what the cheapest layout needs, and that layout with its reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Infeasible {
    /// What the cheapest layout that keeps every mandatory position costs (more than `max`).
    pub required_tokens: u128,
    /// The cheapest layout (it costs `required_tokens`), in path order.
    pub segments: Vec<Segment>,
    /// One per path position, all from the cheapest layout (`Mandatory`, `Cheapest`,
    /// `SummaryCheapest`, `GapCheapest`).
    pub reasons: Vec<Reason>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Keep,
    Gap,
    /// Inside candidate `c`.
    In(usize),
}

/// Candidates that can stand in a layout: in range, non-empty, with no mandatory position inside.
fn usable(items: &[Item], candidates: &[Candidate]) -> Vec<bool> {
    candidates
        .iter()
        .map(|c| {
            c.start <= c.end
                && c.end < items.len()
                && !items[c.start..=c.end].iter().any(|i| i.mandatory)
        })
        .collect()
}

/// The cheapest layout's states and cost.
fn minimum(
    items: &[Item],
    candidates: &[Candidate],
    reserve: u64,
    ok: &[bool],
) -> (Vec<State>, u128) {
    const INF: u128 = u128::MAX;
    let m = items.len();
    // best[i][s]: cheapest cost of positions 0..i where s = 1 means position i-1 is a gap.
    let mut best = vec![[INF, INF]; m + 1];
    // How each state was reached: (previous s, state assigned to the step).
    let mut from: Vec<[(usize, State, usize); 2]> = vec![[(0, State::Keep, 0); 2]; m + 1];
    best[0][0] = 0;
    let mut starting_at: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (c, cand) in candidates.iter().enumerate() {
        if ok[c] {
            starting_at[cand.start].push(c);
        }
    }
    for i in 0..m {
        for s in 0..2 {
            let here = best[i][s];
            if here == INF {
                continue;
            }
            // Keep verbatim (preferred on ties: it is checked first and ties do not replace).
            let keep = here + u128::from(items[i].tokens);
            if keep < best[i + 1][0] {
                best[i + 1][0] = keep;
                from[i + 1][0] = (s, State::Keep, i);
            }
            if !items[i].mandatory {
                let gap = here + if s == 1 { 0 } else { u128::from(reserve) };
                if gap < best[i + 1][1] {
                    best[i + 1][1] = gap;
                    from[i + 1][1] = (s, State::Gap, i);
                }
            }
            for &c in &starting_at[i] {
                let end = candidates[c].end + 1;
                let cost = here + u128::from(candidates[c].tokens);
                if cost < best[end][0] {
                    best[end][0] = cost;
                    from[end][0] = (s, State::In(c), i);
                }
            }
        }
    }
    let (mut s, total) = if best[m][0] <= best[m][1] {
        (0, best[m][0])
    } else {
        (1, best[m][1])
    };
    let mut states = vec![State::Keep; m];
    let mut i = m;
    while i > 0 {
        let (prev, state, start) = from[i][s];
        for slot in &mut states[start..i] {
            *slot = state;
        }
        i = start;
        s = prev;
    }
    (states, total)
}

/// The minimum total of any layout that keeps every mandatory item verbatim.
pub fn required_tokens(items: &[Item], candidates: &[Candidate], reserve: u64) -> u128 {
    let ok = usable(items, candidates);
    minimum(items, candidates, reserve, &ok).1
}

fn is_gap(states: &[State], i: Option<usize>) -> bool {
    i.and_then(|i| states.get(i))
        .is_some_and(|s| *s == State::Gap)
}

/// Plan the layout for `max` tokens, or say what the cheapest layout needs.
pub fn plan(
    items: &[Item],
    candidates: &[Candidate],
    reserve: u64,
    max: u64,
) -> Result<Plan, Infeasible> {
    let ok = usable(items, candidates);
    let (mut states, required) = minimum(items, candidates, reserve, &ok);
    // The cheapest layout's own reasons; later steps overwrite those of the positions they change.
    let mut reasons: Vec<Reason> = states
        .iter()
        .zip(items)
        .map(|(state, item)| match state {
            State::Keep if item.mandatory => Reason::Mandatory,
            State::Keep => Reason::Cheapest,
            State::In(_) => Reason::SummaryCheapest,
            State::Gap => Reason::GapCheapest,
        })
        .collect();
    let max = u128::from(max);
    if required > max {
        return Err(Infeasible {
            required_tokens: required,
            segments: segments_of(&states, candidates),
            reasons,
        });
    }
    let reserve = u128::from(reserve);
    let mut total = required;

    // Tier 2: real summaries, the newest range first. A summary replaces whatever the range holds
    // (kept messages or gaps, never another summary) whenever the exact new total still fits, so a
    // summarised range is shown as its summary even where the cheapest layout kept its messages.
    let mut order: Vec<usize> = (0..candidates.len()).filter(|&c| ok[c]).collect();
    order.sort_by(|&a, &b| {
        candidates[b]
            .end
            .cmp(&candidates[a].end)
            .then(candidates[b].start.cmp(&candidates[a].start))
            .then(b.cmp(&a))
    });
    for c in order {
        let Candidate { start, end, tokens } = candidates[c];
        if states[start..=end]
            .iter()
            .any(|s| matches!(s, State::In(_)))
        {
            continue;
        }
        let mut kept = 0u128;
        let mut runs_before = 0u128;
        for i in start..=end {
            match states[i] {
                State::Keep => kept += u128::from(items[i].tokens),
                State::Gap if i == start || states[i - 1] != State::Gap => runs_before += 1,
                _ => {}
            }
        }
        // A run that crosses either edge of the range survives outside it.
        let left = states[start] == State::Gap && is_gap(&states, start.checked_sub(1));
        let right = states[end] == State::Gap && is_gap(&states, Some(end + 1));
        let runs_after = u128::from(left) + u128::from(right);
        let new_total =
            total - kept - runs_before * reserve + runs_after * reserve + u128::from(tokens);
        if new_total <= max {
            total = new_total;
            states[start..=end]
                .iter_mut()
                .for_each(|s| *s = State::In(c));
            reasons[start..=end]
                .iter_mut()
                .for_each(|r| *r = Reason::SummaryFirst { total });
        }
    }

    // Tier 3: messages, newest first. Keeping position `i` of a gap run `a..=b` either keeps `i` alone
    // (the run may split in two) or, when that does not fit, keeps `a..=i` together (the run loses its
    // older part, or disappears). Any other way to keep `i` costs at least as much as one of these two,
    // and the second is what lets a budget that holds the whole path keep the whole path.
    // Tier 3 only changes positions at or after the one it is looking at, so the start of each run and
    // the token sums are computed once, before it starts.
    let mut run_start = vec![0; items.len()];
    let mut prefix = vec![0u128; items.len() + 1];
    for i in 0..items.len() {
        run_start[i] = if i > 0 && states[i - 1] == State::Gap && states[i] == State::Gap {
            run_start[i - 1]
        } else {
            i
        };
        prefix[i + 1] = prefix[i] + u128::from(items[i].tokens);
    }
    for i in (0..items.len()).rev() {
        if states[i] != State::Gap {
            continue;
        }
        let a = run_start[i];
        let right = is_gap(&states, Some(i + 1));
        let base = total + u128::from(items[i].tokens);
        let alone = match (a < i, right) {
            (true, true) => base + reserve,
            (false, false) => base - reserve,
            _ => base,
        };
        if alone <= max {
            total = alone;
            states[i] = State::Keep;
            reasons[i] = Reason::Newest { total };
            continue;
        }
        let mut cheapest_try = alone;
        if a < i {
            let together = total + (prefix[i + 1] - prefix[a]) - if right { 0 } else { reserve };
            if together <= max {
                total = together;
                states[a..=i].iter_mut().for_each(|s| *s = State::Keep);
                reasons[a..=i].iter_mut().for_each(|r| {
                    *r = Reason::Run {
                        first: a,
                        last: i,
                        total,
                    }
                });
                continue;
            }
            cheapest_try = cheapest_try.min(together);
        }
        reasons[i] = Reason::DidNotFit {
            total: cheapest_try,
        };
    }

    Ok(Plan {
        segments: segments_of(&states, candidates),
        reasons,
        total_tokens: total,
        required_tokens: required,
    })
}

/// The segments of a layout given by its states, in path order.
fn segments_of(states: &[State], candidates: &[Candidate]) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut i = 0;
    while i < states.len() {
        match states[i] {
            State::Keep => {
                segments.push(Segment::Keep(i));
                i += 1;
            }
            State::In(c) => {
                segments.push(Segment::Summary(c));
                i = candidates[c].end + 1;
            }
            State::Gap => {
                let start = i;
                while i < states.len() && states[i] == State::Gap {
                    i += 1;
                }
                segments.push(Segment::Gap { start, end: i - 1 });
            }
        }
    }
    segments
}

/// The exact cost of a list of segments; used by tests to check a plan's own total.
pub fn cost(items: &[Item], candidates: &[Candidate], reserve: u64, segments: &[Segment]) -> u128 {
    segments
        .iter()
        .map(|s| match *s {
            Segment::Keep(i) => u128::from(items[i].tokens),
            Segment::Summary(c) => u128::from(candidates[c].tokens),
            Segment::Gap { .. } => u128::from(reserve),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(spec: &[(u64, bool)]) -> Vec<Item> {
        spec.iter()
            .map(|&(tokens, mandatory)| Item { tokens, mandatory })
            .collect()
    }

    #[test]
    fn the_counterexample_needs_65() {
        // [1000, 1 (pinned), 1000, 0 (target)] with budget 1 (requirement B4).
        let path = items(&[(1000, false), (1, true), (1000, false), (0, true)]);
        assert_eq!(
            plan(&path, &[], 32, 1),
            Err(Infeasible {
                required_tokens: 65,
                segments: vec![
                    Segment::Gap { start: 0, end: 0 },
                    Segment::Keep(1),
                    Segment::Gap { start: 2, end: 2 },
                    Segment::Keep(3)
                ],
                reasons: vec![
                    Reason::GapCheapest,
                    Reason::Mandatory,
                    Reason::GapCheapest,
                    Reason::Mandatory
                ],
            })
        );
        let fits = plan(&path, &[], 32, 65).unwrap();
        assert_eq!(fits.total_tokens, 65);
        assert_eq!(
            fits.segments,
            vec![
                Segment::Gap { start: 0, end: 0 },
                Segment::Keep(1),
                Segment::Gap { start: 2, end: 2 },
                Segment::Keep(3)
            ]
        );
        // Each gap was tried by the message step: n3 alone would make 65 - 32 + 1000.
        assert_eq!(
            fits.reasons,
            vec![
                Reason::DidNotFit { total: 1033 },
                Reason::Mandatory,
                Reason::DidNotFit { total: 1033 },
                Reason::Mandatory
            ]
        );
        let more = plan(&path, &[], 32, 1033).unwrap();
        assert_eq!(
            more.reasons,
            vec![
                Reason::DidNotFit { total: 2001 },
                Reason::Mandatory,
                Reason::Newest { total: 1033 },
                Reason::Mandatory
            ]
        );
    }

    #[test]
    fn everything_fits_means_everything_kept() {
        let path = items(&[(10, false), (20, false), (5, true)]);
        let p = plan(&path, &[], 32, 35).unwrap();
        assert_eq!(
            p.segments,
            vec![Segment::Keep(0), Segment::Keep(1), Segment::Keep(2)]
        );
        assert_eq!(p.total_tokens, 35);
    }

    #[test]
    fn a_summary_is_preferred_over_a_placeholder_when_it_fits() {
        let path = items(&[(100, false), (100, false), (100, false), (1, true)]);
        let cands = [Candidate {
            start: 0,
            end: 2,
            tokens: 40,
        }];
        let p = plan(&path, &cands, 32, 41).unwrap();
        assert_eq!(p.segments, vec![Segment::Summary(0), Segment::Keep(3)]);
        assert_eq!(p.required_tokens, 33);
        assert_eq!(
            p.reasons,
            vec![
                Reason::SummaryFirst { total: 41 },
                Reason::SummaryFirst { total: 41 },
                Reason::SummaryFirst { total: 41 },
                Reason::Mandatory
            ]
        );
        // Cheaper than the placeholder: the cheapest layout itself uses the summary.
        let cheap = [Candidate {
            tokens: 5,
            ..cands[0]
        }];
        let p = plan(&path, &cheap, 32, 41).unwrap();
        assert_eq!(p.segments, vec![Segment::Summary(0), Segment::Keep(3)]);
        assert_eq!(p.reasons[..3], [Reason::SummaryCheapest; 3]);
    }

    #[test]
    fn a_summary_stands_for_its_range_even_when_the_messages_are_cheaper() {
        // The cheapest layout keeps the two 5-token messages; priority still shows the summary.
        let path = items(&[(5, false), (5, false), (1, true)]);
        let cands = [Candidate {
            start: 0,
            end: 1,
            tokens: 20,
        }];
        let p = plan(&path, &cands, 32, 100).unwrap();
        assert_eq!(p.segments, vec![Segment::Summary(0), Segment::Keep(2)]);
        assert_eq!((p.total_tokens, p.required_tokens), (21, 11));
        // Where the summary does not fit, the messages stay.
        let p = plan(&path, &cands, 32, 20).unwrap();
        assert_eq!(
            p.segments,
            vec![Segment::Keep(0), Segment::Keep(1), Segment::Keep(2)]
        );
    }

    #[test]
    fn a_budget_that_holds_the_whole_path_keeps_the_whole_path() {
        // The cheapest layout puts 1 and 32 under one placeholder (32). Keeping the newest message
        // alone would cost 32 + 32 > 33, so it is kept together with the older part of its run.
        let path = items(&[(1, false), (32, false), (0, true)]);
        let p = plan(&path, &[], 32, 33).unwrap();
        assert_eq!(
            p.segments,
            vec![Segment::Keep(0), Segment::Keep(1), Segment::Keep(2)]
        );
        assert_eq!((p.total_tokens, p.required_tokens), (33, 32));
        let run = Reason::Run {
            first: 0,
            last: 1,
            total: 33,
        };
        assert_eq!(p.reasons, vec![run, run, Reason::Mandatory]);
    }

    #[test]
    fn a_cheap_message_is_cheaper_kept_than_replaced() {
        let path = items(&[(0, false), (1, true)]);
        assert_eq!(required_tokens(&path, &[], 32), 1);
        let p = plan(&path, &[], 32, 1).unwrap();
        assert_eq!(p.reasons, vec![Reason::Cheapest, Reason::Mandatory]);
    }
}
