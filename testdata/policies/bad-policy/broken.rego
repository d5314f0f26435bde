package main

import rego.v1

deny contains msg if {
	input.kind == "Deployment"
	msg := sprintf("%s", [input.metadata.name]
}
