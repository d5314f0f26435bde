package main

import rego.v1

# gitops.location(path) tells where a node of the current document is written.
warn contains msg if {
	input.kind == "Service"
	loc := gitops.location(["spec", "type"])
	msg := sprintf("type is set on line %d of %s", [loc.line, loc.file])
}

# conftest-style `_loc`: the finding goes to that line.
warn_loc contains {"msg": "replicas set here", "_loc": {"file": "workloads.yaml", "line": 6}} if {
	input.kind == "Deployment"
	input.metadata.name == "api"
}
