package main

import rego.v1

# `http.send` is not available to policies: evaluating this rule fails.
deny contains msg if {
	input.kind == "ConfigMap"
	resp := http.send({"method": "GET", "url": "https://example.com"})
	resp.status_code != 200
	msg := "unreachable"
}
