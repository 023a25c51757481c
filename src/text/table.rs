//! Plain-text tables for terminal output: left-aligned columns, two spaces apart, no trailing
//! blanks.
//!
//! Padding is written by hand, not with `format!("{c:<w$}")`: `std::fmt` widths are limited to
//! 65,535 and panic beyond, and a cell holds whatever the input held (a 70,000-character config
//! value, a board name from a user catalog).

/// Lays out `header` and `rows` as a table, one line each.
/// A cell's control and invisible format characters are escaped
/// ([`crate::text::escape_controls`]): a cell cannot split its row, send an escape sequence or
/// reorder the line (a value a target printed, a name from a result folder).
pub(crate) fn table<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    let rows: Vec<[String; N]> =
        rows.iter().map(|row| row.clone().map(|c| crate::text::escape_controls(&c))).collect();
    let rows = rows.as_slice();
    let mut widths: [usize; N] = std::array::from_fn(|i| header[i].chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N]| {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            pad_right(&mut line, cell, width);
        }
        line.truncate(line.trim_end().len());
        line
    };
    std::iter::once(line(header)).chain(rows.iter().map(line)).collect::<Vec<_>>().join("\n")
}

/// Appends `cell` to `out`, then blanks up to `width` characters.
pub(crate) fn pad_right(out: &mut String, cell: &str, width: usize) {
    out.push_str(cell);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(cell.chars().count())));
}

/// Appends blanks up to `width` characters, then `cell`, to `out` (right-aligned numbers).
pub(crate) fn pad_left(out: &mut String, cell: &str, width: usize) {
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(cell.chars().count())));
    out.push_str(cell);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_lines_have_no_trailing_blanks() {
        let header = ["A".to_string(), "LONG HEADER".to_string()];
        let rows = [["wide cell".to_string(), "x".to_string()], ["µ".to_string(), String::new()]];
        assert_eq!(table(&header, &rows), "A          LONG HEADER\nwide cell  x\nµ");
    }

    /// Issue 13 item 2: a 65,536-character cell panicked with "Formatting argument out of range".
    #[test]
    fn cells_wider_than_std_fmt_widths_are_padded() {
        let wide = "x".repeat(70_000);
        let header = ["NAME".to_string(), "CPUS".to_string()];
        let rows = [[wide.clone(), "8".to_string()], ["b".to_string(), "12".to_string()]];
        let text = table(&header, &rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], format!("NAME{}  CPUS", " ".repeat(70_000 - 4)));
        assert_eq!(lines[1], format!("{wide}  8"));
        assert_eq!(lines[2], format!("b{}  12", " ".repeat(69_999)));
        let mut right = String::new();
        pad_left(&mut right, "7", 65_537);
        assert_eq!(right.len(), 65_537);
        assert!(right.ends_with(" 7"));
    }
}
