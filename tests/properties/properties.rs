//! Property tests for budgets, summaries, the watermark and archival (requirements B3–B6, W1–W2,
//! A1–A3, Σ1–Σ5, S5), run in-process against the library.
//!
//! Two groups:
//! - the pure planner (`timeline::budget`) against a brute-force enumeration of every layout, with
//!   the reasons it records for each position;
//! - random operation sequences through `timeline::ops::run` (arguments checked by the same
//!   `spec::validate` path the front-ends use), with dry runs and explanations of every budget,
//!   followed by random archival, each archival undone by restore-branch on a copy, and a restore of
//!   every archived branch at the end.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use timeline::budget::{self, Candidate, Item, Reason, Segment};
use timeline::error::Error;
use timeline::model::{Database, ROOT, Timeline, node_id};
use timeline::ops::{self, Ctx};
use timeline::spec::spec;
use timeline::spec::validate::{Origin, validate};
use timeline::store::{decode, encode};

const RESERVE: u64 = 32;

// ---------------------------------------------------------------------------------------------
// The planner against brute force
// ---------------------------------------------------------------------------------------------

/// Whether candidate `c` may stand in a layout: its range holds no mandatory position.
fn usable(items: &[Item], c: &Candidate) -> bool {
    c.start <= c.end && c.end < items.len() && !items[c.start..=c.end].iter().any(|i| i.mandatory)
}

/// The cheapest layout, by enumerating every keep / gap / summary choice (exponential; small paths only).
fn brute_force_minimum(items: &[Item], candidates: &[Candidate]) -> u128 {
    fn go(i: usize, previous_gap: bool, items: &[Item], candidates: &[Candidate]) -> u128 {
        if i == items.len() {
            return 0;
        }
        // Keep position i verbatim.
        let mut best = u128::from(items[i].tokens) + go(i + 1, false, items, candidates);
        // Leave it to a placeholder: a new gap run costs one reserve, extending one costs nothing.
        if !items[i].mandatory {
            let run = if previous_gap { 0 } else { u128::from(RESERVE) };
            best = best.min(run + go(i + 1, true, items, candidates));
        }
        // Use a real summary that starts here for its whole range.
        for c in candidates
            .iter()
            .filter(|c| c.start == i && usable(items, c))
        {
            best = best.min(u128::from(c.tokens) + go(c.end + 1, false, items, candidates));
        }
        best
    }
    go(0, false, items, candidates)
}

fn planner_input() -> impl Strategy<Value = (Vec<Item>, Vec<Candidate>, u64)> {
    // Token values cluster around the reserve so that keep / gap / summary choices really compete.
    let tokens = prop_oneof![0u64..4, 20u64..45, 0u64..200, Just(1000u64)];
    (1usize..=8)
        .prop_flat_map(move |m| {
            let items =
                proptest::collection::vec((tokens.clone(), proptest::bool::weighted(0.25)), m);
            let candidates = proptest::collection::vec((0..m, 0..m, 0u64..90), 0..=4);
            (
                items,
                candidates,
                prop_oneof![0u64..120, 0u64..600, 0u64..3000],
            )
        })
        .prop_map(|(raw_items, raw_candidates, max)| {
            let m = raw_items.len();
            let items: Vec<Item> = raw_items
                .into_iter()
                .enumerate()
                .map(|(i, (tokens, pinned))| Item {
                    tokens,
                    // The last position is the target and always mandatory.
                    mandatory: pinned || i == m - 1,
                })
                .collect();
            let candidates = raw_candidates
                .into_iter()
                .map(|(a, b, tokens)| Candidate {
                    start: a.min(b),
                    end: a.max(b),
                    tokens,
                })
                .collect();
            (items, candidates, max)
        })
}

/// Every structural promise a plan makes (B3, B5): path order, exact coverage, mandatory positions
/// kept, summaries usable and used for exactly their range, maximal gap runs, exact total.
fn check_plan(items: &[Item], candidates: &[Candidate], max: u64, plan: &budget::Plan) {
    let mut next = 0usize;
    let mut previous_was_gap = false;
    for segment in &plan.segments {
        match *segment {
            Segment::Keep(i) => {
                assert_eq!(i, next, "segments out of path order: {plan:?}");
                next = i + 1;
                previous_was_gap = false;
            }
            Segment::Summary(c) => {
                let cand = candidates[c];
                assert_eq!(cand.start, next, "summary out of path order: {plan:?}");
                assert!(usable(items, &cand), "unusable summary {c} in {plan:?}");
                next = cand.end + 1;
                previous_was_gap = false;
            }
            Segment::Gap { start, end } => {
                assert_eq!(start, next, "gap out of path order: {plan:?}");
                assert!(start <= end);
                assert!(!previous_was_gap, "two adjacent gaps are one run: {plan:?}");
                assert!(
                    items[start..=end].iter().all(|i| !i.mandatory),
                    "a mandatory position is inside a gap: {plan:?}"
                );
                next = end + 1;
                previous_was_gap = true;
            }
        }
    }
    assert_eq!(
        next,
        items.len(),
        "segments do not cover the path: {plan:?}"
    );
    for (i, item) in items.iter().enumerate() {
        if item.mandatory {
            assert!(
                plan.segments.contains(&Segment::Keep(i)),
                "mandatory {i} not kept: {plan:?}"
            );
        }
    }
    assert_eq!(
        plan.total_tokens,
        budget::cost(items, candidates, RESERVE, &plan.segments)
    );
    assert!(
        plan.total_tokens <= u128::from(max),
        "{plan:?} exceeds {max}"
    );
    assert!(plan.required_tokens <= plan.total_tokens);
}

