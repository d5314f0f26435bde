//! Unit tests of the public API: provenance, budgets and error kinds. Helm equivalence of the
//! constructs and functions is checked by `differential.rs`.

use std::collections::BTreeMap;

use gotmpl::{ErrorKind, Limits, Origin, Source, Templates, Value};

fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::map(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn o(n: u64) -> Option<Origin> {
    Some(Origin(n))
}

fn render(src: &str, data: &Value) -> gotmpl::Output {
    let mut t = Templates::helm();
    t.add("t.yaml", src).unwrap();
    t.render("t.yaml", data, &Limits::default()).unwrap()
}

/// The source of each segment, with the text it covers.
fn sources(out: &gotmpl::Output) -> Vec<(String, String)> {
    out.segments
        .iter()
        .map(|(r, s)| {
            let src = match s {
                Source::Template { name, range } => {
                    format!("{name}@{}..{}", range.start, range.end)
                }
                Source::Value(Origin(n)) => format!("value#{n}"),
            };
            (out.text[r.clone()].to_string(), src)
        })
        .collect()
}

fn pair(text: &str, src: &str) -> (String, String) {
    (text.to_string(), src.to_string())
}

#[test]
fn literal_text_and_a_value_keep_their_sources() {
    let data = map(vec![("x", Value::str_at("web", o(7)))]);
    let out = render("a: {{ .x }}\nb: 1\n", &data);
    assert_eq!(out.text, "a: web\nb: 1\n");
    assert_eq!(
        sources(&out),
        [
            pair("a: ", "t.yaml@0..3"),
            pair("web", "value#7"),
            pair("\nb: 1\n", "t.yaml@11..17")
        ]
    );
}

#[test]
fn a_string_built_from_pieces_keeps_each_piece() {
    let data = map(vec![
        ("repo", Value::str_at("nginx", o(1))),
        ("tag", Value::str_at("1.25", o(2))),
    ]);
    let out = render("image: \"{{ .repo }}:{{ .tag }}\"", &data);
    let s = sources(&out);
    assert!(s.contains(&pair("nginx", "value#1")), "{s:?}");
    assert!(s.contains(&pair("1.25", "value#2")), "{s:?}");
    let out = render("image: {{ printf \"%s:%s\" .repo .tag | quote }}", &data);
    let s = sources(&out);
    assert_eq!(out.text, "image: \"nginx:1.25\"");
    assert!(s.contains(&pair("nginx", "value#1")), "{s:?}");
    assert!(s.contains(&pair("1.25", "value#2")), "{s:?}");
    // The ':' came from the format string, a literal of the template.
    assert!(
        s.iter()
            .any(|(t, src)| t.contains(':') && src.starts_with("t.yaml@")),
        "{s:?}"
    );
}

#[test]
fn numbers_and_computed_values() {
    let data = map(vec![("n", Value::Float(3.0, o(5)))]);
    let out = render("r: {{ .n }}\nc: {{ add .n 1 }}", &data);
    assert_eq!(out.text, "r: 3\nc: 4");
    let s = sources(&out);
    assert!(s.contains(&pair("3", "value#5")), "{s:?}");
    // A computed value is attributed to its action.
    assert!(s.contains(&pair("4", "t.yaml@15..29")), "{s:?}");
}

#[test]
fn to_yaml_and_include_keep_scalar_origins() {
    let data = map(vec![(
        "res",
        map(vec![
            ("cpu", Value::str_at("100m", o(3))),
            ("mem", Value::str_at("1Gi", o(4))),
        ]),
    )]);
    let src = "{{- define \"r\" -}}\n{{ toYaml .res }}\n{{- end -}}\nresources:\n  {{- include \"r\" . | nindent 2 }}\n";
    let out = render(src, &data);
    assert_eq!(out.text, "resources:\n  cpu: 100m\n  mem: 1Gi\n");
    let s = sources(&out);
    assert!(s.contains(&pair("100m", "value#3")), "{s:?}");
    assert!(s.contains(&pair("1Gi", "value#4")), "{s:?}");
    let (_, at) = out.source_at(out.text.find("1Gi").unwrap()).unwrap();
    assert_eq!(*at, Source::Value(Origin(4)));
}

#[test]
fn default_passes_the_chosen_value_through() {
    let data = map(vec![("tag", Value::str_at("v1", o(9)))]);
    let out = render(
        "{{ .tag | default \"latest\" }} {{ .missing | default \"latest\" }}",
        &data,
    );
    assert_eq!(out.text, "v1 latest");
    let s = sources(&out);
    assert!(s.contains(&pair("v1", "value#9")), "{s:?}");
    // "latest" is a string constant of the template: its bytes point into the template.
    assert!(s.contains(&pair("latest", "t.yaml@53..59")), "{s:?}");
}

#[test]
fn tpl_text_belongs_to_the_value() {
    let data = map(vec![
        ("name", Value::str_at("web", o(1))),
        ("t", Value::str_at("svc-{{ .name }}", o(2))),
    ]);
    let out = render("{{ tpl .t . }}", &data);
    assert_eq!(out.text, "svc-web");
    assert_eq!(
        sources(&out),
        [pair("svc-", "value#2"), pair("web", "value#1")]
    );
}

#[test]
fn no_value_is_removed_in_helm_mode_only() {
    let data = map(vec![]);
    assert_eq!(render("a: {{ .x }}", &data).text, "a: ");
    let out = render("a: v-{{ .x }}.yaml\nb: {{ .y }}{{ .z }}\n", &data);
    assert_eq!(out.text, "a: v-.yaml\nb: \n");
    assert_eq!(
        out.dropped,
        [5, 14, 14],
        "where each `<no value>` was removed"
    );
    let mut t = Templates::new();
    t.add("t", "a: {{ .x }}").unwrap();
    assert_eq!(
        t.render("t", &data, &Limits::default()).unwrap().text,
        "a: <no value>"
    );
}

#[test]
fn runaway_templates_hit_the_budget() {
    let mut t = Templates::helm();
    t.add(
        "t",
        "{{ define \"loop\" }}{{ template \"loop\" . }}{{ end }}{{ template \"loop\" . }}",
    )
    .unwrap();
    let e = t.render("t", &Value::Nil, &Limits::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Budget);

    let mut t = Templates::helm();
    t.add(
        "t",
        "{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}",
    )
    .unwrap();
    let limits = Limits {
        steps: 100_000,
        ..Limits::default()
    };
    assert_eq!(
        t.render("t", &Value::Nil, &limits).unwrap_err().kind,
        ErrorKind::Budget
    );

    let mut t = Templates::helm();
    t.add(
        "t",
        "{{ range until 1000 }}{{ repeat 1000 \"x\" }}{{ end }}",
    )
    .unwrap();
    let limits = Limits {
        output_bytes: 10_000,
        ..Limits::default()
    };
    assert_eq!(
        t.render("t", &Value::Nil, &limits).unwrap_err().kind,
        ErrorKind::Budget
    );
}

#[test]
fn unsupported_functions_are_errors_at_the_call() {
    let mut t = Templates::helm();
    t.add("t.yaml", "a: 1\nb: {{ randAlphaNum 5 }}\n").unwrap();
    let e = t
        .render("t.yaml", &Value::Nil, &Limits::default())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported("randAlphaNum".into()));
    assert_eq!((e.line, e.column), (2, 6));
    assert!(e.to_string().contains("randAlphaNum"), "{e}");
    // Not executed: no error.
    let mut t = Templates::helm();
    t.add("t", "{{ if false }}{{ now }}{{ end }}ok").unwrap();
    assert_eq!(
        t.render("t", &Value::Nil, &Limits::default()).unwrap().text,
        "ok"
    );
}

