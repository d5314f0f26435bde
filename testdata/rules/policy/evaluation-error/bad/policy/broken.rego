package main

import rego.v1

# A result must be a string or an object with a string `msg`: this one is neither.
deny contains {"message": "settings are not reviewed"} if {
	input.kind == "ConfigMap"
}

# A type error at run time: `upper` of a number.
warn contains msg if {
	input.kind == "ConfigMap"
	msg := upper(input.metadata.generation)
}
