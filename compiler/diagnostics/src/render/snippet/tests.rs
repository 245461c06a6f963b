//! Unit tests of bounded snippets: a 58 KB line with diagnostics of every shape (snapshot,
//! size, carets, places), the cutting rules on their own, and generated labels anywhere.

use super::*;
use crate::Code;
use crate::render::{HumanOptions, render_human};

/// A 58 KB first line (`graph g { n0 -> n1 n1 -> n2 … }`, with a stretch of non-ASCII text in
/// the middle), then a short second line.
fn long_file() -> String {
    let mut text = String::from("graph g { ");
    let mut i = 0;
    while text.len() < 58_000 {
        if i == 2000 {
            text.push_str("prompt = \"café ééééééééééééééééééééééééééé 🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀 naïve\" ");
        }
        text.push_str(&format!("n{i} -> n{} ", i + 1));
        i += 1;
    }
    text.push_str("}\nnext line\n");
    text
}

/// The span of the first `needle` in `text`.
fn find(text: &str, needle: &str) -> Span {
    let start = text.find(needle).unwrap();
    Span::new(start, start + needle.len())
}

/// Diagnostics of every shape on the long line.
fn long_line_diagnostics(sources: &mut SourceSet) -> Vec<Diagnostic> {
    let text = long_file();
    let file = sources.add("long.tenx", text.clone());
    let other = sources.add("other.tenx", "n2500 = 1\n");
    let n6 = find(&text, " n5 -> n6 ");
    let n10 = find(&text, " n10 -> ").start as usize + 1;
    let end_of_line = text.find('\n').unwrap();
    let from = find(&text, " n3000 -> ").start as usize + 1;
    let to = find(&text, " n3100 -> n3101").start as usize + 6;
    vec![
        Diagnostic::new(
            Code::TENX0302,
            "the edge `n5 -> n6` names `n6`",
            file,
            Span::new(n6.end as usize - 3, n6.end as usize - 1),
        )
        .label("not a node of this graph"),
        Diagnostic::new(
            Code::TENX0103,
            "the name `n2500` is declared more than once",
            file,
            find(&text, "n2500 -> n2501"),
        )
        .label("declared again here")
        .secondary(file, Span::new(n10, n10 + 3), "first declared here")
        .secondary(other, Span::new(0, 5), "and here, in another file"),
        Diagnostic::new(
            Code::TENX0001,
            "a string is not expected here",
            file,
            find(&text, "\"café"),
        )
        .label("this string")
        .secondary(file, find(&text, "🦀🦀🦀"), "crabs")
        .note("columns count characters, not bytes"),
        Diagnostic::new(
            Code::TENX0304,
            "these edges are never reached",
            file,
            Span::new(from, to),
        )
        .label("a hundred edges")
        .help("remove them"),
        Diagnostic::new(
            Code::TENX0002,
            "a block opened with `{` is never closed",
            file,
            Span::at(end_of_line),
        )
        .label("expected `}` here")
        .secondary(file, Span::new(6, 7), "the block opens here"),
        Diagnostic::new(
            Code::TENX0001,
            "a label over two lines",
            file,
            Span::new(find(&text, " n3990 -> ").start as usize + 1, end_of_line + 5),
        )
        .label("from here to `next`"),
    ]
}

#[test]
fn a_58_kb_line_prints_a_few_hundred_bytes_per_diagnostic() {
    let mut sources = SourceSet::new();
    let diagnostics = long_line_diagnostics(&mut sources);
    let out = render_human(&diagnostics, &sources, HumanOptions { color: false });
    // The whole line once would be 58 KB; six diagnostics fit in a few KB.
    assert!(out.len() < 6 * 1024, "{} bytes:\n{out}", out.len());
    for line in out.lines() {
        // Source lines are `NN │ text`; with the gutter and cut marks they stay narrow.
        assert!(
            line.chars().count() <= WINDOW + 20,
            "too wide ({}): {line}",
            line.chars().count()
        );
    }
    insta::assert_snapshot!("long_line", out);
}

/// The characters above each run of carets (`^`) in rendered output, in order.
fn underlined(out: &str) -> Vec<String> {
    let lines: Vec<&str> = out.lines().collect();
    lines
        .windows(2)
        .filter(|pair| pair[0].contains(" │ ") && pair[1].contains('^'))
        .map(|pair| {
            let source: Vec<char> = pair[0].chars().collect();
            pair[1]
                .chars()
                .enumerate()
                .filter(|(_, c)| *c == '^')
                .map(|(i, _)| source.get(i).copied().unwrap_or(' '))
                .collect()
        })
        .collect()
}

#[test]
fn carets_stay_under_their_labels() {
    let mut sources = SourceSet::new();
    let diagnostics = long_line_diagnostics(&mut sources);
    let out = render_human(&diagnostics, &sources, HumanOptions { color: false });
    let marked = underlined(&out);
    assert_eq!(marked[..3], ["n6", "n2500 -> n2501", "\"café"], "{out}");
    // The long label is underlined from its first character to its last, across the cut.
    assert!(
        marked[3].starts_with("n3000 -> n3001") && marked[3].ends_with("n3099 -> n3100 n3100"),
        "{out}"
    );
    assert!(marked[3].contains('…'), "{out}");
}