#[test]
fn parse_errors_have_locations() {
    let mut t = Templates::helm();
    let e = t.add("t.yaml", "a: 1\nb: {{ nope 1 }}").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(e.line, 2);
    assert!(e.message.contains("\"nope\" not defined"));
    for bad in [
        "{{ .x ",
        "{{ end }}",
        "{{ if 1 }}",
        "{{/* x */ }}",
        "{{ $y }}",
        "{{ break }}",
    ] {
        assert!(Templates::helm().add("t", bad).is_err(), "{bad}");
    }
}

#[test]
fn hostile_input_never_panics() {
    let inputs = [
        "{{",
        "}}",
        "{{-",
        "{{- -}}",
        "{{ ( }}",
        "{{ ) }}",
        "{{ \"\\x }}",
        "{{ 'ab' }}",
        "{{ 0x }}",
        "{{ .a.b.c.d }}",
        "{{ index . 1 2 3 }}",
        "{{ slice . 1 }}",
        "{{ $x := }}",
        "{{ range $a, $b, $c := . }}{{ end }}",
        "{{ template }}",
        "{{ define }}{{ end }}",
        "{{ printf }}",
        "{{ printf \"%\" }}",
        "{{ printf \"%!\" 1 }}",
        "{{ substr 5 1 \"abc\" }}",
        "{{ trunc -10 \"é\" }}",
        "{{ b64dec \"@@\" }}",
        "{{ fromYaml \"a: [\" }}",
        "{{ toYaml (fromJson \"[1e999]\") }}",
        "{{ repeat -1 \"x\" }}",
        "{{ until -5 }}",
        "{{ untilStep 0 10 0 }}",
        "{{ regexMatch \"(\" \"x\" }}",
        "{{ semverCompare \"~>\" \"x\" }}",
        "{{ dig \"a\" 1 (dict) }}",
    ];
    let data = map(vec![("a", Value::list(vec![Value::Nil]))]);
    for src in inputs {
        let mut t = Templates::helm();
        if t.add("t", src).is_ok() {
            if let Ok(out) = t.render("t", &data, &Limits::default()) {
                let mut at = 0;
                for (r, _) in &out.segments {
                    assert!(r.start >= at && r.start < r.end && r.end <= out.text.len());
                    at = r.end;
                }
            }
        }
    }
}

