//! End-to-end tests of `tenxc lsp`, driving the real binary over stdio with JSON-RPC as an
//! editor does: diagnostics as the user types (codes, related information, the catalog link),
//! hover, definition across imports and into the stdlib, references from an imported file,
//! completion, rename (and its refusals), the outline, formatting, quick fixes, both column
//! encodings, and requests it cannot answer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

#[path = "lsp/client.rs"]
mod client;
mod common;

use client::{Client, position, uri};
use common::{temp_dir, write};
use serde_json::{Value, json};

const MAIN: &str = r#"import "tools.tenx"
import std.approval.yes_no

tag orders "Reads orders"

model m {
  provider = scripted
  turns    = [{ text: "hi" }]
}

agent support {
  model    = m
  prompt   = "Help."
  tools    = tagged(orders) + [lookup]
  handoffs = [billing]
}

agent billing {
  model  = m
  prompt = "Bill."
}

graph desk {
  entry = support
  nodes = [support, billing]

  support -> billing
  support -> END
  billing -> END
}
"#;

const TOOLS: &str = r#"tool lookup(order_id: string "The order") -> object {
  description = "Look up an order."
  tags        = [orders]
  risk        = low
  run         = http(POST, "https://example.com/lookup")
}
"#;

/// A workspace with `main.tenx` importing `tools.tenx`.
fn project(name: &str) -> std::path::PathBuf {
    let dir = temp_dir(name);
    write(&dir, "main.tenx", MAIN);
    write(&dir, "tools.tenx", TOOLS);
    dir
}

fn at(uri: &str, text: &str, needle: &str, nth: usize) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": position(text, needle, nth, 1) })
}

