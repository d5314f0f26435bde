package gitops_lint.rules.argocd.resources_finalizer_test

import rego.v1

import data.gitops_lint.rules.argocd.resources_finalizer as rule

test_missing_finalizer_is_reported if {
	some r in rule.deny with input as {"kind": "Application", "metadata": {"name": "a"}}
	r.path == ["metadata"]
}

test_other_finalizers_only if {
	some r in rule.deny with input as {"kind": "Application", "metadata": {"name": "a", "finalizers": ["x"]}}
	r.path == ["metadata", "finalizers"]
}

test_finalizer_passes if {
	count(rule.deny) == 0 with input as {"kind": "Application", "metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io"]}}
}

test_background_variant_passes if {
	count(rule.deny) == 0 with input as {"kind": "Application", "metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io/background"]}}
}

test_appset_template if {
	some r in rule.deny with input as {"kind": "ApplicationSet", "spec": {"template": {"metadata": {"name": "x"}}}}
	r.path == ["spec", "template", "metadata"]
}