/// A text added through a [`gotmpl::ParseCache`] renders as one parsed again: under its own
/// name, with its `define`s, and the cache parses it once for every set that adds it.
#[test]
fn a_cached_parse_renders_as_a_fresh_one_under_each_name() {
    let helpers = r#"{{- define "full" -}}{{ .Values.name }}-{{ .Release }}{{- end -}}"#;
    let body = "name: {{ include \"full\" . }}\nkind: {{ .Values.kind | quote }}\n";
    let data = map(vec![
        (
            "Values",
            map(vec![
                ("name", Value::str("web")),
                ("kind", Value::str("Service")),
            ]),
        ),
        ("Release", Value::str("prod")),
    ]);
    let mut cache = gotmpl::ParseCache::new();
    let mut outputs = Vec::new();
    for chart in ["a", "b"] {
        let (h, b) = (
            format!("{chart}/templates/_h.tpl"),
            format!("{chart}/templates/s.yaml"),
        );
        let mut fresh = Templates::helm();
        fresh.add(&h, helpers).unwrap();
        fresh.add(&b, body).unwrap();
        let mut cached = Templates::helm();
        cached.add_cached(&h, helpers, &mut cache).unwrap();
        cached.add_cached(&b, body, &mut cache).unwrap();
        let want = fresh.render(&b, &data, &Limits::default()).unwrap();
        let got = cached.render(&b, &data, &Limits::default()).unwrap();
        assert_eq!(got.text, want.text);
        assert_eq!(sources(&got), sources(&want));
        outputs.push(got.text);
    }
    assert_eq!(outputs[0], "name: web-prod\nkind: \"Service\"\n");
    // A text that does not parse is an error naming the template, and is not kept.
    let mut t = Templates::helm();
    let e = t
        .add_cached("c/bad.yaml", "{{ end }}", &mut cache)
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(&*e.template, "c/bad.yaml");
    let e = t
        .add_cached("d/bad.yaml", "{{ end }}", &mut cache)
        .unwrap_err();
    assert_eq!(&*e.template, "d/bad.yaml");
}
