package gitops_lint.rules.argocd.production_target_revision_test

import rego.v1

import data.gitops_lint.rules.argocd.production_target_revision as rule

app(ns, rev) := {
	"name": "shop",
	"destination": {"namespace": ns},
	"sources": [{"targetRevision": rev, "spec_path": ["spec", "source"]}],
	"document": {"file": "apps/shop.yaml", "document": 0},
}

model(apps) := {"applications": apps}

test_head_in_production_is_denied if {
	some r in rule.deny with data.gitops as model([app("shop-prod", "HEAD")])
	r.path == ["spec", "source", "targetRevision"]
	r.file == "apps/shop.yaml"
}

test_unset_revision_in_production_is_denied if {
	some r in rule.deny with data.gitops as model([app("prod", null)])
	r.path == ["spec", "source"]
}

test_pinned_revision_passes if {
	count(rule.deny) == 0 with data.gitops as model([app("shop-prod", "v1.2.3")])
}

test_head_outside_production_passes if {
	count(rule.deny) == 0 with data.gitops as model([app("shop-dev", "HEAD")])
}

test_product_is_not_production if {
	count(rule.deny) == 0 with data.gitops as model([app("product-catalog", "HEAD")])
}

test_pattern_is_configurable if {
	count(rule.deny) == 1 with data.gitops as model([app("live", "HEAD")])
		with data.gitops_lint.options as {"argocd/production-target-revision": {"production_pattern": "^live$"}}
}
