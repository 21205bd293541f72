//! The draw.io diagram: an uncompressed mxGraph document that the draw.io desktop and web apps open.
//!
//! Layout: depth → x, lane → y. A run of single children stays in its parent's lane; at a branch point
//! the first child continues the lane and every later child opens a new lane below everything drawn so
//! far, so each (depth, lane) grid cell holds at most one node and no two boxes overlap.
//!
//! Cells:
//! - `0` the model root; `1` the visible layer "Messages"; `relations` a second layer, hidden
//!   (`visible="0"`), named "Summary coverage, versions and dependencies".
//! - `n0` a small round start node for the timeline root (not a message, no `text_json`).
//! - `nK` one `<UserObject>` per message, hot and cold, with the full text in `text_json` (a JSON
//!   string, XML-escaped) and a shortened label.
//! - `p-nK` the parent link of every message (parent → nK) on the Messages layer.
//! - `cf-nK` / `ct-nK` summary or placeholder nK → the first / last node of its range (one `cf-nK`
//!   labelled "covers" when the range is a single node), `sv-nK` nK → the summary it supersedes,
//!   `df-nK-nJ` nK → nJ listed in its derived_from; all on the hidden layer.
//!
//! `nodes` counts the message vertices (n0 excluded); `edges` counts every edge cell written: the
//! parent links plus the hidden layer's edges.

use super::{Rendered, cut, describe, heads_by_node};
use crate::model::{ROOT, SummaryKind, Timeline, node_id};
use crate::terminal::{json_quote, needs_escape};
use std::fmt::Write as _;

const MARGIN: u64 = 40;
const X_STEP: u64 = 240;
const Y_STEP: u64 = 110;
const NODE_W: u64 = 200;
const NODE_H: u64 = 80;
const ROOT_SIZE: u64 = 40;
/// Scalars of message text shown in a label (the full text is in `text_json`).
const LABEL_SCALARS: usize = 40;
/// Scalars of a branch name shown in a label.
const BRANCH_SCALARS: usize = 24;

/// Escape for an XML attribute value. Characters XML 1.0 cannot carry at all (most C0 controls and
/// U+FFFE/U+FFFF) become U+FFFD; the exact text is always available in `text_json`.
fn attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Escape for the HTML of a label (draw.io's `html=1`); the result is then XML-escaped by `attr`.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A one-line preview: line breaks and invisible characters become spaces, cut with `…`.
fn preview(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if needs_escape(c) { ' ' } else { c })
        .collect();
    let (kept, was_cut) = cut(&flat, max);
    if was_cut {
        format!("{kept}…")
    } else {
        kept.to_string()
    }
}

/// Lane (row) of every node; see the module comment.
fn lanes(timeline: &Timeline) -> Vec<u64> {
    let children = &timeline.derived.children;
    let mut lane = vec![0u64; timeline.nodes.len()];
    let mut next = 1;
    let mut stack: Vec<(u64, Option<u64>)> = vec![(ROOT, Some(0))];
    while let Some((n, inherited)) = stack.pop() {
        lane[n as usize] = inherited.unwrap_or_else(|| {
            next += 1;
            next - 1
        });
        for (i, &kid) in children[n as usize].iter().enumerate().rev() {
            stack.push((kid, (i == 0).then_some(lane[n as usize])));
        }
    }
    lane
}

fn style(timeline: &Timeline, n: u64, head: Option<bool>) -> String {
    let node = &timeline.nodes[n as usize];
    let mut style = String::from("rounded=1;whiteSpace=wrap;html=1;arcSize=16;fontSize=11;");
    let (fill, stroke, extra) = match (head, &node.summary) {
        (Some(true), _) => ("#d5e8d4", "#82b366", "strokeWidth=2;"),
        (Some(false), _) => ("#fff2cc", "#d6b656", "strokeWidth=2;"),
        _ if node.cold => ("#f5f5f5", "#999999", "dashed=1;fontColor=#666666;"),
        (None, Some(s)) if s.kind == SummaryKind::Placeholder => {
            ("#ffffff", "#9673a6", "dashed=1;")
        }
        (None, Some(_)) => ("#e1d5e7", "#9673a6", ""),
        (None, None) => ("#dae8fc", "#6c8ebf", ""),
    };
    let _ = write!(style, "fillColor={fill};");
    if timeline.pins.contains(&n) {
        style.push_str("strokeColor=#d79b00;strokeWidth=3;");
    } else if timeline.derived.stale[n as usize] {
        style.push_str("strokeColor=#b85450;strokeWidth=2;");
    } else {
        let _ = write!(style, "strokeColor={stroke};");
    }
    style.push_str(extra);
    if timeline.derived.superseded_by.contains_key(&n) {
        style.push_str("opacity=60;textOpacity=60;");
    }
    style
}

