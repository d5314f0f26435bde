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

# The ApplicationSet controller adds the finalizer to a template without finalizers.
test_appset_template_without_finalizers_passes if {
	count(rule.deny) == 0 with input as {"kind": "ApplicationSet", "spec": {"template": {"metadata": {"name": "x"}}}}
}

test_appset_empty_finalizers_passes if {
	count(rule.deny) == 0 with input as {"kind": "ApplicationSet", "spec": {"template": {"metadata": {"finalizers": []}}}}
}

test_appset_preserve_false_passes if {
	count(rule.deny) == 0 with input as {"kind": "ApplicationSet", "spec": {"syncPolicy": {"preserveResourcesOnDeletion": false}, "template": {"metadata": {}}}}
}

test_appset_preserve_resources_is_reported if {
	some r in rule.deny with input as {"kind": "ApplicationSet", "spec": {"syncPolicy": {"preserveResourcesOnDeletion": true}, "template": {"metadata": {}}}}
	r.path == ["spec", "syncPolicy", "preserveResourcesOnDeletion"]
}

# Finalizers in the template replace the controller's, whatever preserveResourcesOnDeletion says.
test_appset_other_finalizers_are_reported if {
	some r in rule.deny with input as {"kind": "ApplicationSet", "spec": {"syncPolicy": {"preserveResourcesOnDeletion": true}, "template": {"metadata": {"finalizers": ["x"]}}}}
	r.path == ["spec", "template", "metadata", "finalizers"]
}

test_appset_listed_finalizer_passes if {
	count(rule.deny) == 0 with input as {"kind": "ApplicationSet", "spec": {"syncPolicy": {"preserveResourcesOnDeletion": true}, "template": {"metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io"]}}}}
}

test_appset_template_patch_decides if {
	count(rule.deny) == 0 with input as {"kind": "ApplicationSet", "spec": {"syncPolicy": {"preserveResourcesOnDeletion": true}, "templatePatch": "metadata:\n  finalizers: []\n", "template": {"metadata": {}}}}
}
