package main

import rego.v1

deny_latest contains result if {
	some i, c in input.spec.template.spec.containers
	endswith(c.image, ":latest")
	result := {
		"msg": sprintf("container %s uses a `latest` tag", [c.name]),
		"path": sprintf("spec.template.spec.containers.%d.image", [i]),
	}
}

# conftest exceptions: the legacy Deployment may use `latest`.
exception contains rules if {
	input.metadata.name == "legacy"
	rules := ["latest"]
}