fn edge(out: &mut String, id: &str, layer: &str, style: &str, label: &str, from: u64, to: u64) {
    let _ = writeln!(
        out,
        "        <mxCell id=\"{id}\" value=\"{}\" style=\"{style}\" edge=\"1\" parent=\"{layer}\" source=\"{}\" target=\"{}\">\n          <mxGeometry relative=\"1\" as=\"geometry\" />\n        </mxCell>",
        attr(label),
        node_id(from),
        node_id(to)
    );
}

const PARENT_EDGE: &str = "edgeStyle=orthogonalEdgeStyle;rounded=1;html=1;endArrow=block;endFill=1;exitX=1;exitY=0.5;entryX=0;entryY=0.5;strokeColor=#6c8ebf;";
const COVER_EDGE: &str =
    "curved=1;html=1;dashed=1;endArrow=open;strokeColor=#9673a6;fontColor=#9673a6;fontSize=10;";
const VERSION_EDGE: &str =
    "curved=1;html=1;endArrow=block;endFill=0;strokeColor=#b85450;fontColor=#b85450;fontSize=10;";
const DEPENDENCY_EDGE: &str = "curved=1;html=1;dashed=1;dashPattern=1 3;endArrow=open;strokeColor=#d79b00;fontColor=#d79b00;fontSize=10;";