#[test]
fn diagnostics_follow_the_text_as_it_is_typed() {
    let dir = project("lsp-diagnostics");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    client.open(&main, MAIN);
    let clean = client.diagnostics(&main, Some(1));
    assert!(
        clean.iter().all(|d| d["severity"] != 1),
        "the program checks: {clean:?}"
    );

    // A misspelt node: the error is there as soon as it is typed, with its code, its catalog
    // page and the help, before anything is saved.
    let broken = MAIN.replace("billing -> END", "biling -> END");
    client.change(&main, 2, &broken);
    let found = client.diagnostics(&main, Some(2));
    let error = found
        .iter()
        .find(|d| d["severity"] == 1 && d["message"].as_str().unwrap().contains("`biling`"))
        .unwrap_or_else(|| panic!("an error: {found:?}"));
    let code = error["code"].as_str().unwrap();
    assert!(code.starts_with("TENX"), "{error}");
    assert_eq!(
        error["codeDescription"]["href"],
        format!("https://github.com/tenx-lang/tenx/blob/main/compiler/diagnostics/codes/{code}.md")
    );
    assert_eq!(error["source"], "tenxc");
    assert_eq!(error["range"]["start"], position(&broken, "biling", 0, 0));
    assert!(
        error["message"].as_str().unwrap().contains("did you mean `billing`"),
        "{error}"
    );

    // Fixed again: the list is emptied.
    client.change(&main, 3, MAIN);
    let again = client.diagnostics(&main, Some(3));
    assert!(again.iter().all(|d| d["severity"] != 1), "{again:?}");

    // Incremental changes, two in one notification, each on the text the one before left:
    // `billing` loses its second `l`, then a comment line is typed above the graph.
    let cut = position(MAIN, "billing -> END", 0, 2);
    let mut next = cut.clone();
    next["character"] = json!(cut["character"].as_u64().unwrap() + 1);
    let graph = position(MAIN, "graph desk", 0, 0);
    client.edit(
        &main,
        4,
        &[
            (json!({ "start": cut, "end": next }), ""),
            (json!({ "start": graph, "end": graph }), "// the desk\n"),
        ],
    );
    let typed = client.diagnostics(&main, Some(4));
    let expected = format!("// the desk\n{}", &MAIN[MAIN.find("graph desk").unwrap()..])
        .replace("billing -> END", "biling -> END");
    let text = format!("{}{expected}", &MAIN[..MAIN.find("graph desk").unwrap()]);
    let error = typed
        .iter()
        .find(|d| d["message"].as_str().unwrap().contains("`biling`"))
        .unwrap_or_else(|| panic!("the edit was applied: {typed:?}"));
    assert_eq!(error["range"]["start"], position(&text, "biling", 0, 0));

    // A range that does not fit the text is refused with a message, and the text is kept: a
    // hover still finds `biling`'s neighbour where the last good text has it.
    client.edit(
        &main,
        5,
        &[(
            json!({ "start": { "line": 999, "character": 0 }, "end": { "line": 999, "character": 1 } }),
            "x",
        )],
    );
    let shown = client.notification("window/showMessage");
    assert_eq!(shown["params"]["type"], 1, "{shown}");
    assert!(
        shown["params"]["message"].as_str().unwrap().contains("does not fit"),
        "{shown}"
    );
    let kept = client.result("textDocument/hover", at(&main, &text, "support -> END", 0));
    assert!(
        kept["contents"]["value"].as_str().unwrap().contains("agent support"),
        "{kept}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn an_error_in_an_imported_file_is_shown_in_that_file_with_related_places() {
    let dir = project("lsp-imported");
    let tools = uri(&dir.join("tools.tenx"));
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    // Two tools with one name: the duplicate is reported in tools.tenx, the first declaration
    // as related information.
    let doubled = format!("{TOOLS}\n{}", TOOLS.replace("Look up an order.", "Again."));
    client.open(&tools, &doubled);
    let found = client.diagnostics(&tools, Some(1));
    let duplicate = found
        .iter()
        .find(|d| d["code"] == "TENX0103")
        .unwrap_or_else(|| panic!("TENX0103: {found:?}"));
    let related = duplicate["relatedInformation"].as_array().unwrap();
    assert!(
        related.iter().any(|r| r["location"]["uri"] == tools.as_str()),
        "{duplicate}"
    );
    // main.tenx, which imports it, is checked too (its program reads the file as typed).
    let _ = client.diagnostics(&main, None);
    assert!(client.shutdown().success());
}

#[test]
fn hover_shows_declarations_fields_and_codes() {
    let dir = project("lsp-hover");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    let text = format!("{MAIN}// allow TENX0604 here\n");
    client.open(&main, &text);
    let _ = client.diagnostics(&main, Some(1));

    let tool = client.result("textDocument/hover", at(&main, &text, "lookup", 0));
    let shown = tool["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("tool lookup(order_id: string"), "{shown}");
    assert!(shown.contains("Look up an order."), "{shown}");
    assert!(shown.contains("tools.tenx"), "{shown}");
    assert_eq!(tool["range"]["start"], position(&text, "lookup", 0, 0));

    let field = client.result("textDocument/hover", at(&main, &text, "handoffs", 0));
    assert!(
        field["contents"]["value"].as_str().unwrap().contains("**handoffs**"),
        "{field}"
    );

    let code = client.result("textDocument/hover", at(&main, &text, "TENX0604", 0));
    assert!(
        code["contents"]["value"].as_str().unwrap().contains("TENX0604"),
        "{code}"
    );

    let nothing = client.result("textDocument/hover", at(&main, &text, "Help.", 0));
    assert!(nothing.is_null(), "{nothing}");
    assert!(client.shutdown().success());
}

#[test]
fn definition_crosses_imports_and_reaches_the_stdlib() {
    let dir = project("lsp-definition");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    client.open(&main, MAIN);
    let _ = client.diagnostics(&main, Some(1));

    let lookup = client.result("textDocument/definition", at(&main, MAIN, "lookup", 0));
    assert_eq!(lookup["uri"], uri(&dir.join("tools.tenx")));
    assert_eq!(lookup["range"]["start"], position(TOOLS, "lookup", 0, 0));

    let billing = client.result("textDocument/definition", at(&main, MAIN, "billing", 2));
    assert_eq!(billing["uri"], main.as_str());
    assert_eq!(billing["range"]["start"], position(MAIN, "billing", 1, 0));

    // The stdlib's module is a real, read-only file the editor can open.
    let yes_no = client.result("textDocument/definition", at(&main, MAIN, "yes_no", 0));
    let file = url::Url::parse(yes_no["uri"].as_str().unwrap())
        .unwrap()
        .to_file_path()
        .unwrap();
    assert!(file.ends_with("approval.tenx"), "{yes_no}");
    let stdlib = std::fs::read_to_string(&file).unwrap();
    assert!(stdlib.contains("yes_no"), "{stdlib}");
    assert!(std::fs::metadata(&file).unwrap().permissions().readonly());
    assert!(client.shutdown().success());
}

#[test]
fn references_from_an_imported_file_find_the_uses_in_the_files_that_import_it() {
    let dir = project("lsp-references");
    let tools = uri(&dir.join("tools.tenx"));
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    // Only tools.tenx is open; main.tenx, on disk, imports it.
    client.open(&tools, TOOLS);
    let _ = client.diagnostics(&tools, Some(1));
    let params = |include: bool| {
        let mut p = at(&tools, TOOLS, "orders", 0);
        p["context"] = json!({ "includeDeclaration": include });
        p
    };
    let found = client.result("textDocument/references", params(true));
    let found = found.as_array().unwrap();
    // `tags = [orders]` here; the declaration and `tagged(orders)` in main.tenx.
    assert_eq!(found.len(), 3, "{found:?}");
    assert_eq!(
        found.iter().filter(|l| l["uri"] == main.as_str()).count(),
        2,
        "{found:?}"
    );
    let without = client.result("textDocument/references", params(false));
    assert_eq!(without.as_array().unwrap().len(), 2, "{without}");
    assert!(client.shutdown().success());
}

#[test]
fn completion_offers_what_fits_the_place() {
    let dir = project("lsp-completion");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    let text = MAIN.replace("nodes = [support, billing]", "nodes = [support, ]");
    client.open(&main, &text);
    let _ = client.diagnostics(&main, Some(1));
    let labels = |items: &Value| -> Vec<String> {
        items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    let nodes = client.result(
        "textDocument/completion",
        json!({ "textDocument": { "uri": main }, "position": position(&text, "support, ]", 0, 9) }),
    );
    let nodes = labels(&nodes);
    assert!(nodes.contains(&"billing".to_string()), "{nodes:?}");
    assert!(!nodes.contains(&"orders".to_string()), "a tag is no node: {nodes:?}");

    let fields = client.result(
        "textDocument/completion",
        json!({ "textDocument": { "uri": main }, "position": position(&text, "  prompt = \"Bill.\"", 0, 0) }),
    );
    let fields = labels(&fields);
    assert!(fields.contains(&"handoffs".to_string()), "{fields:?}");
    assert!(client.shutdown().success());
}

#[test]
fn rename_edits_every_file_and_refuses_a_collision_or_the_stdlib() {
    let dir = project("lsp-rename");
    let main = uri(&dir.join("main.tenx"));
    let tools = uri(&dir.join("tools.tenx"));
    let mut client = Client::start(&dir, false);
    client.open(&main, MAIN);
    let _ = client.diagnostics(&main, Some(1));

    let prepared = client.result("textDocument/prepareRename", at(&main, MAIN, "lookup", 0));
    assert_eq!(prepared["placeholder"], "lookup");

    let mut params = at(&main, MAIN, "lookup", 0);
    params["newName"] = json!("find_order");
    let edit = client.result("textDocument/rename", params);
    let changes = edit["changes"].as_object().unwrap();
    assert_eq!(changes[main.as_str()].as_array().unwrap().len(), 1, "{edit}");
    assert_eq!(changes[tools.as_str()].as_array().unwrap().len(), 1, "{edit}");
    assert!(
        changes
            .values()
            .flat_map(|e| e.as_array().unwrap())
            .all(|e| e["newText"] == "find_order")
    );

    let mut collide = at(&main, MAIN, "lookup", 0);
    collide["newName"] = json!("billing");
    let refused = client.request("textDocument/rename", collide);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`billing` is already declared as an agent"),
        "{refused}"
    );

    let stdlib = client.request("textDocument/prepareRename", at(&main, MAIN, "yes_no", 0));
    assert!(
        stdlib["error"]["message"]
            .as_str()
            .unwrap()
            .contains("standard library"),
        "{stdlib}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn outline_formatting_and_quick_fixes() {
    let dir = project("lsp-outline");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    let messy = MAIN.replace("  entry = support", "      entry   =   support");
    client.open(&main, &messy);
    let _ = client.diagnostics(&main, Some(1));

    let outline = client.result(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": main } }),
    );
    let names: Vec<&str> = outline
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"support") && names.contains(&"desk") && names.contains(&"orders"),
        "{names:?}"
    );

    let edits = client.result(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": main }, "options": { "tabSize": 2, "insertSpaces": true } }),
    );
    let edits = edits.as_array().unwrap();
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert!(
        edits[0]["newText"].as_str().unwrap().contains("\n  entry = support\n"),
        "{edits:?}"
    );

    // A misspelt node gets a quick fix that writes the name it meant.
    let broken = MAIN.replace("billing -> END", "biling -> END");
    client.change(&main, 2, &broken);
    let diagnostics = client.diagnostics(&main, Some(2));
    let start = position(&broken, "biling", 0, 0);
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": { "uri": main },
            "range": { "start": start, "end": start },
            "context": { "diagnostics": diagnostics },
        }),
    );
    let fix = &actions.as_array().unwrap()[0];
    assert_eq!(fix["kind"], "quickfix");
    let edit = &fix["edit"]["changes"][main.as_str()][0];
    assert_eq!(edit["newText"], "billing");
    assert_eq!(edit["range"]["start"], start);
    assert!(client.shutdown().success());
}

