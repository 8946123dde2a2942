//! The key a place in a scene's text belongs to, so that an error the TOML
//! reader reports at a value ("invalid type …" at line 21) can name it the way
//! the scene format does: `simulation.duration`, `bodies[1].material.youngs_modulus`,
//! `bodies[0].mesh.box.size[2]`.
//!
//! A small scanner rather than a second parse: the text that failed to parse
//! into the scene's types is still valid TOML, but the reader's error only
//! carries a byte span, and the path to it is all that is missing.

use std::collections::HashMap;

/// The dotted key of the value that starts at byte `offset` of `text`, or
/// None when the place is not inside a `key = value` (a header, a comment).
pub(crate) fn key_at(text: &str, offset: usize) -> Option<String> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    // An error about a whole table (a missing key) points at its header.
    let here = text[offset..].trim_start();
    if here.starts_with('[') && looks_like_header(here.lines().next().unwrap_or("")) {
        let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        return table_at(&text[..line_end]);
    }
    let table = table_at(&text[..line_start]);
    // The value may continue a key's line (an array over several lines): go
    // back to the line that holds the key.
    let mut start = line_start;
    while start > 0 && !holds_key(&text[start..offset]) {
        let previous = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        let line = text[previous..start].trim_start();
        if line.starts_with('[') && !line.starts_with("[ ") && looks_like_header(line) {
            break;
        }
        start = previous;
    }
    let inner = path_in_line(&text[start..offset])?;
    Some(match table {
        Some(table) if !table.is_empty() => format!("{table}.{inner}"),
        _ => inner,
    })
}

/// Whether a line is a table header (`[simulation]`, `[[bodies]]`).
fn looks_like_header(line: &str) -> bool {
    let line = line.trim();
    let name = line.trim_start_matches('[').split(']').next().unwrap_or("");
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' || c == ' ')
}

/// Whether `text` holds `identifier =` outside strings.
fn holds_key(text: &str) -> bool {
    path_in_line(text).is_some()
}

/// The table in force after `text`: `[simulation]` → "simulation", the third
/// `[[bodies]]` → "bodies[2]", `[bodies.material]` under it → "bodies[2].material".
fn table_at(text: &str) -> Option<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut table = None;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('[') || !looks_like_header(line) {
            continue;
        }
        if let Some(name) = line.strip_prefix("[[").and_then(|rest| rest.split("]]").next()) {
            let name = name.trim().to_string();
            let count = seen.entry(name.clone()).or_insert(0);
            table = Some(format!("{name}[{count}]"));
            *count += 1;
        } else if let Some(name) = line.strip_prefix('[').and_then(|rest| rest.split(']').next()) {
            let name = name.trim();
            let (first, rest) = name.split_once('.').unwrap_or((name, ""));
            table = Some(match seen.get(first) {
                Some(&count) if !rest.is_empty() => format!("{first}[{}].{rest}", count - 1),
                _ => name.to_string(),
            });
        }
    }
    table
}

/// The path of keys, inline tables and array indices open at the end of
/// `text`, a prefix of one `key = value` (over one or more lines).
fn path_in_line(text: &str) -> Option<String> {
    enum Open {
        Table(String),
        Array(String, usize),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut key: Option<String> = None;
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == '\\' && q == '"' {
                chars.next();
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '#' => {
                // A comment runs to the end of its line.
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        break;
                    }
                }
            }
            '=' => {
                let name = word.trim().trim_matches('"').to_string();
                if !name.is_empty() {
                    key = Some(name);
                }
                word.clear();
            }
            '{' => {
                stack.push(Open::Table(key.take().unwrap_or_default()));
                word.clear();
            }
            '[' => {
                let name = key.take().unwrap_or_default();
                stack.push(Open::Array(name, 0));
                word.clear();
            }
            '}' | ']' => {
                stack.pop();
                word.clear();
            }
            ',' => {
                if let Some(Open::Array(_, index)) = stack.last_mut() {
                    *index += 1;
                } else {
                    key = None;
                }
                word.clear();
            }
            '\n' => word.clear(),
            _ => word.push(c),
        }
    }
    let mut path = String::new();
    for open in &stack {
        match open {
            Open::Table(name) => {
                if !name.is_empty() {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
            }
            Open::Array(name, index) => {
                if !name.is_empty() {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                }
                path.push_str(&format!("[{index}]"));
            }
        }
    }
    if let Some(key) = key {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&key);
    }
    (!path.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::key_at;

    fn key_of(text: &str, value: &str) -> Option<String> {
        key_at(text, text.find(value).expect("the value is in the text"))
    }

    #[test]
    fn plain_keys_take_their_table() {
        let text = "name = \"bar\"\n\n[simulation]\n# the run\nduration = \"1 s\"\ntime_step = 0.01\n";
        assert_eq!(key_of(text, "\"1 s\"").as_deref(), Some("simulation.duration"));
        assert_eq!(key_of(text, "0.01").as_deref(), Some("simulation.time_step"));
        assert_eq!(key_of(text, "\"bar\"").as_deref(), Some("name"));
    }

    #[test]
    fn arrays_of_tables_count_and_inline_tables_nest() {
        let text = "[[bodies]]\nmesh = \"a.mesh\"\n\n[[bodies]]\nmesh = { box = { size = [0.8, 0.1, \"abc\"], cells = [4, 1, 1] } }\nmaterial = { model = \"linear\", youngs_modulus = \"soft\" }\n\n[bodies.damping]\nalpha = \"x\"\n";
        assert_eq!(key_of(text, "\"a.mesh\"").as_deref(), Some("bodies[0].mesh"));
        assert_eq!(key_of(text, "\"abc\"").as_deref(), Some("bodies[1].mesh.box.size[2]"));
        assert_eq!(key_of(text, "[4, 1, 1]").as_deref(), Some("bodies[1].mesh.box.cells"));
        assert_eq!(
            key_of(text, "\"soft\"").as_deref(),
            Some("bodies[1].material.youngs_modulus")
        );
        assert_eq!(key_of(text, "\"x\"").as_deref(), Some("bodies[1].damping.alpha"));
    }

    #[test]
    fn a_value_over_several_lines_belongs_to_the_key_above() {
        let text = "[output]\nframes = [\n  1,\n  \"two\",\n]\n";
        assert_eq!(key_of(text, "\"two\"").as_deref(), Some("output.frames[1]"));
    }

    #[test]
    fn a_header_names_its_table() {
        let text = "name = \"bar\"\n[simulation]\nduration = 1.0\n";
        assert_eq!(key_of(text, "[simulation]").as_deref(), Some("simulation"));
        assert_eq!(key_at(text, 0), None, "the start of a key is not a value");
    }

    #[test]
    fn strings_and_comments_do_not_confuse_it() {
        let text = "[simulation]\nname = \"a = {b, [c]}\" # x = [1, 2\nduration = true\n";
        assert_eq!(key_of(text, "true").as_deref(), Some("simulation.duration"));
    }
}
