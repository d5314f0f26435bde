//! The shipped pack on regorus' virtual machine (RVM): compiled once per process to bytecode
//! with an entry point per result rule, it evaluates about eight times faster than regorus'
//! tree-walking interpreter (BENCHMARKS.md), with the same results (a test compares both on
//! every fixture document, and the repository rules on the model of every fixture case).
//!
//! Differences found, and avoided in the shipped rules: where a builtin fails (a type error on
//! malformed input), the interpreter stops with an error (`policy/evaluation-error`) while the
//! machine fails that rule body (the rules guard their inputs with `is_string`); the machine
//! does not read `data` whole (`object.get(data, …)` does not compile); and a rule-level
//! `else` after a failing body gives undefined instead of the `else` value (options are read
//! with `default`). User policies stay on the interpreter: conftest's behaviour, `print` and
//! `gitops.location` are the interpreter's.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, OnceLock};

use regorus::Value;
use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use regorus::utils::limits::ExecutionTimerConfig;

use super::{DEFAULT_TIMEOUT, PolicySet, pack, rego_path, summarize_error};

/// The program of the pack's rules; `None` if it does not compile (the interpreter is then
/// used; a test keeps the shipped pack compiling).
pub(super) fn pack_program() -> Option<&'static Arc<Program>> {
    static PROGRAM: OnceLock<Option<Arc<Program>>> = OnceLock::new();
    PROGRAM.get_or_init(|| compile(&pack::get().set)).as_ref()
}

fn compile(set: &PolicySet) -> Option<Arc<Program>> {
    let entry_points: Vec<String> = set
        .packages
        .values()
        .flat_map(|p| p.rules.iter().map(|r| rule_path(&p.name, r)))
        .collect();
    let first = entry_points.first()?;
    let mut engine = set.engine.clone();
    let compiled = engine
        .compile_with_entrypoint(&first.as_str().into())
        .ok()?;
    let refs: Vec<&str> = entry_points.iter().map(String::as_str).collect();
    Compiler::compile_from_policy(&compiled, &refs).ok()
}

fn rule_path(package: &str, rule: &str) -> String {
    format!("data.{}.{rule}", rego_path(package))
}

/// A machine running `program` on `data`, with the interpreter's limits: the time limit of an
/// evaluation, and no count of instructions (the machine's default stops at 25,000, which a
/// repository rule over thousands of Applications exceeds).
pub(super) fn machine(program: &Arc<Program>, data: Value) -> Option<RegoVM> {
    let mut vm = RegoVM::new();
    vm.load_program(Arc::clone(program));
    vm.set_max_instructions(usize::MAX);
    vm.set_strict_builtin_errors(true);
    vm.set_execution_timer_config(Some(ExecutionTimerConfig {
        limit: DEFAULT_TIMEOUT,
        check_interval: NonZeroU32::new(64).unwrap_or(NonZeroU32::MIN),
    }));
    vm.set_data(data).ok()?;
    Some(vm)
}

