//! Hostile templates (issue #32): recursion that would overflow the stack and functions that
//! would build gigabytes end in an error of the rendering, never in an abort. Each renders on a
//! thread with a small stack, as the renderer's worker threads have.

use gotmpl::{ErrorKind, Limits, Templates, Value};

/// Renders `template` with `values` (YAML) on a thread with a 512 KiB stack.
fn render(template: &str, values: &str) -> Result<String, gotmpl::Error> {
    let template = template.to_string();
    let values = values.to_string();
    std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || {
            let mut set = Templates::helm();
            set.add("t.yaml", &template)?;
            let values = gotmpl::yaml::from_yaml(&values).unwrap();
            let data = Value::map([("Values".to_string(), values)].into_iter().collect());
            set.render("t.yaml", &data, &Limits::default())
                .map(|o| o.text)
        })
        .unwrap()
        .join()
        .unwrap()
}

fn kind(r: Result<String, gotmpl::Error>) -> ErrorKind {
    match r {
        Ok(text) => panic!("rendered {} bytes", text.len()),
        Err(e) => e.kind,
    }
}

#[test]
fn a_define_that_includes_itself_stops_at_helm_depth() {
    let e = render(
        r#"{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}"#,
        "",
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Budget);
    assert!(e.message.contains("1000 levels"), "{}", e.message);
    // `template` too.
    let r = render(
        r#"{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}"#,
        "",
    );
    assert_eq!(kind(r), ErrorKind::Budget);
}

#[test]
fn include_recursion_up_to_helm_depth_renders() {
    // 990 levels deep: within Helm's 1,000, far past what a small stack holds in frames.
    let t = r#"{{ define "r" }}{{ if lt . 990 }}{{ include "r" (add1 .) }}{{ else }}deep{{ end }}{{ end }}{{ include "r" 0 }}"#;
    assert_eq!(render(t, "").unwrap(), "deep");
}

#[test]
fn tpl_of_itself_stops() {
    let r = render("{{ tpl .Values.t . }}", "t: '{{ tpl .Values.t . }}'");
    assert_eq!(kind(r), ErrorKind::Budget);
}

#[test]
fn deep_nesting_is_a_parse_error() {
    let parens = format!("{{{{ {}1{} }}}}", "(".repeat(3000), ")".repeat(3000));
    let ifs = format!(
        "{}x{}",
        "{{ if true }}".repeat(3000),
        "{{ end }}".repeat(3000)
    );
    let else_ifs = format!(
        "{{{{ if false }}}}{}x{{{{ end }}}}",
        "{{ else if false }}".repeat(3000)
    );
    for t in [parens, ifs, else_ifs] {
        let e = render(&t, "").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Parse);
        assert!(e.message.contains("max expression depth"), "{}", e.message);
    }
    // A few hundred levels still render.
    let ifs = format!(
        "{}x{}",
        "{{ if true }}".repeat(300),
        "{{ end }}".repeat(300)
    );
    assert_eq!(render(&ifs, "").unwrap(), "x");
}

#[test]
fn a_map_that_contains_itself_is_refused() {
    let cyclic = r#"{{ $d := dict "a" 1 }}{{ $_ := set $d "me" $d }}"#;
    // Sprig's toJson and Helm's toYaml give empty text when marshalling fails, as in Go.
    assert_eq!(
        render(&format!("{cyclic}[{{{{ toJson $d }}}}]"), "").unwrap(),
        "[]"
    );
    assert_eq!(
        render(&format!("{cyclic}[{{{{ toYaml $d }}}}]"), "").unwrap(),
        "[]"
    );
    for f in ["mustToJson $d", "deepCopy $d", "$d", "printf \"%v\" $d"] {
        let e = render(&format!("{cyclic}{{{{ {f} }}}}"), "").unwrap_err();
        assert!(
            matches!(e.kind, ErrorKind::Exec | ErrorKind::Budget),
            "{f}: {e}"
        );
    }
}

#[test]
fn a_dict_nested_100000_times_is_dropped_and_not_walked() {
    let nest = r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}"#;
    assert_eq!(render(&format!("{nest}ok"), "").unwrap(), "ok");
    let lists = r#"{{ $l := list }}{{ range until 100000 }}{{ $l = list $l 1 }}{{ end }}ok"#;
    assert_eq!(render(lists, "").unwrap(), "ok");
    for f in [
        "toJson $d",
        "toYaml $d",
        "deepCopy $d",
        "$d",
        "len (list $d)",
    ] {
        let r = render(&format!("{nest}{{{{ {f} }}}}"), "");
        if f.starts_with("len") {
            assert_eq!(r.unwrap(), "1");
        } else {
            assert_eq!(kind(r), ErrorKind::Budget, "{f}");
        }
    }
}