#[test]
fn columns_are_utf8_bytes_when_the_client_offers_them_else_utf16_units() {
    let dir = temp_dir("lsp-encoding");
    let text = MAIN.replace(
        "tag orders \"Reads orders\"",
        "tag orders \"Lit les commandes 📦\"  tag x \"y\"",
    );
    write(&dir, "main.tenx", &text);
    write(&dir, "tools.tenx", TOOLS);
    let main = uri(&dir.join("main.tenx"));
    let line = text.lines().position(|l| l.contains("tag x")).unwrap();
    let written = text.lines().nth(line).unwrap();
    let before = &written[..written.find("tag x").unwrap() + 4];
    // `x` starts 4 bytes later in UTF-8 than in UTF-16: the emoji is 4 bytes and 2 units.
    let (bytes, units) = (before.len(), before.encode_utf16().count());
    assert_eq!(bytes, units + 2);
    for (utf8, encoding, column) in [(true, "utf-8", bytes), (false, "utf-16", units)] {
        let mut client = Client::start(&dir, utf8);
        assert_eq!(client.initialized["capabilities"]["positionEncoding"], encoding);
        client.open(&main, &text);
        let _ = client.diagnostics(&main, Some(1));
        let found = client.result(
            "textDocument/hover",
            json!({ "textDocument": { "uri": main }, "position": { "line": line, "character": column + 1 } }),
        );
        assert_eq!(found["range"]["start"]["character"], column, "{encoding}: {found}");
        assert_eq!(found["range"]["end"]["character"], column + 1, "{encoding}: {found}");
        assert!(client.shutdown().success());
    }
}