#[test]
fn places_are_the_original_lines_and_columns() {
    let mut sources = SourceSet::new();
    let diagnostics = long_line_diagnostics(&mut sources);
    let out = render_human(&diagnostics, &sources, HumanOptions { color: false });
    let file = sources.get(FileId(0)).unwrap();
    for d in &diagnostics {
        let at = file.line_col(d.primary.span.start as usize);
        let header = format!("┌─ long.tenx:{}:{}", at.line, at.column);
        assert!(out.contains(&header), "missing `{header}` in:\n{out}");
    }
    assert!(out.contains("┌─ other.tenx:1:1"), "{out}");
}

#[test]
fn many_diagnostics_on_one_long_line_stay_small() {
    let text = long_file();
    let mut sources = SourceSet::new();
    let file = sources.add("long.tenx", text.clone());
    let diagnostics: Vec<Diagnostic> = text
        .match_indices(" -> ")
        .step_by(8)
        .take(500)
        .map(|(at, _)| {
            Diagnostic::new(Code::TENX0302, "unknown node", file, Span::new(at + 4, at + 6))
                .label("not a node of this graph")
        })
        .collect();
    assert_eq!(diagnostics.len(), 500);
    let out = render_human(&diagnostics, &sources, HumanOptions { color: false });
    // Before the cut, each one printed the whole line: 500 × 58 KB = 29 MB.
    assert!(out.len() < 500 * 1024, "{} bytes", out.len());
}

#[test]
fn cuts_fall_between_characters_and_keep_the_labels() {
    // 300 characters of 1, 2, 3 and 4 bytes.
    let line: String = "aé€🦀".repeat(75);
    assert_eq!(line.chars().count(), 300);
    for start in 0..line.len() {
        if !line.is_char_boundary(start) {
            continue;
        }
        let end = line[start..]
            .char_indices()
            .nth(3)
            .map_or(line.len(), |(b, _)| start + b);
        let kept = cut(&line, &[(start, end)]);
        assert_eq!(kept.len(), 1);
        let (from, to) = kept[0];
        let shown = line.get(from..to).expect("a cut inside a character");
        assert_eq!(shown.chars().count(), WINDOW);
        assert!(from <= start && end <= to, "the label is kept");
    }
}

#[test]
fn far_apart_and_long_labels_keep_their_ends() {
    let line = "x".repeat(10_000);
    // Two labels 9,000 characters apart, and one 2,000 characters long.
    let kept = cut(&line, &[(100, 103), (9_100, 9_102), (3_000, 5_000)]);
    assert_eq!(
        kept,
        [
            (84, 119),
            (3_000 - CONTEXT, 3_000 + LABEL_KEEP + CONTEXT),
            (5_000 - LABEL_KEEP - CONTEXT, 5_000 + CONTEXT),
            (9_084, 9_118)
        ]
    );
    // Short lines are never cut, whatever their labels.
    let short = "y".repeat(FULL_LINE);
    assert_eq!(cut(&short, &[(0, 1), (FULL_LINE - 1, FULL_LINE)]), [(0, FULL_LINE)]);
    // A long line with no label on it shows its start.
    assert_eq!(cut(&line, &[]), [(0, WINDOW)]);
}

#[test]
fn a_label_at_the_end_of_a_long_line_is_kept() {
    let line = "z".repeat(1_000);
    assert_eq!(cut(&line, &[(1_000, 1_000)]), [(1_000 - WINDOW, 1_000)]);
    assert_eq!(cut(&line, &[(0, 0)]), [(0, WINDOW)]);
}

/// A small deterministic generator (an LCG), so the test needs no dependency and never flakes.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn any_labels_on_any_text_render_at_their_original_places() {
    let mut rng = Lcg(8);
    let pieces = [
        "a",
        "é",
        "€",
        "🦀",
        " ",
        "\t",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ];
    let mut cut_lines = 0;
    for _ in 0..300 {
        let mut sources = SourceSet::new();
        let mut texts = Vec::new();
        for f in 0..2 {
            // Lines of any length: one line break in 40 pieces, short or long lines by turns.
            let breaks = if rng.below(2) == 0 { 40 } else { 4 };
            let text: String = (0..rng.below(600))
                .map(|_| match rng.below(breaks) {
                    0 => ["\n", "\r\n"][rng.below(2)],
                    _ => pieces[rng.below(pieces.len())],
                })
                .collect();
            sources.add(format!("f{f}.tenx"), text.clone());
            texts.push(text);
        }
        // Offsets anywhere, including inside a character and past the end.
        let label = |rng: &mut Lcg| {
            let file = rng.below(2);
            let len = texts[file].len() + 3;
            let (a, b) = (rng.below(len), rng.below(len));
            (FileId(file as u32), Span::new(a.min(b), a.max(b)))
        };
        let (file, span) = label(&mut rng);
        let mut d = Diagnostic::new(Code::TENX0001, "m", file, span).label("primary");
        for _ in 0..rng.below(4) {
            let (file, span) = label(&mut rng);
            d = d.secondary(file, span, "secondary");
        }
        let out = render_human(std::slice::from_ref(&d), &sources, HumanOptions { color: false });
        let text = &texts[file.0 as usize];
        let start = floor_char_boundary(text, span.start as usize);
        let at = sources.get(file).unwrap().line_col(start);
        let header = format!("┌─ f{}.tenx:{}:{}", file.0, at.line, at.column);
        assert!(out.contains(&header), "missing `{header}` for {d:?} in:\n{out}");
        for line in out.lines() {
            assert!(line.chars().count() < 4 * WINDOW, "too wide: {line}");
        }
        cut_lines += out.matches(CUT).count();
    }
    assert!(cut_lines > 100, "the texts should have long lines: {cut_lines} cuts");
}