pub fn render(timeline: &Timeline) -> Rendered {
    let heads = heads_by_node(timeline);
    let lane = lanes(timeline);
    let depth = &timeline.derived.depth;
    let mut out = String::new();
    let tl = timeline.id_str();
    let _ = writeln!(out, "<mxfile host=\"Timeline\">");
    let _ = writeln!(
        out,
        "  <diagram id=\"{tl}\" name=\"Timeline {tl}\">\n    <mxGraphModel dx=\"1200\" dy=\"800\" grid=\"1\" gridSize=\"10\" guides=\"1\" tooltips=\"1\" connect=\"1\" arrows=\"1\" fold=\"1\" page=\"0\" pageScale=\"1\" math=\"0\" shadow=\"0\">\n      <root>\n        <mxCell id=\"0\" />\n        <mxCell id=\"1\" value=\"Messages\" parent=\"0\" />\n        <mxCell id=\"relations\" value=\"Summary coverage, versions and dependencies\" parent=\"0\" visible=\"0\" />"
    );
    // The root: a small start circle in the first grid cell.
    let _ = writeln!(
        out,
        "        <UserObject label=\"n0\" id=\"n0\" node=\"n0\" role=\"root\">\n          <mxCell style=\"ellipse;whiteSpace=wrap;html=1;aspect=fixed;fontSize=10;fillColor=#f5f5f5;strokeColor=#666666;fontColor=#333333;\" vertex=\"1\" parent=\"1\">\n            <mxGeometry x=\"{}\" y=\"{}\" width=\"{ROOT_SIZE}\" height=\"{ROOT_SIZE}\" as=\"geometry\" />\n          </mxCell>\n        </UserObject>",
        MARGIN + (NODE_W - ROOT_SIZE) / 2,
        MARGIN + lane[0] * Y_STEP + (NODE_H - ROOT_SIZE) / 2
    );
    let mut nodes = 0;
    for n in 1..timeline.nodes.len() as u64 {
        let node = &timeline.nodes[n as usize];
        let node_heads = heads.get(&n).map(Vec::as_slice).unwrap_or_default();
        let head = node_heads.first().map(|&(current, _)| current);
        let mut header = describe(timeline, n);
        for &(current, name) in node_heads {
            let (kept, was_cut) = cut(name, BRANCH_SCALARS);
            let _ = write!(
                header,
                " {} {}{}",
                if current { "HEAD*" } else { "HEAD" },
                json_quote(kept),
                if was_cut { "…" } else { "" }
            );
        }
        let label = format!(
            "<b>{}</b><br>{}",
            html(&header),
            html(&preview(&node.text, LABEL_SCALARS))
        );
        let mut data = format!(
            "node=\"{}\" role=\"{}\" tokens=\"{}\" zone=\"{}\" pinned=\"{}\"",
            node_id(n),
            node.role.as_str(),
            node.tokens,
            if node.cold { "cold" } else { "hot" },
            timeline.pins.contains(&n)
        );
        if let Some(s) = &node.summary {
            let _ = write!(
                data,
                " summary_kind=\"{}\" covers=\"{}..{}\" version=\"{}\" stale=\"{}\"",
                s.kind.as_str(),
                node_id(s.from),
                node_id(s.to),
                s.version,
                timeline.derived.stale[n as usize]
            );
        }
        if let Some(intent) = &node.intent {
            let _ = write!(data, " intent_tag=\"{}\"", attr(&intent.tag));
            if let Some(note) = &intent.note {
                let _ = write!(data, " intent_note=\"{}\"", attr(note));
            }
        }
        if !node_heads.is_empty() {
            let names: Vec<&str> = node_heads.iter().map(|&(_, name)| name).collect();
            let _ = write!(
                data,
                " heads_json=\"{}\"",
                attr(&serde_json::json!(names).to_string())
            );
        }
        let _ = writeln!(
            out,
            "        <UserObject label=\"{}\" text_json=\"{}\" id=\"{}\" {data}>\n          <mxCell style=\"{}\" vertex=\"1\" parent=\"1\">\n            <mxGeometry x=\"{}\" y=\"{}\" width=\"{NODE_W}\" height=\"{NODE_H}\" as=\"geometry\" />\n          </mxCell>\n        </UserObject>",
            attr(&label),
            attr(&json_quote(&node.text)),
            node_id(n),
            style(timeline, n, head),
            MARGIN + depth[n as usize] * X_STEP,
            MARGIN + lane[n as usize] * Y_STEP,
        );
        nodes += 1;
    }
    let mut edges = 0;
    for n in 1..timeline.nodes.len() as u64 {
        let parent = timeline.nodes[n as usize].parent;
        edge(
            &mut out,
            &format!("p-{}", node_id(n)),
            "1",
            PARENT_EDGE,
            "",
            parent,
            n,
        );
        edges += 1;
    }
    for n in 1..timeline.nodes.len() as u64 {
        let Some(s) = &timeline.nodes[n as usize].summary else {
            continue;
        };
        let id = node_id(n);
        if s.from == s.to {
            edge(
                &mut out,
                &format!("cf-{id}"),
                "relations",
                COVER_EDGE,
                "covers",
                n,
                s.from,
            );
            edges += 1;
        } else {
            edge(
                &mut out,
                &format!("cf-{id}"),
                "relations",
                COVER_EDGE,
                "covers from",
                n,
                s.from,
            );
            edge(
                &mut out,
                &format!("ct-{id}"),
                "relations",
                COVER_EDGE,
                "covers to",
                n,
                s.to,
            );
            edges += 2;
        }
        if let Some(old) = s.supersedes {
            edge(
                &mut out,
                &format!("sv-{id}"),
                "relations",
                VERSION_EDGE,
                "supersedes",
                n,
                old,
            );
            edges += 1;
        }
        let mut seen = std::collections::BTreeSet::new();
        for &source in s.derived_from.iter().filter(|&&d| seen.insert(d)) {
            let dep = format!("df-{id}-{}", node_id(source));
            edge(
                &mut out,
                &dep,
                "relations",
                DEPENDENCY_EDGE,
                "derived from",
                n,
                source,
            );
            edges += 1;
        }
    }
    out.push_str("      </root>\n    </mxGraphModel>\n  </diagram>\n</mxfile>\n");
    Rendered {
        text: out,
        nodes,
        edges,
    }
}
