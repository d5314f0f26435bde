package gitops_lint.rules.argocd.no_default_project_test

import rego.v1

import data.gitops_lint.rules.argocd.no_default_project as rule

app(spec) := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a"}, "spec": spec}

test_default_project_is_denied if {
	count(rule.deny) == 1 with input as app({"project": "default"})
}

test_missing_project_is_denied if {
	some r in rule.deny with input as app({"destination": {}})
	r.path == ["spec"]
}

test_named_project_passes if {
	count(rule.deny) == 0 with input as app({"project": "payments"})
}

test_appset_template_is_checked if {
	some r in rule.deny with input as {
		"kind": "ApplicationSet",
		"spec": {"template": {"spec": {"project": "default"}}},
	}
	r.path == ["spec", "template", "spec", "project"]
}
