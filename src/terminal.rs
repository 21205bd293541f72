//! Text that reaches a terminal: the one place that decides which characters are written escaped.
//!
//! Caller-chosen text (messages, branch names, MCP method names, file paths) can hold characters that
//! act on the terminal of whoever reads the output or the log instead of being shown: C0 controls
//! (ESC starts sequences that retitle, recolour or clear the terminal), DEL, C1 controls (U+009B is a
//! one-character CSI), and bidirectional formatting characters that make text display in another
//! order than it is stored. Every front-end writes such characters escaped:
//!
//! - log lines (`tl-mcp` on standard error) and text views with JSON-style escapes, `\u001b` ([`escape_line`]);
//! - JSON (`tl` on standard output and standard error, `tl-mcp` on standard output) as `\uXXXX`
//!   inside strings, which serde_json already does for C0 but not for the others ([`escape_json`]);
//!   the JSON stays valid and parses to exactly the same value;
//! - the ASCII export, whose texts and branch names are JSON string literals ([`json_quote`]).

use std::borrow::Cow;

/// Whether `c` is written escaped: C0 controls, DEL, C1 controls, the bidirectional formatting
/// characters (ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI), the line and paragraph
/// separators, the byte-order mark, and the two non-characters XML forbids (U+FFFE, U+FFFF).
///
/// Joiners (U+200C, U+200D) are not escaped: emoji sequences and many scripts need them.
pub fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fffe}' | '\u{ffff}')
}

/// Quick test on bytes: `false` means no character of `text` needs escaping. Every character that
/// does is either a byte below 0x20, DEL, or starts with a byte of 0xC2 or more.
fn may_need_escape(text: &str) -> bool {
    text.bytes().any(|b| b < 0x20 || b == 0x7f || b >= 0xc2)
}

/// One line of a log or text view: each character of [`needs_escape`] as `\u001b`, the style of
/// every other output (JSON, the ASCII tree); newlines and tabs too, so a
/// caller's text can never start a line of its own. Everything else is kept as it is.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    if !may_need_escape(text) || !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Serialized JSON with every character of [`needs_escape`] written as `\uXXXX`.
///
/// Such characters can only occur inside strings (JSON's own syntax is ASCII and serde_json writes
/// C0 controls escaped), and all of them are in the Basic Multilingual Plane, so each becomes one
/// `\uXXXX` escape: the result is valid JSON with exactly the same value.
pub fn escape_json(json: &str) -> Cow<'_, str> {
    if !may_need_escape(json) || !json.chars().any(needs_escape) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` as a JSON string literal (quotes included) that decodes back to exactly `text`: `\"`, `\\`,