#[test]
fn requests_it_cannot_answer_get_errors_and_the_server_keeps_going() {
    let dir = project("lsp-errors");
    let main = uri(&dir.join("main.tenx"));
    let mut client = Client::start(&dir, false);
    client.open(&main, MAIN);
    let _ = client.diagnostics(&main, Some(1));
    let unknown = client.request(
        "textDocument/semanticTokens/full",
        json!({ "textDocument": { "uri": main } }),
    );
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let malformed = client.request("textDocument/hover", json!({ "textDocument": 7 }));
    assert_eq!(malformed["error"]["code"], -32602, "{malformed}");
    let far = client.result(
        "textDocument/hover",
        json!({ "textDocument": { "uri": main }, "position": { "line": 9999, "character": 0 } }),
    );
    assert!(far.is_null(), "{far}");
    let unopened = client.result(
        "textDocument/hover",
        json!({ "textDocument": { "uri": "untitled:Untitled-1" }, "position": { "line": 0, "character": 0 } }),
    );
    assert!(unopened.is_null(), "{unopened}");
    // Still answering.
    let tool = client.result("textDocument/hover", at(&main, MAIN, "lookup", 0));
    assert!(tool["contents"]["value"].as_str().unwrap().contains("lookup"));
    assert!(client.shutdown().success());
}
