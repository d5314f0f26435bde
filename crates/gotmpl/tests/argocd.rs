//! Argo CD's ApplicationSet function set (`Templates::argocd`), with the expectations of Argo
//! CD's own tests (`applicationset/utils/utils_test.go`: `TestRenderTemplateParams`,
//! `TestSlugify`) where it has them.

use std::collections::BTreeMap;
use std::sync::Arc;

use gotmpl::{ErrorKind, FuncSet, Limits, MissingKey, Templates, Value};

fn data(yaml: &str) -> Value {
    gotmpl::yaml::from_yaml(yaml).unwrap()
}

fn render_with(t: &mut Templates, src: &str, data: &Value) -> Result<String, gotmpl::Error> {
    t.add("base", src)?;
    t.render("base", data, &Limits::default()).map(|o| o.text)
}

fn render(src: &str, data: &Value) -> Result<String, gotmpl::Error> {
    render_with(&mut Templates::argocd(), src, data)
}

fn ok(src: &str, values: &str) -> String {
    render(src, &data(values)).unwrap()
}

fn error(src: &str, values: &str) -> gotmpl::Error {
    render(src, &data(values)).unwrap_err()
}

#[test]
fn slugify_as_argo_cd_tests_it() {
    let long = "feat/a_really+long_pull_request_name_to_test_argo_slugification_and_branch_name_shortening_feature";
    let one_word =
        "feat/areallylongpullrequestnametotestargoslugificationandbranchnameshorteningfeature";
    let slug = |max, smart, name| gotmpl::argocd::slugify(max, smart, name).unwrap();
    assert_eq!(
        slug(50, false, long),
        "feat-a-really-long-pull-request-name-to-test-argo"
    );
    assert_eq!(
        slug(53, true, long),
        "feat-a-really-long-pull-request-name-to-test-argo"
    );
    assert_eq!(slug(50, true, one_word), "feat");
    assert_eq!(
        slug(50, false, one_word),
        "feat-areallylongpullrequestnametotestargoslugifica"
    );
}

#[test]
fn slugify_in_templates() {
    // Defaults: 50 characters, cut after a whole word.
    assert_eq!(
        ok("{{ slugify .b }}", "b: Feature/New_Thing.v2"),
        "feature-new-thing-v2"
    );
    assert_eq!(ok("{{ .b | slugify }}", "b: '--a..b--'"), "a-b");
    assert_eq!(ok("{{ slugify 10 .b }}", "b: aaaa-bbbb-cccc"), "aaaa-bbbb");
    assert_eq!(
        ok("{{ slugify 10 false .b }}", "b: aaaa-bbbb-cccc"),
        "aaaa-bbbb"
    );
    assert_eq!(
        ok("{{ slugify 0 .b }}", "b: aaaa-bbbb-cccc"),
        "aaaa-bbbb-cccc"
    );
    assert_eq!(ok("{{ slugify }}", "b: x"), "");
    // Go's type assertions: a length must be an `int`, and a YAML number is a `float64`.
    let e = error("{{ slugify .len .b }}", "len: 10\nb: x");
    assert!(e.message.contains("is float64, not int"), "{}", e.message);
    // Go panics on a negative length without smart truncation.
    assert!(render("{{ slugify -1 false .b }}", &data("b: x")).is_err());
}

#[test]
fn normalize_is_sanitize_name() {
    assert_eq!(ok("{{ normalize .v }}", "v: Prod_EU/web"), "prod-eu-web");
    assert_eq!(ok("{{ normalize .v }}", "v: _namespace."), "namespace");
    assert_eq!(ok("{{ normalize .v }}", "v: Straße"), "stra-e");
    assert_eq!(gotmpl::argocd::normalize("İstanbul"), "istanbul");
    assert_eq!(gotmpl::argocd::normalize(&"a".repeat(300)).len(), 253);
}

#[test]
fn yaml_functions_report_errors() {
    let params = "foo:\n  bar:\n    bool: true\n    number: 2\n    str: Hello world\n";
    assert_eq!(
        ok("{{ toYaml . | indent 2 }}", params),
        "  foo:\n    bar:\n      bool: true\n      number: 2\n      str: Hello world"
    );
    assert_eq!(
        ok(
            "{{ get (fromYaml .value) \"hello\" }}",
            "value: 'hello: world'"
        ),
        "world"
    );
    assert_eq!(
        ok(
            "{{ fromYamlArray .value | last }}",
            "value: \"- hello world\\n- bonjour tout le monde\""
        ),
        "bonjour tout le monde"
    );
    let bad = "value: \"non\\n compliant\\n yaml\"";
    let e = error("{{ get (fromYaml .value) \"hello\" }}", bad);
    assert!(
        e.message.ends_with(
            "error calling fromYaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}"
        ),
        "{}",
        e.message
    );
    let e = error("{{ fromYamlArray .value | last }}", bad);
    assert!(
        e.message.ends_with(
            "error calling fromYamlArray: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type []interface {}"
        ),
        "{}",
        e.message
    );
    // Helm swallows the same errors: an `Error` key, an empty text.
    let mut helm = Templates::new();
    assert!(
        render_with(&mut helm, "{{ (fromYaml .value).Error }}", &data(bad))
            .unwrap()
            .contains("cannot unmarshal string")
    );
}