/// `\n`, `\r`, `\t`, and `\uXXXX` for the other characters of [`needs_escape`]. One line, safe to
/// print, and valid inside XML once the XML escapes are applied.
pub fn json_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether the terminal on standard output shows ANSI colour sequences (call only when it is a
/// terminal). A Windows console shows them only with virtual-terminal processing, which is turned on
/// here; a console that refuses it (before Windows 10) would print them as text, so it gets none.
pub fn shows_ansi_colour() -> bool {
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Console::{
            ENABLE_VIRTUAL_TERMINAL_PROCESSING, GetConsoleMode, GetStdHandle, STD_OUTPUT_HANDLE,
            SetConsoleMode,
        };
        // SAFETY: the handle is the process's own standard output (not closed here) and `mode` is a
        // local the call writes.
        unsafe {
            let out = GetStdHandle(STD_OUTPUT_HANDLE);
            let mut mode = 0;
            GetConsoleMode(out, &mut mode) != 0
                && (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
                    || SetConsoleMode(out, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0)
        }
    }
    #[cfg(not(windows))]
    true
}

/// The width of the terminal on standard output in columns, when the system tells it.
pub fn columns() -> Option<usize> {
    #[cfg(all(
        unix,
        target_pointer_width = "64",
        any(target_os = "linux", target_os = "macos")
    ))]
    {
        #[repr(C)]
        struct WinSize {
            rows: u16,
            cols: u16,
            x_pixels: u16,
            y_pixels: u16,
        }
        unsafe extern "C" {
            fn ioctl(fd: std::ffi::c_int, request: std::ffi::c_ulong, ...) -> std::ffi::c_int;
        }
        #[cfg(target_os = "linux")]
        const TIOCGWINSZ: std::ffi::c_ulong = 0x5413;
        #[cfg(target_os = "macos")]
        const TIOCGWINSZ: std::ffi::c_ulong = 0x4008_7468;
        let mut size = WinSize {
            rows: 0,
            cols: 0,
            x_pixels: 0,
            y_pixels: 0,
        };
        // SAFETY: TIOCGWINSZ writes one `struct winsize` (four unsigned shorts) through the pointer,
        // which points to such a struct that lives for the whole call.
        let status = unsafe { ioctl(1, TIOCGWINSZ, &mut size as *mut WinSize) };
        if status == 0 && size.cols >= 20 {
            return Some(usize::from(size.cols));
        }
        let _ = (size.rows, size.x_pixels, size.y_pixels);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character the module comment names, and a few that must stay as they are.
    const HOSTILE: &str = "\u{0}\u{7}\u{9}\u{a}\u{d}\u{1b}[2J\u{1b}]0;title\u{7}\u{7f}\u{80}\u{85}\u{9b}31m\u{9f}\u{61c}\u{200e}\u{200f}\u{2028}\u{2029}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{feff}\u{fffe}\u{ffff}";

    #[test]
    fn the_escaped_set() {
        for c in HOSTILE.chars().filter(|c| !c.is_ascii_graphic()) {
            assert!(needs_escape(c), "{:x}", c as u32);
        }
        for c in [
            ' ', 'a', '~', '\u{a0}', 'é', '讨', '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}',
            '\u{fffd}', '👨',
        ] {
            assert!(!needs_escape(c), "{:x}", c as u32);
        }
        // The byte pre-check never skips a character that needs escaping.
        for c in (0..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|&c| needs_escape(c))
        {
            assert!(
                may_need_escape(c.encode_utf8(&mut [0; 4])),
                "{:x}",
                c as u32
            );
        }
    }

    #[test]
    fn log_lines() {
        assert_eq!(escape_line("plain ü 讨论 👨‍👩‍👧"), "plain ü 讨论 👨‍👩‍👧");
        assert!(matches!(escape_line("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_line("a\u{1b}]0;x\u{7}b\nc\u{9b}d\u{202e}e\u{7f}"),
            "a\\u001b]0;x\\u0007b\\u000ac\\u009bd\\u202ee\\u007f"
        );
        assert!(!escape_line(HOSTILE).chars().any(needs_escape));
    }

    #[test]
    fn json_keeps_its_value() {
        let value = serde_json::json!({"k\u{85}": [HOSTILE, "plain", 1, null], "b": "x\u{202e}y"});
        let serialized = value.to_string();
        let escaped = escape_json(&serialized);
        assert!(!escaped.chars().any(needs_escape), "{escaped}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&escaped).unwrap(),
            value
        );
        assert_eq!(escape_json("{\"a\":\"b\u{9b}\"}"), r#"{"a":"b\u009b"}"#);
        assert!(matches!(escape_json(r#"{"a":"b"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn json_quote_round_trips() {
        for text in [
            "",
            "plain",
            "quote \" backslash \\ newline \n tab \t",
            "\u{1b}[31mred\u{9b}",
            "rtl \u{202e}olleh\u{2069} sep \u{2028}",
            "non-characters \u{fffe}\u{ffff} bom \u{feff}",
            "讨论目标 👨‍👩‍👧‍👦",
            HOSTILE,
        ] {
            let quoted = json_quote(text);
            assert_eq!(serde_json::from_str::<String>(&quoted).unwrap(), text);
            assert!(!quoted.chars().any(needs_escape));
        }
        assert_eq!(json_quote("a\u{1}b"), "\"a\\u0001b\"");
    }
}