#[test]
fn strings_that_double_stop_at_the_budget() {
    let t = r#"{{ $s := repeat 16777216 "x" }}{{ range until 10 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ len $s }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
    let t = r#"{{ $s := repeat 16777216 "x" }}{{ range until 10 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
}

#[test]
fn a_list_that_doubles_is_not_walked_past_the_budget() {
    let double = r#"{{ $l := list 1 }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}"#;
    assert_eq!(
        render(&format!("{double}{{{{ len $l }}}}"), "").unwrap(),
        "2"
    );
    for f in [
        "toJson $l",
        "toYaml $l",
        "deepCopy $l",
        "$l",
        "join \",\" $l",
        "has 2 (list (deepCopy $l))",
    ] {
        assert_eq!(
            kind(render(&format!("{double}{{{{ {f} }}}}"), "")),
            ErrorKind::Budget,
            "{f}"
        );
    }
}

#[test]
fn indent_and_replace_are_refused_before_building_gigabytes() {
    let t = r#"{{ $s := repeat 4000000 "\n" }}{{ indent 1000 $s }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
    let t = r#"{{ indent 9000000000 "x" }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
    let t = r#"{{ $s := repeat 16000000 "x" }}{{ replace "x" (repeat 512 "y") $s }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
    let t = r#"{{ $s := repeat 1000000 "x" }}{{ regexReplaceAll "" $s (repeat 10000 "y") }}"#;
    assert_eq!(kind(render(t, "")), ErrorKind::Budget);
}

#[test]
fn printf_widths_past_a_million_are_refused_as_in_go() {
    assert_eq!(
        render(r#"{{ printf "%999999999d" 1 }}"#, "").unwrap(),
        "%!(NOVERB)%!(EXTRA int=1)"
    );
    assert_eq!(
        render(r#"{{ printf "%*d" 999999999 1 }}"#, "").unwrap(),
        "%!(BADWIDTH)1"
    );
    assert_eq!(render(r#"{{ printf "%5d" 1 }}"#, "").unwrap(), "    1");
}

#[test]
fn ranging_over_a_huge_number_costs_steps_not_memory() {
    let r = render("{{ range 1000000000000 }}{{ end }}", "");
    assert_eq!(kind(r), ErrorKind::Budget);
}

#[test]
fn a_yaml_alias_bomb_in_from_yaml_is_refused() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\\n");
    let mut prev = 'a';
    for c in 'b'..='k' {
        bomb.push_str(&format!(
            "{c}: &{c} [{}]\\n",
            vec![format!("*{prev}"); 10].join(", ")
        ));
        prev = c;
    }
    let t = format!("{{{{ $v := fromYaml \"{bomb}\" }}}}{{{{ $v.Error }}}}");
    let out = render(&t, "").unwrap();
    assert!(out.contains("excessive aliasing"), "{out}");
}

/// A map that holds itself, or two that hold each other, are freed when the scope they were
/// made in closes: without it, reference counts would leak them on every rendering.
#[test]
fn maps_in_a_cycle_are_freed_with_their_scope() {
    use gotmpl::{MapScope, Value};
    let weak = {
        let _maps = MapScope::new();
        let a = Value::empty_map();
        let b = Value::empty_map();
        let (Value::Map(ra), Value::Map(rb)) = (&a, &b) else {
            unreachable!("empty_map is a map")
        };
        ra.borrow_mut().insert("self".into(), a.clone());
        ra.borrow_mut().insert("b".into(), b.clone());
        rb.borrow_mut().insert("a".into(), a.clone());
        let weak = (std::rc::Rc::downgrade(ra), std::rc::Rc::downgrade(rb));
        drop((a, b));
        assert!(weak.0.upgrade().is_some(), "the cycle outlives its values");
        weak
    };
    assert!(weak.0.upgrade().is_none() && weak.1.upgrade().is_none());
}

/// The same through a template: `set` makes `$d` hold itself, and the rendering still ends
/// (printing a map that holds itself is bounded) with the map freed by the scope.
#[test]
fn a_template_that_makes_a_map_hold_itself_renders_and_frees_it() {
    use gotmpl::{Limits, MapScope, Templates, Value};
    for _ in 0..3 {
        let _maps = MapScope::new();
        let mut set = Templates::helm();
        set.add(
            "t",
            r#"{{ $d := dict "k" 1 }}{{ $_ := set $d "self" $d }}{{ len $d }}"#,
        )
        .unwrap();
        let out = set
            .render("t", &Value::empty_map(), &Limits::default())
            .unwrap();
        assert_eq!(out.text, "2");
    }
}
