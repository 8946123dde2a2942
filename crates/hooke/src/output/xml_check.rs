//! Finds where a malformed VTK XML file goes wrong. The VTK reader says only
//! what failed ("unexpected end of file", "invalid digit"); this scan, run
//! after such a failure, names the line: an unclosed or mismatched tag, a
//! truncated file, or a count attribute that is not a whole number.

/// Attributes that VTK reads as counts.
const COUNT_ATTRIBUTES: [&str; 4] = [
    "NumberOfPoints",
    "NumberOfCells",
    "NumberOfComponents",
    "NumberOfTuples",
];

/// The first problem in `text` and its line (1-based), if the scan sees one.
/// The reason ends with the byte offset too: VTK files are often one long line.
pub fn first_problem(text: &str) -> Option<(usize, String)> {
    scan(text).map(|(offset, reason)| {
        (
            1 + text[..offset].matches('\n').count(),
            format!("{reason} (at byte {offset})"),
        )
    })
}

fn scan(text: &str) -> Option<(usize, String)> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find('<') {
        let start = at + found;
        let rest = &text[start..];
        let line = 1 + text[..start].matches('\n').count();
        let (terminator, skip) = if rest.starts_with("<?") {
            ("?>", 2)
        } else if rest.starts_with("<!--") {
            ("-->", 3)
        } else {
            (">", 1)
        };
        let Some(length) = rest.find(terminator) else {
            return Some((start, "the file ends inside a tag: it is truncated".to_string()));
        };
        let end = start + length + skip;
        let tag = &text[start + 1..start + length];
        at = end;
        if terminator != ">" {
            continue;
        }
        if let Some(closing) = tag.strip_prefix('/') {
            let name = closing.trim();
            match open.pop() {
                Some((opened, _)) if opened == name => {}
                Some((opened, opened_line)) => {
                    return Some((
                        start,
                        format!("</{name}> closes <{opened}>, opened on line {opened_line}"),
                    ))
                }
                None => return Some((start, format!("</{name}> closes a tag that was never opened"))),
            }
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or_default().trim_end_matches('/');
        for attribute in COUNT_ATTRIBUTES {
            if let Some(value) = attribute_value(tag, attribute) {
                if value.trim().parse::<u64>().is_err() {
                    return Some((start, format!("{attribute}=\"{value}\" is not a whole number")));
                }
            }
        }
        // Raw appended data may hold any byte, '<' included: nothing after it is markup we can check.
        if name == "AppendedData" && attribute_value(tag, "encoding") == Some("raw") {
            return None;
        }
        if !tag.ends_with('/') {
            open.push((name, line));
        }
    }
    open.last().map(|(name, opened_line)| {
        (
            text.len(),
            format!("the file ends before <{name}> (opened on line {opened_line}) is closed: it is truncated"),
        )
    })
}

/// The value of `name="…"` in a tag's text.
fn attribute_value<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let mut search = tag;
    while let Some(found) = search.find(name) {
        let after = &search[found + name.len()..];
        let preceded_by_space = search[..found].ends_with(char::is_whitespace);
        if let (true, Some(quoted)) = (preceded_by_space, after.trim_start().strip_prefix('=')) {
            let quoted = quoted.trim_start();
            let quote = quoted.chars().next().filter(|c| matches!(c, '"' | '\''))?;
            let value = &quoted[quote.len_utf8()..];
            return value.find(quote).map(|end| &value[..end]);
        }
        search = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\">\n  <UnstructuredGrid>\n    \
                        <Piece NumberOfPoints=\"4\" NumberOfCells=\"1\">\n      <!-- a comment -->\n      \
                        <PointData/>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n";

    /// Found by the vtu fuzzer: a multi-byte character where a quote belongs.
    #[test]
    fn an_unquoted_attribute_is_no_panic() {
        assert_eq!(first_problem("<Piece NumberOfPoints=\u{fffd}3\"/>"), None);
        assert_eq!(
            attribute_value("<Piece NumberOfPoints='4'", "NumberOfPoints"),
            Some("4")
        );
    }

    #[test]
    fn a_well_formed_file_has_no_problem() {
        assert_eq!(first_problem(GOOD), None);
    }

    #[test]
    fn problems_are_found_on_their_line() {
        let (line, reason) = first_problem(&GOOD.replace("\"4\"", "\"4x\"")).unwrap();
        assert_eq!(line, 4);
        assert!(
            reason.ends_with(&format!("(at byte {})", GOOD.find("<Piece").unwrap())),
            "{reason}"
        );
        assert!(reason.contains("NumberOfPoints=\"4x\""), "{reason}");
        let (line, reason) = first_problem(&GOOD[..GOOD.find("</Piece>").unwrap()]).unwrap();
        assert!(
            reason.contains("<Piece> (opened on line 4)") && reason.contains("truncated"),
            "{reason}"
        );
        assert_eq!(line, 7);
        let (line, reason) = first_problem(&GOOD.replace("</Piece>", "</Peice>")).unwrap();
        assert_eq!(line, 7);
        assert!(reason.contains("</Peice> closes <Piece>"), "{reason}");
        let (line, _) = first_problem(&GOOD[..GOOD.find("NumberOfCells").unwrap()]).unwrap();
        assert_eq!(line, 4);
    }
}
