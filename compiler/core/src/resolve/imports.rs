//! Import resolution: which modules make up a program. File imports are looked up in the
//! [`SourceSet`] by a normalised relative name; stdlib imports select declarations from the
//! embedded stdlib modules, which are added to the set as `<stdlib>/name.tenx`.

use crate::ast::{ImportTarget, Item, Module};
use crate::syntax::{ParseCache, parse_file, parse_with};
use std::collections::BTreeSet;
use tenx_diagnostics::{Code, Diagnostic, FileId, ImportRefusal, SourceSet, Span};

/// A parsed module and, for stdlib modules, the names it contributes (`None` = all).
pub(crate) struct LoadedModule {
    pub module: Module,
    pub selected: Option<BTreeSet<String>>,
    pub stdlib: bool,
    /// Names this module may have meant to declare or import, whose error is already
    /// reported: items that could not be parsed, declarations of failed stdlib imports.
    pub broken: Vec<String>,
    /// Whether a file this module imports could not be found: any name may come from it.
    pub missing_file: bool,
}

/// The display name of a file imported as `path` from the file named `importer`:
/// `examples/desk/main.tenx` importing `"tools.tenx"` gives `examples/desk/tools.tenx`.
/// `.` and `..` segments are resolved; `..` never climbs above the first segment.
pub fn import_file_name(importer: &str, path: &str) -> String {
    let dir: Vec<&str> = match importer.rfind('/') {
        Some(i) => importer.get(..i).unwrap_or("").split('/').collect(),
        None => Vec::new(),
    };
    let mut parts: Vec<&str> = if path.starts_with('/') { Vec::new() } else { dir };
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Parses the root and, breadth first, everything it imports.
pub(crate) fn load_modules(
    sources: &mut SourceSet,
    root: FileId,
    diagnostics: &mut Vec<Diagnostic>,
    mut cache: Option<&mut ParseCache>,
) -> Vec<LoadedModule> {
    let mut loaded: Vec<LoadedModule> = Vec::new();
    let mut queue = vec![root];
    let mut seen = BTreeSet::from([root]);
    let mut stdlib_selection: std::collections::BTreeMap<&'static str, Option<BTreeSet<String>>> = Default::default();
    let mut stdlib_import_sites: Vec<(&'static str, String, FileId, Span)> = Vec::new();

    while let Some(file) = queue.pop() {
        let Some(source) = sources.get(file) else { continue };
        let parsed = parse_with(file, &source.text, cache.as_deref_mut());
        let module = parsed.module;
        let mut broken: Vec<String> = parsed.broken.into_iter().map(|i| i.name).collect();
        let mut missing_file = false;
        let importer = source.name.clone();
        diagnostics.extend(parsed.diagnostics);
        for item in &module.items {
            let Item::Import(import) = item else { continue };
            match &import.target {
                ImportTarget::File { path, span } => match sources.imported(file, path) {
                    Some(Ok(id)) => {
                        if seen.insert(*id) {
                            queue.push(*id);
                        }
                    }
                    refused => {
                        missing_file = true;
                        let refusal = refused.and_then(|r| r.as_ref().err());
                        let name = import_file_name(&importer, path);
                        diagnostics.push(refused_import(file, *span, path, &name, refusal));
                    }
                },
                ImportTarget::Std { path, star } => {
                    let names: Vec<&str> = path.iter().map(|i| i.name.as_str()).collect();
                    let (module_name, decl) = match (names.as_slice(), star) {
                        (["std", module], true) => (*module, None),
                        (["std", module, decl], false) => (*module, Some((*decl).to_string())),
                        _ => {
                            // `import std.approval`: it meant the module's declarations.
                            let mut help = format!("stdlib modules: {}", stdlib_names());
                            if let ["std", module] = names.as_slice() {
                                let declared = declared_names(module);
                                if let Some(first) = declared.first() {
                                    help = format!(
                                        "import one declaration (`import std.{module}.{first}`) or all of them (`import std.{module}.*`)"
                                    );
                                }
                                broken.extend(declared);
                            }
                            diagnostics.push(
                                Diagnostic::new(
                                    Code::TENX0104,
                                    "stdlib imports have the form `std.module.name` or `std.module.*`",
                                    file,
                                    import.span,
                                )
                                .label("not a stdlib import path")
                                .help(help),
                            );
                            continue;
                        }
                    };
                    let Some(module) = tenx_stdlib::module(module_name) else {
                        let span = path.get(1).map_or(import.span, |i| i.span);
                        let modules: Vec<&str> = tenx_stdlib::MODULES.iter().map(|m| m.name).collect();
                        let meant = crate::suggest::did_you_mean(module_name, modules.iter());
                        match &decl {
                            Some(decl) => broken.push(decl.clone()),
                            None => broken.extend(meant.map(declared_names).unwrap_or_default()),
                        }
                        let suggestion = meant.map(|s| format!("did you mean `std.{s}`?"));
                        diagnostics.push(
                            Diagnostic::new(
                                Code::TENX0104,
                                format!("there is no stdlib module `std.{module_name}`"),
                                file,
                                span,
                            )
                            .label("unknown module")
                            .help(suggestion.unwrap_or_else(|| format!("stdlib modules: {}", stdlib_names()))),
                        );
                        continue;
                    };
                    let entry = stdlib_selection
                        .entry(module.name)
                        .or_insert_with(|| Some(BTreeSet::new()));
                    match decl {
                        None => *entry = None,
                        Some(decl) => {
                            if let Some(set) = entry {
                                set.insert(decl.clone());
                            }
                            let span = path.get(2).map_or(import.span, |i| i.span);
                            stdlib_import_sites.push((module.name, decl, file, span));
                        }
                    }
                }
            }
        }
        loaded.push(LoadedModule {
            module,
            selected: None,
            stdlib: false,
            broken,
            missing_file,
        });
    }

    for (name, selected) in stdlib_selection {
        let Some(module) = tenx_stdlib::module(name) else {
            continue;
        };
        let id = sources.add(module.path, module.source);
        let Some(source) = sources.get(id) else { continue };
        let (parsed, diags) = parse_file(id, &source.text);
        diagnostics.extend(diags);
        let declared: BTreeSet<String> = parsed
            .items
            .iter()
            .filter_map(|i| crate::ast::item_name(i).map(|n| n.name.clone()))
            .collect();
        let mut broken = Vec::new();
        for (module_name, decl, file, span) in stdlib_import_sites.iter().filter(|s| s.0 == name) {
            if !declared.contains(decl) {
                let meant = crate::suggest::did_you_mean(decl, declared.iter());
                // Uses of the name written, or of the name meant, are not reported again.
                broken.push(decl.clone());
                broken.extend(meant.map(str::to_string));
                let help = meant.map(|s| format!("did you mean `{s}`?")).unwrap_or_else(|| {
                    let names: Vec<String> = declared.iter().map(|d| format!("`{d}`")).collect();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    format!(
                        "`std.{module_name}` declares {}",
                        crate::syntax::errors::join_or(&names).replacen(" or ", " and ", 1)
                    )
                });
                diagnostics.push(
                    Diagnostic::new(
                        Code::TENX0104,
                        format!("`std.{module_name}` has no declaration `{decl}`"),
                        *file,
                        *span,
                    )
                    .label("not in this module")
                    .help(help),
                );
            }
        }
        loaded.push(LoadedModule {
            module: parsed,
            selected,
            stdlib: true,
            broken,
            missing_file: false,
        });
    }
    loaded
}

/// The diagnostic for `import "written"` (shown as `name`) at `span` of `file`, which was not
/// loaded: refused for `refusal`, or never recorded by a reader (reported as not found). It
/// never shows anything of the target: a refused import is not read.
fn refused_import(file: FileId, span: Span, written: &str, name: &str, refusal: Option<&ImportRefusal>) -> Diagnostic {
    let not_found = || {
        Diagnostic::new(Code::TENX0104, format!("cannot find the file `{written}`"), file, span)
            .label(format!("looked for `{name}`"))
            .help("imported paths are relative to the importing file")
            .note("until it is found, names it may declare are not reported as unknown")
    };
    match refusal {
        None | Some(ImportRefusal::NotFound) => not_found(),
        Some(ImportRefusal::Unreadable { reason }) => {
            Diagnostic::new(Code::TENX0104, format!("cannot read the file `{written}`"), file, span)
                .label(reason.clone())
                .note("until it can be read, names it may declare are not reported as unknown")
        }
        Some(ImportRefusal::OutsideProject { project }) => Diagnostic::new(
            Code::TENX0112,
            format!("`{written}` is outside the project"),
            file,
            span,
        )
        .label(format!("resolves outside `{project}`"))
        .help("a program imports only files inside its project folder: move the file into it")
        .note("the project folder is the folder of `tenx.toml`, or without one the folder of the file checked; links are followed first"),
        Some(ImportRefusal::NotAFile { kind }) => Diagnostic::new(
            Code::TENX0113,
            format!("`{written}` is not a regular file"),
            file,
            span,
        )
        .label(format!("this is {kind}"))
        .help(if *kind == "a directory" {
            "import the `.tenx` files in it one by one"
        } else {
            "import a `.tenx` file"
        }),
        Some(ImportRefusal::TooLarge { bytes, limit }) => Diagnostic::new(
            Code::TENX0114,
            format!("`{written}` is too large to import"),
            file,
            span,
        )
        .label(format!(
            "{bytes} bytes, more than the {} a source file may hold",
            byte_size(*limit)
        ))
        .help("split the file, or check that the import names the file you meant"),
    }
}

/// A size limit as people write it: `16 MiB`, `64 bytes`.
pub fn byte_size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The names a stdlib module declares (none for a module that does not exist).
fn declared_names(module: &str) -> Vec<String> {
    let Some(module) = tenx_stdlib::module(module) else {
        return Vec::new();
    };
    let (parsed, _) = parse_file(FileId(0), module.source);
    parsed
        .items
        .iter()
        .filter_map(|i| crate::ast::item_name(i).map(|n| n.name.clone()))
        .collect()
}

/// The stdlib module that declares `name` as one of `kinds`, for an "add `import std.…`" help
/// on an unknown name.
pub(crate) fn stdlib_home(name: &str, kinds: &[super::DeclKind]) -> Option<&'static str> {
    stdlib_index()
        .iter()
        .find(|(_, decl, kind)| decl == name && kinds.contains(kind))
        .map(|(module, _, _)| *module)
}

/// Every declaration of the standard library: (module, name, kind). Parsed once.
fn stdlib_index() -> &'static [(&'static str, String, super::DeclKind)] {
    static INDEX: std::sync::OnceLock<Vec<(&'static str, String, super::DeclKind)>> = std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut index = Vec::new();
        for module in tenx_stdlib::MODULES {
            let (parsed, _) = parse_file(FileId(0), module.source);
            for item in &parsed.items {
                if let (Some(name), Some(kind)) = (crate::ast::item_name(item), super::program::kind_of(item)) {
                    index.push((module.name, name.name.clone(), kind));
                }
            }
        }
        index
    })
}

fn stdlib_names() -> String {
    tenx_stdlib::MODULES
        .iter()
        .map(|m| format!("`std.{}`", m.name))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::import_file_name;

    #[test]
    fn file_import_names() {
        assert_eq!(
            import_file_name("examples/desk/main.tenx", "tools.tenx"),
            "examples/desk/tools.tenx"
        );
        assert_eq!(
            import_file_name("examples/desk/main.tenx", "../shared/x.tenx"),
            "examples/shared/x.tenx"
        );
        assert_eq!(import_file_name("main.tenx", "./a/b.tenx"), "a/b.tenx");
        assert_eq!(import_file_name("main.tenx", "../up.tenx"), "../up.tenx");
    }
}
