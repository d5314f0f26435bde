package main

import rego.v1

# METADATA
# custom:
#   id: team/no-latest
deny contains msg if {
	input.kind == "Deployment"
	msg := "one"
}

# METADATA
# custom:
#   id: team/no-latest
deny contains msg if {
	input.kind == "Service"
	msg := "two"
}