/// Evaluates a result rule of `package` on the machine's current input, as
/// [`PolicySet::eval`] does: `Ok(None)` when undefined.
pub(super) fn eval(
    vm: &mut RegoVM,
    package: &str,
    rule: &str,
) -> Result<Option<serde_json::Value>, String> {
    // The entry points of the pack's rules, named once: an evaluation per document per rule.
    static ENTRIES: OnceLock<HashMap<String, HashMap<String, String>>> = OnceLock::new();
    let entries = ENTRIES.get_or_init(|| {
        let mut entries: HashMap<String, HashMap<String, String>> = HashMap::new();
        for p in pack::get().set.packages.values() {
            for r in &p.rules {
                entries
                    .entry(p.name.clone())
                    .or_default()
                    .insert(r.clone(), rule_path(&p.name, r));
            }
        }
        entries
    });
    let named = entries.get(package).and_then(|rules| rules.get(rule));
    let path = match named {
        Some(path) => std::borrow::Cow::Borrowed(path.as_str()),
        None => std::borrow::Cow::Owned(rule_path(package, rule)),
    };
    match vm.execute_entry_point_by_name(&path) {
        Ok(Value::Undefined) => Ok(None),
        Ok(v) => serde_json::to_value(&v)
            .map(Some)
            .map_err(|e| e.to_string()),
        Err(e) => Err(summarize_error(&format!("{e:#}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    /// Every result rule of the pack, on every document of the repository's fixtures and
    /// examples: the machine and the interpreter agree.
    #[test]
    fn the_machine_agrees_with_the_interpreter_on_every_fixture_document() {
        let program = pack_program().expect("the shipped pack compiles for the RVM");
        let set = &pack::get().set;
        let data = Value::from(serde_json::json!({"gitops_lint": {"options": {}}}));
        let mut engine = set.engine.clone();
        engine.add_data(data.clone()).expect("data");
        let mut vm = machine(program, engine.get_data()).expect("machine");
        let mut pruned = machine(program, engine.get_data()).expect("machine");
        let keys = super::super::run::pack_document_keys(pack::get().rules.iter())
            .expect("the shipped document rules name the keys they read");
        let document_packages: Vec<&str> = pack::get()
            .rules
            .iter()
            .filter(|r| r.scope == pack::Scope::Document)
            .map(|r| r.package.as_str())
            .collect();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    files.push(path);
                }
            }
        }
        files.sort();
        let (mut compared, mut with_results) = (0, 0);
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for doc in crate::yaml::parse(FileId(0), &text).docs {
                let input = super::super::run::input_value(&doc.root, None);
                engine.set_input(input.clone());
                pruned.set_input(super::super::run::input_value(&doc.root, Some(&keys)));
                vm.set_input(input);
                for p in set.packages.values() {
                    for rule in &p.rules {
                        let interpreted = PolicySet::eval(&mut engine, &p.name, rule);
                        let executed = eval(&mut vm, &p.name, rule);
                        // The shipped rules guard their inputs: no builtin fails.
                        assert!(
                            interpreted.is_ok() && executed.is_ok(),
                            "{}: data.{}.{rule}: {interpreted:?} {executed:?}",
                            path.display(),
                            p.name
                        );
                        assert_eq!(
                            executed.as_ref().ok(),
                            interpreted.as_ref().ok(),
                            "{}: data.{}.{rule}",
                            path.display(),
                            p.name
                        );
                        if document_packages.contains(&p.name.as_str()) {
                            // The per-document rules read only the keys they name.
                            assert_eq!(
                                eval(&mut pruned, &p.name, rule).as_ref().ok(),
                                executed.as_ref().ok(),
                                "{}: data.{}.{rule} on the pack's keys of `input`",
                                path.display(),
                                p.name
                            );
                        }
                        compared += 1;
                        with_results += usize::from(
                            interpreted
                                .is_ok_and(|v| v.is_some_and(|v| v != serde_json::json!([]))),
                        );
                    }
                }
            }
        }
        assert!(
            compared > 1000 && with_results > 20,
            "{compared} evaluations, {with_results} with results"
        );
    }

    /// The repository rules, on the model (`data.gitops`, and `input`) of each of their
    /// fixture cases: the machine and the interpreter agree.
    #[test]
    fn the_machine_agrees_with_the_interpreter_on_the_repository_rules_fixtures() {
        use crate::model::{Model, settings::Settings};
        let program = pack_program().expect("the shipped pack compiles for the RVM");
        let pack = pack::get();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
        let (mut cases, mut with_results) = (0, 0);
        for rule in pack.rules.iter().filter(|r| r.scope == pack::Scope::Repo) {
            let dir = root.join(rule.meta.id);
            let mut entries: Vec<_> = std::fs::read_dir(&dir)
                .expect("fixtures")
                .flatten()
                .map(|e| e.path())
                .collect();
            entries.sort();
            for case in entries {
                let files: Vec<(String, String)> = if case.is_dir() {
                    let mut out = Vec::new();
                    let mut dirs = vec![case.clone()];
                    while let Some(d) = dirs.pop() {
                        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                            let p = e.path();
                            if p.is_dir() {
                                dirs.push(p);
                            } else if let Ok(text) = std::fs::read_to_string(&p) {
                                let rel = p.strip_prefix(&case).expect("under the case");
                                out.push((rel.to_string_lossy().replace('\\', "/"), text));
                            }
                        }
                    }
                    out.sort();
                    out
                } else if case.extension().is_some_and(|e| e == "yaml") {
                    let name = case
                        .file_name()
                        .expect("a file")
                        .to_string_lossy()
                        .into_owned();
                    vec![(name, std::fs::read_to_string(&case).expect("readable"))]
                } else {
                    continue;
                };
                let texts: Vec<(&str, &str)> = files
                    .iter()
                    .map(|(p, t)| (p.as_str(), t.as_str()))
                    .collect();
                let repo = crate::model::Repository::in_memory(&texts);
                let model = Model::new(&repo, Settings::default());
                let gitops =
                    super::super::data::model_value(&model, &super::super::data::Fields::all());
                let mut engine = pack.set.engine.clone();
                engine
                    .add_data(Value::from(std::collections::BTreeMap::from([
                        (Value::from("gitops"), gitops.clone()),
                        (
                            Value::from("gitops_lint"),
                            Value::from(serde_json::json!({"options": {}})),
                        ),
                    ])))
                    .expect("data");
                let mut vm = machine(program, engine.get_data()).expect("machine");
                engine.set_input(gitops.clone());
                vm.set_input(gitops);
                let p = &pack.set.packages[&rule.package];
                for r in &p.rules {
                    let interpreted = PolicySet::eval(&mut engine, &p.name, r);
                    assert!(interpreted.is_ok(), "{}: {interpreted:?}", case.display());
                    with_results +=
                        usize::from(interpreted.as_ref().is_ok_and(|v| {
                            v.as_ref().is_some_and(|v| v != &serde_json::json!([]))
                        }));
                    assert_eq!(
                        eval(&mut vm, &p.name, r).ok(),
                        interpreted.ok(),
                        "{}: data.{}.{r}",
                        case.display(),
                        p.name
                    );
                }
                cases += 1;
            }
        }
        assert!(
            cases >= 4 && with_results >= 2,
            "{cases} cases, {with_results} with results"
        );
    }
}
