//! Unit tests of [`super`]: the rendering rules, one table per rule, and a snapshot of the
//! whole table of value kinds.

use super::*;
use serde_json::json;

fn scope() -> Map<String, Value> {
    match json!({
        "name": "Zoë 😀",
        "empty": "",
        "count": 3,
        "negative": -42,
        "big": 18_446_744_073_709_551_615_u64,
        "small": i64::MIN,
        "half": 0.5,
        "whole_float": 5950.0,
        "negative_zero": -0.0,
        "huge_float": 1e300,
        "two_pow_53": 9_007_199_254_740_992.0,
        "yes": true,
        "no": false,
        "nothing": null,
        "customer": { "tier": "gold", "id": 7, "address": { "city": "Zürich" }, "note": null },
        "tags": ["b", "a", { "z": 1, "y": [true, null] }],
        "quoted": "say \"hi\"\nbye",
        "braces": "{not_a_placeholder}"
    }) {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn rendered(template: &str) -> String {
    render(template, &scope()).unwrap()
}

#[test]
fn value_kinds_render_as_documented() {
    let cases = [
        ("{name}", "Zoë 😀"),
        ("[{empty}]", "[]"),
        ("{count}", "3"),
        ("{negative}", "-42"),
        ("{big}", "18446744073709551615"),
        ("{small}", "-9223372036854775808"),
        ("{half}", "0.5"),
        ("{whole_float}", "5950"),
        ("{negative_zero}", "0"),
        ("{huge_float}", "1e+300"),
        ("{two_pow_53}", "9007199254740992.0"),
        ("{yes}/{no}", "true/false"),
        ("{nothing}", "null"),
        ("{missing}", "null"),
        ("{customer.tier}", "gold"),
        ("{customer.id}", "7"),
        ("{customer.address.city}", "Zürich"),
        ("{customer.note}", "null"),
        ("{customer.missing.deeper}", "null"),
        ("{name.length}", "null"),
        ("{customer.address}", r#"{"city":"Zürich"}"#),
        ("{tags}", r#"["b","a",{"y":[true,null],"z":1}]"#),
        ("{quoted}", "say \"hi\"\nbye"),
        // A value's braces are never read again as a template.
        ("{braces}", "{not_a_placeholder}"),
    ];
    for (template, expected) in cases {
        assert_eq!(rendered(template), expected, "{template}");
    }
}

#[test]
fn text_around_placeholders_is_kept() {
    assert_eq!(rendered(""), "");
    assert_eq!(rendered("no placeholders at all"), "no placeholders at all");
    assert_eq!(
        rendered("Approve a refund of {count} cents for {customer.tier} customer {name}?"),
        "Approve a refund of 3 cents for gold customer Zoë 😀?"
    );
    assert_eq!(rendered("{count}{count}{yes}"), "33true");
    assert_eq!(rendered("refund-{customer.id}-{whole_float}"), "refund-7-5950");
    assert_eq!(
        rendered("Run `send_reminder` with customer: {missing}, text: {name}?"),
        "Run `send_reminder` with customer: null, text: Zoë 😀?"
    );
    assert_eq!(rendered("çà {name} ✓\u{200b}"), "çà Zoë 😀 ✓\u{200b}");
}

#[test]
fn escapes() {
    let cases = [
        (r"\{name\}", "{name}"),
        (r"\{{name}\}", "{Zoë 😀}"),
        (r"costs \$5", "costs $5"),
        // `\$` is a literal `$`, so what follows is a placeholder, as the compiler reads it.
        (r"\${count}", "$3"),
        (r#"JSON: \{"a": {count}\}"#, r#"JSON: {"a": 3}"#),
        // Any other backslash is literal: text blocks are raw, and strings were decoded already.
        (r"line\nbreak", r"line\nbreak"),
        (r"C:\dir\{name}", r"C:\dir{name}"),
        (r"ends with \", r"ends with \"),
        (r"\\{count}", r"\{count}"),
        (r"\é{count}", r"\é3"),
        // `${NAME}` is an environment reference, literal here; a lone `$` or `}` is text.
        ("${ORDERS_URL}/x/{count}", "${ORDERS_URL}/x/3"),
        ("${A {count}", "${A {count}"),
        ("${A\n{count}", "${A\n3"),
        ("$ and } alone", "$ and } alone"),
        ("$", "$"),
        ("}{count}}", "}3}"),
    ];
    for (template, expected) in cases {
        assert_eq!(rendered(template), expected, "{template}");
    }
}

#[test]
fn malformed_placeholders_are_refused() {
    let cases = [
        ("{", TemplateError::Unclosed { offset: 0 }),
        ("a {b", TemplateError::Unclosed { offset: 2 }),
        ("{a\n}", TemplateError::Unclosed { offset: 0 }),
        ("{a {b}", TemplateError::Unclosed { offset: 0 }),
        ("ok {count} then {", TemplateError::Unclosed { offset: 16 }),
        ("é{", TemplateError::Unclosed { offset: 2 }),
        ("{}", TemplateError::Empty { offset: 0 }),
        (
            "x{ name }",
            TemplateError::NotAName {
                offset: 1,
                content: " name ".into(),
            },
        ),
        (
            "{a.}",
            TemplateError::NotAName {
                offset: 0,
                content: "a.".into(),
            },
        ),
        (
            "{.a}",
            TemplateError::NotAName {
                offset: 0,
                content: ".a".into(),
            },
        ),
        (
            "{a..b}",
            TemplateError::NotAName {
                offset: 0,
                content: "a..b".into(),
            },
        ),
        (
            "{1x}",
            TemplateError::NotAName {
                offset: 0,
                content: "1x".into(),
            },
        ),
        (
            "{café}",
            TemplateError::NotAName {
                offset: 0,
                content: "café".into(),
            },
        ),
        (
            "{tags.0}",
            TemplateError::NotAName {
                offset: 0,
                content: "tags.0".into(),
            },
        ),
        (
            "{a-b}",
            TemplateError::NotAName {
                offset: 0,
                content: "a-b".into(),
            },
        ),
        (
            "{name:int}",
            TemplateError::NotAName {
                offset: 0,
                content: "name:int".into(),
            },
        ),
        (
            r"{a\}",
            TemplateError::NotAName {
                offset: 0,
                content: r"a\".into(),
            },
        ),
        (
            "{\"verdict\": \"pass\"}",
            TemplateError::NotAName {
                offset: 0,
                content: "\"verdict\": \"pass\"".into(),
            },
        ),
    ];
    for (template, expected) in cases {
        assert_eq!(render(template, &scope()), Err(expected.clone()), "{template}");
        assert_eq!(check(template), Err(expected.clone()), "check {template}");
        assert_eq!(
            render_value(template, &scope()),
            Err(expected),
            "render_value {template}"
        );
    }
    assert_eq!(check(r"fine \{ {a.b_c} ${X}"), Ok(()));
}

#[test]
fn error_messages_name_the_problem() {
    assert_eq!(
        render("a {b", &scope()).unwrap_err().to_string(),
        "the `{` at byte 2 of the template is never closed; write `\\{` for a literal brace"
    );
    assert_eq!(
        render("{}", &scope()).unwrap_err().to_string(),
        "the template has an empty placeholder `{}` at byte 0"
    );
    assert_eq!(
        render("{ x }", &scope()).unwrap_err().to_string(),
        "`{ x }` at byte 0 of the template is not a placeholder: a placeholder is a name or a dotted path"
    );
}

#[test]
fn a_single_placeholder_keeps_its_json_type() {
    let s = scope();
    let cases = [
        ("{count}", json!(3)),
        ("{half}", json!(0.5)),
        ("{big}", json!(u64::MAX)),
        ("{yes}", json!(true)),
        ("{nothing}", Value::Null),
        ("{missing}", Value::Null),
        ("{customer.address}", json!({ "city": "Zürich" })),
        ("{tags}", json!(["b", "a", { "z": 1, "y": [true, null] }])),
        ("{name}", json!("Zoë 😀")),
        // Anything else around it makes a string.
        (" {count}", json!(" 3")),
        ("{count}{count}", json!("33")),
        ("{missing}!", json!("null!")),
        (r"\{count\}", json!("{count}")),
        ("", json!("")),
        ("plain", json!("plain")),
    ];
    for (template, expected) in cases {
        assert_eq!(render_value(template, &s).unwrap(), expected, "{template}");
    }
}

#[test]
fn an_interrupt_value_renders_every_string_at_any_depth() {
    let value = json!({
        "subject": "{name}",
        "count": "{count}",
        "line": "{count} items for {customer.tier}",
        "unset": "{missing}",
        "nested": { "list": ["{yes}", 3, false, null, ["{customer.id}"]] },
        "{count}": "keys are not templates"
    });
    assert_eq!(
        render_tree(&value, &scope()).unwrap(),
        json!({
            "subject": "Zoë 😀",
            "count": 3,
            "line": "3 items for gold",
            "unset": null,
            "nested": { "list": [true, 3, false, null, [7]] },
            "{count}": "keys are not templates"
        })
    );
    assert_eq!(render_tree(&json!(5), &scope()).unwrap(), json!(5));
    assert_eq!(
        render_tree(&json!({ "a": ["ok", "{bad"] }), &scope()),
        Err(TemplateError::Unclosed { offset: 0 })
    );
}

#[test]
fn an_empty_scope_renders_every_placeholder_as_null() {
    let empty = Map::new();
    assert_eq!(render("{a} and {b.c}", &empty).unwrap(), "null and null");
    assert_eq!(render_value("{a.b.c}", &empty).unwrap(), Value::Null);
}

#[test]
fn long_templates_and_values_render_in_linear_time() {
    let template = "{name} ".repeat(20_000);
    let out = rendered(&template);
    assert_eq!(out.chars().filter(|&c| c == '😀').count(), 20_000);
    let mut deep = json!("bottom");
    for _ in 0..100 {
        deep = json!({ "k": deep });
    }
    let mut s = Map::new();
    s.insert("deep".into(), deep);
    let expected = format!("{}\"bottom\"{}", r#"{"k":"#.repeat(100), "}".repeat(100));
    assert_eq!(render("{deep}", &s).unwrap(), expected);
}

#[test]
fn rendering_table_snapshot() {
    let s = scope();
    let templates = [
        "{name}",
        "{count}",
        "{big}",
        "{half}",
        "{whole_float}",
        "{huge_float}",
        "{yes}",
        "{nothing}",
        "{missing}",
        "{customer}",
        "{tags}",
        r"\{literal\} \$ {customer.tier}",
    ];
    let mut table = String::new();
    for template in templates {
        let text = render(template, &s).unwrap();
        let value = render_value(template, &s).unwrap();
        table.push_str(&format!("{template:<34} | {text:<52} | {value}\n"));
    }
    insta::assert_snapshot!(table);
}

#[test]
fn a_template_without_escapes_or_placeholders_renders_as_it_is_written() {
    // The fast path (no `\`, `$` or `{`) gives what reading the template piece by piece gives.
    for template in ["", "Plan the topics.", "a lone } brace", "Zoë 😀 } }} :)"] {
        let read: String = pieces(template)
            .unwrap()
            .into_iter()
            .map(|piece| match piece {
                Piece::Text(text) => text,
                Piece::Field(..) => panic!("no placeholder in {template:?}"),
            })
            .collect();
        assert_eq!(rendered(template), template);
        assert_eq!(read, template);
    }
}
