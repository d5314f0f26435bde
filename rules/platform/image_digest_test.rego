package gitops_lint.rules.platform.image_digest_test

import rego.v1

import data.gitops_lint.rules.platform.image_digest as rule

deployment(image) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"spec": {"template": {"spec": {"containers": [{"name": "server", "image": image}]}}},
}

test_tag_is_denied if {
	some r in rule.deny with input as deployment("quay.io/argoproj/argocd:v3.4.3")
	r.path == ["spec", "template", "spec", "containers", 0, "image"]
}

test_digest_passes if {
	count(rule.deny) == 0 with input as deployment("quay.io/argoproj/argocd:v3.4.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
}

test_not_a_workload if {
	count(rule.deny) == 0 with input as {"kind": "ConfigMap", "data": {"image": "nginx"}}
}

test_cronjob_init_containers if {
	some r in rule.deny with input as {
		"kind": "CronJob",
		"spec": {"jobTemplate": {"spec": {"template": {"spec": {"initContainers": [{"name": "i", "image": "busybox"}]}}}}},
	}
	r.path == ["spec", "jobTemplate", "spec", "template", "spec", "initContainers", 0, "image"]
}

test_every_container_is_checked if {
	count(rule.deny) == 2 with input as {
		"kind": "Pod",
		"spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b@sha256:00"}, {"name": "c", "image": "c"}]},
	}
}
