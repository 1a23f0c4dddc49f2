//! The messenger's HTML parse mode: escaping dynamic values, splitting long texts into
//! messages the Bot API accepts, and the plain-text form used when the markup is refused.
//!
//! The Bot API accepts only a few tags and rejects a whole message for one stray `<` or `&`,
//! so every value that does not come from a template literal goes through [`escape`].

/// Escapes `&`, `<` and `>`. `&` goes first, otherwise the `&lt;` written for `<` would
/// become `&amp;lt;`.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The text a reader sees: tags removed, entities decoded. Sent without a parse mode when the
/// messenger refuses the markup, so the boss still gets the message.
pub fn to_plain(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while !rest.is_empty() {
        let len = atom_len(rest);
        let atom = &rest[..len];
        if atom.starts_with('<') && len > 1 {
            // A tag: dropped.
        } else if atom.starts_with('&') && len > 1 {
            match decode_entity(&atom[1..len - 1]) {
                Some(c) => out.push(c),
                None => out.push_str(atom),
            }
        } else {
            out.push_str(atom);
        }
        rest = &rest[len..];
    }
    out
}

/// Splits `html` into chunks of at most `max_chars` characters, preferring line boundaries.
///
/// A line longer than a chunk is cut between characters, never inside a tag or an entity.
/// Tags open at a cut (a `<pre>` block over many lines) are closed at the end of the chunk
/// and opened again at the start of the next one, so every chunk is well-formed on its own.
/// Characters, not bytes, are counted: the Bot API's 4096 limit is in characters.
pub fn split(html: &str, max_chars: usize) -> Vec<String> {
    if html.chars().count() <= max_chars {
        return vec![html.to_string()];
    }
    let mut splitter = Splitter { max_chars, ..Splitter::default() };
    for line in html.split_inclusive('\n') {
        splitter.push_line(line);
    }
    splitter.finish()
}

/// An open tag: its lowercase name and the tag text as written (to open it again).
type OpenTag = (String, String);

#[derive(Default)]
struct Splitter {
    max_chars: usize,
    chunks: Vec<String>,
    current: String,
    current_chars: usize,
    /// Whether `current` holds more than the tags reopened from the previous chunk.
    has_content: bool,
    open: Vec<OpenTag>,
}

impl Splitter {
    fn push_line(&mut self, line: &str) {
        let mut open_after = self.open.clone();
        let mut rest = line;
        while !rest.is_empty() {
            let len = atom_len(rest);
            apply_tag(&mut open_after, &rest[..len]);
            rest = &rest[len..];
        }
        let line_chars = line.chars().count();
        if self.has_content && !self.fits(line_chars, &open_after) {
            self.flush();
        }
        if self.fits(line_chars, &open_after) {
            self.append(line, line_chars, open_after);
            return;
        }
        // One line longer than a chunk: cut it between atoms.
        let mut rest = line;
        while !rest.is_empty() {
            let len = atom_len(rest);
            let atom = &rest[..len];
            let mut open_after = self.open.clone();
            apply_tag(&mut open_after, atom);
            let atom_chars = atom.chars().count();
            if self.has_content && !self.fits(atom_chars, &open_after) {
                self.flush();
            }
            self.append(atom, atom_chars, open_after);
            rest = &rest[len..];
        }
    }

    /// Whether `chars` more characters, plus the closing tags then needed, fit this chunk.
    fn fits(&self, chars: usize, open_after: &[OpenTag]) -> bool {
        self.current_chars + chars + closing_tags(open_after).chars().count() <= self.max_chars
    }

    fn append(&mut self, text: &str, chars: usize, open_after: Vec<OpenTag>) {
        self.current.push_str(text);
        self.current_chars += chars;
        self.has_content = true;
        self.open = open_after;
    }

    /// Ends the chunk (closing what is open) and starts the next one (reopening it).
    fn flush(&mut self) {
        let mut chunk = std::mem::take(&mut self.current);
        chunk.truncate(chunk.trim_end_matches('\n').len());
        chunk.push_str(&closing_tags(&self.open));
        self.chunks.push(chunk);
        self.current = self.open.iter().map(|(_, tag)| tag.as_str()).collect();
        self.current_chars = self.current.chars().count();
        self.has_content = false;
    }

    fn finish(mut self) -> Vec<String> {
        if self.has_content {
            self.flush();
        }
        self.chunks
    }
}

fn closing_tags(open: &[OpenTag]) -> String {
    open.iter().rev().map(|(name, _)| format!("</{name}>")).collect()
}

