//! The HTML view (`--format html`): one self-contained page of a whole timeline for people.
//!
//! The page carries the timeline as one JSON blob in `<script type="application/json">` and renders it
//! with its own inline script (`html/page.js`, styled by `html/page.css`), which builds every element
//! with `textContent`, never with markup from data. The blob is escaped so that no text can end the
//! script element (`<`, `>`, `&`, U+2028 and U+2029 become `\uXXXX`), and the page's
//! Content-Security-Policy allows only that one script and that one style, named by their SHA-256, so
//! nothing else can run even if a text got through. The page names no URL: it opens from disk offline.
//!
//! The blob is columnar so the file stays linear in the texts: per message a parent offset, a role
//! letter and a time offset, then the texts; pins, cold messages, intents and summaries are listed
//! sparsely (spec/NOTES.md, "HTML export").

use super::Counts;
use crate::model::{SummaryKind, Timeline, timeline_id};
use sha2::{Digest, Sha256};
use std::io::{self, Write};

const CSS: &str = include_str!("html/page.css");
const JS: &str = include_str!("html/page.js");

/// Write `timeline` as an HTML page to `out`; `start` is the message the page opens at.
pub fn write(timeline: &Timeline, start: Option<u64>, out: &mut dyn Write) -> io::Result<Counts> {
    let title = match &timeline.title {
        Some(t) => format!("{} ({}) - Timeline", tab_text(t), timeline.id_str()),
        None => format!("{} - Timeline", timeline.id_str()),
    };
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src '{}'; style-src '{}'; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n\
         <noscript><p>This page shows a Timeline export and needs JavaScript, which runs only the page's own script.</p></noscript>\n\
         <script type=\"application/json\" id=\"timeline-data\">",
        sha256_source(JS),
        sha256_source(CSS),
        escape_html(&title),
    )?;
    let counts = write_data(timeline, start, out)?;
    write!(out, "</script>\n<script>{JS}</script>\n</body>\n</html>\n")?;
    Ok(counts)
}

