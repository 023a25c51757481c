//! Plain-text tables for terminal output: left-aligned columns, two spaces apart, no trailing
//! blanks.

/// Lays out `header` and `rows` as a table, one line each.
pub fn table<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    let mut widths: [usize; N] = std::array::from_fn(|i| header[i].chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N]| {
        let parts: Vec<String> =
            cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        parts.join("  ").trim_end().to_string()
    };
    std::iter::once(line(header)).chain(rows.iter().map(line)).collect::<Vec<_>>().join("\n")
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
}
