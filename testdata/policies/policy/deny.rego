package main

# Rego v0 syntax, as many existing conftest policy folders are written.
deny[msg] {
	input.kind == "Deployment"
	not input.spec.template.spec.securityContext.runAsNonRoot
	msg := sprintf("Deployment %s must set runAsNonRoot", [input.metadata.name])
}
