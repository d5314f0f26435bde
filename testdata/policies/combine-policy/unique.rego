package main

import rego.v1

# With --combine, input is an array of {path, contents}.
deny contains msg if {
	some i, j
	i < j
	a := input[i]
	b := input[j]
	a.contents.kind == b.contents.kind
	a.contents.metadata.name == b.contents.metadata.name
	msg := sprintf("%s %s is defined twice (%s, %s)", [a.contents.kind, a.contents.metadata.name, a.path, b.path])
}