/// The reasons a plan (or the cheapest layout of an infeasible request) gives: one per position, of
/// the kind its segment allows, with totals on the right side of `max`.
fn check_reasons(
    items: &[Item],
    segments: &[Segment],
    reasons: &[Reason],
    candidates: &[Candidate],
    max: u64,
    feasible: bool,
) {
    assert_eq!(reasons.len(), items.len(), "one reason per position");
    let max = u128::from(max);
    for segment in segments {
        let (start, end) = match *segment {
            Segment::Keep(i) => (i, i),
            Segment::Summary(c) => (candidates[c].start, candidates[c].end),
            Segment::Gap { start, end } => (start, end),
        };
        for (i, reason) in reasons.iter().enumerate().take(end + 1).skip(start) {
            let fits = match (*segment, *reason) {
                (Segment::Keep(_), Reason::Mandatory) => items[i].mandatory,
                (Segment::Keep(_), Reason::Cheapest) => !items[i].mandatory,
                (Segment::Keep(_), Reason::Newest { total }) => feasible && total <= max,
                (Segment::Keep(_), Reason::Run { first, last, total }) => {
                    feasible && first <= i && i <= last && total <= max
                }
                (Segment::Summary(_), Reason::SummaryCheapest) => true,
                (Segment::Summary(_), Reason::SummaryFirst { total }) => feasible && total <= max,
                (Segment::Gap { .. }, Reason::DidNotFit { total }) => feasible && total > max,
                (Segment::Gap { .. }, Reason::GapCheapest) => !feasible,
                _ => false,
            };
            assert!(
                fits,
                "position {i}: {reason:?} in {segment:?} (max {max}, feasible {feasible})"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// B4: required_tokens is the exact minimum over all layouts; infeasible iff that minimum > max.
    /// B3/B5: a feasible plan is well formed and never exceeds max.
    #[test]
    fn planner_matches_brute_force((items, candidates, max) in planner_input()) {
        let minimum = brute_force_minimum(&items, &candidates);
        prop_assert_eq!(budget::required_tokens(&items, &candidates, RESERVE), minimum);
        match budget::plan(&items, &candidates, RESERVE, max) {
            Ok(plan) => {
                prop_assert!(minimum <= u128::from(max));
                prop_assert_eq!(plan.required_tokens, minimum);
                check_plan(&items, &candidates, max, &plan);
                check_reasons(&items, &plan.segments, &plan.reasons, &candidates, max, true);
            }
            Err(infeasible) => {
                prop_assert!(minimum > u128::from(max));
                prop_assert_eq!(infeasible.required_tokens, minimum);
                // The cheapest layout it reports is a layout, and costs exactly required_tokens.
                let cheapest = budget::Plan {
                    segments: infeasible.segments.clone(),
                    reasons: infeasible.reasons.clone(),
                    total_tokens: minimum,
                    required_tokens: minimum,
                };
                let at_minimum = u64::try_from(minimum).unwrap();
                check_plan(&items, &candidates, at_minimum, &cheapest);
                check_reasons(&items, &infeasible.segments, &infeasible.reasons, &candidates, max, false);
            }
        }
        // With the budget exactly at the minimum the plan must exist and cost exactly the minimum.
        let at_minimum = u64::try_from(minimum).unwrap();
        let tight = budget::plan(&items, &candidates, RESERVE, at_minimum).unwrap();
        prop_assert_eq!(tight.total_tokens, minimum);
        check_plan(&items, &candidates, at_minimum, &tight);
    }

    /// B2: with room for everything and no summaries, every message is kept verbatim.
    #[test]
    fn planner_keeps_everything_that_fits((items, _candidates, _max) in planner_input()) {
        let all: u64 = items.iter().map(|i| i.tokens).sum();
        let plan = budget::plan(&items, &[], RESERVE, all).unwrap();
        let kept: Vec<Segment> = (0..items.len()).map(Segment::Keep).collect();
        prop_assert_eq!(plan.segments, kept);
        prop_assert_eq!(plan.total_tokens, u128::from(all));
    }
}

// ---------------------------------------------------------------------------------------------
// Random operation sequences
// ---------------------------------------------------------------------------------------------

const NOW: u64 = 1_700_000_000;

/// Run one operation as the MCP front-end would (timeline tl0). On error the database is restored,
/// as the store would never write a failed transaction.
fn call(db: &mut Database, op: &str, args: Value) -> Result<Value, Error> {
    let operation = spec().operation(op).expect("known operation");
    let mut map: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    if op != "create" {
        map.insert("timeline_id".into(), json!("tl0"));
    }
    let args = validate(operation, &map, Origin::Mcp)?;
    let before = db.clone();
    let result = ops::run_in_memory(
        db,
        op,
        &args,
        &Ctx {
            now: NOW,
            origin: Origin::Mcp,
        },
    );
    if result.is_err() {
        *db = before;
    }
    result
}

#[track_caller]
fn ok(db: &mut Database, op: &str, args: Value) -> Value {
    call(db, op, args.clone()).unwrap_or_else(|e| panic!("{op} {args} failed: {e:?}"))
}

#[derive(Debug, Clone)]
enum Action {
    Append {
        role: usize,
        tokens: u64,
        intent: bool,
    },
    Fork {
        at: usize,
        switch: bool,
    },
    Switch {
        to: usize,
    },
    Pin {
        at: usize,
    },
    Unpin {
        at: usize,
    },
    Summarize {
        to: usize,
        up: usize,
        tokens: u64,
        derive: Option<usize>,
        supersede: Option<usize>,
    },
    /// `max` is `percent` of the target's path tokens plus `extra`, so budgets really have to cut.
    Budget {
        at: usize,
        percent: u64,
        extra: u64,
    },
}

fn action() -> impl Strategy<Value = Action> {
    let pick = 0usize..1000;
    prop_oneof![
        8 => (0usize..3, 0u64..80, proptest::bool::weighted(0.3))
            .prop_map(|(role, tokens, intent)| Action::Append { role, tokens, intent }),
        2 => (pick.clone(), proptest::bool::ANY).prop_map(|(at, switch)| Action::Fork { at, switch }),
        2 => pick.clone().prop_map(|to| Action::Switch { to }),
        2 => pick.clone().prop_map(|at| Action::Pin { at }),
        1 => pick.clone().prop_map(|at| Action::Unpin { at }),
        3 => (pick.clone(), 0usize..6, 0u64..40, proptest::option::weighted(0.2, pick.clone()), proptest::option::weighted(0.2, pick.clone()))
            .prop_map(|(to, up, tokens, derive, supersede)| Action::Summarize { to, up, tokens, derive, supersede }),
        4 => (pick, 0u64..110, 0u64..40)
            .prop_map(|(at, percent, extra)| Action::Budget { at, percent, extra }),
    ]
}

fn tl(db: &Database) -> &Timeline {
    &db.timelines[0]
}

/// A message node chosen by `pick`, or None when the timeline has none yet.
fn some_node(db: &Database, pick: usize) -> Option<u64> {
    let count = tl(db).nodes.len() - 1;
    (count > 0).then(|| 1 + (pick % count) as u64)
}

fn real_summaries(db: &Database) -> Vec<u64> {
    (1..tl(db).nodes.len() as u64)
        .filter(|&n| tl(db).nodes[n as usize].is_real_summary())
        .collect()
}

/// Whether `ancestor` is `n` or one of its ancestors, computed from parents alone.
fn on_path(t: &Timeline, ancestor: u64, n: u64) -> bool {
    let mut at = n;
    loop {
        if at == ancestor {
            return true;
        }
        if at == ROOT {
            return false;
        }
        at = t.nodes[at as usize].parent;
    }
}

/// W1 coverage computed from source data only (not from the derived index): pinned, a summary or
/// placeholder itself, or inside the range of any summary or placeholder.
fn covered(t: &Timeline, n: u64) -> bool {
    t.pins.contains(&n)
        || t.nodes[n as usize].summary.is_some()
        || t.nodes.iter().any(|s| {
            s.summary
                .as_ref()
                .is_some_and(|s| on_path(t, n, s.to) && on_path(t, s.from, n))
        })
}

/// The deepest node of root→head whose whole path is covered.
fn deepest_covered(t: &Timeline, head: u64) -> u64 {
    let mut deepest = ROOT;
    for n in t.path(head) {
        if !covered(t, n) {
            break;
        }
        deepest = n;
    }
    deepest
}

fn depth(t: &Timeline, n: u64) -> usize {
    t.path(n).len()
}

/// W1: every watermark lies on its branch's path and covers only covered nodes.
fn check_watermarks(db: &Database) {
    let t = tl(db);
    for b in &t.branches {
        assert!(
            on_path(t, b.watermark, b.head),
            "watermark of {} off its path",
            b.name
        );
        for n in t.path(b.watermark) {
            assert!(
                covered(t, n),
                "{} is bare inside the watermark of {}",
                node_id(n),
                b.name
            );
        }
    }
}

/// S5: what is written and read back is the same database, derived indexes included; no node is in
/// both zones or in neither; summaries are always hot.
fn check_round_trip(db: &Database) {
    let bytes = encode(db);
    let back = decode(&bytes).expect("a written database loads");
    assert!(back == *db, "decode(encode(db)) differs from db");
    let file: Value = serde_json::from_slice(&bytes).unwrap();
    for (t, tf) in db
        .timelines
        .iter()
        .zip(file["timelines"].as_array().unwrap())
    {
        let ids = |zone: &str| -> Vec<String> {
            tf[zone].as_array().map_or(Vec::new(), |a| {
                a.iter()
                    .map(|n| n["id"].as_str().unwrap().to_string())
                    .collect()
            })
        };
        let hot: BTreeSet<String> = ids("nodes").into_iter().collect();
        let cold: BTreeSet<String> = ids("cold").into_iter().collect();
        assert!(hot.is_disjoint(&cold), "a node is in both zones");
        let all: BTreeSet<String> = (1..t.nodes.len() as u64).map(node_id).collect();
        let union: BTreeSet<String> = hot.union(&cold).cloned().collect();
        assert_eq!(union, all, "a node is in neither zone");
        for (n, node) in t.nodes.iter().enumerate().skip(1) {
            assert_eq!(cold.contains(&node_id(n as u64)), node.cold);
            assert!(
                !(node.cold && node.summary.is_some()),
                "summary {n} is cold"
            );
        }
    }
}

fn contexts(db: &mut Database) -> BTreeMap<u64, Value> {
    let count = tl(db).nodes.len() as u64;
    (1..count)
        .map(|n| (n, ok(db, "context", json!({ "node": node_id(n) }))))
        .collect()
}

/// The original message of each appended node: role, text, tokens.
type Originals = HashMap<u64, (String, String, u64)>;

/// Run `actions` on a fresh timeline, checking budgets and the watermark after every step.
fn build(actions: &[Action]) -> (Database, Originals) {
    let mut db = Database::default();
    ok(&mut db, "create", json!({}));
    let mut originals = Originals::new();
    let mut fork_names = 0;
    let mut texts = 0;
    for action in actions {
        let before = db.clone();
        let result = match action {
            Action::Append {
                role,
                tokens,
                intent,
            } => {
                texts += 1;
                let role = ["user", "assistant", "system"][*role];
                let text = format!("message {texts} ✓");
                let mut args = json!({ "role": role, "text": text, "tokens": tokens });
                if *intent {
                    args["intent"] = json!({ "tag": format!("tag{texts}"), "note": "NOTE-SECRET" });
                }
                let r = call(&mut db, "append", args);
                if let Ok(v) = &r {
                    let n = v["node"].as_str().unwrap()[1..].parse().unwrap();
                    originals.insert(n, (role.to_string(), text, *tokens));
                }
                r
            }
            Action::Fork { at, switch } => {
                fork_names += 1;
                let node = some_node(&db, *at).unwrap_or(ROOT);
                let name = format!("b{fork_names}");
                let r = call(
                    &mut db,
                    "fork",
                    json!({ "node": node_id(node), "name": name }),
                );
                if r.is_ok() && *switch {
                    ok(&mut db, "switch", json!({ "name": name }));
                }
                r
            }
            Action::Switch { to } => {
                let names: Vec<String> = tl(&db).branches.iter().map(|b| b.name.clone()).collect();
                let name = &names[to % names.len()];
                call(&mut db, "switch", json!({ "name": name }))
            }
            Action::Pin { at } => match some_node(&db, *at) {
                Some(n) => call(&mut db, "pin", json!({ "node": node_id(n) })),
                None => continue,
            },
            Action::Unpin { at } => {
                let pins: Vec<u64> = tl(&db).pins.iter().copied().collect();
                if pins.is_empty() {
                    continue;
                }
                let n = pins[at % pins.len()];
                let r = call(&mut db, "unpin", json!({ "node": node_id(n) }));
                // W2: unpin fails exactly when it would leave a bare message inside a watermark.
                let t = tl(&before);
                let mut unpinned = t.clone();
                unpinned.pins.remove(&n);
                let inside = t
                    .branches
                    .iter()
                    .any(|b| on_path(t, n, b.watermark) && b.watermark != ROOT);
                assert_eq!(
                    r.is_err(),
                    inside && !covered(&unpinned, n),
                    "unpin {n}: {r:?}"
                );
                r
            }
            Action::Summarize {
                to,
                up,
                tokens,
                derive,
                supersede,
            } => {
                let Some(to) = some_node(&db, *to) else {
                    continue;
                };
                let path = tl(&db).path(to);
                let from = path[path.len() - 1 - up % path.len()];
                texts += 1;
                let mut args = json!({
                    "from": node_id(from), "to": node_id(to),
                    "summary": format!("summary {texts}"), "tokens": tokens,
                });
                let reals = real_summaries(&db);
                if let (Some(d), false) = (derive, reals.is_empty()) {
                    args["derived_from"] = json!([node_id(reals[d % reals.len()])]);
                }
                if let (Some(s), false) = (supersede, reals.is_empty()) {
                    args["supersede"] = json!(node_id(reals[s % reals.len()]));
                }
                call(&mut db, "summarize", args)
            }
            Action::Budget { at, percent, extra } => {
                let Some(n) = some_node(&db, *at) else {
                    continue;
                };
                let path_tokens: u64 = tl(&db)
                    .path(n)
                    .iter()
                    .map(|&p| tl(&db).nodes[p as usize].tokens)
                    .sum();
                let max = &(path_tokens * percent / 100 + extra);
                let args = json!({ "node": node_id(n), "max_tokens": max });
                // First a dry run with its explanation: it changes nothing and explains every message.
                let untouched = db.clone();
                let preview = call(
                    &mut db,
                    "context_budget",
                    json!({ "node": node_id(n), "max_tokens": max, "dry_run": true, "explain": true }),
                );
                assert!(db == untouched, "a dry run changed the database");
                match &preview {
                    Ok(p) => check_explanation(&db, n, p, p["total_tokens"].as_u64().unwrap()),
                    Err(e) => {
                        let data = e.data.as_ref().unwrap();
                        check_explanation(&db, n, data, data["required_tokens"].as_u64().unwrap());
                    }
                }
                let r = call(&mut db, "context_budget", args.clone());
                assert_eq!(
                    r.is_ok(),
                    preview.is_ok(),
                    "a dry run and the budget disagree"
                );
                if let (Ok(v), Ok(p)) = (&r, &preview) {
                    check_dry_run_matches(&untouched, p, v);
                }
                if let Ok(v) = &r {
                    check_budget_result(&db, n, *max, v);
                    // A repeated call returns the same result and creates nothing.
                    let settled = db.clone();
                    let again = ok(&mut db, "context_budget", args);
                    assert_eq!(&again, v, "a repeated budget differs");
                    assert!(db == settled, "a repeated budget changed the database");
                }
                r
            }
        };
        check_watermarks(&db);
        // W1: watermarks never move back, and move only when a summary or placeholder was created.
        let created = tl(&db).nodes[tl(&before).nodes.len()..]
            .iter()
            .any(|n| n.summary.is_some());
        for b in &tl(&db).branches {
            let Some(old) = tl(&before).branches.iter().find(|o| o.name == b.name) else {
                assert_eq!(b.watermark, ROOT, "a new branch starts with watermark n0");
                continue;
            };
            let t = tl(&db);
            assert!(
                depth(t, b.watermark) >= depth(t, old.watermark),
                "watermark moved back"
            );
            if created {
                assert_eq!(
                    b.watermark,
                    deepest_covered(t, b.head),
                    "watermark of {} not advanced",
                    b.name
                );
            } else {
                assert_eq!(
                    b.watermark, old.watermark,
                    "watermark moved without a creation: {result:?}"
                );
            }
        }
        if result.is_err() {
            assert!(db == before, "a failed operation changed the database");
        }
    }
    (db, originals)
}

/// B3, B5, M5 on one budget result.
fn check_budget_result(db: &Database, target: u64, max: u64, v: &Value) {
    let t = tl(db);
    let messages = v["messages"].as_array().unwrap();
    let total: u64 = messages.iter().map(|m| m["tokens"].as_u64().unwrap()).sum();
    assert_eq!(v["total_tokens"].as_u64().unwrap(), total);
    assert!(total <= max, "total {total} over max {max}");
    assert_eq!(
        messages.last().unwrap()["node"],
        json!(node_id(target)),
        "target not last"
    );
    let shown: BTreeSet<String> = messages
        .iter()
        .map(|m| m["node"].as_str().unwrap().to_string())
        .collect();
    for n in t.path(target) {
        if t.pins.contains(&n) || n == target {
            assert!(shown.contains(&node_id(n)), "pin or target {n} not kept");
        }
    }
    let mut placeholders = Vec::new();
    for m in messages {
        let n: u64 = m["node"].as_str().unwrap()[1..].parse().unwrap();
        let node = &t.nodes[n as usize];
        assert_eq!(m["text"].as_str().unwrap(), node.text);
        assert_eq!(
            m.get("intent_tag").and_then(Value::as_str),
            node.intent.as_ref().map(|i| i.tag.as_str())
        );
        assert!(
            !m.to_string().contains("NOTE-SECRET"),
            "an intent note reached a budget"
        );
        if node.is_placeholder() {
            assert_eq!(node.tokens, RESERVE);
            placeholders.push(json!(node_id(n)));
        }
    }
    assert_eq!(v["summaries_created"], Value::Array(placeholders));
}

/// `budget --explain` (on a result, or on the data of an infeasible error): every message of the
/// target's path exactly once, in path order, each pointing at the message that shows it, every shown
/// message explaining at least one, and the tokens of what is shown adding up to `total` (the
/// layout's total, or required_tokens).
fn check_explanation(db: &Database, target: u64, v: &Value, total: u64) {
    let t = tl(db);
    let messages = v["messages"].as_array().unwrap();
    let explanation = v["explanation"].as_array().unwrap();
    let path: Vec<Value> = t
        .path(target)
        .into_iter()
        .map(|n| json!(node_id(n)))
        .collect();
    let explained: Vec<Value> = explanation.iter().map(|e| e["node"].clone()).collect();
    assert_eq!(
        explained, path,
        "the explanation does not account for the path once, in order"
    );
    let mut shown = BTreeSet::new();
    for entry in explanation {
        let n: u64 = entry["node"].as_str().unwrap()[1..].parse().unwrap();
        assert_eq!(entry["tokens"], json!(t.nodes[n as usize].tokens));
        let at = entry["shown_at"].as_u64().unwrap() as usize;
        assert!(
            shown.last().is_none_or(|&last| last <= at),
            "shown_at goes back"
        );
        shown.insert(at);
        let message = &messages[at];
        match entry["outcome"].as_str().unwrap() {
            "kept" => assert_eq!(message["node"], entry["node"]),
            "summary" => {
                let s: u64 = message["node"].as_str().unwrap()[1..].parse().unwrap();
                assert!(tl(db).nodes[s as usize].is_real_summary());
            }
            "placeholder" => {
                assert_eq!(message["tokens"], json!(RESERVE));
                assert_eq!(message["role"], json!("summary"));
            }
            other => panic!("unknown outcome {other}"),
        }
        assert!(!entry["reason"].as_str().unwrap().is_empty());
    }
    assert_eq!(
        shown.len(),
        messages.len(),
        "a shown message stands for no path message"
    );
    let shown_tokens: u64 = shown
        .iter()
        .map(|&at| messages[at]["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(
        shown_tokens, total,
        "the explanation's tokens differ from the total"
    );
}

/// The budget shows what its dry run showed: placeholders the dry run could only describe (node null,
/// from, to) are now nodes with the same text, and summaries_created lists them too.
fn check_dry_run_matches(before: &Database, dry: &Value, real: &Value) {
    let dry_messages = dry["messages"].as_array().unwrap();
    let real_messages = real["messages"].as_array().unwrap();
    assert_eq!(dry_messages.len(), real_messages.len());
    assert_eq!(dry["total_tokens"], real["total_tokens"]);
    let mut created = Vec::new();
    for (d, r) in dry_messages.iter().zip(real_messages) {
        if d["node"].is_null() {
            let n: u64 = r["node"].as_str().unwrap()[1..].parse().unwrap();
            assert!(
                n as usize >= tl(before).nodes.len(),
                "a dry run hid an existing placeholder"
            );
            assert_eq!((&d["text"], &d["tokens"]), (&r["text"], &r["tokens"]));
            created.push(r["node"].clone());
        } else {
            assert_eq!(d, r);
        }
    }
    let listed: Vec<&Value> = dry["summaries_created"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let real_listed: Vec<&Value> = real["summaries_created"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| !created.contains(n))
        .collect();
    assert_eq!(listed, real_listed);
}

/// Make a non-current branch eligible (A1): a summary of its whole path (so the watermark reaches
/// the head), no pins on it, and a real summary for every placeholder range on it.
fn make_eligible(db: &mut Database, name: &str, unique: &mut u64) {
    let t = tl(db);
    let head = t.branch(name).unwrap().head;
    let path = t.path(head);
    let mut summarize = |db: &mut Database, from: u64, to: u64| {
        *unique += 1;
        ok(
            db,
            "summarize",
            json!({ "from": node_id(from), "to": node_id(to), "summary": format!("archive summary {unique}"), "tokens": 3 }),
        );
    };
    if let Some(&first) = path.first() {
        summarize(db, first, head);
    }
    for &n in &path {
        if tl(db).pins.contains(&n) {
            ok(db, "unpin", json!({ "node": node_id(n) }));
        }
    }
    let open: Vec<(u64, u64)> = tl(db)
        .nodes
        .iter()
        .filter(|n| n.is_placeholder())
        .map(|n| n.summary.as_ref().map(|s| (s.from, s.to)).unwrap())
        .filter(|&(from, to)| {
            path.contains(&from)
                && path.contains(&to)
                && !tl(db).nodes.iter().any(|n| {
                    n.is_real_summary()
                        && n.summary
                            .as_ref()
                            .is_some_and(|s| (s.from, s.to) == (from, to))
                })
        })
        .collect();
    for (from, to) in open {
        summarize(db, from, to);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Random trees with pins, summaries and budgets, then random archival: the watermark rules hold
    /// after every step, budgets are stable, original text is always retrievable, contexts never change
    /// with archival, the zones partition the nodes, and the file round-trips exactly.
    #[test]
    fn operations_keep_their_promises(
        actions in proptest::collection::vec(action(), 1..50),
        archive_order in proptest::collection::vec((0usize..100, proptest::bool::weighted(0.7)), 0..6),
        restore_order in 0usize..2,
    ) {
        let (mut db, originals) = build(&actions);
        check_round_trip(&db);

        // B6 / Σ5: every appended message is still exactly retrievable through context.
        let before = contexts(&mut db);
        for (n, (role, text, tokens)) in &originals {
            let last = before[n].as_array().unwrap().last().unwrap().clone();
            prop_assert_eq!(&last["node"], &json!(node_id(*n)));
            prop_assert_eq!(&last["role"], &json!(role));
            prop_assert_eq!(&last["text"], &json!(text));
            prop_assert_eq!(&last["tokens"], &json!(tokens));
            prop_assert!(!before[n].to_string().contains("NOTE-SECRET"));
        }

        // Random archival of non-current branches, some prepared to be eligible and some not.
        let mut unique = 0;
        for (pick, prepare) in archive_order {
            let others: Vec<String> = tl(&db).branches.iter()
                .filter(|b| b.name != tl(&db).current_branch)
                .map(|b| b.name.clone())
                .collect();
            if others.is_empty() {
                break;
            }
            let name = others[pick % others.len()].clone();
            if prepare {
                make_eligible(&mut db, &name, &mut unique);
                check_watermarks(&db);
            }
            let check = ok(&mut db, "archive_check", json!({ "branch": name }));
            if prepare {
                prop_assert_eq!(&check, &json!({ "eligible": true, "reasons": [] }));
            }
            // A2: exactly the branch's own hot, unpinned raw messages move.
            let t = tl(&db);
            let expected: Vec<Value> = t.path(t.branch(&name).unwrap().head).into_iter()
                .filter(|&n| {
                    let node = &t.nodes[n as usize];
                    !node.cold && node.summary.is_none() && !t.pins.contains(&n)
                        && t.branches.iter().filter(|b| on_path(t, n, b.head)).count() == 1
                })
                .map(|n| json!(node_id(n)))
                .collect();
            let snapshot = db.clone();
            let contexts_before = contexts(&mut db);
            let result = call(&mut db, "archive_branch", json!({ "branch": name }));
            match result {
                Ok(v) => {
                    prop_assert_eq!(&check["eligible"], &json!(true));
                    prop_assert_eq!(&v, &json!({ "archived": expected }));
                    prop_assert!(tl(&db).branch(&name).is_err());
                    // Restored at once, it gives back the same database apart from the audit.
                    let mut undone = db.clone();
                    let restored = ok(&mut undone, "restore_branch", json!({ "branch": name }));
                    let head = snapshot.timelines[0].branch(&name).unwrap().head;
                    prop_assert_eq!(
                        restored,
                        json!({ "branch": name, "head": node_id(head), "restored": v["archived"] })
                    );
                    undone.audit.clear();
                    let mut expected_db = snapshot.clone();
                    expected_db.audit.clear();
                    prop_assert!(undone == expected_db, "archive then restore changed the database");
                    for n in &expected {
                        let n: usize = n.as_str().unwrap()[1..].parse().unwrap();
                        prop_assert!(!snapshot.timelines[0].nodes[n].cold && tl(&db).nodes[n].cold);
                    }
                }
                Err(e) => {
                    prop_assert_eq!(&check["eligible"], &json!(false), "{:?}", e);
                    prop_assert!(db == snapshot);
                }
            }
            // A3: archival changes no context, and the current branch is never archivable.
            prop_assert_eq!(&contexts(&mut db), &contexts_before);
            let current = tl(&db).current_branch.clone();
            let refused = call(&mut db, "archive_branch", json!({ "branch": current })).is_err();
            prop_assert!(refused, "the current branch was archived");
            check_watermarks(&db);
            check_round_trip(&db);
        }
        // Restore every archived branch, newest archival first or not: each comes back with a hot
        // head, its watermark still covers only covered messages, and no context changes.
        let mut archived: Vec<String> = tl(&db).archived.iter().map(|a| a.name.clone()).collect();
        archived.reverse();
        if restore_order % 2 == 1 && !archived.is_empty() {
            archived.rotate_left(1);
        }
        for name in archived {
            if tl(&db).branch(&name).is_ok() {
                continue;
            }
            let record = tl(&db).archived.iter().rev().find(|a| a.name == name).unwrap().clone();
            let v = ok(&mut db, "restore_branch", json!({ "branch": name }));
            prop_assert_eq!(&v["head"], &json!(node_id(record.head)));
            let branch = tl(&db).branch(&name).unwrap().clone();
            prop_assert_eq!((branch.head, branch.watermark), (record.head, record.watermark));
            prop_assert!(!tl(&db).nodes[branch.head as usize].cold, "a restored head is cold");
            check_watermarks(&db);
            check_round_trip(&db);
        }
        let after = contexts(&mut db);
        for (n, context) in &before {
            prop_assert_eq!(&after[n], context);
        }
        check_round_trip(&db);
    }
}

// ---------------------------------------------------------------------------------------------
// Path windows (issue 24): the window planner gives the full scan's layout
// ---------------------------------------------------------------------------------------------

/// What a planned budget shows, in node IDs (window and full-scan paths index differently): each
/// segment with the nodes, count and tokens it stands for, the total and the required tokens.
fn shown(planned: &ops::Planned) -> Value {
    let ((path, _, candidates), plan) = (&planned.input, &planned.plan);
    match plan {
        Ok(plan) => {
            let segments: Vec<Value> = plan
                .segments
                .iter()
                .map(|s| match *s {
                    Segment::Keep(i) => json!(["keep", path[i].id]),
                    Segment::Summary(c) => json!(["summary", candidates[c].0]),
                    Segment::Gap { start, end } => {
                        let s = ops::span(path, planned.first, start, end);
                        json!(["gap", s.from, s.to, s.count, s.omitted, s.parent])
                    }
                })
                .collect();
            json!({
                "segments": segments,
                "total": plan.total_tokens.to_string(),
                "required": plan.required_tokens.to_string(),
            })
        }
        Err(infeasible) => json!({ "infeasible": infeasible.required_tokens.to_string() }),
    }
}

/// Compare the window planner with the full scan for every node and `maxes` on one engine's
/// transaction; returns how many budgets the window answered with a shortened path.
fn compare_planners(tx: &mut dyn timeline::store::Tx, db: &Database, maxes: &[u64]) -> usize {
    let t = tl(db);
    let mut shortened = 0;
    for n in 1..t.nodes.len() as u64 {
        let path_tokens: u64 = t.path(n).iter().map(|&p| t.nodes[p as usize].tokens).sum();
        for &m in maxes {
            let max = m % (path_tokens + 2);
            let full = ops::plan_full_scan(tx, t.id, n, max).unwrap();
            let fast = ops::plan_path(tx, t.id, n, max).unwrap();
            assert_eq!(shown(&fast), shown(&full), "budget of n{n} with max {max}");
            if fast.input.0.len() < full.input.0.len() {
                shortened += 1;
            }
        }
    }
    shortened
}

/// Long chains of larger messages with forks, pins, summaries, placeholders and archival.
fn window_action() -> impl Strategy<Value = Action> {
    let pick = 0usize..1000;
    prop_oneof![
        14 => (0usize..3, prop_oneof![0u64..5, 20u64..120], Just(false))
            .prop_map(|(role, tokens, intent)| Action::Append { role, tokens, intent }),
        1 => (pick.clone(), proptest::bool::ANY).prop_map(|(at, switch)| Action::Fork { at, switch }),
        1 => pick.clone().prop_map(|to| Action::Switch { to }),
        1 => pick.clone().prop_map(|at| Action::Pin { at }),
        1 => (pick.clone(), 0usize..6, 0u64..40, Just(None), proptest::option::weighted(0.2, pick.clone()))
            .prop_map(|(to, up, tokens, derive, supersede)| Action::Summarize { to, up, tokens, derive, supersede }),
        2 => (pick, 0u64..60, 0u64..40)
            .prop_map(|(at, percent, extra)| Action::Budget { at, percent, extra }),
    ]
}

/// One case of the window-planner property: every budget laid out alike by the window planner and
/// the full scan, on the JSON engine's in-memory model and on `engine` (SQLite or PostgreSQL).
fn window_case(
    actions: &[Action],
    archive: &[usize],
    maxes: &[u64],
    engine: crate::common::Engine,
) {
    let (mut db, _) = build(actions);
    for &pick in archive {
        let others: Vec<String> = tl(&db)
            .branches
            .iter()
            .filter(|b| b.name != tl(&db).current_branch)
            .map(|b| b.name.clone())
            .collect();
        if let Some(name) = others.get(pick % others.len().max(1)) {
            let _ = call(&mut db, "archive_branch", json!({ "branch": name }));
        }
    }
    let mut copy = db.clone();
    compare_planners(
        &mut timeline::store::MemTx {
            db: &mut copy,
            engine: timeline::store::Engine::Json,
        },
        &db,
        maxes,
    );
    let dir = crate::common::TempDir::new();
    let path = match engine {
        crate::common::Engine::Postgres => std::path::PathBuf::from(
            crate::common::postgres::fresh_uri()
                .expect("the PostgreSQL property checks for a server first"),
        ),
        _ => dir.path().join("db.sqlite"),
    };
    timeline::store::Store::create_from(&path, &db).unwrap();
    let mut store = timeline::store::Store::open(path).unwrap();
    store
        .read(|tx| Ok(compare_planners(tx, &db, maxes)))
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The window planner (`ops::plan_path`) and the full scan (`ops::plan_full_scan`) lay out every
    /// budget alike, on the JSON engine's in-memory model and on SQLite.
    #[test]
    fn window_planner_matches_the_full_scan(
        actions in proptest::collection::vec(window_action(), 1..60),
        archive in proptest::collection::vec(0usize..100, 0..3),
        maxes in proptest::collection::vec(0u64..2000, 1..4),
    ) {
        window_case(&actions, &archive, &maxes, crate::common::Engine::Sqlite);
    }
}

proptest! {
    // Fewer cases than on SQLite: every plan is a few round trips to the test server.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The same on PostgreSQL, each case in a schema of its own on the test process's server; where
    /// the server programs are missing, one loud line and no case (a failure under CI=true).
    #[test]
    fn window_planner_matches_the_full_scan_on_postgres(
        actions in proptest::collection::vec(window_action(), 1..60),
        archive in proptest::collection::vec(0usize..100, 0..3),
        maxes in proptest::collection::vec(0u64..2000, 1..4),
    ) {
        if crate::common::postgres::server().is_none() {
            return Ok(());
        }
        window_case(&actions, &archive, &maxes, crate::common::Engine::Postgres);
    }
}

/// The window planner really shortens paths: a chain of 200 messages of 50 tokens with a pin near
/// the root and a placeholder from an earlier budget, at its head.
#[test]
fn window_planner_shortens_a_long_chain() {
    let mut db = Database::default();
    ok(&mut db, "create", json!({}));
    for i in 0..200 {
        ok(
            &mut db,
            "append",
            json!({ "role": "user", "text": format!("m{i}"), "tokens": 50 }),
        );
    }
    ok(
        &mut db,
        "context_budget",
        json!({ "node": "n200", "max_tokens": 1000 }),
    );
    let mut copy = db.clone();
    let mut tx = timeline::store::MemTx {
        db: &mut copy,
        engine: timeline::store::Engine::Json,
    };
    // n22 to n200 (a path of more than 21 messages passes the budget), and 11 of n1 to n19, whose
    // budget (1000 modulo the path's tokens + 2) is smaller than their path.
    assert_eq!(compare_planners(&mut tx, &db, &[1000]), 190);
    // A pin above the window is a message the layout shows: the full scan plans it.
    ok(&mut db, "pin", json!({ "node": "n3" }));
    let mut copy = db.clone();
    let mut tx = timeline::store::MemTx {
        db: &mut copy,
        engine: timeline::store::Engine::Json,
    };
    let full = ops::plan_full_scan(&mut tx, 0, 200, 1000).unwrap();
    assert_eq!(
        ops::plan_window(&mut tx, 0, 200, 1000)
            .unwrap()
            .map(|p| shown(&p)),
        None
    );
    assert_eq!(full.input.0.len(), 200);
}