/// Tracks which tags are open after `atom` (a no-op for text).
fn apply_tag(open: &mut Vec<OpenTag>, atom: &str) {
    let Some(inner) = atom.strip_prefix('<').and_then(|a| a.strip_suffix('>')) else {
        return;
    };
    if let Some(name) = inner.strip_prefix('/') {
        let name = name.trim().to_ascii_lowercase();
        if let Some(at) = open.iter().rposition(|(open_name, _)| *open_name == name) {
            open.truncate(at);
        }
    } else {
        let name = inner.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
        open.push((name.to_ascii_lowercase(), atom.to_string()));
    }
}

/// Byte length of the first unbreakable piece of `text`: a whole tag, a whole entity, or
/// one character. A `<` not followed by a letter or `/` (as in an unescaped `<-5%`) is a
/// character, so the plain-text fallback keeps it.
fn atom_len(text: &str) -> usize {
    if text.starts_with('<')
        && text[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && let Some(end) = text.find('>')
        && !text[1..end].contains('<')
    {
        return end + 1;
    }
    if text.starts_with('&')
        && let Some(end) = text[1..].find(';')
        && end > 0
        && end <= 10
        && text[1..=end].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#')
    {
        return end + 2;
    }
    text.chars().next().map_or(0, char::len_utf8)
}

/// The four named entities the Bot API knows, and numeric ones.
fn decode_entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tag in `chunk` is complete and every opened tag is closed in the same chunk.
    fn assert_well_formed(chunk: &str) {
        let mut open = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() {
            let len = atom_len(rest);
            let atom = &rest[..len];
            assert!(atom != "<" && atom != "&", "broken tag or entity in {chunk:?}");
            apply_tag(&mut open, atom);
            rest = &rest[len..];
        }
        assert!(open.is_empty(), "unclosed {open:?} in {chunk:?}");
    }

    #[test]
    fn escape_handles_ampersand_first() {
        assert_eq!(escape("<b>&"), "&lt;b&gt;&amp;");
        assert_eq!(escape("a<b&c>"), "a&lt;b&amp;c&gt;");
        assert_eq!(escape("&lt;"), "&amp;lt;");
        assert_eq!(escape("BTCUSDT 1.5"), "BTCUSDT 1.5");
    }

    #[test]
    fn to_plain_strips_tags_and_decodes_entities() {
        assert_eq!(
            to_plain("<b>a&lt;b&amp;c&gt;</b> &quot;x&quot; &#9989;&#x274C;"),
            "a<b&c> \"x\" ✅❌"
        );
        assert_eq!(to_plain(&escape("R&D <x> & more")), "R&D <x> & more");
        assert_eq!(to_plain("AT&T;"), "AT&T;", "unknown entities stay as written");
        assert_eq!(to_plain("PnL <-5% & <b>falling</b>"), "PnL <-5% & falling");
    }

    #[test]
    fn short_text_is_one_chunk() {
        assert_eq!(split("<b>hi</b>\nthere", 4000), vec!["<b>hi</b>\nthere"]);
    }

    #[test]
    fn split_keeps_whole_lines_within_the_limit() {
        let line = format!("<b>{}</b> ü\n", "x".repeat(90));
        let text = line.repeat(100);
        let chunks = split(&text, 4000);
        assert!(chunks.len() >= 3);
        for chunk in &chunks {
            assert!(chunk.chars().count() <= 4000);
            assert_well_formed(chunk);
            for l in chunk.lines() {
                assert_eq!(format!("{l}\n"), line, "a line was cut");
            }
        }
        assert_eq!(chunks.concat().chars().filter(|c| *c == 'ü').count(), 100);
    }

    #[test]
    fn an_over_long_line_is_cut_between_characters_outside_tags() {
        let text = format!("{}<i>tag</i>{}&amp;{}", "é".repeat(45), "é".repeat(40), "é".repeat(60));
        let chunks = split(&text, 50);
        for chunk in &chunks {
            assert!(chunk.chars().count() <= 50, "{chunk:?}");
            assert_well_formed(chunk);
        }
        assert_eq!(chunks.concat(), text, "nothing open at the cuts, so nothing added");
    }

    #[test]
    fn tags_open_across_a_cut_are_closed_and_reopened() {
        let text = format!("<pre>{}</pre>", "line of code\n".repeat(20));
        let chunks = split(&text, 60);
        assert!(chunks.len() > 1);
        for chunk in &chunks {
            assert!(chunk.chars().count() <= 60, "{chunk:?}");
            assert!(chunk.starts_with("<pre>") && chunk.ends_with("</pre>"), "{chunk:?}");
            assert_well_formed(chunk);
        }
        let lines: usize = chunks.iter().map(|c| to_plain(c).lines().count()).sum();
        assert_eq!(lines, 20);
    }
}