#[test]
fn sprig_json_not_helms() {
    // Sprig's `fromJson` reads any JSON value, and nil from bad JSON; Helm's wants a map.
    assert_eq!(ok("{{ (fromJson .j) | len }}", "j: '[1, 2, 3]'"), "3");
    assert_eq!(ok("{{ fromJson .j }}", "j: 'nope'"), "<no value>");
    assert!(render("{{ mustFromJson .j }}", &data("j: 'nope'")).is_err());
    assert_eq!(
        ok("{{ toJson .m }}", "m: {a: '<b>'}"),
        r#"{"a":"\u003cb\u003e"}"#
    );
}

#[test]
fn environment_and_helm_functions_are_not_defined() {
    for src in [
        "{{ env \"HOME\" }}",
        "{{ expandenv \"$HOME\" }}",
        "{{ getHostByName \"example.com\" }}",
        "{{ include \"x\" . }}",
        "{{ tpl \"x\" . }}",
        "{{ required \"x\" .a }}",
        "{{ lookup \"v1\" \"Pod\" \"\" \"\" }}",
        "{{ toYamlPretty . }}",
        "{{ fromJsonArray \"[]\" }}",
    ] {
        let e = error(src, "a: 1");
        assert_eq!(e.kind, ErrorKind::Parse, "{src}");
        assert!(e.message.contains("not defined"), "{src}: {}", e.message);
    }
    // Helm's set still has them (`env` is refused when called).
    let helm = FuncSet::Helm;
    assert!(helm.is_defined("include") && helm.is_defined("env") && !helm.is_supported("env"));
    let argocd = FuncSet::ArgoCd;
    assert!(argocd.is_supported("slugify") && argocd.is_supported("fail"));
    assert!(!helm.is_defined("slugify") && !argocd.is_defined("include"));
    assert!(argocd.names().contains(&"normalize"));
    // Sprig's `fail` is Argo CD's too.
    assert_eq!(error("{{ fail \"stop\" }}", "a: 1").kind, ErrorKind::Fail);
}

#[test]
fn missing_keys_follow_the_options() {
    let params = data("unused: this is not used");
    assert_eq!(
        render("--> {{.doesnotexist}} <--", &params).unwrap(),
        "--> <no value> <--"
    );
    let mut strict = Templates::argocd();
    strict.option("missingkey=error").unwrap();
    let e = render_with(&mut strict, "--> {{.doesnotexist}} <--", &params).unwrap_err();
    assert_eq!(e.message, "map has no entry for key \"doesnotexist\"");
    for option in [
        "missingkey=default",
        "missingkey=invalid",
        "missingkey=zero",
    ] {
        let mut t = Templates::argocd();
        t.option(option).unwrap();
        assert_eq!(
            render_with(&mut t, "{{.x}}", &params).unwrap(),
            "<no value>"
        );
    }
    assert!(Templates::argocd().option("missingkey=maybe").is_err());
    // A field of a string is an error whatever the option.
    let e = error("{{.data.test}}", "data: a data string");
    assert!(
        e.message.contains("can't evaluate field test"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_data_marks_what_depends_on_it() {
    let mut t = Templates::argocd();
    t.set_missing_key(MissingKey::Unknown(Arc::from("?")));
    let mut m = BTreeMap::new();
    m.insert("known".to_string(), Value::str("Web"));
    let params = Value::map(m);
    let mut r = |src: &str| {
        let name = format!("t{}", src.len());
        t.add(&name, src).unwrap();
        t.render(&name, &params, &Limits::default()).unwrap().text
    };
    assert_eq!(r("{{ .name }}-{{ .known | lower }}"), "?-web");
    assert_eq!(r("{{ .server.host | upper }}"), "?");
    assert_eq!(r("{{ printf \"%s-%s\" .known .name }}"), "?");
    assert_eq!(r("a{{ if eq .env \"prod\" }}b{{ else }}c{{ end }}d"), "a?d");
    assert_eq!(r("a{{ range .items }}x{{ end }}d"), "a?d");
    assert_eq!(r("{{ and .known .name }}"), "?");
    assert_eq!(r("{{ if .known }}k{{ end }}"), "k");
}
