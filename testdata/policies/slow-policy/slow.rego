package main

import rego.v1

# Runs for a very long time: the time limit stops it.
deny contains "never" if {
	input.kind == "Service"
	r := numbers.range(1, 2000)
	count([1 | some a in r; some b in r; some c in r; a + b + c < 0]) > 0
}

warn contains "still evaluated" if input.kind == "Service"
