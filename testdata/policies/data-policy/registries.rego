package main

import rego.v1

deny contains msg if {
	some c in input.spec.template.spec.containers
	registry := split(c.image, "/")[0]
	not registry in data.allowed.registries
	msg := sprintf("image %s is not from an allowed registry", [c.image])
}