/// A title as the browser's tab and window list show it: without the bidirectional formatting
/// characters (ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI). In `<title>` nothing can
/// isolate them, so a right-to-left override would reverse the rest of the tab's text, the page's
/// name included. The page's heading shows the title as stored, in an isolate (`<bdi>`).
fn tab_text(title: &str) -> String {
    title
        .chars()
        .filter(|c| {
            !matches!(c,
                '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// A CSP source naming exactly this inline code: `sha256-<base64 of its SHA-256>`.
fn sha256_source(code: &str) -> String {
    format!("sha256-{}", base64(&Sha256::digest(code.as_bytes())))
}

/// Standard base64 with padding (the encoding CSP hashes use).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// Text as HTML character data or attribute value.
fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\0' => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

/// `text` as a JSON string that is safe inside a script element: besides JSON's own escapes, `<`,
/// `>` and `&` (so no `</script>` or `<!--` can appear) and U+2028/U+2029 are written as `\uXXXX`.
fn json_string(text: &str) -> String {
    let json = serde_json::to_string(text).expect("a string serializes");
    let mut safe = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => safe.push_str("\\u003c"),
            '>' => safe.push_str("\\u003e"),
            '&' => safe.push_str("\\u0026"),
            '\u{2028}' => safe.push_str("\\u2028"),
            '\u{2029}' => safe.push_str("\\u2029"),
            c => safe.push(c),
        }
    }
    safe
}

/// Write the page's data blob (format: spec/NOTES.md, "HTML export"); node numbers are plain integers.
fn write_data(timeline: &Timeline, start: Option<u64>, out: &mut dyn Write) -> io::Result<Counts> {
    let messages = timeline.nodes.len().saturating_sub(1) as u64;
    write!(
        out,
        "{{\"format\":1,\"timeline\":{},\"title\":{},\"current\":{},\"start\":{}",
        json_string(&timeline_id(timeline.id)),
        timeline
            .title
            .as_deref()
            .map_or_else(|| "null".to_string(), json_string),
        json_string(&timeline.current_branch),
        start.map_or_else(|| "null".to_string(), |n| n.to_string()),
    )?;
    out.write_all(b",\"branches\":[")?;
    for (i, branch) in timeline.branches.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(out, "{sep}[{},{}]", json_string(&branch.name), branch.head)?;
    }
    out.write_all(b"],\"archived\":[")?;
    for (i, branch) in timeline.archived.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(out, "{sep}[{},{}]", json_string(&branch.name), branch.head)?;
    }
    // Per message n (from n1): n - parent, which is 1 along a conversation.
    out.write_all(b"],\"parent\":[")?;
    for (n, node) in timeline.nodes.iter().enumerate().skip(1) {
        let sep = if n == 1 { "" } else { "," };
        write!(out, "{sep}{}", n as u64 - node.parent)?;
    }
    out.write_all(b"],\"role\":\"")?;
    for node in timeline.nodes.iter().skip(1) {
        let letter = match (&node.summary, node.role.as_str()) {
            (Some(s), _) if s.kind == SummaryKind::Placeholder => "P",
            (Some(_), _) => "S",
            (None, "user") => "u",
            (None, "assistant") => "a",
            (None, _) => "s",
        };
        out.write_all(letter.as_bytes())?;
    }
    // Per message: seconds since the previous message that has a time (the first one absolute), or
    // null for a message written before times were kept.
    out.write_all(b"\",\"time\":[")?;
    let mut previous = 0i128;
    for (n, node) in timeline.nodes.iter().enumerate().skip(1) {
        let sep = if n == 1 { "" } else { "," };
        match node.created_at {
            Some(t) => {
                write!(out, "{sep}{}", i128::from(t) - previous)?;
                previous = i128::from(t);
            }
            None => write!(out, "{sep}null")?,
        }
    }
    out.write_all(b"],\"text\":[")?;
    for (n, node) in timeline.nodes.iter().enumerate().skip(1) {
        let sep = if n == 1 { "" } else { "," };
        write!(out, "{sep}{}", json_string(&node.text))?;
    }
    out.write_all(b"],\"pins\":[")?;
    for (i, pin) in timeline.pins.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(out, "{sep}{pin}")?;
    }
    out.write_all(b"],\"cold\":[")?;
    let mut first = true;
    for (n, node) in timeline.nodes.iter().enumerate() {
        if node.cold {
            write!(out, "{}{n}", if first { "" } else { "," })?;
            first = false;
        }
    }
    // [node, tag, note or null]
    out.write_all(b"],\"intent\":[")?;
    let mut first = true;
    for (n, node) in timeline.nodes.iter().enumerate() {
        if let Some(intent) = &node.intent {
            write!(
                out,
                "{}[{n},{},{}]",
                if first { "" } else { "," },
                json_string(&intent.tag),
                intent
                    .note
                    .as_deref()
                    .map_or_else(|| "null".to_string(), json_string)
            )?;
            first = false;
        }
    }
    // [node, from, to, version, supersedes, superseded by, derived from, stale]; 0 for none.
    out.write_all(b"],\"summary\":[")?;
    let mut first = true;
    for (n, node) in timeline.nodes.iter().enumerate() {
        if let Some(s) = &node.summary {
            let derived: Vec<String> = s.derived_from.iter().map(u64::to_string).collect();
            write!(
                out,
                "{}[{n},{},{},{},{},{},[{}],{}]",
                if first { "" } else { "," },
                s.from,
                s.to,
                s.version,
                s.supersedes.unwrap_or(0),
                timeline
                    .derived
                    .superseded_by
                    .get(&(n as u64))
                    .copied()
                    .unwrap_or(0),
                derived.join(","),
                u8::from(timeline.derived.stale[n]),
            )?;
            first = false;
        }
    }
    out.write_all(b"]}")?;
    Ok(Counts {
        nodes: messages,
        edges: messages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_like_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn titles_are_escaped_as_html_text() {
        assert_eq!(
            escape_html("</title><script>x('&')</script>\0"),
            "&lt;/title&gt;&lt;script&gt;x(&#39;&amp;&#39;)&lt;/script&gt;\u{FFFD}"
        );
    }

    #[test]
    fn json_strings_cannot_end_the_script_element() {
        assert_eq!(
            json_string("</script><!-- & \u{2028}\u{2029}\0"),
            r#""\u003c/script\u003e\u003c!-- \u0026 \u2028\u2029\u0000""#
        );
    }
}
